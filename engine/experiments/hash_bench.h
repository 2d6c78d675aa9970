// hash_bench: the protocol of `statetree hash-bench`, the SHA-256 kernel micro-benchmark.
// For every tier asked and every entry point of its table it times repeated passes over
// L1/L2-resident buffers of deterministic pseudo-random bytes:
//
//   for each tier, for each entry point
//     one warm-up pass -> one timed pass (calibrates the inner count to ~0.25 ms per sample:
//     short samples dodge preemption on a shared machine) -> `reps` samples
//   then (vzeroupper_check) SHA-NI hash32_batch alone, and the same pass right after a
//   one-block AVX-512 call (about 1 % of the pass's work).
//
// Compressions per message: hash / hash32_batch / leaves32_sliced / digests_sliced 1,
// hash64_batch and parents_sliced 2 (the second is the constant padding block), hash_batch
// over mixed lengths 0..1000 the exact block count. Invariants: every pass's output is
// consumed into `sink`, so no pass can be optimised away; the inputs are a function of
// `messages` alone. Nothing here prints: the caller renders the result.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/stats/summary.h"
#include "kernels/sha256.h"

namespace st::experiments {

struct HashBenchOptions {
  std::vector<kernels::Sha256Tier> tiers;  // each available and self-tested by the caller
  uint64_t messages = 1024;                // per pass, a multiple of 16
  uint64_t reps = 31;                      // samples per entry point
  bool vzeroupper_check = false;           // needs shani and avx512
  std::function<void(uint64_t done)> progress;  // after each tier's entry point
};

struct HashBenchEntry {
  std::string kernel, entry;
  double compressions_per_msg = 0;
  stats::Summary ns_per_msg, ns_per_compression;
};

struct HashBenchResult {
  std::vector<HashBenchEntry> entries;  // tier by tier in options.tiers order, then the vzeroupper pair
  uint64_t sink = 0;                    // a checksum of the outputs
};

// Entry points timed per tier (progress steps per tier).
inline constexpr uint64_t kHashBenchEntriesPerTier = 7;

HashBenchResult run_hash_bench(const HashBenchOptions& options);

}  // namespace st::experiments
