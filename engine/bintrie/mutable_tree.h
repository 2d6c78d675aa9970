// mutable_tree: the binary trie held in memory, updated by batches of writes and re-hashed
// only along dirty paths, level by level.
//
//   internal nodes  flat array of {child[2] (tagged refs), parent, dirty_epoch} (16 bytes)
//                   and, in step, one 64-byte line of their children's hashes
//                   (ChildHashes); a node's own hash is in its parent's line
//   stems           flat array of {stem31, hash, slot range, dirty, inner}; the stem's
//                   present values live in a slot pool, ascending by sub index, each with
//                   its cached leaf hash H(value); dense stems (>= kDenseStemValues values)
//                   also keep their 511-node subtree in a side pool
//   ref             uint32: 0 = empty, 01b<<30 | i = internal i, 10b<<30 | i = stem i
//
// What is kept per stem (decided and measured, see docs/bintrie.md): the present values and
// their leaf hashes; for dense stems also the whole subtree. A write to a sparse stem
// re-hashes the written leaves and the sparse subtree over the stem's present leaves (8
// nodes for a stem with one value); a write to a dense stem re-hashes the written leaves
// and their 8 ancestors. go-ethereum re-hashes every present value and the whole subtree.
//
// Semantics (go-ethereum's): a write of a 32-byte zero value is a present zero; nothing is
// ever removed; new stems split existing ones into chains of single-child internal nodes.
//
// apply() only records writes and marks dirty paths (one traversal per distinct stem, in
// key order); commit() hashes: dirty leaves (one hash32_batch), dirty stem subtrees (one
// hash64_batch per level across all dirty stems), stem nodes, then dirty internal nodes
// deepest first, depth by depth; stem and internal nodes in chunks of 32 messages, each
// chunk's parent lines written while still cached (see docs/bintrie.md).
//
// Invariants: after commit() every node's hash is its canonical hash, and
// child_hashes(i).h[s] is the hash of internal(i).child[s] (zero for an empty child); the
// shape is the canonical shape of the key set (independent of write order and batching).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/big_alloc.h"
#include "engine/bintrie/stem_subtree.h"

