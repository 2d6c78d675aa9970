// mpt/dirty_trie: the partial MPT of one block commit (mpt/commit.h), in memory: the
// records on the block's dirty paths read from disk, the writes applied in canonical form,
// the new nodes encoded and pushed into the SubtreePacker. MptCommitter drives it; nothing
// else should include this file. The same code serves both stores; only the node source and
// sink differ (CommitFrame::keyed()): arena records by locator through the PageReader and
// new records into the SubtreePacker, or RocksDB nodes by path key (one MultiGet per round)
// and new nodes into the commit's WriteBatch under their path keys.
//
//   Node (index-addressed in nodes_; the vector grows, so never a pointer):
//     stub    a hashed child not read yet: its locator (the hash its parent holds: refs_)
//     leaf    path (nibbles below the parent), value (the RLP string payload); an account
//             leaf also names its storage trie's top node (`storage`, -1 = empty storage)
//     ext     path, kids[0]
//     branch  kids[16] (-1 = empty slot)
//   A node of the committed state also knows where it is: its absolute nibble path
//   (at[0..depth)) and, in a storage trie, its account (owner: index into owners_), so that
//   its RocksDB path key can be named (a stub to read, a replaced node to delete).
//   Its hash and locator lie apart from it, in refs_ (one dense 48-byte CommittedRef per
//   node of the committed state): the encoding pass reads only those of a kept child.
//
// Invariants: the nodes of the committed state (stubs, records read, embedded nodes decoded
// from them) are nodes_[0, refs_.size()), every one with its CommittedRef; the apply pass's
// new nodes come after them. A node read from a record keeps its locator and hash and is
// never modified;
// the apply pass builds `fresh` nodes that point at unchanged ones (copy-on-write in
// memory), so a pass that finds an unread sibling is thrown away (nodes_ truncated) and
// redone after the sibling is read; every record read is checked against its parent's hash
// before it is decoded. A node kept by the new tree stays at its absolute path (canonical
// form moves only leaves and extensions, which are then rewritten), so a RocksDB key that
// holds a kept node never needs rewriting (checked when encoding). The new nodes are all
// encoded and hashed in memory (hash_all) before any is packed or written (write_all), in
// the packer's post-order, so the hash time and the page writes are timed apart.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/mpt/node_ref.h"
#include "engine/persist/commit_frame.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/pure_hash.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/subtree_packer.h"
#include "engine/state/state_types.h"

namespace st::mpt {
struct DecodedNode;  // mpt/node_decode.h
}  // namespace st::mpt

namespace st::persist::mpt_commit_detail {

using mpt::Hash32;

// What the encoding pass reads of a kept child (its hash, its locator, whether it is still a
// stub) is in CommittedRef; of a new node, its first bytes (kind, enc, kids).
struct Node {
  enum Kind : uint8_t { stub, leaf, ext, branch };
  Kind kind = stub;
  bool storage_trie = false;
  bool fresh = false;
  bool reused = false;
  uint8_t path_len = 0;
  uint8_t depth = 0;          // node of the committed state: absolute nibble depth
  int32_t enc = -1;           // a node the new tree encodes: its Enc (hash_all), else unset
  Locator loc = kNoLocator;   // stub / node read from a record (kNoLocator: embedded or fresh;
                              // RocksDB: kKeyedNode, the key is named by at / depth / owner)
  std::array<int32_t, 16> kids;
  int32_t storage = -1;       // account leaf: the storage trie's top node
  int32_t acct = -1;          // fresh account leaf: its AccountOp (the value is recomputed)
  uint32_t body_len = 0;      // record body bytes (node read from a record)
  uint32_t val_off = 0, val_len = 0;
  int32_t owner = -1;          // node of the committed state in a storage trie: its account
                               // (owners_), -1 = account trie
  std::array<uint8_t, 64> path{};
  std::array<uint8_t, 32> at{};  // node of the committed state: nibbles [0, depth) of its
                                 // absolute path, packed
  Node() { kids.fill(-1); }
};

// A RocksDB node's "locator": it is named by its path key, not by a place.
inline constexpr Locator kKeyedNode = 0;

// A node of the committed state as its parent references it: kept by the new tree (placed,
// not rewritten) when it has a locator (a stub or a record read; an embedded node has none).
struct CommittedRef {
  Hash32 hash{};             // stub / record: keccak256 of its RLP (embedded: unset)
  Locator loc = kNoLocator;  // Node::loc
  bool stub = false;         // not read (Node::kind == stub)
};

struct Op {
  Hash32 key{};
  bool del = false;
  uint8_t val_len = 0;
  uint8_t val[33];
  int32_t acct = -1;     // account trie: the AccountOp
  bool existed = false;  // storage: the slot was present before
};

struct AccountOp {
  Hash32 key{};
  std::optional<uint64_t> nonce;
  std::optional<state::U256> balance;
  std::optional<Hash32> code_hash;
  std::vector<Op> slots;  // sorted by key, one per key
  bool destroyed = false;  // old account and storage removed before the fields and writes
  bool removed = false;    // destroyed and nothing else: the account leaf is deleted
  uint64_t old_slots = 0;  // destroyed: slots of the old storage (all of it is read)
  int32_t old_leaf = -1;  // the account's leaf before (resolve)
  int32_t new_storage = -1;
};

struct Entry {
  const uint8_t* key;
  int32_t keep;   // an old leaf kept (value, storage) or -1
  const Op* op;   // or a write
};

class DirtyTrie {
 public:
  // frame: the commit's node source and sink (arena or RocksDB).
  DirtyTrie(DbFiles& files, CommitFrame& frame) : files_(files), frame_(frame) {}

