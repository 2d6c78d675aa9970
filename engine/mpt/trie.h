// trie: the mutable Merkle Patricia Trie. Applies batches of puts and deletes (one block's
// writes) and recomputes the root by re-hashing only the dirty paths.
//
// Nodes live in a chunked arena (chunked_arena.h: growth never moves a node, ids are stable) with
// free lists; a branch's 16 child ids and its children's refs live in a second chunked arena
// (Kids, layout below). A committed node's NodeRef is kept where its parent reads it (the
// parent's children slot; see Node); a structural change marks the node and all its ancestors dirty (each update
// returns "changed" up the recursion). commit() collects the dirty nodes by depth and
// encodes + hashes them one depth at a time, deepest first, with one keccak256_batch_pull
// per <= 2,048 nodes of a depth (the kernel pulls each node's encoding as a lane frees up, so the encoder's
// cache misses overlap the permutations); commit_many() does this for several tries at once (all storage tries of a
// block share their batches).
//
// Canonical form after any sequence (so the root depends only on the contents): empty
// values are never stored (put of an empty value = delete); a branch keeps >= 2 of its 17
// slots; an extension always points to a branch; deletes collapse a one-slot branch into a
// leaf / extension and merge short nodes (spec "Canonical form").
// Keys are byte strings of at most kMaxKeyBytes (recursion depth is bounded by the key).
#pragma once

#include "engine/mpt/chunked_arena.h"
#include "engine/mpt/encoding_chunks.h"
#include <bit>
#include <cassert>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "engine/mpt/builder.h"
#include "engine/mpt/node_decode.h"
#include "engine/mpt/node_source.h"
#include "engine/mpt/node_bytes.h"
#include "engine/mpt/popcount16.h"
#include "kernels/keccak256.h"

namespace st::mpt {

struct CommitStats {
  uint64_t nodes_rehashed = 0, keccak_calls = 0, keccak_bytes = 0, depths = 0;
  uint64_t from_batch_log = 0;  // commits whose dirty nodes came from apply_sorted's log
};

class Trie final : public NodeSource {
 public:
  static constexpr size_t kMaxKeyBytes = 1024;

  struct Write {
    std::span<const uint8_t> key;
    std::span<const uint8_t> value;  // empty = delete
  };

  Trie() = default;
  Trie(const Trie&) = delete;
  Trie& operator=(const Trie&) = delete;
  // Empties the trie (as a new one) and keeps its memory for the next use.
  void clear();
  // Whether the node arrays grown from now on ask for huge pages (the default): a trie that
  // holds only a block's paths and lives block after block (the commit on disk) does not
  // (there the advice measured slower: docs/experiments/2026-12-03-mpt-commit-over-trie.md).
  void set_huge_pages(bool on) {
    nodes_.set_huge_pages(on);
    kids_.set_huge_pages(on);
  }

  void put(std::span<const uint8_t> key, std::span<const uint8_t> value);  // empty value = delete
  void erase(std::span<const uint8_t> key);
  // A batch in any order (later writes to the same key win): sorted by key, deduplicated,
  // then applied by apply_sorted.
  void apply(std::span<const Write> writes);
  // A batch whose keys are strictly ascending (byte order; distinct): one breadth-first
  // descent for the whole batch. Each node on the batch's paths is visited once (shared
  // prefixes are walked once, not once per key), a whole depth at a time, with the next
  // nodes of every path prefetched while the current depth is processed; where a path
  // leaves the existing structure (a leaf, a diverging extension, an empty slot, a key
  // ending at a branch) the keys below are applied one by one there, and the parents are
  // then fixed up deepest first (dirty marks, child refs, collapses after deletes).
  void apply_sorted(std::span<const Write> writes);
  std::optional<std::vector<uint8_t>> get(std::span<const uint8_t> key) const;  // (stops on a stub)
  // Where key's walk ends: the node holding its value (a leaf, or a branch where the key
  // ends), absent, or the first stub on its path (the walk stops there, nothing read).
  struct Found {
    enum What : uint8_t { absent, value, stub } what = absent;
    NodeId node = kNoNode;
  };
  Found find(std::span<const uint8_t> key) const;

