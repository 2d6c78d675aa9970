// internal_reduce: hashes the internal levels of the canonical binary trie, deepest first.
//
// Input: n items (a representative stem index into a sorted stem array, the first 64 bits
// of that stem, the item's depth, its hash), ascending by representative. At depth d, two
// adjacent items sharing d-1 leading bits are siblings: parent = hash(left || right); a
// lone item gets a 32-zero sibling on the side its bit d-1 does not take. Parents
// (representative = left item's) join the items of depth d-1. All messages of one depth go
// through one hash64_batch. Stops at stop_depth and returns the items there (exactly one
// when the items share stop_depth leading bits and there are at least two, or the one item
// already at that depth).
//
// Data layout (ReduceScratch, reused across calls, no per-call allocation once warm):
//   pool[]   hashes: the n input hashes first, then each depth's parents as one block
//            (the hash64_batch output lands there directly);
//   in[]     the input items, 16 bytes each {prefix, rep, hidx into pool}; depth[] beside;
//   seg[]    the input items regrouped by depth (stable: ascending rep within a depth);
//   par_*[]  the parents carried from depth d+1 into depth d;
//   cur[]    depth d's list: the merge of seg's depth-d run and the carried parents.
//
// Invariants: items at depth d > stop_depth are exactly the canonical nodes at depth d.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/bintrie/batch_root.h"

namespace st::bintrie {

// A growable array of a trivial type whose new elements are left uninitialized (every
// user writes before reading); grow() keeps the first `keep` elements.
template <class T>
struct RawBuf {
  std::unique_ptr<T[]> p;
  size_t cap = 0;
  T* grow(size_t n, size_t keep = 0) {
    if (n > cap) {
      const size_t c = n > 2 * cap ? n : 2 * cap;
      std::unique_ptr<T[]> q(new T[c]);
      if (keep) std::memcpy(static_cast<void*>(q.get()), p.get(), keep * sizeof(T));
      p = std::move(q);
      cap = c;
    }
    return p.get();
  }
  T* data() { return p.get(); }
};

struct ReduceSlim {
  uint64_t prefix;  // first 64 bits of the representative stem (no stem lookup while d <= 64)
  uint32_t rep;     // representative stem index
  uint32_t hidx;    // index of the item's hash in ReduceScratch::pool
};

struct ReduceScratch {
  RawBuf<Hash32> pool;
  RawBuf<ReduceSlim> in, seg, par_a, par_b, cur;
  RawBuf<uint8_t> depth;
  RawBuf<Hash32> msgs;  // 2 per message
  std::vector<uint32_t> depth_begin;
  // Makes room for n input items: the caller then fills in[i], depth[i] and pool[i].
  void begin(size_t n) {
    in.grow(n);
    depth.grow(n);
    pool.grow(2 * n + 64);
  }
};

struct ReduceStats {
  size_t messages = 0;
};

// Reduces the n items prepared in S (see begin()) down to stop_depth. Returns the items at
// stop_depth (ascending rep); their hashes are S.pool[item.hidx]. The returned span lives
// in S until the next call.
template <class StemOf>
std::span<const ReduceSlim> reduce_levels(const Hasher& h, StemOf stem_of, ReduceScratch& S, size_t n,
                                          unsigned stop_depth, ReduceStats* stats);

}  // namespace st::bintrie

#include "engine/bintrie/internal_reduce_impl.h"
