// mpt_dirty_trie: the partial MPT of one block commit (mpt_commit.h), in memory: the
// records on the block's dirty paths read from disk, the writes applied in canonical form,
// the new nodes encoded and pushed into the SubtreePacker. MptCommitter drives it; nothing
// else should include this file.
//
//   Node (index-addressed in nodes_; the vector grows, so never a pointer):
//     stub    a hashed child not read yet: its locator and the hash its parent holds
//     leaf    path (nibbles below the parent), value (the RLP string payload); an account
//             leaf also names its storage trie's top node (`storage`, -1 = empty storage)
//     ext     path, kids[0]
//     branch  kids[16] (-1 = empty slot)
//
// Invariants: a node read from a record keeps its locator and hash and is never modified;
// the apply pass builds `fresh` nodes that point at unchanged ones (copy-on-write in
// memory), so a pass that finds an unread sibling is thrown away (nodes_ truncated) and
// redone after the sibling is read; every record read is checked against its parent's hash
// before it is decoded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/mpt/node_ref.h"
#include "engine/persist/db_files.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/subtree_packer.h"
#include "engine/state/state_types.h"

namespace st::persist::mpt_commit_detail {

using mpt::Hash32;

struct Node {
  enum Kind : uint8_t { stub, leaf, ext, branch };
  Kind kind = stub;
  bool storage_trie = false;
  bool fresh = false;
  bool reused = false;
  uint8_t path_len = 0;
  int32_t acct = -1;          // fresh account leaf: its AccountOp (the value is recomputed)
  int32_t storage = -1;       // account leaf: the storage trie's top node
  Locator loc = kNoLocator;   // stub / node read from a record (kNoLocator: embedded or fresh)
  uint32_t body_len = 0;      // record body bytes (node read from a record)
  uint32_t val_off = 0, val_len = 0;
  Hash32 hash{};              // stub / record: keccak256 of its RLP
  std::array<uint8_t, 64> path{};
  std::array<int32_t, 16> kids;
  Node() { kids.fill(-1); }
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
  DirtyTrie(DbFiles& files, PageReader& reader) : files_(files), reader_(reader) {}

  io::Status prepare(const state::StateDiff& diff);
  io::Status resolve();
  io::Status apply_all();
  io::Status encode_all(SubtreePacker& packer, Locator* root_loc, Hash32* root_hash);

  std::vector<Node> nodes_;
  std::vector<uint8_t> pool_;
  std::vector<AccountOp> accts_;
  std::vector<Op> acct_ops_;  // account trie ops, sorted by key
  int32_t root_ = -1, new_root_ = -1;
  uint64_t records_read = 0, passes = 0, records_written = 0, bytes_written = 0;

 private:
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
    std::memcpy(n.hash.data(), hash, 32);
    n.storage_trie = storage_trie;
    nodes_.push_back(n);
    return int32_t(nodes_.size() - 1);
  }
  io::Status expand(std::vector<int32_t>& stubs);
  std::string fill(int32_t idx, std::span<const uint8_t> rlp, const RecordView* rv, bool storage_trie);

  int32_t apply(int32_t n, std::span<const Op> ops, uint32_t d);
  int32_t apply_branch(int32_t n, std::span<const Op> ops, uint32_t d);
  int32_t build(std::span<const Entry> es, uint32_t d, bool storage_trie);
  int32_t leaf_from(const Entry& e, uint32_t d, bool storage_trie);
  int32_t join(const uint8_t* prefix, uint32_t plen, int32_t child);

  io::Status encode(SubtreePacker& p, int32_t n, bool top, mpt::NodeRef* ref, uint32_t* pushed);
  void mark_reused(int32_t n);

  DbFiles& files_;
  PageReader& reader_;
  std::vector<int32_t> need_;
};


}  // namespace st::persist::mpt_commit_detail
