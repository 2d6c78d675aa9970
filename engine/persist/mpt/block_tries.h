// mpt/block_tries: one block commit of an MPT database (mpt/commit.h) as the in-memory
// trie (engine/mpt/trie.h) over the database: the account trie and each touched storage
// trie start as one unread root (a stub) and read only what the block's writes need
// (Trie::stubs_to_resolve), round by round across all tries; the writes are applied and
// hashed by the trie's own code; its new nodes are handed to this file's sink (a commit's
// pack list) and the records it replaced reported dead. MptCommitter drives it; nothing
// else should include this file. The same code serves both stores; only the node source
// and sink differ (CommitFrame::keyed()): arena records by locator through the PageReader
// and new records into the SubtreePacker, or RocksDB nodes by path key (one MultiGet per
// round) and new nodes into the commit's WriteBatch under their path keys.
//
//   Stored      one per stored node the commit knows of (a stub or a record read): where
//               it is (arena locator; RocksDB: its trie and nibble path, which name its
//               key), its body length once read. A trie's locator for a node is its index
//               here (the trie never interprets it).
//   AccountOp   one account's changes (fields, slot ops, destroyed), in key order
//   PackOp      the new tree in the packer's post-order: a kept subtree (its Stored index)
//               or a new record (its bytes where its trie encoded them, its children
//               count)
//
// Invariants: no node is resolved into a trie before its bytes hashed to the hash its
// parent holds (one keccak256 batch per round) and decoded strictly (an arena record also
// agrees with its node: kind, children); every stored node the new tree no longer holds is
// reported dead exactly once (the tries' own reports, and every record read of a destroyed
// account's old storage trie); a node kept by the new tree is at the place it was read from
// (RocksDB: its key still holds it; checked as it is kept). The new nodes are all encoded
// and hashed in memory (hash()) before any is handed over, packed or written (write()), so
// the hash time and the page writes are timed apart; a new record's bytes stay where its
// trie encoded them until write() is done.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/mpt/account.h"
#include "engine/mpt/trie.h"
#include "engine/persist/commit_frame.h"
#include "engine/persist/mpt/pure_hash.h"
#include "engine/state/state_types.h"

namespace st::persist::mpt_commit_detail {

using mpt::Hash32;

struct Op {
  Hash32 key{};
  bool del = false;
  uint8_t val_len = 0;
  uint8_t val[33];
  bool existed = false;  // the slot was present before
};

struct AccountOp {
  Hash32 key{};
  std::optional<uint64_t> nonce;
  std::optional<state::U256> balance;
  std::optional<Hash32> code_hash;
  std::vector<Op> slots;   // sorted by key, one per key
  bool destroyed = false;  // old account and storage removed before the fields and writes
  bool removed = false;    // destroyed and nothing else: the account leaf is deleted
  bool existed = false;    // the account was present before
  uint64_t old_slots = 0;  // destroyed: slots of the old storage (all of it is read)
  bool snapshot_put = false;  // its leaf went to the flat snapshot (write())
  mpt::AccountFields old;  // its fields before (existed)
  Hash32 old_storage_root = mpt::kEmptyRoot;
  uint32_t old_storage = UINT32_MAX;  // its stored root (Stored index), if any
  mpt::Trie* storage = nullptr;           // the new storage trie, when the block writes slots
  mpt::Trie* old_storage_trie = nullptr;  // destroyed: the old one, read in full
  std::vector<mpt::Trie::Write> slot_writes;  // over slots
  bool listed = false;                    // its storage trie listed once (walks from then on)
  uint32_t walks_at = 0, walks_end = 0;   // where its last listing stopped: Buffers::walks
  std::array<uint8_t, 160> value{};            // the new account RLP
  uint32_t value_len = 0;
};

// A stored node the commit knows of; its index is the tries' locator for it.
struct Stored {
  Locator loc = kNoLocator;  // arena record
  uint32_t body_len = 0;     // once read
  int32_t owner = -1;        // storage trie: its account (owners_), -1 = account trie
  uint8_t depth = 0;         // nibbles of `at`
  bool read = false;
  bool doomed = false;       // in a destroyed account's old storage trie
  std::array<uint8_t, 32> at{};  // its nibble path, packed
};

class BlockTries final : mpt::Trie::CommitSink {
 public:
  struct PackOp {
    const uint8_t* body = nullptr;  // a new record's bytes (its trie's encoding), or null: a kept subtree
    uint32_t len_or_kept = 0;       // the body's length, or the kept subtree's Stored index
    uint8_t kind = 0;               // a new record's MptRecordKind
    uint8_t kids = 0;               // its children: how many subtrees before it it takes
  };
  // A stub to read this round, in its trie.
  struct Pending {
    mpt::Trie* trie;
    mpt::NodeId id;
  };
  // The commit's tries and large arrays, handed from a published commit to the next one
  // (emptied, their memory kept): a block's commit then neither grows them from nothing
  // nor touches fresh pages.
  // A trie for a commit: no huge pages for its node arrays (mpt/trie.h, set_huge_pages).
  static std::unique_ptr<mpt::Trie> commit_trie() {
    auto t = std::make_unique<mpt::Trie>();
    t->set_huge_pages(false);
    return t;
  }
  struct Buffers {
    std::unique_ptr<mpt::Trie> acct = commit_trie();
    std::vector<std::unique_ptr<mpt::Trie>> tries;  // storage tries
    std::vector<Stored> stored;
    std::vector<PackOp> pack_ops;
    std::vector<std::string> pack_keys;  // RocksDB: the new records' path keys, in order
    std::vector<mpt::Trie::PendingEncoding> encodings;  // pure_hash: the nodes the commit hashed
    std::vector<uint32_t> dead;          // Stored indices
    KeccakLevels pure;
    std::vector<uint32_t> pure_counts;
    std::vector<const uint8_t*> msgs;
    std::vector<size_t> lens;
    std::vector<uint8_t> digests;
    // A round's scratch: the stubs listed, their Stored indices, hashes, locators and
    // records; the storage tries hashed together.
    std::vector<Pending> work;
    std::vector<mpt::NodeId> ids;
    std::vector<mpt::Trie::StubWalk> walks, next_walks;  // every trie's, last round and this one
    std::vector<uint32_t> at;
    std::vector<Hash32> want;
    std::vector<Locator> locs;
    std::vector<RecordView> rvs;
    std::vector<mpt::Trie*> storages;
  };
  explicit BlockTries(CommitFrame& frame) : frame_(frame), acct_(b_.acct.get()) {}
  // Call before prepare(): a published commit's buffers.
  void take_buffers(Buffers&& b);
  Buffers give_buffers();

