// reader_pins_test: readers pin the state they walk, by its commit_seq, and the writer's
// copy-on-write space reuses a freed page as soon as no reader can reach it:
// - ReaderPin / ReaderGate on a real READERS file: a reader still loading a manifest holds
//   back every deferred page; a reader of state s holds back what later commits freed
//   (tags > s) and nothing older; pins go with their handles, and with a reader process
//   killed by SIGKILL;
// - CowSpace against a model: random commits, readers opened at the current state and
//   closed at random, reopens as after a crash; no page reachable from a state a live reader
//   holds is ever handed out, and with no reader older than a tag its pages come back;
// - StoreDir as the block pipeline uses it (a new reader on each published state, the
//   previous one closed after the next commit): the arena stops growing.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "io/cow_space.h"
#include "io/db_lock.h"
#include "io/memory_store.h"
#include "io/store_dir.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::TempDir;

using st::io::test::commit_pages;
using st::io::test::params4k;

TEST_CASE("reader pins: the gate sees a loading reader and readers of states older than a seq") {
  TempDir tmp;
  const std::string dir = tmp.path();
  std::unique_ptr<ReaderGate> gate;
  REQUIRE(ReaderGate::open(dir, &gate).message() == "");
  CHECK(gate->no_reader_before(0));
  CHECK(gate->no_reader_before(1000));

  std::unique_ptr<ReaderPin> a, b;
  REQUIRE(ReaderPin::acquire(dir, &a).message() == "");
  REQUIRE(a);
  CHECK(!gate->no_reader_before(0));  // loading: any state may be the one it reads
  CHECK(!gate->no_reader_before(7));
  REQUIRE(a->pin_state(5).message() == "");
  CHECK(gate->no_reader_before(5));  // pages freed by commit 5 are not in state 5
  CHECK(!gate->no_reader_before(6));
  CHECK(!gate->no_reader_before(1u << 20));

  REQUIRE(ReaderPin::acquire(dir, &b).message() == "");
  CHECK(!gate->no_reader_before(3));
  REQUIRE(b->pin_state(3).message() == "");
  CHECK(gate->no_reader_before(3));
  CHECK(!gate->no_reader_before(4));
  b.reset();
  CHECK(gate->no_reader_before(5));
  CHECK(!gate->no_reader_before(6));
  a.reset();
  CHECK(gate->no_reader_before(1u << 20));
}

TEST_CASE("reader pins: another process's pin holds its state until that process is killed") {
  TempDir tmp;
  const std::string dir = tmp.path();
  std::unique_ptr<ReaderGate> gate;
  REQUIRE(ReaderGate::open(dir, &gate).message() == "");
  const pid_t child = st::io::test::fork_holder([&] {
    std::unique_ptr<ReaderPin> pin;
    const bool ok = ReaderPin::acquire(dir, &pin).ok() && pin && pin->pin_state(9).ok();
    pin.release();  // held until the child is killed
    return ok;
  });
  CHECK(gate->no_reader_before(9));
  CHECK(!gate->no_reader_before(10));
  st::io::test::kill_holder(child);
  CHECK(gate->no_reader_before(10));
  CHECK(gate->no_reader_before(uint64_t(1) << 40));
}

TEST_CASE("reader pins: random commits and readers against a model; nothing a reader holds is reused") {
  MemoryStore store(kPageSize4K, 8);
  MemoryManifestSlot slot;
  std::multiset<uint64_t> readers;  // the seqs live readers walk
  bool loading = false;              // a reader between pin and manifest load
  auto gate = [&](uint64_t seq) { return !loading && (readers.empty() || *readers.begin() >= seq); };
  auto space = std::make_unique<CowSpace>(store, slot, params4k());
  space->set_reader_gate(gate);
  REQUIRE(space->open().ok());
  std::map<uint64_t, std::vector<uint64_t>> state_pages;  // seq -> its pages
  std::vector<uint64_t> live;
  std::set<uint64_t> ever_used;
  uint64_t rng = 7, reuses = 0;
  for (int step = 0; step < 400; ++step) {
    const uint64_t r = st::io::test::splitmix64(rng);
    loading = (r >> 24) % 11 == 0;
    if ((r >> 8) % 3 == 0) readers.insert(space->committed().commit_seq);
    if ((r >> 16) % 2 == 1 && !readers.empty()) readers.erase(std::next(readers.begin(), std::ptrdiff_t(r / 4 % readers.size())));
    std::set<uint64_t> held;  // pages of the states live readers walk
    for (uint64_t s : readers)
      if (auto it = state_pages.find(s); it != state_pages.end()) held.insert(it->second.begin(), it->second.end());
    const std::set<uint64_t> before(live.begin(), live.end());
    commit_pages(*space, store, &live, 1 + r / 16 % 12);
    for (uint64_t p : live) {
      REQUIRE_MESSAGE(held.count(p) == 0, "page " << p << " of a pinned state reused at step " << step);
      if (before.count(p) == 0 && !ever_used.insert(p).second) ++reuses;
    }
    state_pages[space->committed().commit_seq] = live;
    if ((r >> 32) % 37 == 0) {  // reopened as after a crash: the persisted list starts deferred
      space = std::make_unique<CowSpace>(store, slot, params4k());
      space->set_reader_gate(gate);
      REQUIRE(space->open().ok());
    }
  }
  CHECK(reuses > 0);
  // Bounded: pages are reused while readers come and go (at most 12 a commit plus a free
  // list page, over the few states live readers hold at once).
  CHECK(space->allocator().high_water() < 400);
}

TEST_CASE("store dir: a new reader on each published state, the last one closed after each commit: no growth") {
  TempDir tmp;
  StoreDirOptions o;
  o.dir = tmp.file("db");
  o.params = params4k();
  o.initial_pages = 16;
  o.queue_depth = 4;
  std::unique_ptr<StoreDir> writer;
  const Status c = StoreDir::create(o, &writer);
  if (c.code() == Errc::unsupported) {
    MESSAGE("skipped: " << c.message());
    return;
  }
  REQUIRE_MESSAGE(c.ok(), c.message());
  StoreDirOptions r = o;
  r.access = Access::read;
  std::vector<uint64_t> live;
  commit_pages(writer->space(), writer->pages(), &live, 8);
  std::unique_ptr<StoreDir> older, newer;  // as two blocks in flight: k reads while k-1 commits
  uint64_t high_after_warmup = 0;
  for (int g = 0; g < 60; ++g) {
    REQUIRE(StoreDir::open(r, &newer).message() == "");
    CHECK(newer->space().committed().commit_seq == writer->space().committed().commit_seq);
    commit_pages(writer->space(), writer->pages(), &live, 8);
    older = std::move(newer);  // the previous reader closes; this one stays through the next commit
    if (g == 10) high_after_warmup = writer->space().allocator().high_water();
  }
  CHECK(high_after_warmup > 0);
  CHECK(writer->space().allocator().high_water() == high_after_warmup);
  CHECK(writer->space().allocator().deferred_pages() > 0);  // the open reader's state is still held
}