  // Unread children (trie_stubs.cpp). A trie may hold committed subtrees it has not read:
  // a stub stands for one by its hash and a locator (its reader's name for it; the trie
  // never interprets it). A stub is clean and its ref lives where its parent reads it, as
  // any clean node's, so a commit never descends into one. No edit may reach a stub: before
  // apply_sorted(writes), stubs_to_resolve(writes) lists every stub the batch would read (on
  // its keys' paths, and the one child left to a branch its deletes may collapse); the
  // reader reads them, checks each against its hash and resolves it (resolve_stub), until
  // none is listed. An edit that reaches a stub stops the process (ST_CHECK). A trie that
  // holds stubs has keys of 32 bytes at most (paths decoded strictly, node_decode.h).
  struct Stub {
    Hash32 hash;
    uint64_t locator;
  };
  // An empty trie becomes the committed trie with this root (a stub; kEmptyRoot: empty),
  // its locators tracked from here on (root_hash_to).
  void reset_to_stub(const Hash32& root, uint64_t locator);
  // Appends to *out the stubs apply_sorted(writes) would read (strictly ascending keys);
  // *siblings (when given) += how many of them are listed only as the child a branch's
  // deletes may leave it with (not on any key's path). *stopped (when given) gets where
  // the walk stopped at each stub on a path: once those are resolved, the next round
  // resumes there (stubs_to_resolve_from, the same writes) instead of from the root.
  struct StubWalk {
    NodeId node;
    uint32_t lo, hi, pos;
    bool batch;
  };
  void stubs_to_resolve(std::span<const Write> writes, std::vector<NodeId>* out, size_t* siblings = nullptr,
                        std::vector<StubWalk>* stopped = nullptr) const;
  void stubs_to_resolve_from(std::span<const Write> writes, std::span<const StubWalk> from, std::vector<NodeId>* out,
                             size_t* siblings, std::vector<StubWalk>* stopped) const;
  bool is_stub(NodeId id) const { return nodes_[id].kind == NodeKind::stub; }
  Stub stub(NodeId id) const;
  // Replaces stub id by the node rlp encodes (its hash checked by the caller): clean, its
  // hashed children new stubs with child_locators (one per hashed reference, in nibble
  // order), its embedded children decoded. An error string when rlp is not a canonical node
  // or the locators do not match (the trie unchanged then).
  std::string resolve_stub(NodeId id, std::span<const uint8_t> rlp, std::span<const uint64_t> child_locators);
  // The same for a node its reader decoded already (decode_node of the checked bytes).
  std::string resolve_decoded(NodeId id, const DecodedNode& dn, std::span<const uint64_t> child_locators);

  // A commit's new nodes handed to a store (trie_sink.cpp), for a trie started from a stub:
  // every node it read keeps the locator it was read under, every node it hands over the
  // one the store gives back, so the next commit places what stayed unchanged. `path`: the
  // node's place, the nibbles from the root to it (not its own path).
  class CommitSink {
   public:
    virtual ~CommitSink() = default;
    // An unchanged subtree the new tree keeps, by its locator.
    virtual void kept(uint64_t locator, std::span<const uint8_t> path) = 0;
    // A new leaf (hashed or embedded), before it is handed over: its whole key in nibbles
    // and its value. Returns how many subtrees the sink handed over just now (kept or new)
    // that the leaf's record takes as its children (an account leaf's storage trie: 0 or
    // 1); an embedded leaf takes none.
    virtual uint32_t leaf(std::span<const uint8_t> key_nibbles, std::span<const uint8_t> value) {
      (void)key_nibbles, (void)value;
      return 0;
    }
    // A new hashed node (the root always): its RLP and how many of the subtrees handed over
    // since (kept or new, not yet taken by a parent) are its children, the most recent ones,
    // in nibble order; hash = keccak256(rlp). Returns its locator. rlp stays valid (the
    // sink may keep the span) until the trie's next hash_pending() or clear().
    virtual uint64_t node(NodeKind kind, std::span<const uint8_t> rlp, uint32_t children,
                          std::span<const uint8_t> path, const Hash32& hash) = 0;
    // A stored node the new tree no longer holds (rewritten or removed).
    virtual void dead(uint64_t locator) = 0;
  };
  // root_hash(), the new nodes handed to sink in post-order (a kept child before its parent
  // as well), then the stored nodes it replaced reported dead: hash_pending() then
  // hand_to(sink).
  Hash32 root_hash_to(CommitSink& sink, CommitStats* stats = nullptr);
  // The two halves of root_hash_to, so that several tries hash in shared batches and hand
  // their nodes over later: hash_pending hashes the dirty nodes of every trie (each one's
  // root: pending_root()) and leaves them dirty; hand_to(sink) hands a hashed trie's tree
  // to sink (the root kept when it is clean) and marks it clean; it returns 1 when it
  // handed a subtree over, 0 for the empty trie. An edit in between is refused (ST_CHECK).
  static void hash_pending(std::span<Trie* const> tries, CommitStats* stats = nullptr);
  Hash32 pending_root() const;
  // After hash_pending, before hand_to: each node it hashed (32 bytes and more, or the
  // root) appended to *out with its digest and level (1: no hashed child below it, else one
  // more than its highest such child's), children before parents; the trie is unchanged.
  // bytes stay valid as hand_to's rlp do.
  struct PendingEncoding {
    const uint8_t* bytes;
    uint32_t len;
    uint32_t level;
    Hash32 hash;
  };
  void pending_encodings(std::vector<PendingEncoding>* out) const;
  uint32_t hand_to(CommitSink& sink);
  // The root's locator (after root_hash_to, or as read); kNoLocator when empty or unknown.
  static constexpr uint64_t kNoLocator = UINT64_MAX;
  uint64_t root_locator() const;
  // Where node id is stored (the locator it was read or handed over under); kNoLocator for
  // a new node, one embedded in its parent, or a trie that does not track locators.
  uint64_t locator(NodeId id) const { return tracks_locs_ && id < locs_.size() ? locs_[id] : kNoLocator; }
  // Appends every stub of the trie to *out (a reader that loads a whole trie).
  void all_stubs(std::vector<NodeId>* out) const;