  io::Status prepare(const state::StateDiff& diff);
  // The stored nodes every trie's writes need, round by round (one read per round).
  io::Status resolve();
  // The slot writes applied to the storage tries.
  io::Status apply();
  // The storage tries hashed, the accounts' new values applied to the account trie and
  // hashed; *root_hash = the new root.
  io::Status hash(Hash32* root_hash);
  // The nodes hash() hashed, hashed again alone, level by level (pure_hash_protocol.h).
  io::Status pure_hash(PureHashCount* out);
  // After frame.begin_writes(): the new tree handed to the pack list (kept subtrees, new
  // records in post-order; snapshot puts, every new leaf, to the frame), the pack list
  // into the packer (arena; *root_loc = the root record) or the WriteBatch (RocksDB), then
  // the dead records superseded.
  io::Status write(Locator* root_loc);

  std::vector<AccountOp> accts_;  // by key
  uint64_t records_read = 0, rounds = 0, records_written = 0, bytes_written = 0;
  size_t sibling_reads = 0;  // stubs read only as what a collapse may leave (Trie::stubs_to_resolve)

 private:
  // resolve()'s steps.
  void start_account(AccountOp& a, const mpt::Trie::Found& f);
  io::Status account_values();
  void list_stubs(std::vector<Pending>* out);
  io::Status read_round(std::span<const Pending> work);
  io::Status resolve_one(const Pending& p, std::span<const uint8_t> body, const RecordView* rv, uint32_t at);
  uint32_t add_stored(const Stored& parent, const uint8_t* nibs, uint32_t n, Locator loc);
  std::string key_of(const Stored& s) const;
  std::string name_of(uint32_t idx) const;

  // The sink (Trie::CommitSink) the tries hand their new trees to, in write().
  io::Status hand_over();
  void kept(uint64_t locator, std::span<const uint8_t> path) override;
  uint32_t leaf(std::span<const uint8_t> key_nibbles, std::span<const uint8_t> value) override;
  uint64_t node(mpt::NodeKind kind, std::span<const uint8_t> rlp, uint32_t children, std::span<const uint8_t> path,
                const Hash32& hash) override;
  void dead(uint64_t locator) override;
  uint32_t storage_subtree(const Hash32& account);

  const Hash32* owner_ = nullptr;  // the storage trie being handed over: its account's key
  std::string sink_error_;

  CommitFrame& frame_;
  Buffers b_;
  mpt::Trie* acct_;  // b_.acct
  size_t tries_used_ = 0;  // of b_.tries
  mpt::Trie* new_trie();
  std::vector<mpt::Trie::Write> acct_writes_;
  bool acct_listed_ = false;
  uint32_t acct_walks_at_ = 0, acct_walks_end_ = 0;
  void list_trie(mpt::Trie* t, std::span<const mpt::Trie::Write> writes, bool* listed, uint32_t* walks_at,
                 uint32_t* walks_end, std::vector<Pending>* out);
  std::vector<Hash32> owners_;                // storage tries of the committed state: their accounts
  std::map<Hash32, uint32_t> storage_of_;      // account key -> its stored storage root
  std::vector<bool> started_;
};

}  // namespace st::persist::mpt_commit_detail
