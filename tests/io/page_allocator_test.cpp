// page_allocator_test: copy-on-write free space: pages of the committed root are never
// handed out again before the next commit is durable; aborts return a commit's pages;
// a randomized run against a plain set-based model (free and deferred frees); serialize /
// deserialize round trip, serialize_durable() against a durable copy's serialize(), and
// rejection of damaged free lists.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "io/page_allocator.h"
#include "tests/io/io_test_util.h"

using namespace st::io;

TEST_CASE("allocator: released committed pages stay untouched until the commit is durable") {
  PageAllocator a(100);
  std::vector<uint64_t> v;
  REQUIRE(a.allocate(10, &v).ok());
  CHECK(v == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  a.commit_durable();
  // Commit 2 rewrites pages 2..4: new pages come from fresh space, old ones are pending.
  for (uint64_t p : {2, 3, 4}) a.release(p);
  v.clear();
  REQUIRE(a.allocate(3, &v).ok());
  CHECK(v == std::vector<uint64_t>{10, 11, 12});
  CHECK(a.pending_free_pages() == 3);
  CHECK(!a.is_free(3));
  // A page allocated and released within one commit is free at once.
  a.release(12);
  CHECK(a.is_free(12));
  a.commit_durable();
  CHECK(a.is_free(3));
  v.clear();
  REQUIRE(a.allocate(4, &v).ok());
  CHECK(v == std::vector<uint64_t>{2, 3, 4, 12});  // first fit from the lowest free page
  // Abort: this commit's pages return, its releases are forgotten.
  a.release(0);
  a.abort_commit();
  CHECK(!a.is_free(0));
  CHECK(a.is_free(2));
  CHECK(a.high_water() == 13);
  uint64_t first = 0;
  REQUIRE(a.allocate_run(50, &first).ok());
  CHECK(first == 13);
  CHECK(a.high_water() == 63);
  a.abort_commit();
  CHECK(a.high_water() == 13);  // never-used tail trimmed back
  CHECK(a.allocate_run(200, &first).code() == Errc::full);
  v.clear();
  CHECK(a.allocate(200, &v).code() == Errc::full);
  CHECK(v.empty());
}

TEST_CASE("allocator: randomized commits against a set model, with serialize round trips") {
  const uint64_t cap = 300;
  PageAllocator a(cap);
  std::set<uint64_t> live;  // committed + this commit's pages
  uint64_t rng = 99;
  for (int commit = 0; commit < 200; ++commit) {
    if (commit % 4 == 1) a.defer_all_free();  // free space a reader may still hold: deferred extents
    std::set<uint64_t> committed = live, released, fresh;
    const size_t n_release = live.empty() ? 0 : st::io::test::splitmix64(rng) % std::min<size_t>(live.size(), 20);
    for (size_t i = 0; i < n_release; ++i) {
      auto it = live.begin();
      std::advance(it, st::io::test::splitmix64(rng) % live.size());
      a.release(*it);
      released.insert(*it);
      live.erase(it);
    }
    std::vector<uint64_t> got;
    const uint64_t n_alloc = st::io::test::splitmix64(rng) % 25;
    Status s = a.allocate(n_alloc, &got);
    if (!s.ok()) { CHECK(s.code() == Errc::full); a.abort_commit(); live = committed; continue; }
    for (uint64_t p : got) {
      REQUIRE(p < cap);
      REQUIRE(live.count(p) == 0);
      REQUIRE(released.count(p) == 0);  // the committed root's pages are never reused early
      fresh.insert(p);
      live.insert(p);
    }
    if (st::io::test::splitmix64(rng) % 5 == 0) {
      a.abort_commit();
      live = committed;
      continue;
    }
    if (commit % 3 == 0) {  // some commits defer their frees (deferred extents beside free ones)
      a.set_defer_frees(commit % 2 == 0);
      if (commit % 9 == 0) a.reclaim_deferred();
    }
    // The bytes the commit will persist, computed before it is durable, are those after.
    PageAllocator copy = a;
    copy.commit_durable();
    const std::vector<uint8_t> expect = copy.serialize();
    CHECK(a.serialize_durable() == expect);
    a.commit_durable();
    CHECK(a.serialize() == expect);
    for (uint64_t p = 0; p < cap; ++p) REQUIRE(a.is_free(p) == (live.count(p) == 0));
    PageAllocator b;
    REQUIRE(PageAllocator::deserialize(a.serialize(), cap, &b).ok());
    CHECK(b.serialize() == a.serialize());
    a = b;
  }
}

TEST_CASE("allocator: damaged free lists are rejected") {
  PageAllocator a(64);
  std::vector<uint64_t> v;
  REQUIRE(a.allocate(20, &v).ok());
  a.commit_durable();
  a.release(3);
  a.release(10);
  a.commit_durable();
  auto bytes = a.serialize();
  PageAllocator b;
  CHECK(PageAllocator::deserialize(bytes, 64, &b).ok());
  CHECK(PageAllocator::deserialize(bytes, 10, &b).code() == Errc::corrupt_page);  // hw > capacity
  auto truncated = bytes;
  truncated.pop_back();
  CHECK(PageAllocator::deserialize(truncated, 64, &b).code() == Errc::corrupt_page);
  auto overlap = bytes;
  overlap[16 + 16] = 3;  // second extent starts at 3, inside/before the first
  CHECK(PageAllocator::deserialize(overlap, 64, &b).code() == Errc::corrupt_page);
}
