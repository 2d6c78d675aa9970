// read_bench: the protocol of `statetree read-bench`: lookups of K random EXISTING keys of a
// database (sampled from the source the database was built from: slot_key(i, j) of the
// synthetic state or the allocation), and what they cost against the device:
//
//   for each repetition:
//     one key at a time  reopened at QD1 [cold: evict] -> warm up -> min(K, single) lookups,
//                        each its own (QD1); then (arena) [evict] -> warm up -> the raw QD1
//                        reference with the same number of page reads
//     for each queue depth Q (the database reopened at Q, over the state `db` reads):
//       batched  [cold: evict] -> warm up the I/O path -> ONE TreeDb::lookup of all K keys
//                (arena: streamed, each key's walk advancing as its pages land; RocksDB:
//                level by level, one MultiGet per depth)
//       raw      (arena) [evict] -> warm up -> the same number of page reads as the batch
//                made, uniformly random pages of the arena, raw io_uring at Q
//                (engine/persist/cold_reads.h); order batched/raw alternates by repetition
//
// With options.snapshot every reopen answers its lookups from the flat snapshot
// (persist/snapshot/db.h): the same protocol, the same checks, one page read per data page.
//
// Invariants: every batched answer is checked against the source (the values of all K slots;
// every account an answer carries: nonce, balance, code hash, and the binary trie's code
// size): a wrong or missing one stops the run with Errc::mismatch. The sample is a function
// of (source, K, accounts_only, seed) alone; every seed of the protocol is a function of
// (seed, repetition, queue depth index), so two runs read the same pages. Nothing here
// prints: the caller renders the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/persist/cold_reads.h"  // (includes tree_db.h after what it needs)
#include "engine/persist/tree_db.h"
#include "engine/state/state_source.h"

namespace st::experiments {

// K distinct existing keys and where the source holds each: (account i, slot j), or
// (i, kAccountKey) for an account key.
inline constexpr uint64_t kAccountKey = ~0ull;
struct KeySample {
  std::vector<state::StateKey> keys;
  std::vector<std::pair<uint64_t, uint64_t>> where;
};
// Slots uniformly over all slots of the state (or accounts with accounts_only). An error
// (one line, the caller's input: K exceeds what the state holds) or nullopt.
std::optional<std::string> sample_keys(const state::StateSource& src, uint64_t k, bool accounts_only, uint64_t seed,
                                       KeySample* out);

struct ReadBenchOptions {
  std::string dir;                    // the database directory (reopened at each queue depth)
  std::vector<uint32_t> queue_depths;
  uint64_t reps = 3;
  uint64_t seed = 1;                  // the protocol's seeds (warm-up and raw page sequences)
  uint64_t single = 256;              // one-at-a-time lookups: the first min(K, single) keys
  uint32_t warmup_reads = 32;         // raw QD1 reads that wake the I/O path before each timed run
  bool cold = false;                  // evict the database's files before each timed run
  bool slot_accounts = false;         // binary trie (and any tree from the snapshot): each slot key also fetches its account
  bool snapshot = false;              // lookups go to the flat snapshot (build --snapshot), not the tree
  std::string wrong_answer_note;      // appended to a wrong answer's message ("" = none)
  persist::ProgressFn progress;       // (done, total) steps: one per repetition and queue depth, +1 per repetition
};

// One batched lookup of all K keys at one queue depth.
struct BatchedRun {
  double wall_us = 0;
  persist::LookupStats stats;
};
// The raw reference at one queue depth: amortized cost per read, latency percentiles (us),
// MB/s (reads x page size / wall, 10^6 bytes).
struct RawRun {
  double us_per_read = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, mb_per_s = 0;
  uint64_t reads = 0;
};
// Per queue depth, one entry per repetition (raw: arena databases whose batch read pages).
struct QueueDepthRuns {
  uint32_t qd = 0;
  std::vector<BatchedRun> batched;
  std::vector<RawRun> raw;
  std::vector<double> single_over_batched;  // one-at-a-time mean per lookup / batched per lookup
  std::vector<double> engine_over_raw;      // (batched wall / its page reads) / raw us per read
};
// One key at a time, one entry per repetition (latencies in us).
struct SingleRuns {
  std::vector<double> median_us, p90_us, p99_us, p999_us, mean_us, reads_per_lookup;
  std::vector<double> raw_qd1_p50_us;        // arena: the raw QD1 reference's median latency
  std::vector<double> latency_over_raw_qd1;  // median / (raw QD1 p50 x page reads per lookup)
};

struct ReadBenchResult {
  uint64_t keys = 0, single_keys = 0;
  bool arena = false;
  bool slot_keys_carry_account = false;  // a slot key's answer carries its account (MPT; bintrie with slot_accounts)
  std::vector<QueueDepthRuns> by_qd;     // in options.queue_depths order
  SingleRuns single;
  persist::ColdInfo cold;                // the last eviction's protocol (when options.cold)
  persist::WarmUpInfo warm_last;         // the last warm-up's first and last read
};

// How a run stopped: ok, or the first failure (one line) and whether a lookup returned it
// (a lookup's corrupt page is the database's fault, any other failure the run's).
struct ReadBenchStatus {
  io::Status status;
  bool in_lookup = false;
  bool ok() const { return status.ok(); }
};

// Runs the protocol on the sample over `db` (open at any queue depth; it stays open while
// this runs: every reopen reads its state) and `src`, the source db was built from.
ReadBenchStatus run_read_bench(const ReadBenchOptions& options, persist::TreeDb& db,
                               const state::StateSource& src, const KeySample& sample, ReadBenchResult* out);

}  // namespace st::experiments
