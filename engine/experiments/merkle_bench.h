// merkle_bench: the protocol of `statetree merkle`: the Merkle root of a batch of leaves,
// timed over `reps` repetitions, each one
//
//   engine     add (hash the leaves: add_fixed, or set_leaf_hashes when they are given)
//              -> compute (the levels up to the root)
//   baselines  the same two phases of every baseline given, in order, right after the
//              engine (so engine and baselines alternate: they meet the same host)
//
// then the figures: the active kernel's measured cost on this thread's core
// (merkle_roofline.h) and the limit it implies for this run, the efficiency (limit /
// median total), whether every baseline's root equals the engine's, and the inclusion
// proof of one leaf (verified). Samples are ns per leaf; nothing here prints: the caller
// summarizes and renders them.
//
// Invariants: the engine's tree is built once and reused by every rep (its arena is sized
// up front); a baseline is timed only through its interface, so the OpenSSL loops stay in
// workloads/ (the engine does not link OpenSSL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/merkle/merkle_roofline.h"
#include "engine/merkle/merkle_tree.h"

namespace st::experiments {

// A loop timed beside the engine, in the engine's two phases.
class MerkleBaselineLoop {
 public:
  virtual ~MerkleBaselineLoop() = default;
  virtual void add(const uint8_t* data, size_t leaf_size, bool twice) = 0;
  virtual void compute(bool twice) = 0;
  virtual std::array<uint8_t, 32> root() const = 0;
};

struct MerkleBenchOptions {
  const uint8_t* input = nullptr;  // leaf_count records of record_bytes each
  size_t leaf_count = 0, record_bytes = 32;
  bool twice = false;         // double SHA-256
  bool given_hashes = false;  // the records are the leaf hashes (32 bytes)
  uint64_t reps = 1;
  unsigned threads = 1;       // the workers the caller's thread scope runs (the limit divides by it)
  std::optional<size_t> proof_index;
  std::vector<MerkleBaselineLoop*> baselines;    // not with given_hashes
  std::function<void(uint64_t reps_done)> progress;
};

// ns per leaf of each rep's phases.
struct MerkleSeries {
  std::vector<double> add_ns, compute_ns, total_ns;
};

struct MerkleBenchResult {
  merkle::MerkleResult result;            // the engine's (the last rep's)
  MerkleSeries engine;
  std::vector<MerkleSeries> baselines;    // options.baselines' order
  std::vector<merkle::Hash32> baseline_roots;
  bool baselines_agree = true;
  merkle::MerkleKernelCost cost;
  uint64_t compressions = 0, arena_bytes = 0;
  double limit_ns_per_leaf = 0, total_median_ns = 0, efficiency = 0, cost_per_compression_ns = 0;
  merkle::Hash32 proof_leaf_hash{};       // with a proof_index
  std::vector<merkle::Hash32> proof_path;
  bool proof_ok = true;
};

// "" or the input error (a record the tree refuses).
std::string run_merkle_bench(const MerkleBenchOptions& options, MerkleBenchResult* result);

}  // namespace st::experiments
