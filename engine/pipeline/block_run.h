// block_run: the block pipeline. Blocks (EIP-7928 access lists, engine/state/bal.h) replayed
// against an MPT or binary-trie database (arena or RocksDB), each block through four
// stages on a tbb::flow graph:
//
//   prefetch  opens a reader handle pinned to the current published state (arena:
//             DbFiles::for_read via open_any_db, its pages never reused while it lives;
//             RocksDB: open_rocks_reader, a RocksDB snapshot of the writer's own instance,
//             fixed at the last whole commit batch, see below), or with RunOptions::snapshot
//             that state's flat snapshot; reader `bal`: the block's whole access set (every account of the
//             BAL, every slot read or written) looked up in ONE streamed batch at the
//             queue depth (TreeDb::lookup), on the arena optionally split by key path over
//             RunOptions::prefetch_threads readers of the same state, each at its share of
//             the queue depth; `serial`: nothing more
//   traverse  the block's transactions in order (block access indices 0..n+1, accesses from
//             access_by_index: accounts read, accounts written, then slots read, the written
//             slots among them, in BAL order); each access is served by the block's own
//             earlier accesses and writes, else by the diff layer (diff_layer.h: blocks the
//             reader's state does not show yet), else by the database: from the prefetched
//             answers (`bal`) or by a blocking one-key lookup (`serial`, `geth`). `geth`
//             (go-ethereum's prefetcher): meanwhile W worker threads take the block's
//             transactions in order and look their accesses up ahead of the main one, all
//             through the ONE reader handle behind one mutex (the mutex-serialised trie
//             reader); the main traversal takes an answer a worker already read (a warm
//             hit) or waits for the mutex and reads it itself. Then the block's post-state
//             diff goes into the diff layer
//   hash      serial and in block order: the committer's hash() (MptCommitter /
//             BintrieCommitter): resolve (the dirty paths, served first from the pages the
//             block's own reader read, then read), apply, encode + hash in memory, the new
//             root; optionally the pure hash of the new nodes beside it
//   commit    serial and in block order: the committer's write_pages() (pack, page writes)
//             and publish() (release, fsync, MANIFEST; RocksDB: one synced WriteBatch)
//
// inflight K bounds the blocks between admission and the end of their commit (a
// limiter_node): K = 1 runs the stages of one block at a time; K = 2 lets block k+1
// prefetch and traverse while block k hashes and commits, and (arena, page reuse on,
// RunOptions::overlap_hash) hash while block k publishes: one block at a time is between
// the start of its hash and the end of its write_pages() (a limiter_node of 1 that the
// commit stage opens after write_pages()), which hands the next hash its root and pages
// (the committer's base, commit_frame.h) while the publish runs; that hash reads through a
// store of its own. Block k+1's reader may pin the state before block k: its reads see
// block k's writes through the diff layer. Preallocated tokens (K + 1) carry the blocks
// through the graph. RocksDB, any K: a block's reader is a snapshot of the writer's
// instance taken when its prefetch starts; each commit is one atomic WriteBatch holding
// the nodes and the commit record, so the snapshot shows exactly the last block whose
// batch landed (its record names it: reader_blocks_visible), and the diff layer supplies
// the blocks after it. Its reads do not fill the writer's block cache. Block k+1's hash
// waits for block k's publish (no hash overlap on RocksDB).
//
// Before anything is committed the run checks: an MPT or binary-trie database; every
// block written for this tree (or for any); the first block's pre-state root is the
// database's; storage is written only to accounts that exist or that a block creates. A
// later block naming a pre-state root is checked at its commit (the earlier blocks are
// committed by then). A failure stops the run: nothing after the failed block commits.
//
// Invariant: the final root equals `statetree apply` of the same blocks (and the
// from-scratch root of the final state) for any reader, queue depth and K.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/persist/commit_frame.h"
#include "engine/persist/db_files.h"
#include "engine/state/bal.h"
#include "engine/stats/summary.h"
#include "io/status.h"

