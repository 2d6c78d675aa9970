// bintrie_commit: one block's state diff applied to a binary-trie database in the arena
// store (bintrie_db.h, layout bintrie_disk.h) as ONE copy-on-write commit
// (docs/persist-commit.md, "Binary trie"):
//
//   1. keys     the diff becomes writes per stem (account_leaves.h rules: basic data and
//               code hash on any field change, code chunks, storage slots; a zero storage
//               value is written as a present zero value, as go-ethereum does: nothing is
//               ever removed from the trie)
//   2. resolve  the records on the dirty paths are read level by level (one PageReader::load
//               per level, plus one for split-group halves / stem pieces met on it), decoded
//               strictly (group / stem blob codecs), their child counts checked against the
//               blob and their hashes against the parent's entry (root: the manifest)
//   3. plan     per touched group the entries are re-derived from the unchanged entries (kept
//               as they are), the touched children and the new stems (a new stem in an
//               existing stem's region splits it, as the builder would place both); a subtree
//               whose blobs do not change is kept whole (its locator)
//   4. write    post-order through the SubtreePacker: unchanged children by locator
//               (push_placed), new / changed stems and groups as new records; commit via
//               DbFiles::commit_arena. A page is released only when all its records are
//               superseded (counted across the commits of one BintrieCommitter), and the
//               previous commit record page always.
//
// Invariants: the new root equals the in-memory binary trie's root of (old leaves + writes)
// (tested against bintrie::batch_root); nothing of the committed state is overwritten; a
// failed or crashed commit leaves the previous manifest current. AccountDiff::destroyed is
// refused (go-ethereum's binary trie does not delete accounts); RocksDB: not supported.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "engine/persist/db_files.h"
#include "engine/persist/dead_pages.h"
#include "engine/state/state_types.h"

namespace st::persist {

struct BintrieCommitStats {
  std::array<uint8_t, 32> root{};
  uint64_t accounts_written = 0, slot_writes = 0;  // slot_writes: leaf writes (all stems)
  uint64_t stems_dirty = 0;        // distinct stems written
  uint64_t records_read = 0;       // records decoded on the dirty paths (halves, pieces included)
  uint64_t pages_read = 0, read_rounds = 0;
  uint64_t records_written = 0, pages_written = 0;  // tree pages (the commit record page not included)
  uint64_t records_superseded = 0;
  uint64_t pages_released = 0;     // tree pages proven dead + the previous commit record page
  int64_t keys_delta = 0;          // leaves created (nothing is removed)
  uint64_t commit_ns = 0, read_ns = 0, resolve_ns = 0, apply_ns = 0, write_ns = 0, publish_ns = 0;
  uint64_t disk_bytes = 0;
};

class BintrieCommitter {
 public:
  // files: a binary-trie database in the arena store, opened with DbFiles::for_read; it must
  // outlive the committer.
  explicit BintrieCommitter(DbFiles& files);
  BintrieCommitter(const BintrieCommitter&) = delete;
  BintrieCommitter& operator=(const BintrieCommitter&) = delete;

  // Applies `diff` as one commit whose commit record stores `spec_json`. On error nothing
  // is published and the error names what failed.
  io::Status commit(const state::StateDiff& diff, const std::string& spec_json, BintrieCommitStats* stats);

 private:
  DbFiles& files_;
  // Superseded-record counts of partly dead pages, across this committer's commits.
  DeadPageLedger dead_;
};

}  // namespace st::persist
