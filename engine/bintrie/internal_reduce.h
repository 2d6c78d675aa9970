// internal_reduce: hashes the internal levels of the canonical binary trie, deepest first.
//
// Input: items (a representative stem index into a sorted stem array, the item's depth, its
// hash), ascending by representative. At depth d, two adjacent items sharing d-1 leading
// bits are siblings: parent = hash(left || right); a lone item gets a 32-zero sibling on the
// side its bit d-1 does not take. Parents (representative = left item's) merge into depth
// d-1. All messages of one depth go through one hash64_batch. Stops at stop_depth and
// returns the items there (exactly one when the items share stop_depth leading bits and
// there are at least two, or the one item already at that depth).
//
// Invariants: items at depth d > stop_depth are exactly the canonical nodes at depth d.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/bintrie/batch_root.h"

namespace st::bintrie {

struct ReduceItem {
  uint32_t rep = 0;
  uint8_t depth = 0;
  uint64_t prefix = 0;  // first 64 bits of the representative stem (no stem lookup while d <= 64)
  Bytes32 hash{};
};

struct ReduceStats {
  size_t messages = 0;
};

// stem_of(rep) -> const uint8_t* 31-byte stem.
template <class StemOf>
std::vector<ReduceItem> reduce_levels_generic(const Hasher& h, StemOf stem_of, std::vector<ReduceItem> items,
                                              unsigned stop_depth, ReduceStats* stats);

std::vector<ReduceItem> reduce_levels(const Hasher& h, const SortedEntries& sorted, std::vector<ReduceItem> items,
                                      unsigned stop_depth, ReduceStats* stats);

}  // namespace st::bintrie

#include "engine/bintrie/internal_reduce_impl.h"
