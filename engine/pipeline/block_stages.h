// block_stages: the per-block work of the block pipeline (block_run.h) without the graph:
// the token a block travels in, the checks before a run, and the prefetch and traverse
// stages. No TBB here; block_run.cpp wires these into the flow graph.
//
// Invariants: a token is owned by one stage at a time (the graph passes it on); prefetch
// leaves token.reader pinned to one published state and records how many blocks of the run
// it shows; traverse reads the diff layer for the blocks [reader_blocks_visible, index) and
// then adds the block's own diff under `index`, so the next block's traversal sees it; the
// pages its reader read go to token.pages before the reader (and its pin) is released.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"
#include "engine/pipeline/block_run.h"
#include "engine/pipeline/diff_layer.h"
#include "engine/state/bal_derive.h"
#include "kernels/support/clock.h"

namespace st::pipeline::detail {

// The database key of an account (20 bytes) or a slot (20 + 32 bytes) as a map key.
std::string key_bytes(const state::Address& a, const state::Hash32* slot);

struct BlockToken {
  std::atomic<bool> in_use{false};
  size_t index = 0;
  const state::Block* block = nullptr;
  std::unique_ptr<persist::TreeDb> reader;
  // bal: the batch and where each key's answer is.
  std::vector<state::StateKey> keys;
  std::vector<persist::LookupAnswer> answers;
  std::unordered_map<std::string, size_t> answer_of;
  state::StateDiff diff;
  // The pages the block's reader read (arena), taken from it when the traversal ends, for
  // the commit's resolve (RunOptions::reuse_read_pages).
  persist::SharedPages pages;
  BlockResult result;
  // The block's device read latencies (ns): its reader's (prefetch, traverse, geth's
  // workers) and its commit's.
  stats::LogHistogram read_latency_ns, commit_read_latency_ns;
  io::Status error;
  void reset(size_t i, const state::Block* b);
};

// What the stages share for a run.
struct RunContext {
  const RunOptions* options = nullptr;
  uint64_t base_commit_seq = 0;  // the database's commit_seq before the run
  DiffLayer layer;
  uint64_t t0_ns = 0;
};

// The checks before the first commit (block_run.h), with the writer's files open; snapshot:
// the database must have a flat snapshot (RunOptions::snapshot).
io::Status check_blocks(const persist::DbFiles& files, std::span<const state::Block> blocks, uint32_t queue_depth,
                        bool snapshot);

void prefetch(RunContext& ctx, BlockToken& t);
void traverse(RunContext& ctx, BlockToken& t);

}  // namespace st::pipeline::detail
