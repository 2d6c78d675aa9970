// bintrie/pure_hash: the hashing inputs of a binary-trie commit's new nodes (new stem blobs
// and new group blobs, bintrie/block_tree_write.cpp) hashed again alone, level by level, each level
// ONE call of the hasher's batch kernels (Hasher::hash32_batch for the leaf values,
// hash64_batch for every internal level, the stem nodes and each group level), with the
// trie's zero rule (a 64-byte input of zeros is the zero hash, not hashed). It is the
// reference the commit's own hash time is compared with (CommitStats::pure_hash_ns), timed
// under the pure-hash protocol (pure_hash_protocol.h), the same as the MPT's.
//
// Two steps. plan_bintrie_pure_hash (before the clock) lays out every level's messages in
// one array (leaf values, stems and group entries copied in; each later level's slots for
// the digests of the level below left to the passes), and for each digest the offset of the
// slot in its parent's message that takes it; it sizes the outputs. run_bintrie_pure_hash
// times the passes (per level: one batch call, then each digest copied into its parent's
// slot) and compares; it allocates nothing on success.
//
// Invariants: the digests are those of bintrie::stem_blob_hash and reconstruct_group; each
// new node's digest is compared with the hash its commit gave it, and a difference is an
// error naming the node (the commit then fails). Group entries are taken as the blobs hold
// them (a new child's entry is that child's hash, itself compared). The zero rule is applied
// when planning: a message is left out (its node is zero) when all its inputs are absent or
// given as zeros; a computed digest is taken as non-zero (a zero digest would be a preimage
// of zero; were it ever so, the comparison would fail the block, never pass a wrong hash).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/hasher.h"
#include "engine/persist/pure_hash_protocol.h"
#include "io/status.h"

namespace st::persist {

struct BintriePurePlan {
  struct Call {
    bool hash32 = false;  // hash32_batch (the leaf values) or hash64_batch
    size_t in_off = 0;    // its first message in `in` (bytes)
    size_t n = 0;         // messages
    size_t out_base = 0;  // its first digest (index into out / 32)
  };
  static constexpr uint64_t kNoSlot = UINT64_MAX;
  static constexpr uint32_t kZero = UINT32_MAX;
  std::vector<Call> calls;         // one per non-empty level, in order
  std::vector<uint8_t> in;         // every call's messages, in call order
  std::vector<uint8_t> out;        // every digest, 32 bytes each, in call order
  std::vector<uint64_t> slot;      // per digest: its parent message's slot in `in`, or kNoSlot
  std::vector<uint32_t> result;    // per stem, then per group: its digest's index, or kZero
  std::vector<bintrie::Hash32> expect;  // the hashes the commit gave them, same order
  size_t stems = 0;
};

// stems[i] must hash to stem_hashes[i], groups[i] to group_hashes[i] (all groups of one g).
io::Status plan_bintrie_pure_hash(std::span<const bintrie::StemBlob* const> stems,
                                  std::span<const bintrie::Hash32> stem_hashes,
                                  std::span<const bintrie::GroupBlob* const> groups,
                                  std::span<const bintrie::Hash32> group_hashes, BintriePurePlan* plan);
io::Status run_bintrie_pure_hash(const bintrie::Hasher& h, BintriePurePlan& plan, PureHashCount* out);

// Both steps.
io::Status bintrie_pure_hash(const bintrie::Hasher& h, std::span<const bintrie::StemBlob* const> stems,
                             std::span<const bintrie::Hash32> stem_hashes,
                             std::span<const bintrie::GroupBlob* const> groups,
                             std::span<const bintrie::Hash32> group_hashes, PureHashCount* out);

}  // namespace st::persist
