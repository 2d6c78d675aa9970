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
//   inflight_ceiling(...)   the most blocks per second any --inflight could reach on these
//                           blocks, from the two resources every block in flight shares:
//                           the device (the blocks' reads at the raw loop's amortized cost
//                           at the run's queue depth, which the blocks in flight share under
//                           one --qd budget) and the CPU (the process's CPU time spread over
//                           the CPUs it may run on). An upper bound: the commits' writes,
//                           their serial order and every wait are left out, and the CPU a
//                           block costs is this run's (overlapping blocks cost more of it).
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

struct InflightCeiling {
  double cpu_ms_per_block = 0;     // the process's CPU time per block
  double cpu_bound_ms = 0;         // cpu_ms_per_block / the CPUs: a block's share of the CPUs
  double device_ms_per_block = 0;  // device reads per block x the raw loop's us per read; 0: not measured
  double period_ms() const { return cpu_bound_ms > device_ms_per_block ? cpu_bound_ms : device_ms_per_block; }
  double blocks_per_sec() const { return period_ms() > 0 ? 1e3 / period_ms() : 0; }
  bool device_bound() const { return device_ms_per_block >= cpu_bound_ms; }
};
// raw_us_per_read 0: the device not measured (its bound left out).
InflightCeiling inflight_ceiling(uint64_t blocks, uint64_t cpu_ns, uint32_t cpus, uint64_t device_reads,
                                 double raw_us_per_read);

}  // namespace st::pipeline