  io::Status prepare(const state::StateDiff& diff);
  io::Status resolve();
  io::Status apply_all();
  // The new nodes encoded in one post-order pass that also lists them in the packer's order
  // (pack_ops_, a kept child as a placed subtree) and hashes them in memory as they become
  // ready (a record once its hashed children's digests are in; kReadyBatch records per
  // keccak256_batch), the rest up to the root after it; *root_hash = the new root.
  io::Status hash_all(Hash32* root_hash);
  // The records hash_all() hashed, hashed again alone, level by level (1 = no hashed
  // child), one keccak256_batch per level, under the pure-hash protocol (gathered and sized
  // before the clock, the fastest of two passes: pure_hash_protocol.h); an error if a
  // digest differs from hash_all()'s.
  io::Status pure_hash(PureHashCount* out);
  // After frame.begin_writes(): hash_all()'s records into the frame's packer (arena;
  // *root_loc = the root record) or its WriteBatch (RocksDB; *root_loc = kNoLocator).
  io::Status write_all(Locator* root_loc);
  // RocksDB: the path key of a node of the committed state (stub or read).
  std::string key_of(const Node& n) const;
  // The commit's large arrays, handed from a published commit to the next one (emptied,
  // their capacity kept): a block's commit then neither grows them from nothing nor
  // touches fresh pages. Call take_buffers() before prepare().
  struct Buffers;
  void take_buffers(Buffers&& b);
  Buffers give_buffers();
  void take_scratch(Buffers&& b);

  std::vector<Node> nodes_;
  std::vector<CommittedRef> refs_;  // nodes_[i]'s for i < refs_.size(): the committed state's
  std::vector<uint8_t> pool_;
  std::vector<AccountOp> accts_;
  std::vector<Op> acct_ops_;  // account trie ops, sorted by key
  std::vector<Hash32> owners_;  // storage tries of the committed state: their accounts' keys
  int32_t root_ = -1, new_root_ = -1;
  uint64_t records_read = 0, passes = 0, records_written = 0, bytes_written = 0;

 private:
  // One entry of the packer's post-order: a kept subtree (placed) or a new record (its Enc).
  struct PackOp {
    Locator placed = kNoLocator;
    uint32_t enc = 0;   // a new record: its Enc (kind, bytes, level, digest)
    uint32_t kids = 0;  // pending subtrees it takes as children
  };
  std::vector<PackOp> pack_ops_;
  std::vector<std::string> pack_keys_;  // RocksDB: pack_ops_[i]'s path key (every op is new)
  std::vector<uint8_t> pack_bytes_;

  int32_t add(Node n) {
    n.fresh = true;
    n.reused = false;
    n.loc = kNoLocator;
    nodes_.push_back(n);
    return int32_t(nodes_.size() - 1);
  }
  int32_t add_stub(Locator l, const uint8_t* hash, bool storage_trie) {
    Node n;
    n.kind = Node::stub;
    n.loc = l;
    n.storage_trie = storage_trie;
    nodes_.push_back(n);
    CommittedRef& r = refs_.emplace_back();
    std::memcpy(r.hash.data(), hash, 32);
    r.loc = l;
    r.stub = true;
    return int32_t(nodes_.size() - 1);
  }
  // prepare()'s steps: one account's storage writes in diff order.
  using SlotWrites = std::vector<std::pair<state::Hash32, state::Hash32>>;
  void collect_account_ops(const state::StateDiff& diff, std::vector<SlotWrites>& writes);
  void hash_slot_ops(const std::vector<SlotWrites>& writes);
  io::Status expand(std::vector<int32_t>& stubs);
  // resolve()'s walks: one key's (slot < 0: the account's) at node, nibble pos.
  struct ResolveWalk {
    int32_t node;
    uint32_t pos;
    int32_t acct;
    int32_t slot;  // -1: the account walk
  };
  io::Status resolve_walk(ResolveWalk k, std::vector<ResolveWalk>& walks, std::vector<ResolveWalk>& next,
                          std::vector<int32_t>& stubs);
  io::Status read_destroyed_storage();
  void count_destroyed_slots();
  // stored: a node of its own (an arena record, rv set; or a RocksDB value, rv null); not
  // stored: an embedded node.
  std::string fill(int32_t idx, std::span<const uint8_t> rlp, const RecordView* rv, bool stored, bool storage_trie);
  std::string fill_leaf(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie,
                        bool* account_has_storage);
  std::string fill_extension(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie);
  std::string fill_branch(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie);
  int32_t child_stub(const Node& n, const RecordView* rv, uint32_t h, const uint8_t* nibs, uint32_t len,
                     const uint8_t* hash, bool storage_trie);
  int32_t embedded_child(const Node& n, const uint8_t* nibs, uint32_t len);

