// scratch_pool_test: a lease holds its object alone; returned objects are lent again, the
// last returned first, with their contents; the objects made never exceed the leases held
// at once, also when many threads take and return.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "engine/memory/scratch_pool.h"

using st::memory::ScratchPool;

namespace {
struct TwoLeases {
  std::vector<int> v;
};
struct ManyThreads {
  std::atomic<int> holder{-1};
  std::vector<int> v;
};
}  // namespace

TEST_CASE("scratch pool: leases held at once get their own objects; a returned one is lent again, contents kept") {
  CHECK(ScratchPool<TwoLeases>::made() == 0);
  TwoLeases *first = nullptr, *second = nullptr;
  {
    auto a = ScratchPool<TwoLeases>::take();
    auto b = ScratchPool<TwoLeases>::take();
    first = a.get(), second = b.get();
    CHECK(first != second);
    a->v.assign(1000, 1);
    b->v.assign(10, 2);
    CHECK(ScratchPool<TwoLeases>::made() == 2);
  }  // b returned, then a (reverse order of declaration): a is the warmest
  auto c = ScratchPool<TwoLeases>::take();
  CHECK(c.get() == first);
  CHECK(c->v.size() == 1000);
  auto d = ScratchPool<TwoLeases>::take();
  CHECK(d.get() == second);
  CHECK(d->v.size() == 10);
  CHECK(ScratchPool<TwoLeases>::made() == 2);
  auto moved = std::move(d);  // a moved-from lease returns nothing
  CHECK(moved.get() == second);
}

TEST_CASE("scratch pool: many threads, each lease alone on its object, no more objects than threads") {
  constexpr int kThreads = 4, kRounds = 2000;
  std::atomic<int> overlaps{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        auto l = ScratchPool<ManyThreads>::take();
        int expected = -1;
        if (!l->holder.compare_exchange_strong(expected, t)) overlaps.fetch_add(1);
        l->v.push_back(t);
        if (l->v.size() > 64) l->v.clear();
        std::this_thread::yield();
        l->holder.store(-1);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(overlaps.load() == 0);
  CHECK(ScratchPool<ManyThreads>::made() >= 1);
  CHECK(ScratchPool<ManyThreads>::made() <= size_t(kThreads));
}
