// mutable_tree: the binary trie held in memory, updated by batches of writes and re-hashed
// only along dirty paths, level by level.
//
//   internal nodes  flat array of {child[2] (tagged refs)} (8 bytes), a side array of
//                   parents and, in step, one 64-byte line of their children's hashes
//                   (ChildHashes); a node's own hash is in its parent's line
//   stems           flat array of one 64-byte line each {stem31, dirty, parent_side, slot
//                   range, inner, the first 16 sub indices}; a stem's hash is in its
//                   parent's line (or is the root hash). The present values live in a slot
//                   pool of 64-byte lines {value, leaf hash H(value)}, ascending by sub
//                   index; dense stems (>= kDenseStemValues values) also keep their
//                   511-node subtree in a side pool
//   ref             uint32: 0 = empty, 01b<<30 | i = internal i, 10b<<30 | i = stem i,
//                   11b<<30 | i = stub i (an unread committed subtree, mutable_tree_stubs.cpp)
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
// apply() only records writes and lists dirty paths (one level-synchronous walk over the
// distinct dirty nodes, then the mutations in key order); commit() hashes: dirty leaves
// (one hash32_batch), dirty stem subtrees (one hash64_batch per level across all dirty
// stems), stem nodes, then dirty internal nodes deepest first, depth by depth; stem and
// internal nodes in chunks of 32 messages, each chunk's parent lines written while still
// cached (see docs/bintrie.md).
//
// Unread subtrees: a tree may start as one stub (reset_to_stub) and read group and stem blobs
// only where its batches go (stubs_to_resolve, resolve_group_stub, resolve_stem_stub); see
// "Unread subtrees" below and docs/bintrie.md.
//
// Invariants: after commit() every node's hash is its canonical hash, and
// child_hashes(i).h[s] is the hash of internal(i).child[s] (zero for an empty child), and
// stem(i).parent_side names the line holding stem i's hash; the shape is the canonical
// shape of the key set (independent of write order and batching).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/stem_subtree.h"
#include "kernels/support/check.h"
#include "kernels/support/large_alloc.h"

namespace st::bintrie {

struct StemBlobView;   // group_blob.h
struct GroupBlobView;  // group_blob.h

using NodeRef = uint32_t;
inline constexpr NodeRef kEmptyRef = 0;
inline constexpr uint32_t kRefTagInternal = 1u << 30, kRefTagStem = 2u << 30, kRefTagStub = 3u << 30,
                          kRefIndexMask = (1u << 30) - 1;
inline bool ref_is_internal(NodeRef r) { return (r >> 30) == 1; }
inline bool ref_is_stem(NodeRef r) { return (r >> 30) == 2; }
inline bool ref_is_stub(NodeRef r) { return (r >> 30) == 3; }
inline uint32_t ref_index(NodeRef r) { return r & kRefIndexMask; }

// Internal node topology, 8 bytes (eight per cache line): the path walks of apply() read
// only these. A node's own hash is not here: it lives in its parent's ChildHashes (or in
// the root hash), so commit() finds a dirty node's whole message, both child hashes, in
// one line it can address (and prefetch) without first reading the node. Parents and dirty
// marks live in side arrays (parent_, a dirty bitset) that the walks do not read.
inline constexpr uint32_t kNoParent = UINT32_MAX;
struct InternalNode {
  NodeRef child[2] = {kEmptyRef, kEmptyRef};
};
// The hashes of an internal node's two children (zero for an empty child), one cache
// line: exactly the 64-byte message of the node's hash.
struct alignas(64) ChildHashes {
  Hash32 h[2]{};
};

// A stem's present value and its cached leaf hash H(value): one aligned line (a write to a
// slot reads and writes exactly this line). The slot's sub index lives with the stem (see
// StemNode::sub_inline and slot_sub_).
struct alignas(64) SlotData {
  Hash32 value{};
  Hash32 leaf_hash{};
};
// One present value of a stem as the readers see it (slots(): a copy, not storage).
struct StemSlot {
  uint8_t sub = 0;
  Hash32 value{};
  Hash32 leaf_hash{};
};

// One aligned 64-byte line per stem. Its hash is not here: it lives in the parent's
// ChildHashes line (or in the root hash when the stem is the root), written by commit()
// through parent_side, so commit() never reads a parent to place it.
//
//   0      31   32      36          40        42       44     48            64
//   | stem | dirty | parent_side | slot_begin | count | cap | inner | sub_inline[16] |
//
// The sub indices of the stem's slots (ascending, one per present value) are sub_inline
// while slot_cap <= kInlineSubs, else slot_sub_[slot_begin ..] (parallel to the slot pool).
inline constexpr uint16_t kInlineSubs = 16;
struct alignas(64) StemNode {
  Stem stem{};
  uint8_t dirty = 0;
  uint32_t parent_side = kNoParent;  // parent internal index << 1 | the side it hangs on
                                     // (commit writes the stem's hash there without reading
                                     // the parent); kNoParent: the stem is the root
  uint32_t slot_begin = 0;
  uint16_t slot_count = 0;   // present values (1..256)
  uint16_t slot_cap = 0;
  uint32_t inner = UINT32_MAX;  // index into the dense-stem cache, if any
  uint8_t sub_inline[kInlineSubs] = {};
};
static_assert(sizeof(StemNode) == 64 && sizeof(SlotData) == 64);

// A dense stem's whole 8-level subtree in heap order: node[0] = R, children of i at 2i+1
// and 2i+2, leaf hashes at 255 + sub (zero where absent). 16 KiB.
struct StemInnerCache {
  Hash32 node[511];
};

// Stems with at least this many present values keep their whole subtree (StemInnerCache):
// a write then rehashes only its 8 ancestors instead of the sparse subtree over every
// present leaf (up to 255 nodes). Measured in docs/benchmarks-bintrie.md.
inline constexpr uint16_t kDenseStemValues = 32;

// The tree's big flat arrays live in large_alloc blocks (huge pages from 4 MiB on: the random
// path walks of a 1M-key tree otherwise pay a TLB miss and a page walk per node), or the
// same blocks without the huge-page advice (huge_pages false: the block commit on disk,
// where the advice measured slower on one host, docs/persist-commit.md).
template <class T>
struct TreeArrayAllocator {
  using value_type = T;
  bool huge_pages = true;
  TreeArrayAllocator() = default;
  explicit TreeArrayAllocator(bool huge) : huge_pages(huge) {}
  template <class U>
  TreeArrayAllocator(const TreeArrayAllocator<U>& o) : huge_pages(o.huge_pages) {}
  T* allocate(size_t n) { return static_cast<T*>(large_alloc(n * sizeof(T), huge_pages)); }
  void deallocate(T* p, size_t n) { large_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const TreeArrayAllocator<U>& o) const { return huge_pages == o.huge_pages; }
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
  // huge_pages: whether the node arrays take the huge-page advice (TreeArrayAllocator).
  explicit MutableTree(Hasher h, bool huge_pages = true);

