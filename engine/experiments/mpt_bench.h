// mpt_bench: the protocol of `statetree mpt-bench`: the MPT figures, each measured side by
// side with the bare Keccak-256 time of exactly the nodes the engine hashes:
//
//   from-scratch  root of N secure-trie entries (key_i = keccak256(u64_be(i)) sorted,
//                 value_i = keccak256(key_i), 32 bytes) with build_root on 1 thread, vs
//                 keccak256_batch over the same node encodings (captured once, batches of
//                 4,096 messages, the builder's batch shape); then T threads vs 1.
//   incremental   one contract with S storage slots in the state model; a block of W
//                 distinct random slot updates (StateDiff: slot keys hashed, storage trie
//                 dirty paths re-hashed, account leaf, account trie) vs keccak256_batch over
//                 the dirty nodes' encodings. The encodings are captured from an identical
//                 block (same slots, other values of the same length: same dirty nodes,
//                 same sizes) applied right after the timed one, untimed: the timed block's
//                 paths are as cold as a real block's (each rep writes other random slots).
//                 warm times the second block instead (its paths just walked and hashed
//                 by the first: the figures measured before 2026-11-30 13:30 UTC).
//   memory        peak RSS growth of one build per million entries; resident bytes of the
//                 mutable trie per million slots.
//
// Every timing is repeated `reps` times (reps interleaved: engine, bare keccak, engine ...);
// ratios are computed per rep. Samples are in ns; nothing here prints: the caller
// summarizes and renders them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/mpt/builder.h"

namespace st::experiments {

struct MptBenchOptions {
  uint64_t entries = 0, slots = 0, writes = 0, reps = 0, threads = 0, seed = 0, chunk_keys = 0;
  bool warm = false;
  std::function<void()> on_rep;  // after every timed rep
};

// The from-scratch figures: per rep, the 1-thread build, the bare keccak of its nodes, the
// T-thread build (ns; ratios per rep); the build's node counts and peak memory.
struct MptScratchResult {
  size_t entries = 0;
  mpt::Hash32 root{};
  mpt::BuildStats stats;
  std::vector<double> t1, tk, tp, ratio, speedup, c1, ck, cratio, pcpu, threads_used;
  uint64_t rss_input = 0, rss_build = 0;
  bool hwm_reset = false;
};

// The incremental figures: per rep, the timed block (apply + root), its apply, the bare
// keccak of its dirty nodes (and of those plus the slot keys), wall and thread CPU (ns).
struct MptIncrementalResult {
  std::vector<double> tb, tk, ratio, dirty_nodes, calls, tapply, cb, ck, cratio, cka, crat_all, capply;
  uint64_t logged_commits = 0;
  uint64_t rss0 = 0, rss_state = 0;
};

// The from-scratch figures; "" or the internal error (roots differ between runs).
std::string run_mpt_scratch(const MptBenchOptions& o, MptScratchResult* r);
// The incremental figures (writes <= slots).
void run_mpt_incremental(const MptBenchOptions& o, MptIncrementalResult* r);

}  // namespace st::experiments
