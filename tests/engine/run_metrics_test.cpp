// run_metrics_test: pipeline::inflight_ceiling from known figures: the device's bound (reads
// per block x the raw us per read) against the CPU's (CPU per block over the CPUs), the larger
// setting the blocks per second; the device left out when not measured; nothing from no blocks.
#include <doctest/doctest.h>

#include "engine/pipeline/run_metrics.h"

using namespace st::pipeline;

TEST_CASE("inflight_ceiling: the larger of the device's and the CPU's time per block sets the ceiling") {
  // 10 blocks, 4,000 ms of process CPU over 2 CPUs: 400 ms a block, 200 ms of the CPUs.
  // 41,000 reads at 14 us: 57.4 ms a block, so the CPU bounds it: 5 blocks/s.
  const InflightCeiling cpu = inflight_ceiling(10, 4'000'000'000ull, 2, 41'000, 14.0);
  CHECK(cpu.cpu_ms_per_block == doctest::Approx(400));
  CHECK(cpu.cpu_bound_ms == doctest::Approx(200));
  CHECK(cpu.device_ms_per_block == doctest::Approx(57.4));
  CHECK(!cpu.device_bound());
  CHECK(cpu.blocks_per_sec() == doctest::Approx(5.0));
  // 410,000 reads at 14 us: 574 ms a block, above the CPU's 200: the device bounds it.
  const InflightCeiling dev = inflight_ceiling(10, 4'000'000'000ull, 2, 410'000, 14.0);
  CHECK(dev.device_ms_per_block == doctest::Approx(574));
  CHECK(dev.device_bound());
  CHECK(dev.period_ms() == doctest::Approx(574));
  CHECK(dev.blocks_per_sec() == doctest::Approx(1000.0 / 574));
  // The device not measured (0 us per read): the CPU's bound alone, one CPU counted as such.
  const InflightCeiling alone = inflight_ceiling(4, 1'000'000'000ull, 1, 410'000, 0);
  CHECK(alone.device_ms_per_block == 0);
  CHECK(!alone.device_bound());
  CHECK(alone.blocks_per_sec() == doctest::Approx(4.0));
  // No blocks: nothing to bound.
  CHECK(inflight_ceiling(0, 1'000'000'000ull, 2, 100, 14.0).blocks_per_sec() == 0);
}
