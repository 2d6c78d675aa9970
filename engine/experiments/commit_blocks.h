// commit_blocks: the protocol of `statetree commit`: N blocks, each block's post-state diff
// applied to an MPT or binary-trie database (arena or RocksDB) as ONE copy-on-write commit
// (engine/persist/mpt/commit.h, engine/persist/bintrie/commit.h), with the commit's
// figures per block and the database's size before and after.
//
//   bytes before -> for each block: next() gives its diff -> one commit (its record stores
//   spec_json() as it is after next()) -> on_block(block) -> bytes after
//
// The blocks come from the caller (BlockSource): the engine does not know how they are
// drawn (`statetree commit` draws the synthetic_writes workload, workloads/generators.h).
// Invariants: blocks are committed in order, one commit each; the first failing commit, or
// a block the source refuses, stops the run (status / source_error and failed_block say
// which; the blocks before it stay committed, as the database holds them). Nothing here prints: the caller renders the result.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/persist/commit_frame.h"
#include "engine/persist/db_files.h"
#include "engine/state/bal_derive.h"

namespace st::experiments {

struct CommitBlocksOptions {
  bool bintrie = false;         // a binary-trie database (else MPT)
  uint64_t blocks = 1;          // blocks to commit
  uint32_t compact_pages = persist::PageReuse::kDefaultCompactPages;  // arena: PageReuse::compact_pages
  bool compact_chains = false;  // arena: PageReuse::compact_chains
};

// Where the blocks come from. next(): the next block's diff and its number, or an error
// (one line) that stops the run before that block is committed (e.g. a pre-state root that
// is not the database's); spec_json(): the text the block's commit record stores, asked
// after next() (`commit`: the synthetic spec with the blocks drawn so far; `apply`: the
// bal_blocks spec over the record before).
struct BlockSource {
  std::function<std::optional<std::string>(state::StateDiff* diff, uint64_t* block_number)> next;
  std::function<std::string()> spec_json;
};

// One committed block: its number and the commit's figures.
struct CommittedBlock {
  uint64_t block = 0;
  persist::CommitStats stats;
};

struct CommitBlocksResult {
  std::vector<CommittedBlock> blocks;  // in commit order
  uint64_t disk_bytes_before = 0, disk_bytes_after = 0;      // DbFiles::disk_bytes
  uint64_t in_use_bytes_before = 0, in_use_bytes_after = 0;  // DbFiles::in_use_bytes
  io::Status status;                   // the first failed commit's error (ok: all committed)
  std::string source_error;            // next()'s error, when the source stopped the run
  uint64_t failed_block = 0;           // the block that failed or was refused (when either is set)
  bool ok() const { return status.ok() && source_error.empty(); }
};

// Called after each committed block (done = blocks committed so far).
using OnCommittedBlock = std::function<void(const CommittedBlock& block, uint64_t done)>;

CommitBlocksResult commit_blocks(persist::DbFiles& files, const CommitBlocksOptions& options, const BlockSource& source,
                                 const OnCommittedBlock& on_block = {});

}  // namespace st::experiments
