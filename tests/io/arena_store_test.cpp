// arena_store_test: the io_uring arena store against the in-memory store on the same random
// batch workload (identical completions and bytes), reopen after sync, every queue depth
// fallback (no registered buffers/file, buffered I/O), forced EINTR / EAGAIN / short
// transfers / errno / EOF through the CQE hook, corruption named by page id, open errors.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <numeric>
#include <vector>

#include "io/arena_store.h"
#include "io/memory_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::fill_payload;
using st::io::test::open_arena_or_skip;
using st::io::test::splitmix64;
using st::io::test::TempDir;

namespace {

struct Outcome {
  Errc code;
  PageCheck check;
  std::vector<unsigned char> bytes;  // read payload when ok
};

// Runs one batch on `store`; returns outcome by tag. Reaps with the given wait pattern
// (0 = non-blocking polls, exercising the poll path).
std::map<uint64_t, Outcome> run(NodeStore& store, const std::vector<PageOp>& ops,
                                std::vector<std::vector<unsigned char>>& bufs, size_t wait_for) {
  store.submit(ops);
  std::map<uint64_t, Outcome> out;
  std::vector<PageCompletion> comp(7);
  while (out.size() < ops.size()) {
    const size_t n = store.reap(comp, wait_for);
    for (size_t i = 0; i < n; ++i) {
      const PageCompletion& c = comp[i];
      REQUIRE(out.count(c.tag) == 0);
      Outcome o{c.code, c.check, {}};
      if (c.ok() && c.kind == PageOpKind::read) o.bytes = bufs[c.tag];
      CHECK(c.page_id == ops[c.tag].page_id);
      out[c.tag] = std::move(o);
    }
  }
  CHECK(store.outstanding() == 0);
  return out;
}

// Random batches of distinct pages (ops on one page within a batch would race), mixing
// writes, reads of written pages and reads of never-written pages; both stores must agree.
void compare_workload(ArenaFileStore& arena, MemoryStore& mem, uint64_t seed, int rounds) {
  const uint32_t payload = arena.payload_bytes();
  const uint64_t cap = arena.capacity_pages();
  std::vector<uint64_t> version(cap, 0);
  uint64_t rng = seed;
  for (int round = 0; round < rounds; ++round) {
    std::vector<uint64_t> pages(cap);
    std::iota(pages.begin(), pages.end(), 0);
    for (uint64_t i = cap - 1; i > 0; --i) std::swap(pages[i], pages[splitmix64(rng) % (i + 1)]);
    const size_t n = 1 + splitmix64(rng) % std::min<uint64_t>(cap, 150);
    std::vector<PageOp> ops(n);
    std::vector<std::vector<unsigned char>> bufs_a(n, std::vector<unsigned char>(payload)),
        bufs_m(n, std::vector<unsigned char>(payload));
    for (size_t i = 0; i < n; ++i) {
      const uint64_t page = pages[i];
      const bool write = splitmix64(rng) % 2 == 0;
      ops[i].kind = write ? PageOpKind::write : PageOpKind::read;
      ops[i].page_id = page;
      ops[i].tag = i;
      if (write) {
        ++version[page];
        fill_payload(bufs_a[i].data(), payload, page, version[page]);
        bufs_m[i] = bufs_a[i];
      }
    }
    std::vector<PageOp> ops_a = ops, ops_m = ops;
    for (size_t i = 0; i < n; ++i) { ops_a[i].buffer = bufs_a[i].data(); ops_m[i].buffer = bufs_m[i].data(); }
    const auto ra = run(arena, ops_a, bufs_a, round % 3 == 0 ? 0 : n);
    const auto rm = run(mem, ops_m, bufs_m, n);
    REQUIRE(ra.size() == n);
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(round);
      CAPTURE(ops[i].page_id);
      const Outcome& a = ra.at(i);
      const Outcome& m = rm.at(i);
      CHECK(a.code == m.code);
      CHECK(a.check == m.check);
      CHECK(a.bytes == m.bytes);
      if (ops[i].kind == PageOpKind::read && version[ops[i].page_id] == 0) {
        CHECK(a.code == Errc::corrupt_page);
        CHECK(a.check == PageCheck::never_written);
      }
    }
  }
}

