// crash_test: crash safety of the copy-on-write commit protocol (cow_harness.h).
//  1. In-memory: crash at a random write (or fail the manifest publish, or tear a write
//     and then crash) over and over; after each crash the store reopens at exactly the last
//     published commit and every page verifies.
//  2. Real files: a forked child commits to an arena file + MANIFEST in a loop and is
//     SIGKILLed at a random moment; the parent reopens, finds the last committed root
//     (never older than one it saw before) and verifies every page. A process kill does not
//     lose the page cache, so this checks ordering/atomicity; power loss is what case 1
//     models.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/arena_store.h"
#include "io/manifest.h"
#include "io/memory_store.h"
#include "tests/io/cow_harness.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::CowDb;
using st::io::test::splitmix64;

TEST_CASE("crash harness (memory store): every crash point reopens at the last commit") {
  MemoryStore store(kPageSize4K, 256);
  MemoryManifestSlot slot;
  uint64_t rng = 2024, last_committed = 0;
  int crashes = 0, commits = 0;
  for (int cycle = 0; cycle < 60; ++cycle) {
    CAPTURE(cycle);
    CowDb db(store, slot, 48);
    Status s = db.open();
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(db.seq() == last_committed);
    // Arm one fault somewhere within the next few commits' writes: a crash at a random
    // write (kind 0), a failed manifest publish (1), power loss between commits (2), or a
    // crash that keeps some unsynced pages whole or torn (3).
    const uint64_t kind = splitmix64(rng) % 4;
    FaultPlan plan;
    if (kind == 0 || kind == 3) plan.crash_at_write = 1 + splitmix64(rng) % 40;
    if (kind == 3) plan.crash_keeps_unsynced_seed = splitmix64(rng);
    store.set_fault_plan(plan);
    if (kind == 1) slot.fail_next_publish = true;
    for (int c = 0; c < 4; ++c) {
      Status cs = db.commit(rng);
      if (!cs.ok()) {
        CHECK((cs.code() == Errc::crashed || cs.code() == Errc::injected_fault));
        break;
      }
      ++commits;
      last_committed = db.seq();
    }
    store.crash();
    slot.fail_next_publish = false;
    store.restart();
    ++crashes;
  }
  CowDb db(store, slot, 48);
  REQUIRE(db.open().ok());
  CHECK(db.seq() == last_committed);
  CHECK(commits > 30);
  MESSAGE(crashes << " crashes, " << commits << " commits survived; unsynced pages kept whole "
                  << store.crash_kept_whole() << ", kept torn " << store.crash_kept_torn());
  CHECK(store.crash_kept_torn() > 0);
}

TEST_CASE("crash harness (memory store): a flipped byte in a committed page is named") {
  MemoryStore store(kPageSize4K, 256);
  MemoryManifestSlot slot;
  uint64_t rng = 5;
  CowDb db(store, slot, 16);
  REQUIRE(db.open().ok());
  REQUIRE(db.commit(rng).ok());
  REQUIRE(db.commit(rng).ok());
  Manifest m;
  REQUIRE(slot.load(&m).ok());
  store.raw_page(m.root_page)[100] ^= 0x04;
  CowDb broken(store, slot, 16);
  Status s = broken.open();
  CHECK(s.code() == Errc::corrupt_page);
  CHECK(s.message() == "read page " + std::to_string(m.root_page) + ": corrupt page (checksum mismatch)");
}

TEST_CASE("crash harness (arena file + MANIFEST): SIGKILL a committing child at random moments") {
  st::io::test::TempDir dir;
  ArenaOptions o;
  o.path = dir.file("arena");
  o.capacity_pages = 256;
  o.queue_depth = 16;
  o.create = true;
  {
    auto probe = st::io::test::open_arena_or_skip(o);
    if (!probe) return;
  }
  o.create = false;
  uint64_t rng = 77, last_seen = 0;
  int kills = 0;
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    // The child reports 'o' once open and 'c' after each commit, so the kill lands while
    // it commits (not while it opens) and round 0 is sure to see at least one commit.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
      std::unique_ptr<ArenaFileStore> store;
      if (!ArenaFileStore::open(o, &store).ok()) ::_exit(3);
      FileManifestSlot slot(dir.path());
      CowDb db(*store, slot, 48);
      if (!db.open().ok()) ::_exit(4);
      if (::write(fds[1], "o", 1) != 1) ::_exit(6);
      uint64_t crng = 1000 + uint64_t(round);
      for (;;) {
        if (!db.commit(crng).ok()) ::_exit(5);
        (void)!::write(fds[1], "c", 1);
      }
    }
    ::close(fds[1]);
    auto wait_for = [&](char want) {
      pollfd p{fds[0], POLLIN, 0};
      char ch = 0;
      while (::poll(&p, 1, 20000) == 1 && ::read(fds[0], &ch, 1) == 1)
        if (ch == want) return true;
      return false;
    };
    CHECK(wait_for('o'));
    if (round == 0) CHECK(wait_for('c'));
    const long delay_us = 1000 + long(splitmix64(rng) % 60000);
    timespec ts{0, delay_us * 1000};
    ::nanosleep(&ts, nullptr);
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK_MESSAGE(WIFSIGNALED(status), "child exited early with status " << WEXITSTATUS(status));
    ::close(fds[0]);
    ++kills;

    std::unique_ptr<ArenaFileStore> store;
    REQUIRE(ArenaFileStore::open(o, &store).ok());
    FileManifestSlot slot(dir.path());
    CowDb db(*store, slot, 48);
    Status s = db.open();
    REQUIRE_MESSAGE(s.ok(), s.message());
    CHECK(db.seq() >= last_seen);
    last_seen = db.seq();
  }
  MESSAGE(kills << " kills; last committed sequence " << last_seen);
  CHECK(last_seen > 0);
}