  // Re-hashes the dirty paths and returns the root (kEmptyRoot when empty).
  Hash32 root_hash(CommitStats* stats = nullptr, NodeCapture* capture = nullptr);
  static void commit_many(std::span<Trie* const> tries, CommitStats* stats = nullptr, NodeCapture* capture = nullptr);
  bool dirty() const { return root_ != kNoNode && is_dirty(nodes_[root_]); }

  size_t live_nodes() const { return nodes_.size() - free_nodes_.size(); }

  // NodeSource
  NodeId root_id() const override { return root_; }
  bool committed() const override { return !dirty(); }
  NodeView view(NodeId id) const override;
  NodeRef ref(NodeId id) const override;  // re-encodes the node (nodes cache no ref)
  void encode(NodeId id, std::vector<uint8_t>* out) const override;

 private:
  // One node = two 64-byte lines (alignas(64), arena chunks are 64-byte aligned):
  //
  //   Node (128 B):  kind | has_value | epoch | dirty_mask | kid_mask | child   (bytes 0-11)
  //                  bytes: value_len | path_len | path nibbles, then value      (12-127, node_bytes.h)
  //
  // Dirty flags by epoch: a node is dirty exactly when its epoch equals the trie's epoch_
  // (is_dirty), so a commit cleans every node at once by bumping epoch_ (no node line is
  // written). epoch_ is never 0 and a node's epoch 0 means clean; when epoch_ would wrap,
  // the commit first sets every node's epoch to 0 (all nodes are clean then), so a stale
  // epoch never reads as dirty. A clean node's dirty_mask is stale: read it through
  // dirty_kids(); mark_dirty() zeroes it when a clean branch becomes dirty.
  // Line 0 holds everything a walk or the commit's collect pass reads of a branch (kind,
  // dirty flags, masks, child); a secure leaf's path and value (<= 64 + 33 bytes) fill the
  // rest of line 0 and line 1. Nodes cache no ref: a committed node's ref lives where its
  // parent reads it -- the parent branch's children slot, the parent extension's value
  // bytes (an extension's value is its child's ref, valid while the child is clean), or
  // root_ref_ for the root.
  struct alignas(64) Node {
    NodeKind kind = NodeKind::leaf;
    bool has_value = false;      // branch: value non-empty
    uint16_t epoch = 0;          // dirty <=> epoch == the trie's epoch_ (0: clean)
    uint16_t dirty_mask = 0;     // branch, while dirty: children that are dirty (commit descends only into those)
    uint16_t kid_mask = 0;       // branch: its non-empty children (bit i <=> kids.id[i] != kNoNode); the
                                 // commit reads (and prefetches) only their popcount(kid_mask) dense slots
    NodeId child = kNoNode;      // extension: child; branch: index of its children block
    NodeBytes bytes;             // leaf: path + value; extension: path + child ref; branch: value
  };
  static_assert(sizeof(Node) == 128, "a node is two cache lines");
  struct Result {
    NodeId id;
    bool changed;
  };
  bool is_dirty(const Node& x) const { return x.epoch == epoch_; }
  uint16_t dirty_kids(const Node& x) const { return is_dirty(x) ? x.dirty_mask : uint16_t(0); }
  void mark_dirty(Node& x) {
    if (x.epoch == epoch_) return;
    x.epoch = epoch_;
    x.dirty_mask = 0;  // (stale while clean)
  }
  // After a commit (every node clean): all dirty marks cleared at once.
  void bump_epoch();