  int32_t apply(int32_t n, std::span<const Op> ops, uint32_t d);
  int32_t apply_branch(int32_t n, std::span<const Op> ops, uint32_t d);
  int32_t apply_at_leaf(int32_t n, std::span<const Op> ops, uint32_t d, bool storage_trie);
  int32_t apply_at_extension(int32_t n, std::span<const Op> ops, uint32_t d, bool storage_trie);
  int32_t build(std::span<const Entry> es, uint32_t d, bool storage_trie);
  int32_t leaf_from(const Entry& e, uint32_t d, bool storage_trie);
  int32_t join(const uint8_t* prefix, uint32_t plen, int32_t child);

  // The new tree's encoding (hash_all): each new node encoded once, in post-order while its
  // children are in cache, and appended to the packer's order in the same pass (no second
  // walk over the new nodes and their kept children); a new branch's slots are written as
  // its children are visited (BranchBody), so each child is read once; the walk prefetches
  // the new nodes a few indices ahead (prefetch_ahead) and the record bytes' destination.
  // The hashing runs inside that pass: a hashed record whose hashed children all have their
  // digests is ready; every kReadyBatch ready records are hashed in one keccak256_batch
  // while their bytes are still in cache, and each digest goes into its parent: into the
  // parent's bytes (patch) when the parent is encoded already, where the parent then reads
  // it otherwise. A parent whose last
  // missing digest arrives becomes ready; after the pass the rest is hashed the same way
  // up to the root. A node is kept (referenced by its hash and locator, not rewritten) when
  // it is a stub or was read from its own record.
  static constexpr uint32_t kNoPatch = UINT32_MAX;
  static constexpr uint32_t kNoParent = UINT32_MAX;
  static constexpr size_t kReadyBatch = 128;
  struct Enc {
    uint32_t level = 0;      // 1 + the highest level of its new children (0: kept / not reached)
    bool top = false;        // a trie's root: hashed whatever its length
    bool hashed = false;     // its own record (>= 32 bytes or top); else embedded in its parent
    bool digested = false;   // hashed, and its digest is in ref
    uint8_t kind = 0;
    uint32_t body_off = 0, body_len = 0;  // in pack_bytes_
    mpt::NodeRef ref;        // what its parent holds: the hash, or the embedded encoding
    uint32_t leaf_val_off = 0, leaf_val_len = 0;  // a leaf's value in leaf_vals_ (snapshot on)
    uint32_t patch_off = kNoPatch;      // hashed: where its digest goes in its parent's bytes
    uint32_t patch_val_off = kNoPatch;  // a storage trie's top: ... in its account's leaf_vals_
    uint32_t parent = kNoParent;        // the Enc that waits for its digest (patch_off set)
    uint32_t waiting = 0;               // its hashed children without a digest yet
  };
  bool kept(int32_t n) const;
  // Post-order, depth first: the subtree's new nodes given an Enc, encoded, listed by level
  // and appended to the packer's order (pack_ops_, a kept child as a placed subtree);
  // depth: n's absolute nibble depth (its path in cursor()); *pushed: 1 if it pushed a
  // subtree (kept, or a new hashed record), 0 if embedded in its parent.
  io::Status encode_tree(int32_t n, bool top, uint32_t depth, uint32_t* level, uint32_t* pushed);
  mpt::NodeRef ref_of(int32_t n) const;
  // A child's reference while its parent is encoded: a new hashed child's digest is zero
  // until it is hashed (then patched in: awaits()).
  mpt::NodeRef child_ref(int32_t n) const;
  // Whether new child k's digest is still to come; if so, it is patched at parent bytes
  // offset patch_off once hashed, and the parent (node n) waits for it.
  bool awaits(int32_t n, int32_t k, uint32_t patch_off);
  // The Enc of a node plan_levels() reached (not kept).
  Enc& enc_of(int32_t n) { return enc_[size_t(nodes_[n].enc)]; }
  const Enc& enc_of(int32_t n) const { return enc_[size_t(nodes_[n].enc)]; }
  // A new branch's record as its children are visited (one pass over its 16 slots): each
  // slot's bytes at body (after room for the largest list header) in the visit that places
  // or encodes the child; a new hashed child whose digest is still to come gets 32 zero
  // bytes and a pending patch (settled by encode_branch once the branch has its Enc).
  struct BranchBody {
    uint8_t buf[9 + 16 * 33 + 1];  // list header room, 16 slots, the empty value
    uint8_t* end = nullptr;        // past the last slot written
    int32_t patch_kid[16];
    uint32_t patch_at[16];         // slot offset from buf + 9
    int patches = 0;
  };
  io::Status encode_one(int32_t n, BranchBody* branch);
  io::Status encode_leaf(int32_t n, uint8_t* buf, uint8_t** end);
  uint8_t* encode_branch(int32_t n, BranchBody& b, uint8_t** begin);
  // The ready records hashed in batches of kReadyBatch (all: every one, to the root), each
  // digest passed to its parent.
  void hash_ready(bool all);
  // The encoding walk's position: the visited node's absolute nibble path (account trie, or
  // the storage trie of the account owner_ names), the rest of the array scratch.
  uint8_t* cursor() { return owner_ ? slot_nibs_.data() : acct_nibs_.data(); }
  std::array<uint8_t, 32> cursor_key(uint32_t depth, const uint8_t* nibs, uint32_t n);
  io::Status encode_children(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed, BranchBody* branch);
  io::Status encode_branch_kids(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed, BranchBody* b);
  void prefetch_kids(const Node& node) const;
  void prefetch_ahead(int32_t n) const;
  io::Status encode_storage(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed);
  io::Status place_kept(int32_t n, uint32_t depth);
  io::Status check_unmoved(int32_t n, uint32_t depth);
  bool keyed_ = false;  // frame_.keyed(), for the encoding pass
  void push_record(int32_t n, uint32_t depth, uint32_t kids_pushed);
  struct SnapPut {  // a new leaf's flat-snapshot write, put once the digests are patched in
    std::array<uint8_t, 64> key;
    uint32_t key_len = 0;
    int32_t node = -1;
  };
  std::vector<SnapPut> snap_puts_;
  std::array<uint8_t, 128> acct_nibs_{}, slot_nibs_{};
  const uint8_t* owner_ = nullptr;  // the storage trie being encoded: its account's key
  std::vector<Enc> enc_;            // one per node the new tree encodes (Node::enc), not per node
  std::vector<uint8_t> leaf_vals_;  // the new leaves' values, for the flat snapshot
  std::vector<uint32_t> ready_, batch_;  // hashed Encs whose bytes are final; the batch hashing
  std::vector<const uint8_t*> msgs_;      // hash_ready()'s keccak256_batch arguments
  std::vector<size_t> lens_;
  std::vector<uint8_t> digests_;
  KeccakLevels pure_;                  // pure_hash()'s inputs and scratch, kept across commits
  std::vector<uint32_t> pure_counts_;  // pure_hash(): records per level
  // resolve()'s walks and stubs of a round; expand()'s locators and records (its keccak
  // batch in msgs_, lens_, digests_, as hash_slot_ops()' is).
  std::vector<ResolveWalk> walks_, next_;
  std::vector<int32_t> stubs_;
  std::vector<Locator> locs_;
  std::vector<RecordView> rvs_;
  void mark_reused(int32_t n);

  DbFiles& files_;
  CommitFrame& frame_;
  std::vector<int32_t> need_;

 public:
  struct Buffers {
    std::vector<Node> nodes;
    std::vector<CommittedRef> refs;
    std::vector<uint8_t> pool, pack_bytes;
    std::vector<Enc> enc;
    std::vector<PackOp> pack_ops;
    KeccakLevels pure;
    std::vector<uint32_t> pure_counts;
    // The phases' scratch (above): emptied, capacity kept.
    std::vector<uint32_t> ready, batch;
    std::vector<const uint8_t*> msgs;
    std::vector<size_t> lens;
    std::vector<uint8_t> digests, leaf_vals;
    std::vector<SnapPut> snap_puts;
    std::vector<ResolveWalk> walks, next;
    std::vector<int32_t> stubs;
    std::vector<Locator> locs;
    std::vector<RecordView> rvs;
  };
};


}  // namespace st::persist::mpt_commit_detail