// Reads every page of both stores and compares outcomes.
void compare_all_pages(NodeStore& a, NodeStore& b) {
  const uint32_t payload = a.payload_bytes();
  const uint64_t cap = a.capacity_pages();
  std::vector<std::vector<unsigned char>> ba(cap, std::vector<unsigned char>(payload)),
      bb(cap, std::vector<unsigned char>(payload));
  std::vector<PageOp> oa(cap), ob(cap);
  for (uint64_t p = 0; p < cap; ++p) {
    oa[p] = PageOp{PageOpKind::read, p, ba[p].data(), p};
    ob[p] = PageOp{PageOpKind::read, p, bb[p].data(), p};
  }
  const auto ra = run(a, oa, ba, cap), rb = run(b, ob, bb, cap);
  for (uint64_t p = 0; p < cap; ++p) {
    CAPTURE(p);
    CHECK(ra.at(p).code == rb.at(p).code);
    CHECK(ra.at(p).bytes == rb.at(p).bytes);
  }
}

}  // namespace

TEST_CASE("arena store matches the memory store on a random batch workload, and after reopen") {
  struct Config { uint32_t page_size, qd; bool direct, reg_bufs, reg_file; };
  const Config configs[] = {
      {kPageSize4K, 8, true, true, true},    {kPageSize16K, 3, true, true, true},
      {kPageSize4K, 1, true, false, false},  {kPageSize4K, 32, false, true, false},
      {kPageSize16K, 64, true, false, true},
  };
  for (const Config& cfg : configs) {
    CAPTURE(cfg.page_size);
    CAPTURE(cfg.qd);
    CAPTURE(cfg.reg_bufs);
    TempDir dir;
    ArenaOptions o;
    o.path = dir.file("arena");
    o.page_size = cfg.page_size;
    o.capacity_pages = 200;
    o.queue_depth = cfg.qd;
    o.create = true;
    o.direct_io = cfg.direct;
    o.use_registered_buffers = cfg.reg_bufs;
    o.use_registered_file = cfg.reg_file;
    auto arena = open_arena_or_skip(o);
    if (!arena) return;
    if (!arena->features().notes.empty()) MESSAGE("arena features: " << arena->features().notes);
    CHECK(arena->features().registered_buffers <= cfg.reg_bufs);
    CHECK(arena->capacity_pages() == 200);
    MemoryStore mem(cfg.page_size, 200);
    compare_workload(*arena, mem, 42 + cfg.qd, 12);
    REQUIRE(arena->sync().ok());
    REQUIRE(mem.sync().ok());
    arena.reset();
    o.create = false;
    o.capacity_pages = 0;
    arena = open_arena_or_skip(o);
    REQUIRE(arena);
    CHECK(arena->capacity_pages() == 200);
    compare_all_pages(*arena, mem);
  }
}

