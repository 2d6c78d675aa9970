// queue_budget_test: the shared queue depth. The budget alone (take / give, the lead and the
// reserve), then arena stores sharing one: every op holds a unit while the kernel has it (seen
// from the CQE hook: the units taken never exceed the limit and are never 0 when a CQE
// arrives), a store that is not the lead keeps the reserve free, and a store whose ops wait
// for a unit another store holds waits in reap() until that store gives it back.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "io/arena_store.h"
#include "io/queue_budget.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::fill_payload;
using st::io::test::open_arena_or_skip;
using st::io::test::TempDir;

TEST_CASE("queue budget: the lead takes every unit, the others keep the reserve free; the lead only moves forward") {
  QueueBudget b(4, 2);
  CHECK(b.lead() == 0);
  CHECK(b.take(1));  // 4 free > reserve 2
  CHECK(b.take(1));  // 3 free
  CHECK_FALSE(b.take(1));  // 2 free: the reserve, the lead's only
  CHECK(b.take(0));
  CHECK(b.take(0));
  CHECK_FALSE(b.take(0));  // all 4 taken
  CHECK(b.available() == 0);
  for (int i = 0; i < 4; ++i) b.give();
  CHECK(b.available() == 4);
  b.pass_lead(1);
  CHECK(b.lead() == 1);
  b.pass_lead(0);  // never back
  CHECK(b.lead() == 1);
  for (int i = 0; i < 4; ++i) CHECK(b.take(1));
  CHECK_FALSE(b.take(1));
  for (int i = 0; i < 4; ++i) b.give();
  QueueBudget tight(2, 5);  // a reserve of the whole limit leaves one unit to the others
  CHECK(tight.reserve() == 1);
}

namespace {
// An arena of `pages` pages whose every page is written (payload version 1), for reads.
std::unique_ptr<ArenaFileStore> filled_arena(const TempDir& dir, uint32_t qd, uint64_t pages,
                                             const std::function<int(const PageOp&, uint32_t, int)>& filter) {
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = pages;
  o.create = true;
  o.queue_depth = qd;
  auto w = open_arena_or_skip(o);
  if (!w) return nullptr;
  std::vector<std::vector<unsigned char>> bufs(pages, std::vector<unsigned char>(w->payload_bytes()));
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < pages; ++p) {
    fill_payload(bufs[p].data(), bufs[p].size(), p, 1);
    ops.push_back({PageOpKind::write, p, bufs[p].data(), p});
  }
  REQUIRE(run_batch(*w, ops).ok());
  REQUIRE(w->sync().ok());
  w.reset();
  o.create = false;
  o.capacity_pages = 0;
  o.cqe_filter = filter;
  return open_arena_or_skip(o);
}

// Reads every page of `store` (in `rounds` rounds, submitting all then reaping with waits of
// `wait_for`) and checks the bytes.
void read_all(ArenaFileStore& store, uint64_t pages, size_t wait_for) {
  std::vector<std::vector<unsigned char>> bufs(pages, std::vector<unsigned char>(store.payload_bytes()));
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < pages; ++p) ops.push_back({PageOpKind::read, p, bufs[p].data(), p});
  store.submit(ops);
  std::vector<PageCompletion> done(16);
  size_t got = 0;
  while (got < pages) {
    const size_t n = store.reap(done, wait_for);
    for (size_t i = 0; i < n; ++i) CHECK(done[i].ok());
    got += n;
  }
  std::vector<unsigned char> want(store.payload_bytes());
  for (uint64_t p = 0; p < pages; ++p) {
    fill_payload(want.data(), want.size(), p, 1);
    CHECK(bufs[p] == want);
  }
}
}  // namespace

TEST_CASE("queue budget: two arena stores reading at once never hold more than the limit in the kernel") {
  TempDir dir;
  constexpr uint32_t kLimit = 6;
  constexpr uint64_t kPages = 256;
  QueueBudget budget(kLimit, 0);
  std::atomic<int> over{0}, unheld{0}, cqes{0};
  // At each CQE the op it completes still holds its unit: 1..limit units are taken.
  auto filter = [&](const PageOp&, uint32_t, int res) {
    const uint32_t taken = kLimit - budget.available();
    if (taken > kLimit) over.fetch_add(1);
    if (taken == 0) unheld.fetch_add(1);
    cqes.fetch_add(1);
    return res;
  };
  auto a = filled_arena(dir, 32, kPages, filter);
  if (!a) return;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.queue_depth = 32;
  o.cqe_filter = filter;
  auto b = open_arena_or_skip(o);
  REQUIRE(b);
  REQUIRE(a->share_queue(&budget, 0));
  REQUIRE(b->share_queue(&budget, 1));
  std::thread other([&] { read_all(*b, kPages, 1); });
  read_all(*a, kPages, 0);
  other.join();
  CHECK(cqes.load() >= int(2 * kPages));
  CHECK(over.load() == 0);
  CHECK(unheld.load() == 0);
  CHECK(budget.available() == kLimit);  // every unit given back
}

TEST_CASE("queue budget: a store that is not the lead keeps the reserve free; a store without units waits for them") {
  TempDir dir;
  constexpr uint64_t kPages = 64;
  QueueBudget budget(8, 6);
  std::atomic<uint32_t> most{0};
  auto filter = [&](const PageOp&, uint32_t, int res) {
    const uint32_t taken = 8 - budget.available();
    for (uint32_t m = most.load(); taken > m && !most.compare_exchange_weak(m, taken);) {
    }
    return res;
  };
  auto a = filled_arena(dir, 32, kPages, filter);
  if (!a) return;
  REQUIRE(a->share_queue(&budget, 1));  // claim 1, the lead is 0: two units at most
  read_all(*a, kPages, 1);
  CHECK(most.load() >= 1);
  CHECK(most.load() <= 2);
  budget.pass_lead(1);  // now the lead: up to 8
  most = 0;
  read_all(*a, kPages, 1);
  CHECK(most.load() > 2);
  CHECK(most.load() <= 8);

  // Store b's ops wait for units store a holds until a reaps its completions.
  ArenaOptions o;
  o.path = dir.file("arena");
  o.queue_depth = 8;
  auto b = open_arena_or_skip(o);
  REQUIRE(b);
  QueueBudget two(2, 0);
  REQUIRE(a->share_queue(&two, 0));
  REQUIRE(b->share_queue(&two, 0));
  std::vector<unsigned char> pa(a->payload_bytes() * 2), pb(b->payload_bytes());
  const PageOp held[2] = {{PageOpKind::read, 0, pa.data(), 0}, {PageOpKind::read, 1, pa.data() + a->payload_bytes(), 1}};
  a->submit(held);
  CHECK(two.available() == 0);
  const PageOp wants[1] = {{PageOpKind::read, 2, pb.data(), 2}};
  b->submit(wants);
  CHECK(b->outstanding() == 1);  // pending: no unit
  std::atomic<bool> b_done{false}, a_reaped{false};
  bool b_after_a = false;
  std::thread waiter([&] {
    PageCompletion c[1];
    const size_t n = b->reap(c, 1);
    b_after_a = a_reaped.load();
    CHECK(n == 1);
    CHECK(c[0].ok());
    b_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(b_done.load());
  a_reaped = true;
  PageCompletion ca[2];
  size_t got = 0;
  while (got < 2) got += a->reap(std::span<PageCompletion>(ca + got, 2 - got), 1);
  waiter.join();
  CHECK(b_after_a);
  CHECK(two.available() == 2);
}