  // Records a batch of writes (later writes to a key win) and marks dirty paths.
  void apply(std::span<const Entry> writes);
  // Re-hashes everything dirty; returns the root.
  Hash32 commit(CommitStats* stats = nullptr);
  // The root as of the last commit (apply() without commit() leaves it stale).
  Hash32 root() const { return root_hash_; }

  std::optional<Hash32> get(const Hash32& key) const;  // (stops on a stub)
  // Stem index of a stem, if present (stops on a stub).
  std::optional<uint32_t> find_stem(const uint8_t* stem31) const;

  // Unread subtrees (mutable_tree_stubs.cpp). A tree may hold committed subtrees it has not
  // read: a stub stands for one (an internal node's subtree or a stem) by its hash and a
  // locator (its reader's name for it; the tree never interprets it). A stub is clean: its
  // hash sits where its parent's ChildHashes line (or the root hash) reads it, so commit()
  // never descends into it. No apply may reach a stub: before apply(writes),
  // stubs_to_resolve(writes) lists every stub the batch would read (the slots the writes'
  // stems reach: a stem written to, a stem split by a new one, or a subtree above either);
  // the reader reads each and resolves it with the blob it read, until none is listed. An
  // apply, get, find_stem, proof or blob walk that reaches a stub stops the process
  // (ST_CHECK). A stub id is valid until its stub is resolved (ids are reused).
  using StubId = uint32_t;
  struct Stub {
    Hash32 hash{};
    uint64_t locator = 0;
  };
  // An empty tree becomes the committed tree with this root (one stub; zero: the empty tree).
  void reset_to_stub(const Hash32& root, uint64_t locator);
  // Forgets every node and stub (the empty tree, nothing dirty); the arrays keep their memory
  // for the next tree (a block commit's tree, reset_to_stub each block).
  void clear();
  // Appends to *out (each once) the stubs apply(writes) would read; writes in any order.
  // They also cover get() of the writes' keys.
  void stubs_to_resolve(std::span<const Entry> writes, std::vector<StubId>* out) const;
  Stub stub(StubId id) const;
  // The stub's bit path from the root, MSB first, into path[32] (zero past it); returns
  // its depth in bits (the blob key of a path-keyed store: blob_key(path, depth)).
  unsigned stub_path(StubId id, uint8_t path[32]) const;
  // Replaces stub id by the g levels of internal nodes a group blob of depth g describes,
  // its inner hashes recomputed from the entries, each entry a new stub with the locator
  // entry_locators gives it (one per entry, bitmap order). Or replaces it by the stem a stem
  // blob holds, with all its values and leaf hashes (and the subtree of a dense stem). Each
  // checks the blob strictly and that its recomputed hash is the stub's; on any error it
  // returns the message and leaves the tree unchanged. A group blob for a stub known to be
  // a stem (an entry ending above its group's bottom) is refused; the hash cannot tell a
  // stem from an internal node whose children hash as stem || 0x00 and the stem's subtree
  // root (both are 64-byte messages), so the reader must read the blob the disk layout
  // holds at the stub's position (see docs/bintrie.md).
  std::string resolve_group_stub(StubId id, unsigned g, std::span<const uint8_t> blob,
                                 std::span<const uint64_t> entry_locators);
  std::string resolve_stem_stub(StubId id, std::span<const uint8_t> blob);
  // The same from a blob a reader already checked strictly (check_group_blob's view, a
  // decoded stem blob's view: the hash and position checks above still run); *placed, when
  // given, receives the ref that took the stub's place (its group's top internal node, or
  // the stem); *hash_mismatch, when given, says whether the error was the hash's (the blob
  // well formed, its hash not the stub's).
  std::string resolve_group_stub(StubId id, const GroupBlobView& checked, std::span<const uint64_t> entry_locators,
                                 NodeRef* placed, bool* hash_mismatch = nullptr);
  std::string resolve_stem_stub(StubId id, const StemBlobView& checked, NodeRef* placed,
                                bool* hash_mismatch = nullptr);
  size_t stub_count() const { return stubs_.size() - free_stubs_.size(); }  // unresolved stubs