TEST_CASE("arena store resubmits EINTR, EAGAIN and short transfers; maps errno; names EOF") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.page_size = kPageSize16K;
  o.capacity_pages = 64;
  o.queue_depth = 8;
  o.create = true;
  int mode = 0;  // 0: EINTR then short then EAGAIN on each op; 1: EIO; 2: EOF (res 0)
  o.cqe_filter = [&mode](const PageOp& op, uint32_t bytes_done, int res) {
    if (res < 0) return res;
    if (mode == 1) return -EIO;
    if (mode == 2) return 0;
    static thread_local std::map<std::pair<int, uint64_t>, int> attempts;
    int& a = attempts[{int(op.kind), op.page_id}];
    ++a;
    if (a == 1) return -EINTR;
    if (a == 2 && bytes_done == 0) return 4096;  // first 4 KiB arrived; the rest is resubmitted
    if (a == 3) return -EAGAIN;
    if (a >= 4) a = 0;  // next op on this page starts over
    return res;
  };
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  const uint32_t payload = arena->payload_bytes();
  std::vector<std::vector<unsigned char>> bufs(64, std::vector<unsigned char>(payload));
  std::vector<PageOp> ops(64);
  for (uint64_t p = 0; p < 64; ++p) {
    fill_payload(bufs[p].data(), payload, p, 1);
    ops[p] = PageOp{PageOpKind::write, p, bufs[p].data(), p};
  }
  std::vector<PageCompletion> comps;
  REQUIRE(run_batch(*arena, ops, &comps).ok());
  for (const auto& c : comps) CHECK(c.resubmits == 3);
  std::vector<std::vector<unsigned char>> back(64, std::vector<unsigned char>(payload));
  for (uint64_t p = 0; p < 64; ++p) ops[p] = PageOp{PageOpKind::read, p, back[p].data(), p};
  comps.clear();
  REQUIRE(run_batch(*arena, ops, &comps).ok());
  CHECK(back == bufs);
  const StoreCounters& k = arena->counters();
  CHECK(k.resubmits_eintr == 128);
  CHECK(k.resubmits_short == 128);
  CHECK(k.resubmits_eagain == 128);

  mode = 1;
  comps.clear();
  Status s = run_batch(*arena, std::span<const PageOp>(ops.data(), 1), &comps);
  CHECK(s.code() == Errc::sys);
  CHECK(s.sys_errno() == EIO);
  CHECK(s.message().find("read page 0") != std::string::npos);
  CHECK(s.message().find("Input/output error") != std::string::npos);
  mode = 2;
  s = run_batch(*arena, std::span<const PageOp>(ops.data() + 5, 1));
  CHECK(s.code() == Errc::end_of_file);
  CHECK(s.message() == "read page 5: unexpected end of file");
}

TEST_CASE("arena store names a corrupt or misdirected page and returns no data for it") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 16;
  o.queue_depth = 4;
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  const uint32_t ps = arena->page_size(), payload = arena->payload_bytes();
  std::vector<std::vector<unsigned char>> bufs(16, std::vector<unsigned char>(payload));
  std::vector<PageOp> ops(16);
  for (uint64_t p = 0; p < 16; ++p) {
    fill_payload(bufs[p].data(), payload, p, 1);
    ops[p] = PageOp{PageOpKind::write, p, bufs[p].data(), p};
  }
  REQUIRE(run_batch(*arena, ops).ok());
  REQUIRE(arena->sync().ok());
  arena.reset();

  // Flip one payload byte of page 5; copy page 3 over page 9 (a misdirected write).
  const int fd = ::open(o.path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char byte;
  REQUIRE(::pread(fd, &byte, 1, 5 * ps + 1234) == 1);
  byte ^= 0x01;
  REQUIRE(::pwrite(fd, &byte, 1, 5 * ps + 1234) == 1);
  std::vector<unsigned char> page3(ps);
  REQUIRE(::pread(fd, page3.data(), ps, 3 * ps) == ssize_t(ps));
  REQUIRE(::pwrite(fd, page3.data(), ps, 9 * ps) == ssize_t(ps));
  ::fsync(fd);
  ::close(fd);

  o.create = false;
  arena = open_arena_or_skip(o);
  REQUIRE(arena);
  std::vector<std::vector<unsigned char>> back(16, std::vector<unsigned char>(payload, 0xEE));
  for (uint64_t p = 0; p < 16; ++p) ops[p] = PageOp{PageOpKind::read, p, back[p].data(), p};
  std::vector<PageCompletion> comps;
  Status s = run_batch(*arena, ops, &comps);
  CHECK(s.code() == Errc::corrupt_page);
  for (const PageCompletion& c : comps) {
    CAPTURE(c.page_id);
    if (c.page_id == 5) {
      CHECK(c.code == Errc::corrupt_page);
      CHECK(c.check == PageCheck::bad_checksum);
      CHECK(describe(c) == "read page 5: corrupt page (checksum mismatch)");
      CHECK(back[5] == std::vector<unsigned char>(payload, 0xEE));  // nothing returned
    } else if (c.page_id == 9) {
      CHECK(c.code == Errc::corrupt_page);
      CHECK(c.check == PageCheck::wrong_page_id);
    } else {
      CHECK(c.ok());
      CHECK(back[c.page_id] == bufs[c.page_id]);
    }
  }
  CHECK(arena->counters().corrupt_pages == 2);
}

