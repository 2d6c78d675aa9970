// bintrie/db: the EIP-7864 binary trie state on disk at group depth GD (1..8), go-ethereum's
// blob layout (bintrie/disk.h), in the arena store (record pages, one record per blob, in
// post-order through the subtree packer) or in RocksDB (blobs keyed by path).
//
// build_bintrie: every account of the source becomes its leaves (basic data, code hash =
// keccak256(code), code chunks, storage: account_leaves.h); the leaves are sorted by key
// (index form), the stems hashed in parallel, and the tree is emitted depth-first from the
// sorted stems (a node's subtree = a range of stems; its split point = where adjacent stems'
// common prefix equals its depth), so nothing but the leaves, their sort index and one hash
// per stem is held in memory. The root equals batch_root / StateTree of the same leaves.
//
// open_bintrie: a TreeDb whose lookups walk all keys (arena: streamed, walking on through
// records already loaded; RocksDB: one MultiGet per group level) and answer only from
// blobs whose hashes match their parents' entries up to the manifest's root, whose verify()
// re-reads and re-hashes every node depth-first, and whose prove() returns key proofs
// rebuilt from the group blobs on disk (each node on the path checked the same way).
//
// Errors: io::Status values; a blob or record that does not decode or does not match its
// parent (its hash included) is an error naming the locator (arena) or the path key
// (RocksDB).
#pragma once

#include <memory>

#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"

namespace st::persist {

io::Status build_bintrie(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                         const ProgressFn& progress);
io::Status open_bintrie(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out);

}  // namespace st::persist
