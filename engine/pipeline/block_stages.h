// block_stages: the per-block work of the block pipeline (block_run.h) without the graph:
// the token a block travels in, the checks before a run, and the prefetch and traverse
// stages. No TBB here; block_run.cpp wires these into the flow graph.
//
// Invariants: a token is owned by one stage at a time (the graph passes it on); prefetch
// leaves token.reader pinned to one published state and records how many blocks of the run
// it shows (readers open in block order: OpenTurn, also when prefetches overlap under one
// queue budget); traverse reads the diff layer for the blocks [reader_blocks_visible, index) and
// then adds the block's own diff under `index`, so the next block's traversal sees it; the
// pages its reader read go to token.pages before the reader (and its pin) is released. The
// token's scratch (key index, answers, served values) is rebuilt per block into the same
// vectors: a block no larger than those the token carried before allocates none of it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <compare>
#include <utility>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"
#include "engine/pipeline/block_run.h"
#include "engine/pipeline/diff_layer.h"
#include "engine/pipeline/key_paths.h"
#include "engine/pipeline/worker_pool.h"
#include "engine/state/bal_derive.h"
#include "io/queue_budget.h"
#include "kernels/support/clock.h"

namespace st::pipeline::detail {

// A state key by value (an account: no slot), ordered: the block's key index sorts by it.
struct FlatKey {
  state::Address address{};
  state::Hash32 slot{};
  bool has_slot = false;
  auto operator<=>(const FlatKey&) const = default;
};

// The block's keys: every account of its BAL, then its slots written and read, in BAL
// order (what `bal` prefetches, and every key the traversal can access), each with the BAL
// entries that write it; sorted, where each key is (find: its first position). Rebuilt per
// block into the same vectors (cleared, capacity kept).
struct KeyIndex {
  std::vector<state::StateKey> keys;
  std::vector<const state::AccountChanges*> account_of;  // per key: its account's BAL entry
  std::vector<const state::SlotChanges*> changes_of;     // per slot key written: its changes (else nullptr)
  std::vector<std::pair<FlatKey, uint32_t>> sorted;
  void build(const state::Block& b);
  // The position in `keys` of the key, or -1 when the block's BAL does not name it.
  int64_t find(const state::Address& a, const state::Hash32* slot) const;
  uint64_t capacity_bytes() const;
};

// What a traversal holds for a key it has served: the account's fields the pipeline
// follows (exists, nonce, balance) or the slot's value (absent = zero).
struct Served {
  bool exists = false;
  uint64_t nonce = 0;
  state::U256 balance{};
  state::Hash32 slot{};
};

// One share of a split `bal` prefetch (prefetch_parts): the keys it looks up, their positions
// in the block's key index, its answers, counters and read latencies. Part 0 reads through
// the token's reader; each other part through a reader of its own pinned to the same state,
// on a thread of the run's prefetch pool. Rebuilt per block into the same vectors.
struct PrefetchPart {
  std::unique_ptr<persist::TreeDb> reader;  // parts 1..: released when the prefetch ends
  std::vector<state::StateKey> keys;
  std::vector<uint32_t> positions;
  std::vector<persist::LookupAnswer> answers;
  persist::LookupStats stats;
  stats::LogHistogram read_latency_ns;
  uint64_t busy_ns = 0;
  io::Status status;
};

struct BlockToken {
  std::atomic<bool> in_use{false};
  size_t index = 0;
  const state::Block* block = nullptr;
  std::unique_ptr<persist::TreeDb> reader;
  // The block's keys (prefetch builds it) and, bal, each key's answer (by its position).
  KeyIndex key_index;
  std::vector<persist::LookupAnswer> answers;
  // bal with a split prefetch: one share per prefetch thread (empty: one reader did it all).
  std::vector<PrefetchPart> parts;
  KeyPaths paths;  // per key: its path's first byte, to deal the keys out
  // serial, geth: the answer of the traversal's one-key lookup; geth: per key position,
  // whether answers holds it yet (read by a worker or the traversal).
  std::vector<persist::LookupAnswer> one_answer;
  std::vector<uint8_t> warm;
  // The traversal's own reads and writes so far, by key position (known: served yet).
  std::vector<Served> served;
  std::vector<uint8_t> known;
  // The scratch above (capacity x element size) when the block was admitted: the block's
  // growth of it is in BlockResult::scratch_grown_bytes.
  uint64_t scratch_bytes_at_admit = 0;
  uint64_t scratch_capacity_bytes() const;
  // The traversal's accesses by block access index and its read shares (the transactions'
  // calls), and the block's post-state diff: rebuilt per block into the same vectors.
  state::IndexAccesses accesses;
  state::ReadAssignment read_rule;
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
  // The writer's files and its manifest as opened: RocksDB readers are snapshots of the
  // writer's own instance (persist::open_rocks_reader); arena readers open the directory.
  const persist::DbFiles* writer = nullptr;
  io::Manifest base_manifest;
  DiffLayer layer;
  WorkerPool ahead_pool;  // geth's workers, started at the first block and kept for the run
  WorkerPool prefetch_pool;  // a split prefetch's threads besides the stage's own, kept for the run
  uint64_t t0_ns = 0;
  // RunOptions::overlap_prefetch in use: the queue depth the overlapping prefetches' readers
  // share (nullptr: each prefetch alone, its reader at the full depth).
  std::unique_ptr<io::QueueBudget> read_budget;
  // The block whose prefetch may open its reader next (OpenTurn).
  std::atomic<size_t> next_open{0};
};

// Readers open in block order even when prefetches overlap (the diff layer drops what the
// oldest reader still to come cannot need): block i's prefetch waits until every block
// before it has opened its reader (or skipped its prefetch), and passes the turn on once
// its own reader is open (release(), or the destructor).
class OpenTurn {
 public:
  OpenTurn(RunContext& ctx, size_t index);
  ~OpenTurn() { release(); }
  OpenTurn(const OpenTurn&) = delete;
  OpenTurn& operator=(const OpenTurn&) = delete;
  void release();

 private:
  RunContext& ctx_;
  size_t index_;
  bool held_ = true;
};

// The checks before the first commit (block_run.h), with the writer's files open; snapshot:
// the database must have a flat snapshot (RunOptions::snapshot).
io::Status check_blocks(const persist::DbFiles& files, std::span<const state::Block> blocks, uint32_t queue_depth,
                        bool snapshot);

// The block's prefetch; it releases `turn` once its reader is open.
void prefetch(RunContext& ctx, BlockToken& t, OpenTurn& turn);
void traverse(RunContext& ctx, BlockToken& t);

}  // namespace st::pipeline::detail
