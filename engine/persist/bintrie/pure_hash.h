// bintrie/pure_hash: the hashing inputs of a binary-trie commit's new nodes (new stem blobs
// and new group blobs, bintrie/commit.cpp) hashed again alone, level by level, each level
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
#include <string>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/hasher.h"
#include "engine/persist/pure_hash_protocol.h"
#include "io/status.h"

namespace st::persist {

struct BintriePurePlan {
  // A node of a sparse Merkle reduction while it is planned (the stems' 256-leaf subtrees,
  // the groups' internal levels): its tree, its index at its depth, where its hash comes from.
  struct Node {
    uint32_t tree;
    uint32_t index;
    const uint8_t* given;  // a non-zero hash known when planning (a group entry), or null
    uint32_t digest;       // else the digest a call computes (its index), or kZero: the zero hash
  };
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
  // Planning scratch (BintrieLevelPlanner), kept with the plan so a reused plan keeps it.
  std::vector<std::vector<Node>> at;  // the nodes per depth of the reduction being planned
  std::vector<Node> parents;
};

// The planner behind plan_bintrie_pure_hash, for callers that hash new nodes level by level
// themselves (the binary trie commit): the stems (values, 8 subtree levels, stem nodes), then
// groups a level at a time (g calls each), a group entry taken as the blob holds it or from a
// digest planned before it (a new child's: the passes copy it into the entry's slot). Every
// call of a level is one batch; the digests of a call come in the order the nodes were given.
// The planner clears the plan's calls and arrays (their capacity stays) and sizes its outputs
// in finish(); run_bintrie_plan then runs the calls once.
class BintrieLevelPlanner {
 public:
  explicit BintrieLevelPlanner(BintriePurePlan& plan);
  // digests[i] := stems[i]'s digest index.
  io::Status stems(std::span<const bintrie::StemBlob* const> stems, std::vector<uint32_t>* digests);
  // entry_digests: empty (every entry as its blob holds it) or one per entry of the groups in
  // order, kZero for an entry taken from the blob, else the digest index that fills it (a
  // digest of an earlier call). digests[q] := groups[q]'s root digest index, or kZero (a
  // group of zero entries hashes to zero). All groups of one g.
  io::Status groups(std::span<const bintrie::GroupBlob* const> groups, std::span<const uint32_t> entry_digests,
                    std::vector<uint32_t>* digests);
  void finish();  // sizes plan.out

 private:
  void begin(bool hash32);
  uint32_t message(size_t bytes, size_t* off);
  void end();
  void place(const BintriePurePlan::Node& n, size_t off);
  void reduce(unsigned d);
  BintriePurePlan& p_;
  uint32_t digests_ = 0;
};

// The plan's calls once, each digest copied into its parent's slot (untimed; allocates nothing).
void run_bintrie_plan(const bintrie::Hasher& h, BintriePurePlan& plan);

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
