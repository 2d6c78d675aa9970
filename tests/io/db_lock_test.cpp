// db_lock_test: one writer per database directory and readers that keep their state:
// a second writer is refused at once naming the holder's pid (readers are not); a lock left
// by a SIGKILLed holder is taken over; pages a commit frees are not reused while a reader
// may hold an older root (CowSpace with a gate, and StoreDir with a real reader handle),
// and are reused once the readers are gone; a writer that reopens a free list trusts none
// of it until the gate opens; a read-only database opens and reads (when the tests run as
// root, where file permissions do not bind, the reader runs in a child that drops to an
// unprivileged uid).
#include <doctest/doctest.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <vector>

#include "io/cow_space.h"
#include "io/db_lock.h"
#include "io/memory_store.h"
#include "io/store_dir.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::params4k;
using st::io::test::TempDir;

namespace {

StoreDirOptions dir_options(const std::string& dir) {
  StoreDirOptions o;
  o.dir = dir;
  o.params.tree_kind = TreeKind::mpt;
  o.params.hash_kind = HashKind::keccak256;
  o.params.page_size = kPageSize4K;
  o.initial_pages = 16;
  o.queue_depth = 4;
  return o;
}

// Creates the database; false (after a MESSAGE) where io_uring is unavailable.
bool create_or_skip(const StoreDirOptions& o, std::unique_ptr<StoreDir>* db) {
  const Status s = StoreDir::create(o, db);
  if (s.code() == Errc::unsupported) {
    MESSAGE("skipped: " << s.message());
    return false;
  }
  REQUIRE_MESSAGE(s.ok(), s.message());
  return true;
}

Status write_fill(NodeStore& store, const std::vector<uint64_t>& pages, unsigned char fill) {
  std::vector<unsigned char> buf(store.payload_bytes(), fill);
  std::vector<PageOp> ops;
  for (uint64_t p : pages) ops.push_back({PageOpKind::write, p, buf.data(), p});
  return run_batch(store, ops);
}

// Every page of `pages` holds `fill` in every payload byte.
bool pages_hold(NodeStore& store, const std::vector<uint64_t>& pages, unsigned char fill) {
  std::vector<std::vector<unsigned char>> bufs(pages.size(), std::vector<unsigned char>(store.payload_bytes()));
  std::vector<PageOp> ops;
  for (size_t i = 0; i < pages.size(); ++i) ops.push_back({PageOpKind::read, pages[i], bufs[i].data(), i});
  if (!run_batch(store, ops).ok()) return false;
  for (const auto& b : bufs)
    if (std::any_of(b.begin(), b.end(), [&](unsigned char c) { return c != fill; })) return false;
  return true;
}

// One commit through `space`: releases `*live`, allocates n pages filled with `fill`.
void commit_generation(StoreDir& db, std::vector<uint64_t>* live, uint64_t n, unsigned char fill) {
  CowSpace& space = db.space();
  for (uint64_t p : *live) space.release(p);
  std::vector<uint64_t> pages;
  REQUIRE(space.allocate(n, &pages).ok());
  REQUIRE(write_fill(db.pages(), pages, fill).ok());
  Manifest m;
  m.root_page = pages[0];
  m.root_hash[0] = fill;
  REQUIRE(space.commit(m).message() == "");
  *live = pages;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs `check` where file permissions bind: here when not root, else in a child that drops
// to uid/gid 65534 (nobody). The result is check()'s.
bool without_privileges(const std::function<bool()>& check) {
  if (::geteuid() != 0) return check();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(4);
    ::_exit(check() ? 0 : 3);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE_MESSAGE(WEXITSTATUS(status) != 4, "could not drop privileges (setuid 65534)");
  return WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("db lock: a second writer is refused at once, naming the holder; readers are not") {
  TempDir tmp;
  const StoreDirOptions o = dir_options(tmp.file("db"));
  std::unique_ptr<StoreDir> writer;
  if (!create_or_skip(o, &writer)) return;
  std::vector<uint64_t> live;
  commit_generation(*writer, &live, 3, 0x11);

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<StoreDir> second;
  const Status s = StoreDir::open(o, &second);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));  // refused, not waited
  CHECK(s.code() == Errc::locked);
  CHECK(s.message().rfind("database " + o.dir + " is locked by pid " + std::to_string(::getpid()) + " (", 0) == 0);
  CHECK(s.message().find("test_io") != std::string::npos);  // the holder's command line
  CHECK(s.message().find('\n') == std::string::npos);
  CHECK(second == nullptr);
  std::unique_ptr<WriterLock> bare;
  CHECK(WriterLock::acquire(o.dir, &bare).code() == Errc::locked);
  CHECK(StoreDir::create(o, &second).code() == Errc::locked);  // before "already holds a database"

  StoreDirOptions r = o;
  r.access = Access::read;
  std::unique_ptr<StoreDir> reader;
  REQUIRE(StoreDir::open(r, &reader).message() == "");
  CHECK(reader->read_only());
  CHECK(reader->reader_pinned());
  CHECK(reader->space().committed().commit_seq == 1);
  std::vector<uint64_t> none;
  CHECK(reader->space().allocate(1, &none).code() == Errc::bad_argument);  // a reader never writes

  writer.reset();  // the lock goes with the handle
  REQUIRE(StoreDir::open(o, &second).message() == "");
}

TEST_CASE("db lock: a lock left by a SIGKILLed holder is taken over; its stale text misleads nothing") {
  TempDir tmp;
  const std::string dir = tmp.path();
  const pid_t child = st::io::test::fork_holder([&] {
    std::unique_ptr<WriterLock> lock;
    const bool ok = WriterLock::acquire(dir, &lock).ok();
    lock.release();  // held until the child is killed
    return ok;
  });
  std::unique_ptr<WriterLock> lock;
  const Status held = WriterLock::acquire(dir, &lock);
  CHECK(held.code() == Errc::locked);
  CHECK(held.message().find("locked by pid " + std::to_string(child) + " (") != std::string::npos);

  st::io::test::kill_holder(child);
  CHECK(read_file(dir + "/LOCK").rfind(std::to_string(child) + " ", 0) == 0);  // the dead holder's text
  REQUIRE(WriterLock::acquire(dir, &lock).message() == "");
  const std::string text = read_file(dir + "/LOCK");
  CHECK(text.rfind(std::to_string(::getpid()) + " ", 0) == 0);  // replaced, not appended
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  std::unique_ptr<WriterLock> third;
  CHECK(WriterLock::acquire(dir, &third).message().find("locked by pid " + std::to_string(::getpid()) + " (") !=
        std::string::npos);
}

TEST_CASE("cow space: pages a commit frees wait while readers may hold an older root") {
  MemoryStore store(kPageSize4K, 8);
  MemoryManifestSlot slot;
  bool readers = true;
  int asked = 0;
  auto gate = [&](uint64_t) {
    ++asked;
    return !readers;
  };
  CowSpace space(store, slot, params4k());
  space.set_reader_gate(gate);
  REQUIRE(space.open().ok());
  auto commit = [&](std::vector<uint64_t>* live, uint64_t n) { st::io::test::commit_pages(space, store, live, n); };
  std::vector<uint64_t> live, a, b;
  commit(&live, 10);
  a = live;
  commit(&live, 10);  // frees a: deferred
  b = live;
  CHECK(space.allocator().deferred_pages() >= 10);
  commit(&live, 10);  // frees b; readers still there: a is not reused
  for (uint64_t p : live) CHECK(std::find(a.begin(), a.end(), p) == a.end());
  for (uint64_t p : live) CHECK(std::find(b.begin(), b.end(), p) == b.end());
  const uint64_t high_with_readers = space.allocator().high_water();
  const int asked_before = asked;
  readers = false;
  commit(&live, 10);  // the gate opens at the commit's first allocation: a's pages come back
  CHECK(asked > asked_before);
  CHECK(std::find(a.begin(), a.end(), live[0]) != a.end());
  CHECK(space.allocator().high_water() == high_with_readers);

  // The persisted free list holds deferred pages as free; a writer that reopens it while
  // readers exist trusts none of it, and takes all of it once they are gone.
  readers = true;
  commit(&live, 10);
  const uint64_t hw = space.allocator().high_water();
  CowSpace reopened(store, slot, params4k());
  reopened.set_reader_gate(gate);
  REQUIRE(reopened.open().ok());
  CHECK(reopened.allocator().free_pages() == 0);
  CHECK(reopened.allocator().deferred_pages() > 0);
  std::vector<uint64_t> fresh;
  REQUIRE(reopened.allocate(1, &fresh).ok());
  CHECK(fresh[0] >= hw);
  reopened.abort();
  readers = false;
  CowSpace again(store, slot, params4k());
  again.set_reader_gate(gate);
  REQUIRE(again.open().ok());
  fresh.clear();
  REQUIRE(again.allocate(1, &fresh).ok());
  CHECK(fresh[0] < hw);
  CowSpace ungated(store, slot, params4k());  // no gate: the list is free at once
  REQUIRE(ungated.open().ok());
  CHECK(ungated.allocator().free_pages() == again.allocator().free_pages() + 1);
}

TEST_CASE("store dir: a reader keeps reading its state while the writer commits, then pages are reused") {
  TempDir tmp;
  const StoreDirOptions o = dir_options(tmp.file("db"));
  std::unique_ptr<StoreDir> writer;
  if (!create_or_skip(o, &writer)) return;
  std::vector<uint64_t> live;
  commit_generation(*writer, &live, 8, 1);
  const std::vector<uint64_t> gen1 = live;

  StoreDirOptions r = o;
  r.access = Access::read;
  std::unique_ptr<StoreDir> reader;
  REQUIRE(StoreDir::open(r, &reader).message() == "");
  REQUIRE(reader->space().committed().root_hash[0] == 1);
  for (unsigned char g = 2; g < 12; ++g) {
    commit_generation(*writer, &live, 8, g);
    CHECK(pages_hold(reader->pages(), gen1, 1));  // never reused under the reader
  }
  const uint64_t high_with_reader = writer->space().allocator().high_water();
  CHECK(high_with_reader >= 8 * 11);

  // A second handle on the reader's state (another queue depth) while the first stays open.
  StoreDirOptions same = r;
  same.read_state = reader->space().committed();
  std::unique_ptr<StoreDir> again;
  REQUIRE(StoreDir::open(same, &again).message() == "");
  CHECK(again->space().committed().root_hash[0] == 1);
  CHECK(pages_hold(again->pages(), gen1, 1));
  again.reset();

  reader.reset();
  for (unsigned char g = 12; g < 40; ++g) commit_generation(*writer, &live, 8, g);
  CHECK(writer->space().allocator().high_water() == high_with_reader);  // freed pages reused

  // A reader that opens now sees the newest state.
  REQUIRE(StoreDir::open(r, &reader).message() == "");
  CHECK(reader->space().committed().root_hash[0] == 39);
  CHECK(pages_hold(reader->pages(), live, 39));
}

TEST_CASE("store dir: a read-only database opens and reads; a writer fails with one line") {
  TempDir tmp;
  const StoreDirOptions o = dir_options(tmp.file("db"));
  {
    std::unique_ptr<StoreDir> writer;
    if (!create_or_skip(o, &writer)) return;
    std::vector<uint64_t> live;
    commit_generation(*writer, &live, 4, 0x42);
  }
  // As a database made before READERS existed, or copied without it.
  REQUIRE(std::filesystem::remove(o.dir + "/READERS"));
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
  for (const char* f : {"pages.arena", "MANIFEST", "LOCK"}) REQUIRE(::chmod((o.dir + "/" + f).c_str(), 0444) == 0);
  REQUIRE(::chmod(o.dir.c_str(), 0555) == 0);
  const bool ok = without_privileges([&] {
    StoreDirOptions r = o;
    r.access = Access::read;
    std::unique_ptr<StoreDir> reader;
    if (!StoreDir::open(r, &reader).ok()) return false;
    if (reader->reader_pinned()) return false;  // READERS cannot be created here
    const Manifest& m = reader->space().committed();
    if (m.commit_seq != 1 || m.root_hash[0] != 0x42) return false;
    if (!pages_hold(reader->pages(), {m.root_page}, 0x42)) return false;
    std::unique_ptr<StoreDir> writer;
    const Status w = StoreDir::open(o, &writer);
    return !w.ok() && w.message().find('\n') == std::string::npos && w.message().find("LOCK") != std::string::npos;
  });
  REQUIRE(::chmod(o.dir.c_str(), 0755) == 0);
  CHECK(ok);
  CHECK(!std::filesystem::exists(o.dir + "/READERS"));
}