namespace st::bintrie {

using NodeRef = uint32_t;
inline constexpr NodeRef kEmptyRef = 0;
inline constexpr uint32_t kRefTagInternal = 1u << 30, kRefTagStem = 2u << 30, kRefIndexMask = (1u << 30) - 1;
inline bool ref_is_internal(NodeRef r) { return (r >> 30) == 1; }
inline bool ref_is_stem(NodeRef r) { return (r >> 30) == 2; }
inline uint32_t ref_index(NodeRef r) { return r & kRefIndexMask; }

// Internal node topology, 16 bytes (four per cache line): the path walks of apply() read
// only these. A node's own hash is not here: it lives in its parent's ChildHashes (or in
// the root hash), so commit() finds a dirty node's whole message, both child hashes, in
// one line it can address (and prefetch) without first reading the node.
inline constexpr uint32_t kNoParent = UINT32_MAX;
struct InternalNode {
  NodeRef child[2] = {kEmptyRef, kEmptyRef};
  uint32_t parent = kNoParent;  // internal index of the parent; kNoParent: the root
  uint32_t dirty_epoch = 0;     // dirty iff equal to the tree's current epoch (commit() only
                                // advances the epoch: it never writes these lines)
};

// The hashes of an internal node's two children (zero for an empty child), one cache
// line: exactly the 64-byte message of the node's hash.
struct alignas(64) ChildHashes {
  Bytes32 h[2]{};
};

struct StemSlot {
  Bytes32 value{};
  Bytes32 leaf_hash{};
  uint8_t sub = 0;
  uint8_t leaf_dirty = 0;
};

struct StemNode {
  Stem stem{};
  uint8_t dirty = 0;
  Bytes32 hash{};
  uint32_t parent_side = kNoParent;  // parent internal index << 1 | the side it hangs on
                                     // (commit writes the stem's hash there without reading
                                     // the parent); kNoParent: the stem is the root
  uint32_t slot_begin = 0;
  uint16_t slot_count = 0;   // present values (1..256)
  uint16_t slot_cap = 0;
  uint32_t inner = UINT32_MAX;  // index into the dense-stem cache, if any
};

// A dense stem's whole 8-level subtree in heap order: node[0] = R, children of i at 2i+1
// and 2i+2, leaf hashes at 255 + sub (zero where absent). 16 KiB.
struct StemInnerCache {
  Bytes32 node[511];
};

// Stems with at least this many present values keep their whole subtree (StemInnerCache):
// a write then rehashes only its 8 ancestors instead of the sparse subtree over every
// present leaf (up to 255 nodes). Measured in docs/benchmarks-bintrie.md.
inline constexpr uint16_t kDenseStemValues = 32;

// The tree's big flat arrays live in big_alloc blocks (huge pages from 4 MiB on: the random
// path walks of a 1M-key tree otherwise pay a TLB miss and a page walk per node).
template <class T>
struct TreeArrayAllocator {
  using value_type = T;
  TreeArrayAllocator() = default;
  template <class U>
  TreeArrayAllocator(const TreeArrayAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(big_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { big_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const TreeArrayAllocator<U>&) const { return true; }
};
template <class T>
using TreeArray = std::vector<T, TreeArrayAllocator<T>>;

struct CommitStats {
  size_t dirty_stems = 0;
  size_t dense_dirty_stems = 0;  // of which used the inner-node cache
  size_t leaf_hashes = 0;       // 32-byte messages
  size_t subtree_hashes = 0;    // 64-byte messages inside stem subtrees
  size_t stem_hashes = 0;       // 64-byte stem node messages
  size_t internal_hashes = 0;   // 64-byte internal node messages
  size_t hash64() const { return subtree_hashes + stem_hashes + internal_hashes; }
};

class MutableTree {
 public:
  explicit MutableTree(Hasher h);

  // Records a batch of writes (later writes to a key win) and marks dirty paths.
  void apply(std::span<const Entry> writes);
  // Re-hashes everything dirty; returns the root.
  Bytes32 commit(CommitStats* stats = nullptr);
  // The root as of the last commit (apply() without commit() leaves it stale).
  Bytes32 root() const { return root_hash_; }

  std::optional<Bytes32> get(const Bytes32& key) const;
  // Stem index of a stem, if present.
  std::optional<uint32_t> find_stem(const uint8_t* stem31) const;

  // Read access for blobs, proofs and statistics.
  const Hasher& hasher() const { return h_; }
  NodeRef root_ref() const { return root_; }
  const InternalNode& internal(uint32_t i) const { return internal_[i]; }
  const StemNode& stem(uint32_t i) const { return stems_[i]; }
  std::span<const StemSlot> slots(uint32_t stem_index) const {
    const StemNode& s = stems_[stem_index];
    return {slots_.data() + s.slot_begin, s.slot_count};
  }
  // Hash of any ref (zero for empty), as of the last commit.
  const Bytes32& ref_hash(NodeRef r) const;
  // The children's hashes of internal node i, as of the last commit.
  const ChildHashes& child_hashes(uint32_t i) const { return pairs_[i]; }
  size_t internal_count() const { return internal_.size(); }
  size_t stem_count() const { return stems_.size(); }
  size_t value_count() const { return values_; }
  size_t memory_bytes() const;

  // Leaf hashes of a stem spread over 256 positions (zeros where absent).
  void stem_leaf_hashes(uint32_t stem_index, Bytes32 out[256]) const;

 private:
  // A dirty internal node and where its hash goes: parent_side = parent << 1 | side, or
  // kNoParent for the root.
  struct DirtyNode {
    uint32_t node;
    uint32_t parent_side;
  };
  uint32_t new_internal(uint32_t parent);
  uint32_t new_stem(const uint8_t* stem31, uint32_t parent, unsigned side);
  void mark_internal_dirty(uint32_t idx, unsigned depth, uint32_t parent, unsigned side) {
    mark_internal_dirty_ps(idx, depth, parent == kNoParent ? kNoParent : parent << 1 | side);
  }
  void mark_internal_dirty_ps(uint32_t idx, unsigned depth, uint32_t parent_side) {
    if (internal_[idx].dirty_epoch == epoch_) return;
    internal_[idx].dirty_epoch = epoch_;
    dirty_by_depth_[depth].push_back({idx, parent_side});
  }
  void write_stem_values(uint32_t stem_index, std::span<const Entry> group);  // same-stem entries
  // commit() steps 1-3: leaves, stem subtrees and stem nodes of every dirty stem (each
  // stem's hash also goes into its parent's child-hash line).
  void hash_dirty_stems(CommitStats& cs);

  Hasher h_;
  NodeRef root_ = kEmptyRef;
  uint32_t epoch_ = 1;  // internal nodes with dirty_epoch == epoch_ are dirty
  Bytes32 root_hash_{};
  TreeArray<InternalNode> internal_;
  TreeArray<ChildHashes> pairs_;  // pairs_[i]: the children's hashes of internal_[i]
  TreeArray<StemNode> stems_;
  TreeArray<StemSlot> slots_;
  TreeArray<StemInnerCache> inner_;
  size_t values_ = 0;
  std::vector<std::vector<DirtyNode>> dirty_by_depth_;
  std::vector<uint32_t> dirty_stems_;
  std::vector<std::pair<uint32_t, uint8_t>> dirty_leaves_;  // (stem, sub) written since the last commit, once each
  // Commit scratch (kept to avoid reallocation between commits).
  StemLevels levels_;
  std::vector<Bytes32> scratch_a_, scratch_b_;
  std::vector<StemSlot*> leaf_slots_;
};

}  // namespace st::bintrie
