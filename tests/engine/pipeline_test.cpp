// Tests of engine/pipeline: parallel_sort equals std::sort for every thread count, and
// thread_slot() is unique among the threads of one parallel loop (per-thread scratch).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <set>

#include "engine/pipeline/parallel.h"

using namespace st::pipeline;

TEST_CASE("parallel_sort sorts like std::sort at 1, 2 and 3 threads") {
  std::mt19937_64 rng(3);
  for (unsigned threads : {1u, 2u, 3u}) {
    ThreadScope scope(threads);
    for (size_t n : {size_t(0), size_t(10), size_t(5000), size_t(50000), size_t(123457)}) {
      std::vector<uint32_t> v(n);
      for (auto& x : v) x = uint32_t(rng() % 1000);  // duplicates on purpose
      std::vector<uint32_t> want = v;
      std::sort(want.begin(), want.end());
      parallel_sort(v.begin(), v.end(), std::less<uint32_t>());
      CHECK(v == want);
    }
  }
}

TEST_CASE("thread_slot is below concurrency and unique among concurrently running threads") {
  ThreadScope scope(2);
  const unsigned c = concurrency();
  CHECK(c == 2);
  std::vector<std::atomic<int>> busy(c);
  std::atomic<bool> clash{false}, out_of_range{false};
  parallel_for(64, 1, [&](size_t, size_t) {
    const unsigned s = thread_slot();
    if (s >= c) { out_of_range = true; return; }
    if (busy[s].fetch_add(1) != 0) clash = true;
    volatile uint64_t spin = 0;
    for (int i = 0; i < 20000; ++i) spin = spin + uint64_t(i);
    busy[s].fetch_sub(1);
  });
  CHECK(!out_of_range);
  CHECK(!clash);
}
