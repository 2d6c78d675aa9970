// batch_stems: the stem hashing core shared by hash_stems (over a SortedEntries) and the
// from-scratch root (over one sorted bucket): for up to a chunk of stems, the leaf hashes
// H(value), the sparse 8-level stem subtrees and the stem nodes H(stem || 0x00 || R).
//
// Each entry is read once (entry_at(i), i relative to the chunk's first entry): its value
// goes to the leaf level, its sub index to pos, and a stem's first entry gives the 31 stem
// bytes of the stem message, which is written straight into the stem-node batch buffer
// (message s = stem bytes || 0x00 || R_s, R_s copied in after the subtree levels).
//
// Invariants: stem_begin has ns + 1 ascending entries, every stem owns >= 1 entry; the
// output is stem_hash_out[0 .. ns); counts are exactly the messages hashed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/stem_subtree.h"

namespace st::bintrie {

struct StemChunkScratch {
  StemLevels L;
  std::vector<Hash32> msgs;  // 2 per stem: the stem-node messages
};

template <class EntryAt, class PrefetchAt>
void hash_stem_chunk(const Hasher& h, size_t ns, const uint32_t* stem_begin, EntryAt&& entry_at,
                     PrefetchAt&& prefetch_at, StemChunkScratch& S, Hash32* stem_hash_out, size_t* n32,
                     size_t* n64) {
  StemLevels& L = S.L;
  const size_t e0 = stem_begin[0];
  const size_t ne = stem_begin[ns] - e0;
  L.hash.resize(ne);
  L.pos.resize(ne);
  S.msgs.resize(2 * ns);
  L.off.resize(ns + 1);
  for (size_t s = 0; s <= ns; ++s) L.off[s] = stem_begin[s] - uint32_t(e0);
  Hash32* msgs = S.msgs.data();
  size_t s = 0;
  for (size_t i = 0; i < ne; ++i) {
    prefetch_at(i);
    const Entry& e = entry_at(i);
    copy32(L.hash[i], e.value);
    L.pos[i] = e.key[31];
    if (L.off[s] == i) {  // first entry of stem s (every stem has at least one)
      uint8_t* msg = msgs[2 * s].data();
      std::memcpy(msg, e.key.data(), 31);
      msg[31] = 0;
      ++s;
    }
  }
  h.hash32_batch(L.hash[0].data(), L.hash[0].data(), ne);
  *n32 += ne;
  *n64 += stem_subtree_roots(h, L);
  for (size_t t = 0; t < ns; ++t) copy32(msgs[2 * t + 1], L.hash[t]);
  h.hash64_batch(msgs[0].data(), stem_hash_out[0].data(), ns);
  *n64 += ns;
}

}  // namespace st::bintrie
