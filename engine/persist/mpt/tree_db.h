// mpt/tree_db.h: MptTreeDb, the persistent MPT opened for reading (db.h: open_mpt), over
// either store (db.h has the on-disk form). The class and its open are in tree_db.cpp, the
// batched lookups in lookup.cpp, verify() in verify.cpp, prove() in prove.cpp; the types
// here are what those share: a key's cursor and verify's pending node. Every reader takes
// its nodes through the verified fetch (mpt/verified_fetch.h: read, hash check, strict
// decode, record checks; a node's Origin names it in errors).
//
// Invariants: a fetched node is used only after keccak(body) == the hash its parent holds
// (the root: the manifest's root hash) and its RLP decoded strictly; an arena record must
// agree with its node (kind, hashed children); every error names the locator or path key.
#pragma once

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/mpt/account.h"
#include "engine/persist/lookup_walk.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/mpt/verified_fetch.h"
#include "engine/persist/stored_tree_db.h"
#include "kernels/keccak256.h"

namespace st::persist::mpt_read {

using Hash32 = mpt::Hash32;

// One key's walk.

struct Cursor {
  Hash32 acct{};   // keccak(address)
  Hash32 slot{};   // keccak(slot)
  bool want_slot = false;
  bool storage = false;  // in the storage trie
  bool done = false;
  uint32_t pos = 0;      // nibble position in the current trie's key
  Locator loc = kNoLocator;
  Hash32 expect{};       // hash of the next node to fetch
  LookupAnswer* ans = nullptr;
  std::vector<mpt::Bytes>* account_proof = nullptr;  // prove(): hashed node bodies, root first
  std::vector<mpt::Bytes>* storage_proof = nullptr;
  const uint8_t* key() const { return storage ? slot.data() : acct.data(); }
  std::string path_key() const {
    return storage ? storage_node_key(acct.data(), slot.data(), pos) : account_node_key(acct.data(), pos);
  }
};

// ---------------------------------------------------------------------------------------
// Verify: one pending node.

struct VerifyItem {
  Locator loc = kNoLocator;
  Hash32 expect{};
  bool storage = false;
  uint8_t pos = 0;
  std::array<uint8_t, 64> path{};   // nibbles [0, pos) of the node's key (RocksDB keys, account hash)
  Hash32 owner{};                   // storage trie: the account's hashed address
};

class MptTreeDb final : public StoredTreeDb {
 public:
  explicit MptTreeDb(DbFiles&& f) : StoredTreeDb(std::move(f)) {}

  io::NodeStore* page_store() override { return files_.arena ? &files_.arena->pages() : nullptr; }

  io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                    bool cold_pages) override;
  io::Status prove(const state::StateKey& key, StateProof* out) override;
  io::Status verify(VerifyReport* report, const ProgressFn& progress) override;

 private:
  bool empty_tree() const {
    return files_.store == StoreKind::arena ? files_.commit.root == kNoLocator
                                            : files_.manifest.root_hash == mpt::kEmptyRoot;
  }

  // lookup.cpp: each key's cursor (keccak of its address and slot), the batch's hash
  // checks, and the tree's side of the two walks whose scheduling is lookup_walk.h's:
  // ArenaWalk (streamed; step_arena: one cursor through one cached record) and RocksWalk (one
  // MultiGet per round; each distinct node decoded and checked once).
  struct ArenaWalk;
  struct RocksWalk;
  void hash_keys(std::span<const state::StateKey> keys, std::vector<Cursor>& cs, std::vector<LookupAnswer>& ans);
  io::Status run_checks(const std::vector<std::string>* keys);
  io::Status step_arena(Cursor& c, uint32_t i, LookupStats* st, WalkStep* out);
  // The cursors walked to their answers on the store's walk, with this thread's check queue.
  io::Status walk(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st);
  io::Status walk_arena(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st);
  io::Status walk_rocks(std::vector<Cursor>& cs, LookupStats* st);

  // verify.cpp: every node depth-first in batches, each batch one load / MultiGet and one
  // keccak256 batch.
  struct VerifyBatch;
  static void leaf_key(const VerifyItem& it, const mpt::DecodedNode& n, uint8_t* out32);
  io::Status visit_storage_leaf(const mpt::DecodedNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r);
  io::Status visit_account_leaf(const mpt::DecodedNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r, std::vector<VerifyItem>* stack);
  io::Status visit_child(const mpt::ChildRef& ref, uint32_t consumed, uint32_t hashed_index, const uint8_t* nibs,
                         const RecordView* rv, const VerifyItem& it, const Origin& o, VerifyReport* r,
                         std::vector<VerifyItem>* stack);
  io::Status visit(std::span<const uint8_t> body, const RecordView* rv, const VerifyItem& it, const Origin& o,
                   VerifyReport* r, std::vector<VerifyItem>* stack);
  io::Status load_verify_batch_arena(VerifyBatch& b, VerifyReport* r);
  io::Status load_verify_batch_rocks(VerifyBatch& b, VerifyReport* r);
  io::Status check_verify_batch(VerifyBatch& b, bool arena, VerifyReport* r);
  io::Status verify_all(VerifyReport* r, const ProgressFn& progress);

  // walk(): the nodes reached, hashed in batches before any answer; the queue the walk
  // leased (ScratchPool<NodeHashChecks>) while it runs, else nullptr.
  NodeHashChecks* checks_ = nullptr;
  // walk_arena: nodes of the account trie's top memo_levels_ levels, decoded once per batch.
  std::unordered_map<Locator, uint32_t> memo_;
  std::vector<mpt::DecodedNode> memo_nodes_;
  uint32_t memo_levels_ = 0;
};

}  // namespace st::persist::mpt_read
