// bintrie/pure_hash: the hashing inputs of a binary-trie commit's new nodes (new stem blobs
// and new group blobs, bintrie/commit.cpp) hashed again alone, level by level, each level
// ONE call of the hasher's batch kernels (Hasher::hash32_batch for the leaf values,
// hash64_batch for every internal level, the stem nodes and each group level), with the
// trie's zero rule (a 64-byte input of zeros is the zero hash, not hashed). It is the
// reference the commit's own hash time is compared with (CommitStats::pure_hash_ns).
//
// Invariants: the digests are those of bintrie::stem_blob_hash and reconstruct_group; each
// new node's digest is compared with the hash its commit gave it, and a difference is an
// error naming the node (the commit then fails). Group entries are taken as the blobs hold
// them (a new child's entry is that child's hash, itself compared).
#pragma once

#include <cstdint>
#include <span>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/hasher.h"
#include "io/status.h"

namespace st::persist {

struct PureHashCount {
  uint64_t ns = 0;      // the level loops (gathering the inputs, the batch calls, scattering)
  uint64_t nodes = 0;   // stems + groups checked
  uint64_t calls = 0;   // batch kernel calls
};

// stems[i] must hash to stem_hashes[i], groups[i] to group_hashes[i] (all groups of one g).
io::Status bintrie_pure_hash(const bintrie::Hasher& h, std::span<const bintrie::StemBlob* const> stems,
                             std::span<const bintrie::Hash32> stem_hashes,
                             std::span<const bintrie::GroupBlob* const> groups,
                             std::span<const bintrie::Hash32> group_hashes, PureHashCount* out);

}  // namespace st::persist
