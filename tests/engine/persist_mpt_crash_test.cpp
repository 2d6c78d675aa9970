// persist_mpt_crash_test: the persistent MPT under damage. A flipped byte in any page of the
// tree is reported as corruption of that page by verify and by lookups; a record rewritten
// with a VALID page checksum (a bug or an attacker, not bit rot) is still caught by the
// hash checks and strict decoding, never a crash or a wrong answer; a build of state B over
// a database holding A, SIGKILLed at random points in a child process, always reopens at A
// or B and verifies; a RocksDB node changed or deleted is an error naming its path key.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>

#include "engine/persist/page_reader.h"
#include "io/rocksdb_store.h"
#include "tests/engine/persist/kill_child.h"
#include "tests/engine/persist_mpt_test_util.h"

using namespace pmpt_test;

namespace {

std::vector<state::StateKey> all_keys(const state::Allocation& a) {
  std::vector<state::StateKey> keys;
  for (const auto& [addr, acc] : a.accounts) {
    keys.push_back({addr, std::nullopt});
    for (const auto& [slot, v] : acc.storage) keys.push_back({addr, slot});
  }
  return keys;
}

// Pages reachable from the committed root (breadth-first over record children).
std::vector<uint64_t> tree_pages(const DbOptions& o) {
  DbFiles files;
  REQUIRE(DbFiles::for_read(o, &files).ok());
  persist::PageReader r(files.arena->pages());
  std::set<uint64_t> pages;
  std::vector<persist::Locator> level{files.commit.root};
  while (!level.empty()) {
    REQUIRE(r.load(level).ok());
    std::vector<persist::Locator> next;
    for (persist::Locator l : level) {
      pages.insert(persist::locator_page(l));
      persist::RecordView v;
      REQUIRE(r.record(l, &v).ok());
      for (uint32_t c = 0; c < v.child_count; ++c) next.push_back(v.child(c));
    }
    level.swap(next);
  }
  return {pages.begin(), pages.end()};
}

void xor_file_byte(const std::string& path, uint64_t offset, uint8_t mask) {
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  uint8_t b = 0;
  REQUIRE(::pread(fd, &b, 1, off_t(offset)) == 1);
  b ^= mask;
  REQUIRE(::pwrite(fd, &b, 1, off_t(offset)) == 1);
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TEST_CASE("persist mpt: a flipped byte in a page is reported as corruption of that page") {
  TempDir dir("flip");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  const state::Allocation a = build_random(o, 31, 150, 8, 120);
  const std::vector<uint64_t> pages = tree_pages(o);
  REQUIRE(pages.size() >= 3);
  const std::vector<state::StateKey> keys = all_keys(a);
  std::mt19937_64 rng(7);
  const std::string arena = dir.path + "/pages.arena";
  for (int round = 0; round < 4; ++round) {
    const uint64_t page = pages[rng() % pages.size()];
    const uint64_t off = page * o.params.page_size + rng() % o.params.page_size;
    CAPTURE(page);
    const uint8_t mask = uint8_t(1 << (rng() % 8));
    xor_file_byte(arena, off, mask);
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    persist::VerifyReport vr;
    const io::Status s = db->verify(&vr);
    CHECK_FALSE(s.ok());
    CHECK_FALSE(vr.ok);
    CHECK(vr.error.find("page " + std::to_string(page)) != std::string::npos);
    std::vector<persist::LookupAnswer> ans;
    const io::Status ls = db->lookup(keys, &ans, nullptr);
    CHECK_FALSE(ls.ok());
    CHECK(ls.message().find("page " + std::to_string(page)) != std::string::npos);
    db.reset();
    xor_file_byte(arena, off, mask);  // restored
  }
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).ok());
  persist::VerifyReport vr;
  CHECK(db->verify(&vr).message() == "");
}

TEST_CASE("persist mpt: records rewritten with valid page checksums are caught, never a crash") {
  TempDir dir("tamper");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  const state::Allocation a = build_random(o, 32, 120, 6, 80);
  const std::vector<uint64_t> pages = tree_pages(o);
  const std::vector<state::StateKey> keys = all_keys(a);
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).ok());
  DbFiles raw;  // a second handle on the same arena for rewriting pages
  REQUIRE(DbFiles::for_commit(o, &raw).ok());
  io::NodeStore& store = raw.arena->pages();
  std::vector<uint8_t> orig(store.payload_bytes()), page(store.payload_bytes());
  std::mt19937_64 rng(8);
  int caught_verify = 0, caught_lookup = 0;
  const int rounds = 60;
  for (int round = 0; round < rounds; ++round) {
    const uint64_t id = pages[rng() % pages.size()];
    io::PageOp rd{io::PageOpKind::read, id, orig.data(), 0};
    REQUIRE(io::run_batch(store, {&rd, 1}).ok());
    page = orig;
    const uint32_t used = uint32_t(orig[2]) | uint32_t(orig[3]) << 8;  // record_page.h: end u16
    REQUIRE(used <= page.size());
    const size_t at = rng() % used;
    page[at] ^= uint8_t(1 + rng() % 255);
    io::PageOp wr{io::PageOpKind::write, id, page.data(), 0};
    REQUIRE(io::run_batch(store, {&wr, 1}).ok());
    persist::VerifyReport vr;
    if (!db->verify(&vr).ok()) ++caught_verify;
    std::vector<persist::LookupAnswer> ans;
    if (!db->lookup(keys, &ans, nullptr, true).ok()) ++caught_lookup;
    io::PageOp back{io::PageOpKind::write, id, orig.data(), 0};
    REQUIRE(io::run_batch(store, {&back, 1}).ok());
  }
  // Every byte in use of a tree page matters: header, offsets, kinds, locators, bodies.
  CHECK(caught_verify == rounds);
  CHECK(caught_lookup == rounds);
  persist::VerifyReport vr;
  CHECK(db->verify(&vr).message() == "");
}

