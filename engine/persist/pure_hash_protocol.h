// pure_hash_protocol: how a commit's pure hash is timed, the same for both trees. The pure
// hash is the exact inputs a commit's hash phase hashed, hashed again alone, level by level,
// ONE batch kernel call per level (MPT: mpt/pure_hash.h; binary trie: bintrie/pure_hash.h);
// it is the reference the hash phase is compared with (CommitStats::pure_hash_ns), so its
// reading must not depend on what ran before it.
//
// The protocol:
//  1. Before the clock: every input gathered, copied into one array in the order the level
//     loop reads it (MPT: each record's bytes, level by level; binary trie: every level's
//     messages, the given inputs copied in, and for each digest the place in its parent's
//     message that takes it), so the reading depends neither on where the commit laid its
//     inputs out nor on what it read last; every scratch array sized and written once
//     (zero-filled or copied into, so its pages are mapped). Inside the clock
//     nothing allocates and nothing runs but the batch calls, one per level (binary trie:
//     plus one 32-byte copy of each digest into its parent's message: a level's inputs are
//     the level below's outputs; the MPT's records already hold their children's digests).
//  2. The level loop runs kPureHashPasses (2) times over the same inputs and scratch; the
//     reading is the fastest pass. The first pass leaves every input byte, the output scratch
//     and the kernels' code warm, so the second starts from the same cache state whatever
//     ran before (the commit's hash phase, which may or may not have just read those bytes
//     in that order). A pass over colder caches is not faster, so the minimum is the warm
//     pass unless that one was disturbed (preempted, interrupted: on a shared host), and
//     then the first caps it.
//     A separate pass that only touched the input bytes would warm neither the output
//     scratch nor the kernels, and would leave a single disturbed reading standing.
//  The digests of the last pass are compared with the commit's; a difference is an error.
//
// Invariants: time_pure_passes allocates nothing; `pass` must be idempotent (the same
// outputs from the same scratch, whatever the previous pass left in it).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/support/clock.h"

namespace st::persist {

struct PureHashCount {
  uint64_t ns = 0;     // the fastest pass of the level loop (kPureHashPasses passes)
  uint64_t nodes = 0;  // MPT: records; binary trie: stems + groups, each compared
  uint64_t calls = 0;  // batch kernel calls of one pass (one per non-empty level)
};

inline constexpr int kPureHashPasses = 2;

// Runs pass() kPureHashPasses times; the fastest one's monotonic nanoseconds.
template <class Pass>
uint64_t time_pure_passes(Pass&& pass) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < kPureHashPasses; ++i) {
    const uint64_t t0 = st::monotonic_ns();
    pass();
    best = std::min(best, st::monotonic_ns() - t0);
  }
  return best;
}

}  // namespace st::persist