  // The node store and the encoder below are inline in trie_internal.h (the hot paths of
  // every trie_*.cpp call them).
  inline NodeId alloc(NodeKind kind);
  inline void release(NodeId id);
  inline NodeId new_leaf(const uint8_t* nib, size_t n, std::span<const uint8_t> value);
  inline NodeId new_ext(const uint8_t* nib, size_t n, NodeId child);
  static void set_branch_value(Node& b, std::span<const uint8_t> value) {
    b.bytes.set_value(value);
    b.has_value = !value.empty();
  }
  // The committed ref of an extension's child (its value bytes; valid while the child is clean).
  static NodeRef ext_child_ref(const Node& e) {
    NodeRef r;
    r.len = uint8_t(e.bytes.value_size());
    std::memcpy(r.bytes, e.bytes.value_data(), r.len);
    return r;
  }
  // Stores a freshly committed ref where the parent reads it: children slot nib (a rank) of
  // block parent_kids; else (parent_kids == kNoNode) the value of extension `nib`, or root_ref_
  // when nib == kNoNode.
  void store_ref(uint32_t parent_kids, uint32_t nib, const NodeRef& r) {
    if (parent_kids != kNoNode) store_kid_ref(parent_kids, nib, r);
    else if (nib != kNoNode) nodes_[nib].bytes.set_value(r.bytes, r.len);
    else root_ref_ = r;
  }
  // A branch's children: ids (line 0, by nibble) and their committed refs cached next to
  // them (encoding a branch reads one block instead of 16 scattered nodes), one aligned
  // 32-byte slot per *present* child, packed in nibble order (dense), two per line, so a
  // branch with c children is encoded from ceil(c / 2) slot lines:
  //
  //   Kids (576 B, 9 lines):  line 0: id[0..15] (u32 by nibble, kNoNode = empty)
  //                           line 1 + j: slot[2j] | slot[2j+1]      (j = 0..7)
  //   slot s (32 B):  a hash ref: its 32 bytes;  an embedded ref (len 1..31, bit s of
  //                   kids_embedded_[block] set): bytes[0..len) and len in byte 31
  //
  // Invariants: the child at nibble i uses slot rank(kid_mask, i) = the number of present
  // children below i; slots at and above popcount(kid_mask) are unused. For a clean child
  // the slot holds the child's ref; the branch node's dirty_mask marks the dirty children
  // (their slots are written when the commit hashes them). A change of kid_mask moves the
  // kept clean children's slots (and embedded bits) to their new ranks (remask).
  struct alignas(64) Kids {
    std::array<NodeId, 16> id;
    uint8_t slot[16][32];
  };
  Kids& kids(NodeId branch) { return kids_[nodes_[branch].child]; }
  const Kids& kids(NodeId branch) const { return kids_[nodes_[branch].child]; }
  static unsigned slot_rank(uint32_t kid_mask, unsigned nib) { return popcount16(kid_mask & ((1u << nib) - 1)); }
  // Writes a child's ref (non-empty) into slot s (a rank, not a nibble) of children block k.
  void store_kid_ref(uint32_t k, unsigned s, const NodeRef& r) {
    const uint16_t bit = uint16_t(1u << s);
    uint8_t* slot = kids_[k].slot[s];
    if (r.len == 32) {
      std::memcpy(slot, r.bytes, 32);
      if (any_embedded_) kids_embedded_[k] &= uint16_t(~bit);  // (else every bit is 0 already)
    } else {
      std::memcpy(slot, r.bytes, r.len);
      slot[31] = r.len;
      kids_embedded_[k] |= bit;
      any_embedded_ = true;
    }
  }
  // The ref of child slot nib of a branch node (empty when the slot is).
  inline NodeRef kid_ref(const Node& branch, unsigned nib) const;
  // Links child into slot nib; a clean child's ref (clean_ref) goes into the slot.
  inline void set_kid(NodeId branch, unsigned nib, NodeId child, const NodeRef& clean_ref = NodeRef{});
  // Sets branch b's kid_mask to m, moving the slots of the children kept clean (in both
  // masks, not in b.dirty_mask) to their new ranks; the other slots are left undefined.
  inline void remask(Node& b, uint16_t m);