TEST_CASE("persist mpt: a build killed at random points reopens at the old or the new state") {
  TempDir dir("crash");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  const state::Allocation a = random_alloc(41, 300, 10, 150), b = random_alloc(42, 300, 12, 150);
  state::AllocationSource sa(a, kTestSpec), sb(b, kTestSpec);
  persist::BuildReport ra, rb;
  REQUIRE(build(o, sa, &ra).ok());
  // How long a build of B takes here (scales the kill points; ASan is slower).
  uint64_t build_us = 0;
  {
    TempDir probe("crash_probe");
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(build(mpt_options(probe.path, StoreKind::arena), sb, &rb).ok());
    build_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  std::mt19937_64 rng(99);
  int saw_a = 0, saw_b = 0;
  mpt::Hash32 current = ra.root;
  for (int round = 0; round < 12; ++round) {
    // Alternate the target so a finished build is followed by one that changes the state.
    const bool to_b = current == ra.root;
    const uint64_t delay_us = rng() % (2 * build_us + 5000);  // some kills land after the commit
    test::run_killed(delay_us, [&] {
      persist::BuildReport r;
      return build(o, to_b ? static_cast<const state::StateSource&>(sb) : sa, &r).ok();
    });
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    current = db->manifest().root_hash;
    const bool is_a = current == ra.root, is_b = current == rb.root;
    CHECK((is_a || is_b));
    saw_a += is_a;
    saw_b += is_b;
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).message() == "");
    CHECK(vr.accounts == (is_a ? a : b).accounts.size());
  }
  MESSAGE("crash rounds: reopened at A " << saw_a << " times, at B " << saw_b << " times (build " << build_us << " us)");
}

TEST_CASE("persist mpt: a changed or missing RocksDB node is an error naming its path key") {
  REQUIRE_MESSAGE(io::rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  TempDir dir("rocks_tamper");
  const DbOptions o = mpt_options(dir.path, StoreKind::rocksdb);
  const state::Allocation a = build_random(o, 33, 100, 5, 60);
  const std::vector<state::StateKey> keys = all_keys(a);
  // The top node of the account trie, under the key "A".
  const std::string root_key = "A";
  auto with_db = [&](const std::function<void(io::RocksKvStore&)>& f) {
    io::RocksOptions ro;
    ro.dir = dir.path + "/rocksdb";
    ro.create = false;
    std::unique_ptr<io::RocksKvStore> kv;
    REQUIRE(io::RocksKvStore::open(ro, &kv).ok());
    f(*kv);
  };
  std::string orig;
  with_db([&](io::RocksKvStore& kv) {
    const std::string_view k = root_key;
    std::vector<std::string> vals;
    std::vector<uint8_t> found;
    REQUIRE(kv.multi_get({&k, 1}, &vals, &found).ok());
    REQUIRE(found[0]);
    orig = vals[0];
    std::string bad = orig;
    bad[bad.size() / 2] ^= 0x10;
    const io::KvWrite w{root_key, bad, false};
    REQUIRE(kv.write_batch({&w, 1}).ok());
  });
  {
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).ok());
    persist::VerifyReport vr;
    CHECK_FALSE(db->verify(&vr).ok());
    CHECK(vr.error.find("path key 41") != std::string::npos);  // 'A' in hex
    std::vector<persist::LookupAnswer> ans;
    const io::Status s = db->lookup(keys, &ans, nullptr);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("path key 41") != std::string::npos);
  }
  with_db([&](io::RocksKvStore& kv) {
    const io::KvWrite w{root_key, {}, true};  // the root node deleted
    REQUIRE(kv.write_batch({&w, 1}).ok());
  });
  {
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).ok());
    persist::VerifyReport vr;
    const io::Status s = db->verify(&vr);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("missing") != std::string::npos);
    std::vector<persist::LookupAnswer> ans;
    CHECK_FALSE(db->lookup(keys, &ans, nullptr).ok());
  }
  with_db([&](io::RocksKvStore& kv) {
    const io::KvWrite w{root_key, orig, false};
    REQUIRE(kv.write_batch({&w, 1}).ok());
  });
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).ok());
  persist::VerifyReport vr;
  CHECK(db->verify(&vr).message() == "");
}
