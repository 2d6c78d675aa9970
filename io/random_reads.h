// random_reads: the device baseline: N uniformly random page reads through a NodeStore,
// keeping `window` reads outstanding (the store itself caps what is in the kernel at its
// queue depth). Measures what one page read costs this store on this device: wall time
// (amortized cost per read) and each read's latency from entering the device queue to its
// completion. Buffers: `window` payload buffers, reused as reads complete (no per-read
// allocation). Used by `statetree io-bench` and as the reference for read-bench.
#pragma once

#include <cstdint>
#include <vector>

#include "io/node_store.h"
#include "io/status.h"

namespace st::io {

struct RandomReadResult {
  uint64_t reads = 0;
  uint64_t wall_ns = 0;
  std::vector<uint64_t> latency_ns;  // one per read, completion order
  double iops() const { return wall_ns ? double(reads) * 1e9 / double(wall_ns) : 0; }
  double us_per_read() const { return reads ? double(wall_ns) / 1e3 / double(reads) : 0; }
};

// Reads `reads` pages chosen uniformly from [0, capacity) by a seeded generator. Every
// read must verify; the first failure is returned (with its page id) and the run stops.
// Requires an idle store.
Status random_reads(NodeStore& store, uint64_t reads, uint32_t window, uint64_t seed,
                    RandomReadResult* result);

// The page sequence generator of random_reads() (splitmix64 over `state`), shared with
// raw_random_reads() so both read the same pages.
uint64_t random_page(uint64_t& state, uint64_t capacity);

}  // namespace st::io
