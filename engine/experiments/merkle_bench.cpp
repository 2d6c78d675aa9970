// merkle_bench: the protocol of `statetree merkle` (see merkle_bench.h).
#include "engine/experiments/merkle_bench.h"

#include <cstring>

#include "engine/stats/summary.h"
#include "kernels/support/clock.h"

namespace st::experiments {
namespace {

void push(MerkleSeries* s, uint64_t t0, uint64_t t1, uint64_t t2, size_t n) {
  s->add_ns.push_back(double(t1 - t0) / double(n));
  s->compute_ns.push_back(double(t2 - t1) / double(n));
  s->total_ns.push_back(double(t2 - t0) / double(n));
}

// The timed reps: the engine's add / compute, then every baseline's.
std::string time_reps(const MerkleBenchOptions& o, merkle::MerkleTree& tree, MerkleBenchResult* r) {
  r->baselines.assign(o.baselines.size(), {});
  r->baseline_roots.assign(o.baselines.size(), {});
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    const uint64_t t0 = monotonic_ns();
    if (auto e = o.given_hashes ? tree.set_leaf_hashes(o.input, o.leaf_count)
                                : tree.add_fixed(o.input, o.leaf_count, o.record_bytes))
      return *e;
    const uint64_t t1 = monotonic_ns();
    r->result = tree.compute();
    const uint64_t t2 = monotonic_ns();
    push(&r->engine, t0, t1, t2, o.leaf_count);
    for (size_t b = 0; b < o.baselines.size(); ++b) {
      const uint64_t b0 = monotonic_ns();
      o.baselines[b]->add(o.input, o.record_bytes, o.twice);
      const uint64_t b1 = monotonic_ns();
      o.baselines[b]->compute(o.twice);
      const uint64_t b2 = monotonic_ns();
      push(&r->baselines[b], b0, b1, b2, o.leaf_count);
      r->baseline_roots[b] = o.baselines[b]->root();
    }
    if (o.progress) o.progress(rep + 1);
  }
  return "";
}

// The roofline (the kernel's cost measured here, on this thread's core), the baselines'
// agreement, the proof.
void figures(const MerkleBenchOptions& o, const merkle::MerkleTree& tree, MerkleBenchResult* r) {
  const size_t n = o.leaf_count;
  r->cost = merkle::measure_merkle_kernel_cost();
  const uint64_t parents = tree.parent_count();
  r->compressions = tree.leaf_compressions() + tree.parent_compressions();
  // Double SHA-256 re-hashes every digest it computes: each leaf's (unless the leaf hashes
  // were given: then none is computed) and each parent's.
  const uint64_t leaf_rehashes = o.twice && !o.given_hashes ? n : 0;
  const double limit_ns = merkle::merkle_limit_ns(r->cost, tree.leaf_compressions() - leaf_rehashes, parents,
                                                  leaf_rehashes + (o.twice ? parents : 0), o.threads);
  r->limit_ns_per_leaf = limit_ns / double(n);
  r->total_median_ns = stats::summarize(r->engine.total_ns).median;
  r->efficiency = r->limit_ns_per_leaf / r->total_median_ns;
  r->cost_per_compression_ns = limit_ns * o.threads / double(r->compressions);
  for (const merkle::Hash32& root : r->baseline_roots) r->baselines_agree = r->baselines_agree && root == r->result.root;
  if (o.proof_index) {
    const merkle::MerkleOptions options{o.twice};
    r->proof_path = tree.proof(*o.proof_index);
    const uint8_t* record = o.input + *o.proof_index * o.record_bytes;
    if (o.given_hashes) std::memcpy(r->proof_leaf_hash.data(), record, 32);
    else r->proof_leaf_hash = merkle::MerkleTree::leaf_hash(record, o.record_bytes, options);
    r->proof_ok = merkle::MerkleTree::verify(r->proof_leaf_hash, *o.proof_index, n, r->proof_path, r->result.root, options);
  }
  r->arena_bytes = tree.arena().bytes();
}

}  // namespace

std::string run_merkle_bench(const MerkleBenchOptions& options, MerkleBenchResult* result) {
  *result = MerkleBenchResult{};
  merkle::MerkleTree tree(options.leaf_count, merkle::MerkleOptions{options.twice});
  if (std::string e = time_reps(options, tree, result); !e.empty()) return e;
  figures(options, tree, result);
  return "";
}

}  // namespace st::experiments
