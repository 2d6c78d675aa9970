// random_reads: the windowed random-read loop (see the header).
#include "io/random_reads.h"
#include "kernels/support/clock.h"
#include "kernels/support/splitmix64.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <time.h>

namespace st::io {
namespace {


}  // namespace

uint64_t random_page(uint64_t& x, uint64_t capacity) { return st::splitmix64(x) % capacity; }

namespace {
uint64_t next_page(uint64_t& x, uint64_t capacity) { return random_page(x, capacity); }
}  // namespace

Status random_reads(NodeStore& store, uint64_t reads, uint32_t window, uint64_t seed,
                    RandomReadResult* result) {
  assert(store.outstanding() == 0 && window > 0);
  *result = RandomReadResult{};
  const uint64_t capacity = store.capacity_pages();
  if (capacity == 0) return Status(Errc::bad_argument, "store has no pages");
  const uint32_t payload = store.payload_bytes();
  const uint32_t slots = uint32_t(std::min<uint64_t>(window, std::max<uint64_t>(reads, 1)));
  std::vector<unsigned char> buffers(size_t(slots) * payload);
  result->latency_ns.reserve(reads);
  uint64_t rng = seed, issued = 0;
  std::vector<PageOp> ops;
  std::vector<PageCompletion> comps(std::max<uint32_t>(slots, 16));
  Status first;

  const uint64_t start = monotonic_ns();
  for (uint32_t i = 0; i < slots && issued < reads; ++i, ++issued)
    ops.push_back({PageOpKind::read, next_page(rng, capacity), buffers.data() + size_t(i) * payload, i});
  store.submit(ops);
  uint64_t done = 0;
  while (done < issued) {
    const size_t n = store.reap(comps, 1);
    ops.clear();
    for (size_t i = 0; i < n; ++i) {
      const PageCompletion& c = comps[i];
      ++done;
      if (!c.ok()) {
        if (first.ok()) first = Status(c.code, describe(c), c.sys_errno);
        continue;
      }
      result->latency_ns.push_back(c.latency_ns);
      if (issued < reads && first.ok()) {
        ops.push_back({PageOpKind::read, next_page(rng, capacity), buffers.data() + c.tag * payload, c.tag});
        ++issued;
      }
    }
    if (!ops.empty()) store.submit(ops);
  }
  result->wall_ns = monotonic_ns() - start;
  result->reads = result->latency_ns.size();
  return first;
}

}  // namespace st::io
