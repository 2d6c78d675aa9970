// memory_store_test: the in-memory store's durability model and fault injection: unsynced
// writes vanish in a crash, synced ones survive; the Nth write fails or tears (and the tear
// is caught by the page checksum); a crashed store refuses everything until restart().
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "io/memory_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::fill_payload;

namespace {

Status write_page(MemoryStore& s, uint64_t page, uint64_t version) {
  std::vector<unsigned char> buf(s.payload_bytes());
  fill_payload(buf.data(), buf.size(), page, version);
  PageOp op{PageOpKind::write, page, buf.data(), 0};
  return run_batch(s, std::span<const PageOp>(&op, 1));
}

// ok + version match, or the read's error code.
Errc read_page(MemoryStore& s, uint64_t page, uint64_t version, bool* matches = nullptr) {
  std::vector<unsigned char> buf(s.payload_bytes()), want(s.payload_bytes());
  fill_payload(want.data(), want.size(), page, version);
  PageOp op{PageOpKind::read, page, buf.data(), 0};
  std::vector<PageCompletion> c;
  run_batch(s, std::span<const PageOp>(&op, 1), &c);
  if (matches) *matches = buf == want;
  return c.at(0).code;
}

}  // namespace

TEST_CASE("memory store: crash drops exactly the unsynced writes") {
  MemoryStore s(kPageSize4K, 8);
  REQUIRE(write_page(s, 1, 1).ok());
  REQUIRE(write_page(s, 2, 1).ok());
  REQUIRE(s.sync().ok());
  REQUIRE(write_page(s, 2, 2).ok());
  REQUIRE(write_page(s, 3, 1).ok());
  bool match = false;
  CHECK(read_page(s, 2, 2, &match) == Errc::ok);  // reads see unsynced data before a crash
  CHECK(match);
  s.crash();
  CHECK(s.crashed());
  CHECK(read_page(s, 1, 1) == Errc::crashed);
  CHECK(s.sync().code() == Errc::crashed);
  s.restart();
  CHECK(read_page(s, 1, 1, &match) == Errc::ok);
  CHECK(match);
  CHECK(read_page(s, 2, 1, &match) == Errc::ok);
  CHECK(match);  // version 2 was never synced
  CHECK(read_page(s, 3, 1) == Errc::corrupt_page);  // never durable: never written
}

TEST_CASE("memory store: fail, tear and crash at the Nth write") {
  MemoryStore s(kPageSize16K, 8);
  for (uint64_t p = 0; p < 8; ++p) REQUIRE(write_page(s, p, 1).ok());
  REQUIRE(s.sync().ok());

  FaultPlan fail;
  fail.fail_write_at = 2;
  s.set_fault_plan(fail);
  CHECK(write_page(s, 0, 2).ok());
  Status st = write_page(s, 1, 2);
  CHECK(st.code() == Errc::injected_fault);
  CHECK(st.message() == "write page 1: injected fault");
  bool match = false;
  CHECK(read_page(s, 1, 1, &match) == Errc::ok);
  CHECK(match);  // the failed write changed nothing

  FaultPlan tear;
  tear.tear_write_at = 1;
  tear.tear_bytes = 4096;
  s.set_fault_plan(tear);
  CHECK(write_page(s, 4, 2).ok());  // the lying disk says ok
  std::vector<PageCompletion> c;
  std::vector<unsigned char> buf(s.payload_bytes());
  PageOp op{PageOpKind::read, 4, buf.data(), 0};
  run_batch(s, std::span<const PageOp>(&op, 1), &c);
  CHECK(c.at(0).code == Errc::corrupt_page);
  // The first 4 KiB are new, the trailer is the old one: its crc no longer matches.
  CHECK(c.at(0).check == PageCheck::bad_checksum);
  CHECK(describe(c.at(0)).rfind("read page 4: corrupt page", 0) == 0);

  FaultPlan crash;
  crash.crash_at_write = 3;
  s.set_fault_plan(crash);
  CHECK(write_page(s, 5, 3).ok());
  CHECK(write_page(s, 6, 3).ok());
  CHECK(write_page(s, 7, 3).code() == Errc::crashed);
  CHECK(s.crashed());
  s.restart();
  CHECK(read_page(s, 5, 1, &match) == Errc::ok);
  CHECK(match);
  CHECK(read_page(s, 0, 1, &match) == Errc::ok);
  CHECK(match);  // page 0 version 2 was never synced either
  CHECK(s.counters().errors >= 3);
}

TEST_CASE("memory store: shuffled completion order still yields each op exactly once") {
  MemoryStore s(kPageSize4K, 64);
  s.set_completion_shuffle(7);
  std::vector<std::vector<unsigned char>> bufs(64, std::vector<unsigned char>(s.payload_bytes()));
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < 64; ++p) {
    fill_payload(bufs[p].data(), bufs[p].size(), p, 1);
    ops.push_back({PageOpKind::write, p, bufs[p].data(), p});
  }
  std::vector<PageCompletion> c;
  REQUIRE(run_batch(s, ops, &c).ok());
  REQUIRE(c.size() == 64);
  std::vector<int> seen(64, 0);
  bool in_order = true;
  for (size_t i = 0; i < c.size(); ++i) {
    ++seen[c[i].tag];
    in_order = in_order && c[i].tag == i;
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == 64);
  CHECK(!in_order);
}