namespace st::pipeline {

enum class ReaderModel : uint8_t { serial, bal, geth };
const char* reader_model_name(ReaderModel m);

struct RunOptions {
  std::string dir;
  ReaderModel reader = ReaderModel::bal;
  uint32_t queue_depth = 32;
  uint32_t inflight = 1;  // 1..16
  // bal on an arena database without the snapshot: the block's batch is split over this
  // many threads (1..16), each looking its share up through its own reader of the same
  // pinned state at queue_depth / n (the block still keeps at most queue_depth reads in
  // flight; at most queue_depth threads). 1: one reader on the stage's thread.
  uint32_t prefetch_threads = 1;
  // geth: the workers re-executing the block's transactions ahead of the main one
  // (0: go-ethereum's 4/5 of the CPUs, at least 1).
  uint32_t geth_workers = 0;
  // The CPUs each stage's body runs on (empty: not pinned): its thread is confined to them
  // for the body and given its affinity back after; geth's workers, started in the traverse
  // body, run on traverse's CPUs. Every CPU must be one this process may run on.
  struct StageCpus {
    std::vector<int> prefetch, traverse, hash, commit;
  } stage_cpus;
  // The commit's resolve takes the pages the block's own reader read (prefetch and traverse)
  // and those the previous commit wrote before reading any (arena; pages a commit rewrote
  // since that reader's state are dropped first; every record is still checked against its
  // parent's hash). Off: the commit reads its dirty paths itself (the reference the tests
  // compare with).
  bool reuse_read_pages = true;
  // The commit hashes its new nodes again, alone, through the batch kernels (the pure hash
  // time beside the hash stage's); a digest that differs fails the block.
  bool pure_hash = true;
  // The blocks' state reads (bal's prefetch, serial's and geth's on-demand lookups) go to
  // the database's flat snapshot (persist/snapshot/db.h: arena, one device read per data
  // page; RocksDB, one MultiGet on its column family) instead of the tree; the commit still
  // resolves the tree paths it rewrites (it reads those tree nodes itself: the reader hands
  // it none) and updates the snapshot in the same commit. Databases built with a snapshot
  // only (else bad_argument before any read).
  bool snapshot = false;
  // K > 1, arena, reuse_read_pages: block k+1's hash starts once block k's pages are packed
  // (on the root and pages they hand over), while block k's publish (release, fsync,
  // MANIFEST) runs. Off: it starts after block k's publish.
  bool overlap_hash = true;
  // K > 1, bal on the arena (one prefetch thread, no snapshot): the next block's prefetch
  // starts while the previous one still reads, the two (up to K) sharing one queue_depth
  // budget (io/queue_budget.h): together they never have more than queue_depth reads in
  // the kernel, and the next block's reads fill the slots the previous block's walks leave
  // free (its drain, its walks' CPU time between reaps). Readers still open in block order.
  // Off: one prefetch at a time.
  bool overlap_prefetch = true;
  // Arena: the commit writes pages with consecutive ids as one write of up to 64 KiB
  // (persist::PageWriter's write runs). Off: one write per page. Same pages, same bytes.
  bool write_runs = true;
  // The commit record's spec of each block: (the spec before it, the block) -> spec.
  std::function<std::string(const std::string& previous_spec, const state::Block& block)> commit_spec;
  // Called once with the writer's files before the first block (the store's regime).
  std::function<void(const persist::DbFiles& files)> on_open;
  // Test hooks (may wait): in the commit stage before block `index` commits; in the
  // traverse stage after block `index` is traversed (its diff in the layer).
  std::function<void(size_t index)> before_commit;
  std::function<void(size_t index)> after_traverse;
  std::function<void(size_t index)> after_prefetch;   // in the prefetch stage, after its work
  std::function<void(size_t index)> before_traverse;  // in the traverse stage, before its work
  std::function<void(size_t index)> before_hash;      // in the hash stage, before its work
  std::function<void(size_t index)> after_hash;       // in the hash stage, after its work
  // In the commit stage, after block `index`'s pages are packed and written, before its
  // publish (a test may wait there for the next block's hash).
  std::function<void(size_t index)> before_publish;
  // In the prefetch stage, inside its wall and busy time, before its reads (a test may
  // wait there to force a prefetch to span another block's stages).
  std::function<void(size_t index)> during_prefetch;
};

// Per block access index (0 = pre-execution, 1..n the transactions, n+1 post-execution).
struct TxStats {
  uint32_t index = 0;
  uint64_t accesses = 0;   // account and slot accesses served
  uint64_t misses = 0;     // accesses that needed the database
  uint64_t page_reads = 0, bytes_read = 0;  // device reads done during this index (serial)
  uint64_t time_ns = 0;
};

struct StageTimes {
  uint64_t start_ns = 0, end_ns = 0;  // from the run's start
  uint64_t busy_ns = 0;               // CPU time of the stage body's thread (CLOCK_THREAD_CPUTIME_ID)
  uint64_t wall_ns() const { return end_ns - start_ns; }
};

struct BlockResult {
  size_t index = 0;                 // position in the run
  uint64_t number = 0;              // the block header's number
  uint32_t tx_count = 0;
  bool gas_known = false;
  uint64_t gas_used = 0;            // sum of the header's transactions
  // What the block touches (distinct).
  uint64_t accounts = 0, slots_read = 0, slots_written = 0;
  // Traverse.
  uint64_t accesses = 0, hits = 0, misses = 0;
  uint64_t layer_hits = 0;          // accesses served (wholly or in part) by the diff layer
  uint64_t read_digest = 0;         // FNV-1a of the (key, value) sequence the traversal read
  std::vector<TxStats> txs;
  // RunOptions::snapshot: the directory and index pages the block's reader read to open the
  // snapshot's in-memory index (in the prefetch stage's time, apart from its device reads).
  uint64_t snapshot_index_page_reads = 0, snapshot_index_bytes = 0;
  // Prefetch (bal: the batch; serial: opening the reader) and traverse device work.
  // io_wait sums the prefetch threads' waits (RunOptions::prefetch_threads: `threads`);
  // helper_busy is the CPU time of the threads besides the stage's own (not in prefetch.busy_ns).
  uint64_t prefetch_keys = 0, prefetch_page_reads = 0, prefetch_bytes = 0, prefetch_io_wait_ns = 0;
  uint32_t prefetch_threads = 1;
  uint64_t prefetch_helper_busy_ns = 0;
  // The prefetch's reads shared one queue budget with the other blocks' prefetches
  // (RunOptions::overlap_prefetch).
  bool prefetch_shared_queue = false;
  uint64_t traverse_lookups = 0, traverse_page_reads = 0, traverse_bytes = 0, traverse_io_wait_ns = 0;
  // geth: misses the workers had already read; the workers' lookups and device work; the
  // main traversal's time waiting for the reader's mutex.
  uint32_t geth_workers = 0;
  uint64_t warm_hits = 0, ahead_lookups = 0, ahead_page_reads = 0, ahead_bytes = 0, reader_lock_wait_ns = 0;
  uint64_t geth_workers_busy_ns = 0;  // the workers' CPU time, summed (not in traverse.busy_ns)
  // The reader's pinned state: how many blocks of this run it already shows.
  uint64_t reader_blocks_visible = 0;
  // Bytes the block's token scratch (its key index, prefetched answers and the traversal's
  // served values, block_stages.h) grew by for this block: 0 once the tokens have carried
  // blocks at least as large (no allocation of that scratch per block in steady state).
  uint64_t scratch_grown_bytes = 0;
  // hash: the committer's hash() (resolve, apply, encode + hash in memory, the pure hash);
  // commit: its write_pages() and publish() (pack, page writes, release, fsync, MANIFEST).
  StageTimes prefetch, traverse, hash, commit;
  persist::CommitStats commit_stats;  // root, resolve / apply / hash / write / publish
  // Pages the block's reader read that were handed to the commit, and those of them dropped
  // first because a commit since the reader's state rewrote their page id.
  uint64_t read_pages_offered = 0, read_pages_stale = 0;
  // Device read latency (submission to completion, microseconds; LogHistogram's
  // percentiles) of the state read (prefetch + traverse, geth's workers included: count ==
  // prefetch + traverse + ahead page reads) and of the commit's reads (count ==
  // commit_stats.pages_read). Arena only: RocksDB's reads are not timed one by one (count 0).
  stats::Latency state_read_latency_us, commit_read_latency_us;
};

struct RunResult {
  std::vector<BlockResult> blocks;  // those committed
  std::array<uint8_t, 32> root{};   // the database's root after the last committed block
  uint64_t wall_ns = 0;
  // The process's CPU time over the same span (every thread: stages, TBB workers, the reads'
  // submission and completion), and the CPUs it could run on when the run began: with
  // wall_ns, the CPU bound on what any --inflight can reach (the summary's ceiling).
  uint64_t cpu_ns = 0;
  uint32_t cpus = 0;
  uint64_t diff_layer_entries_max = 0;
  // Every committed block's device read latencies (ns), merged.
  stats::LogHistogram state_read_latency_ns, commit_read_latency_ns;
};

// The threads a block's prefetch runs on under these options on this store
// (RunOptions::prefetch_threads resolved: 1 unless bal on the arena without the snapshot).
uint32_t prefetch_threads_used(const RunOptions& options, persist::StoreKind store);
// Whether blocks' prefetches overlap under one queue budget (RunOptions::overlap_prefetch
// resolved for this store).
bool prefetch_overlap_used(const RunOptions& options, persist::StoreKind store);

// Runs `blocks` through the pipeline (header comment). on_block is called in the commit
// stage, in block order, after each commit (printing, progress); it must not throw. On
// error the result holds the blocks committed before it and the status says which block
// failed and how many were committed.
io::Status run_blocks(const RunOptions& options, std::span<const state::Block> blocks, RunResult* result,
                      const std::function<void(const BlockResult&)>& on_block = {});

}  // namespace st::pipeline
