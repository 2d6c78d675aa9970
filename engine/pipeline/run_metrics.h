// run_metrics: how much the block pipeline's stages overlapped, from its results.
//
//   block_overlap(b)        (prefetch + traverse + hash + commit wall) / (b's commit end -
//                           b's prefetch start): < 1 when the block waited between its stages
//                           (hooks, a full limiter), > 1 only if its own stages overlapped
//                           (they do not: a block's stages run in order)
//   run_overlap(blocks, w)  the sum of every block's four stage walls / the run's wall w:
//                           <= 1 when the stages of different blocks never run at the same
//                           time (--inflight 1), > 1 when they do (--inflight 2 and more)
//   steady_rate(blocks)     one run's blocks after its first, over the time from the first
//                           block's commit end to the last one's: the throughput once the
//                           pipeline is full. The first block has nothing to overlap and
//                           fills the caches and the allocator, so over a short run the
//                           whole-run rate understates what --inflight K > 1 sustains.
//
// Pure functions; 0 when the denominator is 0. geth's workers are not a stage: their time is
// in traverse's wall.
#pragma once

#include <cstdint>
#include <span>

#include "engine/pipeline/block_run.h"

namespace st::pipeline {

double block_overlap(const BlockResult& b);
double run_overlap(std::span<const BlockResult> blocks, uint64_t wall_ns);

// Blocks after the first and the time they took (0 and 0 with fewer than two blocks).
struct SteadyRate {
  uint64_t blocks = 0;
  uint64_t span_ns = 0;
  double blocks_per_sec() const { return span_ns ? double(blocks) * 1e9 / double(span_ns) : 0; }
};
SteadyRate steady_rate(std::span<const BlockResult> blocks);

}  // namespace st::pipeline
