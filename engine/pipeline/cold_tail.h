// cold_tail: the published "cold tail" as the block pipeline's results give it: the cost of
// a block's state reads per miss, per distinct slot read and per device read, grouped by the
// block's transaction count, and the traversal's cost per miss by transaction index.
//
//   by_tx_count   per transaction count n: the blocks with n transactions; their state read
//                 time (prefetch + traverse wall), misses, distinct slots read and device
//                 reads (prefetch + traverse + geth's workers), summed
//   by_tx_index   per block access index i (1..n: the transactions): the traversal's time,
//                 misses and device reads of index i over all blocks (with `bal` the reads
//                 were done by the prefetch, so this is the serving cost alone)
//
// Ratios are sums over sums (a block with more misses weighs more), 0 when the denominator
// is 0. Pure functions of the results.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/pipeline/block_run.h"

namespace st::pipeline {

struct ColdTailRow {
  uint32_t key = 0;           // transaction count, or transaction index
  uint64_t count = 0;         // blocks (by_tx_count) or transactions (by_tx_index)
  uint64_t read_ns = 0, misses = 0, slots_read = 0, device_reads = 0;
  double ms_per_miss() const { return misses ? double(read_ns) * 1e-6 / double(misses) : 0; }
  double ms_per_slot() const { return slots_read ? double(read_ns) * 1e-6 / double(slots_read) : 0; }
  double ms_per_device_read() const { return device_reads ? double(read_ns) * 1e-6 / double(device_reads) : 0; }
};

// Rows in ascending key order, only keys that occur.
std::vector<ColdTailRow> cold_tail_by_tx_count(std::span<const BlockResult> blocks);
std::vector<ColdTailRow> cold_tail_by_tx_index(std::span<const BlockResult> blocks);

}  // namespace st::pipeline