  // Unread children (trie_stubs.cpp) and their locators (trie_sink.cpp). locs_[id]: where
  // node id is stored (read from, or handed to a sink under), kNoLocator for a new node or
  // one embedded in its parent; kept only once a stub was made (tracks_locs_). Released
  // stored nodes wait in released_locs_ for the next root_hash_to to report them dead.
  std::vector<uint64_t> locs_;
  std::vector<uint64_t> released_locs_;
  bool tracks_locs_ = false;
  inline void track_alloc(NodeId id) {
    if (locs_.size() <= id) locs_.resize(size_t(id) + 1, kNoLocator);
    else locs_[id] = kNoLocator;
  }
  // hash_pending() ran and no edit since: hand_to() may read the refs it stored, and the
  // encodings it kept: each node it hashed was encoded in place in enc_bytes_ (which
  // never moves them), its bytes at enc_at_[id].
  bool hashed_pending_ = false;
  struct EncAt {
    const uint8_t* bytes = nullptr;
    uint32_t len = 0;
  };
  EncodingChunks enc_bytes_;
  std::vector<EncAt> enc_at_;
  uint32_t sink_subtree(NodeId n, const NodeRef& ref, bool top, CommitSink& sink, std::vector<uint8_t>& path);
  uint32_t pending_below(NodeId n, const NodeRef& ref, bool top, std::vector<PendingEncoding>* out) const;
  static void hash_dirty_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture);
  inline uint32_t alloc_kids();
  NodeId new_stub(const uint8_t* hash32, uint64_t locator);
  NodeId resolved_child(const ChildRef& r, std::span<const uint64_t> locs, size_t* next_loc);
  void fill_decoded(NodeId id, const DecodedNode& dn, std::span<const uint64_t> locs, size_t* next_loc);
  struct StubListing {
    std::vector<NodeId>* paths;     // stubs on the keys' paths
    std::vector<NodeId>* left;      // stubs a collapse may leave alone in their branch
    std::vector<StubWalk>* stopped;  // where the walks stopped at those on paths (or null)
  };
  void list_stubs(std::span<const Write> writes, std::span<const StubWalk> from, std::vector<NodeId>* out,
                  size_t* siblings, std::vector<StubWalk>* stopped) const;
  void stubs_below(NodeId n, std::span<const Write> writes, uint32_t lo, uint32_t hi, uint32_t pos, bool batch,
                   StubListing& out) const;
  void stubs_for_branch(const Node& x, std::span<const Write> writes, uint32_t lo, uint32_t hi, uint32_t pos,
                        bool batch, StubListing& out) const;

  // Edits (trie_edits.cpp).
  Result insert(NodeId n, const uint8_t* key, size_t klen, size_t pos, std::span<const uint8_t> value);
  Result remove(NodeId n, const uint8_t* key, size_t klen, size_t pos);
  // After a branch changed: keeps it if it still has >= 2 slots, else collapses it (spec
  // "Canonical form"; an emptied branch becomes kNoNode).
  Result collapse_branch(NodeId n);
  // After the child of extension e changed to `child`: re-link, merge with a short child, or
  // drop e when the child is gone.
  Result relink_extension(NodeId e, NodeId child);

  // apply_sorted's steps (trie_sorted_apply.cpp): the cursors of the batch descent, one per position,
  // top down (batch_descent), then bottom up (batch_finish_cursor).
  struct BatchCursor;
  struct BatchScratch;
  size_t batch_descent(std::span<const Write> writes, BatchScratch& sc);
  inline void batch_prefetch_descent(const std::vector<BatchCursor>& level, size_t i) const;
  inline bool batch_descend_extension(BatchCursor& c, uint32_t ci, const Node& x, std::span<const Write> writes,
                               std::vector<BatchCursor>& next);
  inline void batch_descend_branch(BatchCursor& c, uint32_t ci, const Node& x, std::span<const Write> writes,
                            std::vector<BatchCursor>& next);
  inline void batch_apply_writes(BatchCursor& c, std::span<const Write> writes, std::vector<uint8_t>& nibbles);
  inline void batch_finish_cursor(BatchScratch& sc, size_t d, BatchCursor& c, bool& logging);
  inline void batch_finish_descended(BatchCursor& c, uint32_t ref_at, bool& logging);
  inline void batch_hand_to_parent(const BatchCursor& c, BatchCursor& p);

