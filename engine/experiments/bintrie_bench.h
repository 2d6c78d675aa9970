// bintrie_bench: the protocol of `statetree bintrie-bench`: the binary trie's figures, each
// measured side by side with the bare hashing of exactly the same messages:
//   1. from-scratch root of N random keys (key_i = SHA256(uint64_be(i)), value_i =
//      SHA256(key_i): the vectors' random_N family) on 1 thread vs the bare hash32/hash64
//      batches of the same message counts at the active kernel, and on T threads;
//   2. the N keys into the mutable tree (its root must equal 1.'s); group blobs per GD
//      (count, bytes, mean blob bytes) and the sizes of 1000 key proofs of that tree;
//   3. incremental: W random writes into the N-key mutable tree (overwrites of existing
//      keys, and new keys that split stems) vs the bare hashing of what was rehashed;
//   4. dense stems: W writes into D full stems (the stem-subtree keep decision).
// Every timing is repeated `reps` times; bare runs alternate with the engine runs. Samples
// are in ns (cpu_clock: single-thread timings in this thread's CPU time, robust on a shared
// machine; the thread comparison is always wall time). Nothing here prints.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/stats/summary.h"

namespace st::experiments {

struct BintrieBenchOptions {
  uint64_t keys = 0, writes = 0, reps = 0, threads = 0, dense_stems = 0;  // dense_stems 0 = skip 4.
  std::vector<uint64_t> gds;
  st::bintrie::HashKind kind = st::bintrie::HashKind::sha256;
  bool cpu_clock = false;
  std::function<void()> on_rep;  // before every timed rep
};

// 1. The from-scratch root: per rep, 1 thread (cpu_clock or wall) and its wall time, the bare hashing
// of its messages, T threads (wall); per-phase wall times of both runs.
struct BintrieScratchFigures {
  st::bintrie::BatchRootStats rs;
  st::bintrie::Hash32 root{};
  std::vector<double> root1_ns, root1_wall_ns, bare_ns, rootT_ns, ratio_bare, speedup;
  std::vector<double> p1_part, p1_buckets, p1_top, pT_part, pT_buckets, pT_top, cpu_per_wall;
};

// 3. Incremental batches into the mutable tree: overwrites of existing keys, then new keys.
struct BintrieIncrementalFigures {
  std::vector<double> upd_ns, upd_bare_ns, upd_ratio, ins_ns, ins_bare_ns, ins_ratio;
  st::bintrie::CommitStats ucs, ics;
};

// 4. Dense stems: the stem-subtree keep decision. A tree of dense_stems full stems
// (256 values each) takes W random writes. Measured: our apply+commit (dense stems keep
// their subtree: written leaves + their ancestors). Counted and bare-hashed for
// comparison: keeping leaf hashes only (the whole 255-node subtree per dirty stem) and
// go-ethereum (also every present value's leaf hash again). Counts and bare times: last rep.
struct BintrieDenseFigures {
  std::vector<double> ns, bare_ns;
  size_t ours_leaf = 0, ours_node = 0, geth_leaf = 0, geth_node = 0, full_node = 0;
  double geth_bare_ms = 0, full_bare_ms = 0;
};

// 2. The mutable tree's build and memory; group blobs per GD and key proof sizes, on the
// N-key tree (before the incremental batches).
struct BintrieTreeFigures {
  double build_ns = 0;
  size_t blob_stems = 0, memory_bytes = 0;
  std::vector<std::pair<uint64_t, st::bintrie::BlobCounts>> blobs;  // per GD
  stats::Summary proof_bytes, proof_depth;
};

// Every phase's figures.
struct BintrieBenchResult {
  BintrieScratchFigures scratch;
  BintrieTreeFigures tree;
  BintrieIncrementalFigures incremental;
  BintrieDenseFigures dense;
};

// Every phase in order; "" or the internal error (a root or a rehash count that disagrees).
std::string run_bintrie_bench(const BintrieBenchOptions& o, BintrieBenchResult* r);

}  // namespace st::experiments
