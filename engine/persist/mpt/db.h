// mpt/db: the Ethereum state MPT (secure account trie + one secure storage trie per
// contract) persisted in a database directory and read back lazily (docs/persist-mpt.md).
//
// Arena store: every hashed node (RLP >= 32 bytes) and every trie's top node is one record
// (record_page.h); the body is the node's exact RLP, the record's children are the node's
// HASHED children in nibble order (embedded children < 32 bytes live inside the parent's
// RLP and have no record). An account leaf's record has one child, the root record of the
// account's storage trie (none when its storage is empty). Records are pushed in
// post-order (storage trie, then its account leaf, then the account trie's upper nodes),
// so the SubtreePacker keeps parents on their children's pages.
//
//   record kinds (RecordView::kind):
//     1 leaf          storage-trie leaf           children: none
//     2 extension     either trie                 children: 1 (hashed branch) or 0 (embedded)
//     3 branch        either trie                 children: its hashed refs, nibble order
//     4 account_leaf  account-trie leaf           children: storage root record, or none
//
// RocksDB store: go-ethereum's path scheme: account-trie node at nibble path P under key
// 'A' || P, storage-trie node of the account with hashed address H under 'O' || H || P
// (P one byte per nibble); value = the node's RLP. Only hashed nodes and trie roots.
//
// Invariants: the root hash equals mpt::allocation_root of the same state; a reader never
// trusts a record: every node is decoded with the hardened RLP decoder and checked against
// the hash its parent (or the manifest) holds before it is used; an inconsistency is an
// io::Status naming the locator (arena) or the path key (RocksDB), never a crash.
#pragma once

#include <memory>

#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"

namespace st::persist {

enum class MptRecordKind : uint8_t { leaf = 1, extension = 2, branch = 3, account_leaf = 4 };

io::Status build_mpt(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                     const ProgressFn& progress);
io::Status open_mpt(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out);

}  // namespace st::persist
