// mpt/tree_db.h: MptTreeDb, the persistent MPT opened for reading (db.h: open_mpt), over
// either store (db.h has the on-disk form). The class and its open are in tree_db.cpp, the
// batched lookups in lookup.cpp, verify() in verify.cpp, prove() in prove.cpp; the types
// here are what those share: a key's cursor, a node's origin (for errors and record
// checks), the lookup's batched hash checks, verify's pending node.
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
#include "engine/persist/stored_tree_db.h"
#include "kernels/keccak256.h"

namespace st::persist::mpt_read {

using Hash32 = mpt::Hash32;

// "record I of page P", for errors.
std::string loc_name(Locator l);

// The hash checks of a lookup, run as keccak256 batches (lookup_walk.h schedules them;
// arena: of >= 32 nodes before a wait for reads, and at the end; RocksDB: each round's
// nodes, once per distinct path key, before any cursor steps through them). An arena walk
// meanwhile trusts nothing but the strict decoder and the record checks, so a node that
// fails its hash can at worst steer a key astray (to more reads, bounded by the key's 64
// nibbles) until the next batch of checks, which then fails the lookup naming that node; no
// answer of a failed lookup is returned.
struct HashChecks {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<Hash32> expect;
  std::vector<Locator> locs;        // arena
  std::vector<uint32_t> key_index;  // RocksDB: index into the round's keys
  std::vector<uint8_t> out;
  // Arena records already checked (or queued) in this walk with the hash they must have:
  // the paths of a batch share their upper nodes, each (record, hash) is hashed once.
  std::unordered_map<Locator, Hash32> seen;
  void add(std::span<const uint8_t> body, const Hash32& want, Locator loc, uint32_t key) {
    if (loc != kNoLocator) {
      auto [it, fresh] = seen.try_emplace(loc, want);
      if (!fresh && it->second == want) return;
      it->second = want;
    }
    msgs.push_back(body.data());
    lens.push_back(body.size());
    expect.push_back(want);
    locs.push_back(loc);
    key_index.push_back(key);
  }
  // Index of the first node whose hash differs, or -1.
  long run() {
    const size_t n = msgs.size();
    out.resize(32 * n);
    if (n) st::kernels::keccak256_batch(msgs.data(), lens.data(), out.data(), n);
    long bad = -1;
    for (size_t i = 0; i < n && bad < 0; ++i)
      if (std::memcmp(out.data() + 32 * i, expect[i].data(), 32) != 0) bad = long(i);
    return bad;
  }
  void reset() {  // a new walk (the pages may be re-read)
    clear();
    seen.clear();
  }
  void clear() {
    msgs.clear();
    lens.clear();
    expect.clear();
    locs.clear();
    key_index.clear();
  }
};

// Where a node came from, for error messages and record checks.
struct Origin {
  const RecordView* rec = nullptr;  // arena record (nullptr: RocksDB value or embedded node)
  Locator loc = kNoLocator;
  const std::string* path_key = nullptr;  // RocksDB
  std::string name() const {
    if (loc != kNoLocator) return loc_name(loc);
    if (path_key) return "node at path key " + path_key_hex(*path_key);
    return "node";
  }
};

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
  bool empty_state() const {
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
  io::Status walk_arena(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st);
  io::Status walk_rocks(std::vector<Cursor>& cs, LookupStats* st);

  // verify.cpp: every node depth-first in batches, each batch one load / MultiGet and one
  // keccak256 batch.
  struct VerifyBatch;
  static void leaf_key(const VerifyItem& it, const DiskNode& n, uint8_t* out32);
  io::Status visit_storage_leaf(const DiskNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r);
  io::Status visit_account_leaf(const DiskNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r, std::vector<VerifyItem>* stack);
  io::Status visit_child(const MptChildRef& ref, uint32_t consumed, uint32_t hashed_index, const uint8_t* nibs,
                         const RecordView* rv, const VerifyItem& it, const Origin& o, VerifyReport* r,
                         std::vector<VerifyItem>* stack);
  io::Status visit(std::span<const uint8_t> body, const RecordView* rv, const VerifyItem& it, const Origin& o,
                   VerifyReport* r, std::vector<VerifyItem>* stack);
  io::Status load_verify_batch_arena(VerifyBatch& b, VerifyReport* r);
  io::Status load_verify_batch_rocks(VerifyBatch& b, VerifyReport* r);
  io::Status check_verify_batch(VerifyBatch& b, bool arena, VerifyReport* r);
  io::Status verify_all(VerifyReport* r, const ProgressFn& progress);

  HashChecks checks_;
  // walk_arena: nodes of the account trie's top memo_levels_ levels, decoded once per batch.
  std::unordered_map<Locator, uint32_t> memo_;
  std::vector<DiskNode> memo_nodes_;
  uint32_t memo_levels_ = 0;
};

}  // namespace st::persist::mpt_read
