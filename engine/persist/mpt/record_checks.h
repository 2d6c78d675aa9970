// mpt/record_checks.h: RecordHashChecks, a lookup's queued node checks (keccak of each
// fetched node's body against the hash its parent holds), run as keccak256 batches. The
// binary trie's counterpart is bintrie/blob_checks.h.
//
// Invariant: each (arena record, expected hash) pair is hashed at most once per walk; run()
// reports the first mismatch in add order since the last clear.
#pragma once

#include <cstring>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/persist/record_page.h"
#include "kernels/keccak256.h"
#include "kernels/support/hash32.h"

namespace st::persist::mpt_read {

// The hash checks of a lookup, run as keccak256 batches (lookup_walk.h schedules them;
// arena: of >= 32 nodes before a wait for reads, and at the end; RocksDB: each round's
// nodes, once per distinct path key, before any cursor steps through them). An arena walk
// meanwhile trusts nothing but the strict decoder and the record checks, so a node that
// fails its hash can at worst steer a key astray (to more reads, bounded by the key's 64
// nibbles) until the next batch of checks, which then fails the lookup naming that node; no
// answer of a failed lookup is returned.
struct RecordHashChecks {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<Hash32> expect;
  std::vector<Locator> locs;        // arena
  std::vector<uint32_t> key_index;  // RocksDB: index into the round's keys
  std::vector<uint8_t> out;
  // Arena records already checked (or queued) in this walk with the hash they must have:
  // the paths of a batch share their upper nodes, each (record, hash) is hashed once.
  std::unordered_map<Locator, Hash32> seen;
  void add(std::span<const uint8_t> body, const Hash32& want, Locator loc, uint32_t key) {
    if (loc != kNoLocator) {
      auto [it, fresh] = seen.try_emplace(loc, want);
      if (!fresh && it->second == want) return;
      it->second = want;
    }
    msgs.push_back(body.data());
    lens.push_back(body.size());
    expect.push_back(want);
    locs.push_back(loc);
    key_index.push_back(key);
  }
  // Index of the first node whose hash differs, or -1.
  long run() {
    const size_t n = msgs.size();
    out.resize(32 * n);
    if (n) st::kernels::keccak256_batch(msgs.data(), lens.data(), out.data(), n);
    long bad = -1;
    for (size_t i = 0; i < n && bad < 0; ++i)
      if (std::memcmp(out.data() + 32 * i, expect[i].data(), 32) != 0) bad = long(i);
    return bad;
  }
  void reset() {  // a new walk (the pages may be re-read)
    clear();
    seen.clear();
  }
  void clear() {
    msgs.clear();
    lens.clear();
    expect.clear();
    locs.clear();
    key_index.clear();
  }
};

}  // namespace st::persist::mpt_read
