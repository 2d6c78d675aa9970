// run_metrics: how much the block pipeline's stages overlapped, from its results.
//
//   block_overlap(b)        (prefetch + traverse + hash + commit wall) / (b's commit end -
//                           b's prefetch start): < 1 when the block waited between its stages
//                           (hooks, a full limiter), > 1 only if its own stages overlapped
//                           (they do not: a block's stages run in order)
//   run_overlap(blocks, w)  the sum of every block's four stage walls / the run's wall w:
//                           <= 1 when the stages of different blocks never run at the same
//                           time (--inflight 1), > 1 when they do (--inflight 2 and more)
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

}  // namespace st::pipeline