  // commit_many's steps (trie_commit.cpp): the dirty nodes by depth (from the batch logs or by a
  // walk), then hashed deepest first.
  struct CommitItem;
  struct CommitScratch;
  struct CommitFeed;
  static bool commit_logs_valid(std::span<Trie* const> tries, uint32_t* max_height);
  static size_t commit_lists_from_logs(std::span<Trie* const> tries, CommitScratch& sc, uint32_t max_height);
  static void release_dirty_logs(std::span<Trie* const> tries);
  static void commit_collect_level(const std::vector<CommitItem>& level, std::vector<CommitItem>& next);
  static size_t commit_lists_by_walk(std::span<Trie* const> tries, CommitScratch& sc);
  static void commit_hash_lists(CommitScratch& sc, size_t depths, CommitStats& st, NodeCapture* capture);
  static inline void commit_prefetch(const std::vector<CommitItem>& level, size_t i);
  // Item it's encoding: returns its first byte, *end one past its last; into lane_buf, or,
  // in a trie that tracks locators, into enc_bytes_ where hand_to finds it (enc_at_).
  inline uint8_t* encode_commit_item(const CommitItem& it, std::vector<uint8_t>& lane_buf, uint8_t** end);
  // commit_many's producer for keccak256_batch_pull (ctx: a CommitFeed, trie_commit.cpp).
  static bool commit_feed_next(void* ctx, unsigned lane, st::kernels::Keccak256Message* m);

  inline size_t encoded_size(const Node& x) const;
  inline size_t encoded_bound(const Node& x) const;  // >= encoded_size, no child reads for branches
  inline uint8_t* put_encoding(const Node& x, uint8_t* out) const;

  // The dirty nodes of one batch, recorded by apply_sorted when it starts from a clean
  // trie and changes no structure above its frontiers (no collapse, no merge): each with
  // the children-block slot its ref goes to and its height (leaf 0, else 1 + the tallest
  // dirty child). commit_many then hashes by height from this log instead of collecting
  // the dirty nodes again. Valid only while dirty_log_valid_ (any other write clears it).
  //
  // A branch without a value is logged with what its encoding needs (children block and
  // kid_mask, final at logging time), so the commit encodes it from its slot lines without
  // reading its node line (kids == kNoNode: read the node).
  struct DirtyRecord {
    NodeId id;
    uint32_t parent_kids;  // kNoNode: the root, or an extension's child
    uint32_t nib;          // the slot (rank) in parent_kids; parent_kids == kNoNode: the parent extension's id (kNoNode: the root)
    uint32_t kids;         // a branch without a value: its children block; else kNoNode
    uint16_t height;
    uint16_t kid_mask;     // with kids: the branch's kid_mask
  };
  void log_node(NodeId n, uint32_t parent_kids, uint32_t slot, uint32_t height) {
    const Node& x = nodes_[n];
    const bool plain_branch = x.kind == NodeKind::branch && !x.has_value;
    assert(height <= 0xffff);  // (keys of at most kMaxKeyBytes: heights <= 2 * kMaxKeyBytes + 1)
    dirty_log_.push_back({n, parent_kids, slot, plain_branch ? x.child : kNoNode, uint16_t(height), plain_branch ? x.kid_mask : uint16_t(0)});
  }
  uint32_t log_subtree(NodeId n, uint32_t parent_kids, uint32_t slot);  // returns its height
  std::vector<DirtyRecord> dirty_log_;
  bool dirty_log_valid_ = false;

  ChunkedArena<Node> nodes_;
  ChunkedArena<Kids> kids_;
  std::vector<uint16_t> kids_embedded_;  // per children block: slots holding embedded refs
  // Set once any embedded ref was stored, never cleared; while false every kids_embedded_
  // entry is 0 and is neither read nor written (a secure trie's refs are all hashes: its
  // commit then skips one random access into the 2-bytes-per-branch array per dirty node).
  bool any_embedded_ = false;
  std::vector<NodeId> free_nodes_;
  std::vector<uint32_t> free_kids_;
  NodeId root_ = kNoNode;
  NodeRef root_ref_;  // the root's committed ref (valid while the root is clean)
  uint16_t epoch_ = 1;  // never 0 (see Node)
  std::vector<uint8_t> nib_scratch_;
};

}  // namespace st::mpt