  // Read access for blobs, proofs and statistics.
  const Hasher& hasher() const { return h_; }
  NodeRef root_ref() const { return root_; }
  const InternalNode& internal(uint32_t i) const { return internal_[i]; }
  // Internal index of node i's parent (kNoParent for the root).
  uint32_t parent(uint32_t i) const { return parent_[i]; }
  const StemNode& stem(uint32_t i) const { return stems_[i]; }
  // A stem's present values, ascending by sub index (iterates StemSlot copies).
  class SlotRange {
   public:
    class iterator {
     public:
      iterator(const uint8_t* sub, const SlotData* d) : sub_(sub), d_(d) {}
      StemSlot operator*() const { return {*sub_, d_->value, d_->leaf_hash}; }
      iterator& operator++() { ++sub_; ++d_; return *this; }
      bool operator!=(const iterator& o) const { return d_ != o.d_; }
     private:
      const uint8_t* sub_;
      const SlotData* d_;
    };
    SlotRange(const uint8_t* sub, const SlotData* d, size_t n) : sub_(sub), d_(d), n_(n) {}
    iterator begin() const { return {sub_, d_}; }
    iterator end() const { return {sub_ + n_, d_ + n_}; }
    size_t size() const { return n_; }
   private:
    const uint8_t* sub_;
    const SlotData* d_;
    size_t n_;
  };
  SlotRange slots(uint32_t stem_index) const {
    const StemNode& s = stems_[stem_index];
    return {subs_of(s), slots_.data() + s.slot_begin, s.slot_count};
  }
  // Hash of any ref (zero for empty), as of the last commit.
  const Hash32& ref_hash(NodeRef r) const;
  // The children's hashes of internal node i, as of the last commit.
  const ChildHashes& child_hashes(uint32_t i) const { return pairs_[i]; }
  size_t internal_count() const { return internal_.size(); }
  size_t stem_count() const { return stems_.size(); }
  size_t value_count() const { return values_; }
  size_t memory_bytes() const;

  // Leaf hashes of a stem spread over 256 positions (zeros where absent).
  void stem_leaf_hashes(uint32_t stem_index, Hash32 out[256]) const;

