// snapshot/db: a TreeDb whose lookups go to the flat snapshot (`get --snapshot`,
// `read-bench --snapshot`, the block pipeline's readers with `run --snapshot`) while verify, proofs and everything else go to the tree it wraps.
//
// A state key becomes the tree's leaf key(s) (snapshot/format.h):
//   MPT:          account -> keccak(address); slot -> keccak(address) || keccak(slot)
//   binary trie:  account -> its basic-data and code-hash leaves (one page: the writer keeps
//                 them together); slot -> its storage leaf
// With slot_key_accounts a slot key's answer also carries its account (the account's keys
// join the batch, once per address); without it the account stays empty (both trees).
// The whole batch is one SnapshotTable::lookup (snapshot/table.h): arena, one read per
// distinct data page at the store's queue depth; RocksDB, one MultiGet on the snapshot's
// column family.
//
// Invariants: an answer equals the tree's for the same committed state (verify checks every
// entry, snapshot/verify.h); a failed batch returns no answers.
#pragma once

#include <memory>

#include "engine/persist/snapshot/reader.h"
#include "engine/persist/tree_db.h"

namespace st::persist {

// The state keys of a tree as snapshot keys.
struct SnapshotKeyer {
  io::StoreParams params;
  // Appends the snapshot keys of `k` (account: 1 (MPT) or 2 (binary trie); slot: 1).
  void keys(const state::StateKey& k, bool account_part, std::vector<SnapshotKey>* out) const;
};

// Decodes what the snapshot returned for one key's account part into `a`, or for its slot
// into `slot`. Error text ("" = ok) when a value does not decode (a corrupt entry).
std::string snapshot_account(const io::StoreParams& p, const std::optional<std::vector<uint8_t>>* values,
                             AccountInfo* a);
std::string snapshot_slot(const io::StoreParams& p, const std::optional<std::vector<uint8_t>>& value,
                          std::optional<state::Hash32>* slot);

// Wraps `tree` (which keeps its state and store open); not_found when it has no snapshot.
// open_reads (optional): the device reads of opening it (its directory and index pages).
io::Status open_snapshot_view(std::unique_ptr<TreeDb> tree, bool slot_key_accounts, std::unique_ptr<TreeDb>* out,
                              ReadCounters* open_reads = nullptr);

}  // namespace st::persist