TEST_CASE("arena store: out-of-range pages, grow, and open errors as values") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 4;
  o.queue_depth = 2;
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  std::vector<unsigned char> buf(arena->payload_bytes(), 1);
  PageOp op{PageOpKind::write, 4, buf.data(), 0};
  Status s = run_batch(*arena, std::span<const PageOp>(&op, 1));
  CHECK(s.code() == Errc::out_of_range);
  REQUIRE(arena->grow(10).ok());
  CHECK(arena->capacity_pages() == 10);
  CHECK(run_batch(*arena, std::span<const PageOp>(&op, 1)).ok());
  op.kind = PageOpKind::read;
  op.page_id = 9;
  s = run_batch(*arena, std::span<const PageOp>(&op, 1));
  CHECK(s.code() == Errc::corrupt_page);
  CHECK(s.message() == "read page 9: corrupt page (never written (all-zero trailer))");
  arena.reset();

  std::unique_ptr<ArenaFileStore> none;
  ArenaOptions bad = o;
  bad.create = false;
  bad.path = dir.file("missing");
  s = ArenaFileStore::open(bad, &none);
  CHECK(s.code() == Errc::not_found);
  CHECK(s.message() == "arena file " + bad.path + " does not exist");
  bad = o;
  bad.page_size = 8192;
  CHECK(ArenaFileStore::open(bad, &none).code() == Errc::bad_argument);
  bad = o;
  bad.queue_depth = 0;
  CHECK(ArenaFileStore::open(bad, &none).code() == Errc::bad_argument);
  // A file of 10 4 KiB pages opened as 16 KiB pages ends in a partial page: it is ignored
  // and trimmed (tests/io/arena_full_disk_test.cpp has the full-disk cases).
  bad = o;
  bad.create = false;
  bad.capacity_pages = 0;
  bad.page_size = kPageSize16K;
  s = ArenaFileStore::open(bad, &none);
  CHECK(s.ok());
  REQUIRE(none != nullptr);
  CHECK(none->capacity_pages() == 2);
  CHECK(std::filesystem::file_size(bad.path) == 2 * kPageSize16K);
}

TEST_CASE("arena store: destroying it with ops in flight drains them first") {
  TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 64;
  o.queue_depth = 8;
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  std::vector<std::vector<unsigned char>> bufs(64, std::vector<unsigned char>(arena->payload_bytes(), 9));
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < 64; ++p) ops.push_back({PageOpKind::write, p, bufs[p].data(), p});
  arena->submit(ops);
  CHECK(arena->outstanding() == 64);
  arena.reset();  // 8 in the kernel, 56 queued: the queued ones never start
  o.create = false;
  arena = open_arena_or_skip(o);
  REQUIRE(arena);
  std::vector<PageCompletion> c;
  for (uint64_t p = 0; p < 64; ++p) ops[p].kind = PageOpKind::read;
  run_batch(*arena, ops, &c);
  size_t ok = 0;
  for (const auto& x : c) ok += x.ok();
  CHECK(ok >= 8);  // at least what was in the kernel completed before the destructor returned
  CHECK(ok < 64);
}
