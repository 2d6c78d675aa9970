// mpt_commit: one block's state diff applied to an MPT database in the arena store as ONE
// copy-on-write commit (docs/persist-commit.md):
//
//   1. resolve  the dirty paths of the account trie and of every touched storage trie are
//               read level by level: each round loads the distinct pages of all unresolved
//               records in one PageReader submission; every record is checked against the
//               hash its parent (or the manifest) holds (one keccak256 batch per round),
//               decoded strictly and checked against its record (kind, child count)
//   2. apply    the writes are applied to that partial in-memory trie in canonical form
//               (deletes collapse one-slot branches and merge short nodes); a collapse
//               whose remaining sibling was never read loads it (one more round for all
//               such siblings) and the apply pass is redone
//   3. write    the new nodes are encoded bottom-up and pushed into the SubtreePacker in
//               post-order (storage trie, then its account leaf, then the account trie's
//               upper nodes); an unchanged child is referenced by its existing locator
//               (SubtreePacker::push_placed), so only the dirty paths are written
//   4. commit   DbFiles::commit_arena: commit record (root locator + spec), fsync, MANIFEST
//               replaced atomically. Pages are released only when every record of the page
//               is proven unreachable: superseded in this commit or in an earlier commit of
//               the same MptCommitter (records have exactly one parent, so a superseded
//               record is unreachable). Partly dead pages stay until the next full build.
//
// Invariants: the new root equals the MPT root of (old state + diff) (tested against
// engine/mpt); nothing of the committed state is overwritten (fresh pages only); a failed
// or crashed commit leaves the previous manifest, root and free list current.
// AccountDiff::destroyed (as mpt::MptState applies it: the account and its storage go, then
// any given field or write recreates it) reads the whole old storage trie, so its records
// are counted out of the manifest and its pages can be released. RocksDB: not supported.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "engine/persist/db_files.h"
#include "engine/persist/dead_pages.h"
#include "engine/state/state_types.h"

namespace st::persist {

struct MptCommitStats {
  std::array<uint8_t, 32> root{};
  uint64_t accounts_written = 0, slot_writes = 0;  // after merging duplicates in the diff
  uint64_t records_read = 0;       // records decoded from pages (dirty paths + collapse siblings)
  uint64_t pages_read = 0, read_rounds = 0, apply_passes = 0;
  uint64_t records_written = 0, pages_written = 0;  // tree pages (the commit record page not included)
  uint64_t records_superseded = 0;
  uint64_t pages_released = 0;     // tree pages proven dead + the previous commit record page
  int64_t keys_delta = 0;          // accounts + slots created minus deleted
  uint64_t commit_ns = 0;          // whole commit: reads, apply, encode, writes, sync, manifest
  uint64_t read_ns = 0;            // inside page-read rounds (PageReader::load)
  uint64_t resolve_ns = 0;         // prepare + resolve (reads, hash checks, decoding)
  uint64_t apply_ns = 0;           // apply passes (+ their collapse reads)
  uint64_t write_ns = 0;           // encode, hash, pack, page writes (window-bounded waits)
  uint64_t publish_ns = 0;         // commit_arena: commit record, reaping the writes, fsync, MANIFEST
  uint64_t disk_bytes = 0;         // pages up to the high-water mark after the commit
};

class MptCommitter {
 public:
  // files: an MPT database in the arena store, opened with DbFiles::for_read; it must
  // outlive the committer. Commits go through files (its manifest / commit are updated).
  explicit MptCommitter(DbFiles& files);
  MptCommitter(const MptCommitter&) = delete;
  MptCommitter& operator=(const MptCommitter&) = delete;

  // Applies `diff` as one commit whose commit record stores `spec_json`. On error nothing
  // is published (the previous root stays current) and the error names what failed.
  io::Status commit(const state::StateDiff& diff, const std::string& spec_json, MptCommitStats* stats);

 private:
  DbFiles& files_;
  // Superseded-record counts of partly dead pages, across this committer's commits.
  DeadPageLedger dead_;
};

}  // namespace st::persist