 private:
  // A dirty internal node and where its hash goes: parent_side = parent << 1 | side, or
  // kNoParent for the root.
  struct DirtyNode {
    uint32_t node;
    uint32_t parent_side;
  };
  // A stub's entry: its hash, its locator, where it hangs (as StemNode::parent_side) and
  // whether it is known to be a stem; `live` is false once resolved (its id is then free).
  struct StubEntry {
    Hash32 hash{};
    uint64_t locator = 0;
    uint32_t parent_side = kNoParent;
    uint8_t live = 0;
    uint8_t known_stem = 0;
  };
  const StubEntry& live_stub(StubId id) const;
  NodeRef new_stub(const Hash32& hash, uint64_t locator, uint32_t parent_side, bool known_stem);
  // The stub's slot takes ref (its parent's child, or the root); the stub's id is freed.
  void replace_stub(StubId id, NodeRef ref);
  void stubs_on_paths(NodeRef ref, unsigned depth, std::span<const Stem> stems, std::vector<StubId>* out) const;
  unsigned slot_path(uint32_t parent_side, uint8_t path[32]) const;
  struct GroupShape;  // a checked group blob's heap (mutable_tree_stubs.cpp)
  NodeRef build_group(const GroupShape& shape, size_t at, uint32_t parent_side, std::span<const uint64_t> entry_locators);
  uint32_t place_stem(uint32_t parent_side, const StemBlobView& v, const Hash32* leaf_hashes, const DenseStemTree& tree);
  // A stem ref's index; apply stops here on anything else (a stub it was not given).
  static uint32_t stem_index_of(NodeRef ref) {
    ST_CHECK(ref_is_stem(ref), "binary trie: a write reached an unread subtree (resolve what stubs_to_resolve lists first)");
    return ref_index(ref);
  }
  uint32_t new_internal(uint32_t parent);
  uint32_t new_stem(const uint8_t* stem31, uint32_t parent, unsigned side);
  void mark_internal_dirty_ps(uint32_t idx, unsigned depth, uint32_t parent_side) {
    uint64_t& w = dirty_bits_[idx >> 6];
    const uint64_t bit = uint64_t(1) << (idx & 63);
    if (w & bit) return;
    w |= bit;
    dirty_by_depth_[depth].push_back({idx, parent_side});
  }
  void write_stem_values(uint32_t stem_index, std::span<const Entry> group);  // same-stem entries
  const uint8_t* subs_of(const StemNode& s) const { return s.slot_cap <= kInlineSubs ? s.sub_inline : slot_sub_.data() + s.slot_begin; }
  uint8_t* subs_of(StemNode& s) { return s.slot_cap <= kInlineSubs ? s.sub_inline : slot_sub_.data() + s.slot_begin; }
  // Position of sub among stem s's ascending subs: its slot's offset from slot_begin when
  // present, else where it would be inserted.
  uint32_t sub_position(const StemNode& s, uint8_t sub) const {
    const uint8_t* subs = subs_of(s);
    return uint32_t(std::lower_bound(subs, subs + s.slot_count, sub) - subs);
  }
  // Slot index (into slots_) of sub in stem s; the sub must be present.
  uint32_t find_slot(const StemNode& s, uint8_t sub) const;
  // commit() steps 1-3: leaves, stem subtrees and stem nodes of every dirty stem (each
  // stem's hash also goes into its parent's child-hash line).
  void hash_dirty_stems(CommitStats& cs);
  void hash_written_leaves(CommitStats& cs);
  std::vector<uint32_t> fill_dense_caches(std::span<const uint32_t> dense_stems);
  void hash_dense_subtrees(std::vector<uint32_t> dense_cur, CommitStats& cs);
  void hash_stem_nodes(std::span<const uint32_t> sparse_stems, std::span<const uint32_t> dense_stems, CommitStats& cs);

  Hasher h_;
  NodeRef root_ = kEmptyRef;
  Hash32 root_hash_{};
  TreeArray<InternalNode> internal_;
  TreeArray<uint32_t> parent_;    // parent_[i]: internal index of internal_[i]'s parent
  TreeArray<ChildHashes> pairs_;  // pairs_[i]: the children's hashes of internal_[i]
  // Bit i: internal node i is listed dirty; kept only while several applies precede a
  // commit (dirty_bits_set_), see apply().
  std::vector<uint64_t> dirty_bits_;
  bool dirty_bits_set_ = false;
  TreeArray<StemNode> stems_;
  TreeArray<SlotData> slots_;
  TreeArray<uint8_t> slot_sub_;  // sub indices of stems with slot_cap > kInlineSubs (parallel to slots_)
  TreeArray<StemInnerCache> inner_;
  std::vector<StubEntry> stubs_;
  std::vector<StubId> free_stubs_;  // resolved stubs' ids, reused
  size_t values_ = 0;
  std::vector<std::vector<DirtyNode>> dirty_by_depth_;
  std::vector<uint32_t> dirty_stems_;
  std::vector<std::pair<uint32_t, uint8_t>> dirty_leaves_;  // (stem, sub) written since the last commit
  bool dirty_leaves_may_repeat_ = false;  // apply() ran more than once since the last commit
  bool applied_since_commit_ = false;
  // Commit scratch (kept to avoid reallocation between commits).
  StemLevels levels_;
  std::vector<Hash32> scratch_a_, scratch_b_;
  std::vector<uint32_t> leaf_slots_;
};

}  // namespace st::bintrie
