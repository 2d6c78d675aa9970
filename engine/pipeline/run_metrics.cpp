// run_metrics: see run_metrics.h.
#include "engine/pipeline/run_metrics.h"

namespace st::pipeline {
namespace {
uint64_t stage_walls(const BlockResult& b) {
  return b.prefetch.wall_ns() + b.traverse.wall_ns() + b.hash.wall_ns() + b.commit.wall_ns();
}
}  // namespace

double block_overlap(const BlockResult& b) {
  const uint64_t wall = b.commit.end_ns - b.prefetch.start_ns;
  return wall ? double(stage_walls(b)) / double(wall) : 0;
}

double run_overlap(std::span<const BlockResult> blocks, uint64_t wall_ns) {
  uint64_t sum = 0;
  for (const BlockResult& b : blocks) sum += stage_walls(b);
  return wall_ns ? double(sum) / double(wall_ns) : 0;
}

SteadyRate steady_rate(std::span<const BlockResult> blocks) {
  if (blocks.size() < 2) return {};
  return {blocks.size() - 1, blocks.back().commit.end_ns - blocks.front().commit.end_ns};
}

InflightCeiling inflight_ceiling(uint64_t blocks, uint64_t cpu_ns, uint32_t cpus, uint64_t device_reads,
                                 double raw_us_per_read) {
  if (blocks == 0) return {};
  InflightCeiling c;
  c.cpu_ms_per_block = double(cpu_ns) * 1e-6 / double(blocks);
  c.cpu_bound_ms = cpus ? c.cpu_ms_per_block / double(cpus) : c.cpu_ms_per_block;
  c.device_ms_per_block = double(device_reads) / double(blocks) * raw_us_per_read * 1e-3;
  return c;
}

}  // namespace st::pipeline
