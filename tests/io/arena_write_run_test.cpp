// arena_write_run_test: write runs on the arena store (PageOp::pages > 1): one operation and
// one completion per run, every page of it sealed on its own and read back exactly, short
// transfers / EINTR / EAGAIN resumed inside the run, malformed runs refused as values.
#include <doctest/doctest.h>

#include <cerrno>
#include <map>
#include <vector>

#include "io/arena_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::fill_payload;
using st::io::test::open_arena_or_skip;
using st::io::test::TempDir;

namespace {

// A run of `pages` payloads back to back, page p's bytes those of fill_payload(p, version).
std::vector<unsigned char> run_payloads(uint32_t payload, uint64_t first, uint32_t pages, uint64_t version) {
  std::vector<unsigned char> b(size_t(payload) * pages);
  for (uint32_t i = 0; i < pages; ++i) fill_payload(b.data() + size_t(i) * payload, payload, first + i, version);
  return b;
}

// Reads pages [0, n) one by one; each must verify and hold fill_payload(p, want[p]).
void check_pages(ArenaFileStore& arena, uint64_t n, const std::vector<uint64_t>& want) {
  const uint32_t payload = arena.payload_bytes();
  std::vector<std::vector<unsigned char>> back(n, std::vector<unsigned char>(payload));
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < n; ++p) ops.push_back(PageOp{PageOpKind::read, p, back[p].data(), p});
  REQUIRE(run_batch(arena, ops).ok());
  std::vector<unsigned char> expect(payload);
  for (uint64_t p = 0; p < n; ++p) {
    CAPTURE(p);
    fill_payload(expect.data(), payload, p, want[p]);
    CHECK(back[p] == expect);
  }
}

struct RunSpec {
  uint64_t first;
  uint32_t pages;
};

}  // namespace

TEST_CASE("arena store: a write run is one operation and one completion; every page reads back and verifies") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 128;
  o.queue_depth = 4;  // fewer slots than runs: runs wait in the pending queue
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  REQUIRE(arena->max_write_pages() == 16);  // 64 KiB of 4 KiB pages
  const uint32_t payload = arena->payload_bytes();
  const std::vector<RunSpec> runs = {{0, 16}, {16, 1}, {17, 7}, {24, 2}, {40, 16}, {56, 3}, {100, 16}, {126, 2}};
  std::vector<std::vector<unsigned char>> bufs;
  std::vector<PageOp> ops;
  std::vector<uint64_t> version(128, 0);
  uint64_t pages = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    bufs.push_back(run_payloads(payload, runs[i].first, runs[i].pages, 3));
    for (uint32_t p = 0; p < runs[i].pages; ++p) version[runs[i].first + p] = 3;
    pages += runs[i].pages;
  }
  for (size_t i = 0; i < runs.size(); ++i)
    ops.push_back(PageOp{PageOpKind::write, runs[i].first, bufs[i].data(), i, runs[i].pages});
  std::vector<PageCompletion> comps;
  REQUIRE(run_batch(*arena, ops, &comps).ok());
  REQUIRE(comps.size() == runs.size());
  for (const PageCompletion& c : comps) {
    CHECK(c.page_id == runs[c.tag].first);
    CHECK(c.pages == runs[c.tag].pages);
  }
  CHECK(arena->counters().writes == pages);
  CHECK(arena->counters().write_ops == runs.size());
  CHECK(arena->counters().bytes_written == pages * 4096);
  // Never-written pages (version 0) read back as corrupt; check only the written ones.
  for (const RunSpec& r : runs) {
    std::vector<uint64_t> want(r.first + r.pages, 3);
    std::vector<std::vector<unsigned char>> back(r.pages, std::vector<unsigned char>(payload));
    std::vector<PageOp> reads;
    for (uint32_t p = 0; p < r.pages; ++p) reads.push_back(PageOp{PageOpKind::read, r.first + p, back[p].data(), p});
    REQUIRE(run_batch(*arena, reads).ok());
    std::vector<unsigned char> expect(payload);
    for (uint32_t p = 0; p < r.pages; ++p) {
      fill_payload(expect.data(), payload, r.first + p, 3);
      CHECK(back[p] == expect);
    }
  }
  // A run over single-page writes of the same pages replaces them page for page.
  std::vector<unsigned char> again = run_payloads(payload, 16, 16, 4);
  const PageOp over{PageOpKind::write, 16, again.data(), 0, 16};
  REQUIRE(run_batch(*arena, std::span<const PageOp>(&over, 1)).ok());
  for (uint64_t p = 16; p < 32; ++p) version[p] = 4;
  check_pages(*arena, 32, version);
}

TEST_CASE("arena store: a write run resumes after EINTR, EAGAIN and short transfers, also at 16 KiB pages") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.page_size = kPageSize16K;
  o.capacity_pages = 32;
  o.queue_depth = 2;
  o.create = true;
  std::map<uint64_t, int> attempts;  // by op page
  o.cqe_filter = [&attempts](const PageOp& op, uint32_t bytes_done, int res) {
    if (res < 0 || op.kind != PageOpKind::write) return res;
    int& a = ++attempts[op.page_id];
    if (a == 1) return -EINTR;
    if (a == 2 && bytes_done == 0) return 4096;  // a cut inside the run's first page
    if (a == 3) return -EAGAIN;
    if (a == 4 && op.pages > 1) return 16384;    // then the rest of that page only
    return res;
  };
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  REQUIRE(arena->max_write_pages() == 4);  // 64 KiB of 16 KiB pages
  const uint32_t payload = arena->payload_bytes();
  std::vector<std::vector<unsigned char>> bufs;
  std::vector<PageOp> ops;
  for (uint64_t first = 0; first < 32; first += 4) {
    bufs.push_back(run_payloads(payload, first, 4, 9));
    ops.push_back(PageOp{PageOpKind::write, first, bufs.back().data(), first, 4});
  }
  std::vector<PageCompletion> comps;
  REQUIRE(run_batch(*arena, ops, &comps).ok());
  for (const PageCompletion& c : comps) CHECK(c.resubmits == 4);
  CHECK(arena->counters().resubmits_short == 16);
  CHECK(arena->counters().write_ops == 8);
  check_pages(*arena, 32, std::vector<uint64_t>(32, 9));
}

TEST_CASE("arena store: malformed write runs are refused as values; a read-only store takes single pages") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 40;
  o.queue_depth = 4;
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  const uint32_t payload = arena->payload_bytes();
  std::vector<unsigned char> buf(size_t(payload) * 17);
  auto one = [&](PageOp op) { return run_batch(*arena, std::span<const PageOp>(&op, 1)); };
  CHECK(one(PageOp{PageOpKind::write, 0, buf.data(), 0, 17}).code() == Errc::bad_argument);  // over 64 KiB
  CHECK(one(PageOp{PageOpKind::write, 0, buf.data(), 0, 0}).code() == Errc::bad_argument);
  CHECK(one(PageOp{PageOpKind::read, 0, buf.data(), 0, 2}).code() == Errc::bad_argument);  // reads: one page
  const Status past = one(PageOp{PageOpKind::write, 30, buf.data(), 0, 11});               // ends past capacity
  CHECK(past.code() == Errc::out_of_range);
  CHECK(past.message().find("write page 30..40") != std::string::npos);
  CHECK(arena->counters().write_ops == 0);
  REQUIRE(arena->sync().ok());
  arena.reset();
  o.create = false;
  o.read_only = true;
  auto ro = open_arena_or_skip(o);
  if (!ro) return;
  CHECK(ro->max_write_pages() == 1);
}
