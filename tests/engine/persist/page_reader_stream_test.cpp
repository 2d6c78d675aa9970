// page_reader_stream_test: the streamed page reader (engine/persist/page_reader.h) and the
// streamed batched lookups of both trees built on it.
//  - a page wanted by many walks is read once and wakes every one of them;
//  - random trees walked by streamed walkers (completions in a shuffled order) read exactly
//    the records and the pages the level-by-level load() reads;
//  - a corrupt page mid-stream is an error naming it, it is not cached, every outstanding
//    read is reaped and the reader is reusable;
//  - MPT and binary trie: a streamed batch gives the answers of one-key-at-a-time lookups
//    and of RocksDB's level-by-level lookups of the same state, at several queue depths;
//    a corrupt page deep in the tree fails the batch naming it with no answers, and the
//    same database answers correctly once the page is restored.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine/persist/db_files.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/subtree_packer.h"
#include "engine/persist/tree_db.h"
#include "io/memory_store.h"
#include "tests/engine/persist_mpt_test_util.h"
#include "tests/io/io_test_util.h"

using namespace st::persist;
namespace io = st::io;

namespace {

struct TestNode {
  uint8_t kind = 0;
  std::vector<uint8_t> body;
  std::vector<int> kids;
};

int random_tree(std::mt19937_64& rng, std::vector<TestNode>* nodes, int depth, int max_body) {
  TestNode n;
  if (depth > 0) {
    const int k = int(rng() % 6);
    for (int i = 0; i < k; ++i) n.kids.push_back(random_tree(rng, nodes, depth - 1, max_body));
  }
  n.kind = uint8_t(rng());
  n.body.resize(rng() % size_t(max_body));
  for (auto& b : n.body) b = uint8_t(rng());
  nodes->push_back(n);
  return int(nodes->size() - 1);
}

void push_tree(SubtreePacker& p, const std::vector<TestNode>& nodes, int root) {
  for (int k : nodes[root].kids) push_tree(p, nodes, k);
  REQUIRE(p.push(nodes[root].kind, nodes[root].body, uint32_t(nodes[root].kids.size())).ok());
}

struct MemDb {
  io::MemoryStore store{4096, 4096};
  io::MemoryManifestSlot slot;
  io::StoreParams params;
  io::CowSpace space{store, slot, params};
  MemDb() { REQUIRE(space.open().ok()); }
};

// A random tree written into db; returns its root locator.
Locator write_tree(MemDb& db, const std::vector<TestNode>& nodes, int root) {
  std::vector<Locator> roots;
  PageWriter w(db.store, db.space);
  SubtreePacker p(w);
  push_tree(p, nodes, root);
  REQUIRE(p.finish(&roots).ok());
  REQUIRE(w.finish().ok());
  REQUIRE(db.store.sync().ok());
  REQUIRE(roots.size() == 1);
  return roots[0];
}

// Every record of the tree, level by level (load()): node index -> locator; pages read.
uint64_t read_level_by_level(PageReader& r, const std::vector<TestNode>& nodes, int root, Locator root_loc,
                             std::map<int, Locator>* where) {
  std::vector<std::pair<int, Locator>> level{{root, root_loc}};
  const uint64_t before = r.counters().page_reads;
  while (!level.empty()) {
    std::vector<Locator> locs;
    for (auto& [i, l] : level) locs.push_back(l);
    REQUIRE(r.load(locs).ok());
    std::vector<std::pair<int, Locator>> next;
    for (auto& [i, l] : level) {
      (*where)[i] = l;
      RecordView v;
      REQUIRE(r.record(l, &v).ok());
      for (uint32_t c = 0; c < v.child_count; ++c) next.push_back({nodes[i].kids[c], v.child(c)});
    }
    level.swap(next);
  }
  return r.counters().page_reads - before;
}

// A streamed traversal: one walker per node, spawned when its parent's record is read.
// Checks every record against the tree. Returns the first error (reader error) or ok.
io::Status stream_all(PageReader& r, const std::vector<TestNode>& nodes, int root, Locator root_loc,
                      std::map<int, Locator>* where) {
  struct Walker { int node; Locator loc; };
  std::vector<Walker> walkers{{root, root_loc}};
  std::vector<uint32_t> ready{0};
  size_t since = 0;
  for (;;) {
    while (!ready.empty()) {
      const uint32_t w = ready.back();
      ready.pop_back();
      const Walker wk = walkers[w];
      if (!r.loaded(locator_page(wk.loc)) && !r.request(locator_page(wk.loc), w)) continue;
      RecordView v;
      if (io::Status s = r.record(wk.loc, &v); !s.ok()) return s;
      const TestNode& n = nodes[size_t(wk.node)];
      CHECK(v.kind == n.kind);
      REQUIRE(v.child_count == n.kids.size());
      CHECK(std::vector<uint8_t>(v.body.begin(), v.body.end()) == n.body);
      (*where)[wk.node] = wk.loc;
      for (uint32_t c = 0; c < v.child_count; ++c) {
        walkers.push_back({n.kids[c], v.child(c)});
        ready.push_back(uint32_t(walkers.size() - 1));
      }
      if (++since % 3 == 0)
        if (io::Status s = r.poll(&ready, false); !s.ok()) return s;
    }
    if (r.idle()) return {};
    if (io::Status s = r.poll(&ready, true); !s.ok()) return s;
  }
}

}  // namespace

TEST_CASE("page reader stream: a page wanted by many walks is read once and wakes them all") {
  MemDb db;
  std::mt19937_64 rng(3);
  std::vector<TestNode> nodes;
  const int root = random_tree(rng, &nodes, 4, 300);
  const Locator root_loc = write_tree(db, nodes, root);
  PageReader r(db.store);
  for (uint32_t w = 0; w < 50; ++w) CHECK_FALSE(r.request(locator_page(root_loc), w));
  CHECK(r.outstanding() == 1);
  std::vector<uint32_t> woken;
  REQUIRE(r.poll(&woken, true).ok());
  CHECK(r.idle());
  CHECK(r.counters().page_reads == 1);
  CHECK(db.store.counters().reads == 1);
  std::sort(woken.begin(), woken.end());
  std::vector<uint32_t> want(50);
  for (uint32_t w = 0; w < 50; ++w) want[w] = w;
  CHECK(woken == want);
  CHECK(r.loaded(locator_page(root_loc)));
  CHECK(r.request(locator_page(root_loc), 99));  // cached now: no wait
  woken.clear();
  REQUIRE(r.poll(&woken, true).ok());  // nothing outstanding: returns at once
  CHECK(woken.empty());
}

TEST_CASE("page reader stream: streamed walks read exactly what level-by-level loads read") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    MemDb db;
    std::mt19937_64 rng(seed);
    std::vector<TestNode> nodes;
    const int root = random_tree(rng, &nodes, 5 + int(seed % 3), seed % 2 ? 900 : 120);
    const Locator root_loc = write_tree(db, nodes, root);
    std::map<int, Locator> a, b;
    PageReader level(db.store);
    const uint64_t level_reads = read_level_by_level(level, nodes, root, root_loc, &a);
    db.store.set_completion_shuffle(seed);
    PageReader stream(db.store);
    REQUIRE(stream.poll(nullptr, false).ok());  // nothing outstanding: a no-op
    REQUIRE(stream_all(stream, nodes, root, root_loc, &b).ok());
    CHECK(stream.idle());
    CHECK(a == b);
    CHECK(a.size() == nodes.size());
    std::set<uint64_t> pages;
    for (auto& [i, l] : a) pages.insert(locator_page(l));
    CHECK(level_reads == pages.size());
    CHECK(stream.counters().page_reads == pages.size());  // each page read once
    CHECK(stream.cached_pages() == pages.size());
    CHECK(stream.counters().rounds >= 1);
    CHECK(stream.counters().rounds <= stream.counters().stream_polls);
    CHECK(stream.counters().stream_in_flight_max >= 1);
  }
}

TEST_CASE("page reader: add_pages_to gathers two readers' pages in one set, a page both read kept once") {
  MemDb db;
  std::mt19937_64 rng(5);
  std::vector<TestNode> nodes;
  const int root = random_tree(rng, &nodes, 6, 900);
  const Locator root_loc = write_tree(db, nodes, root);
  std::map<int, Locator> where;
  PageReader all(db.store);
  read_level_by_level(all, nodes, root, root_loc, &where);
  std::vector<uint64_t> pages;
  all.used_pages(&pages);
  std::sort(pages.begin(), pages.end());
  REQUIRE(pages.size() >= 4);
  // Reader a loads the first two thirds of the pages, b the last two thirds: a third both.
  const size_t third = pages.size() / 3;
  PageReader a(db.store), b(db.store);
  REQUIRE(a.load_pages(std::span<const uint64_t>(pages.data(), pages.size() - third)).ok());
  REQUIRE(b.load_pages(std::span<const uint64_t>(pages.data() + third, pages.size() - third)).ok());
  SharedPages set;
  a.add_pages_to(&set);  // into an empty set: all of a's
  CHECK(set.size() == pages.size() - third);
  b.add_pages_to(&set);
  CHECK(set.size() == pages.size());
  CHECK(a.cached_pages() == 0);
  CHECK(b.cached_pages() == 0);
  // A reader borrowing the set serves every record of the tree without a read.
  const uint64_t reads_before = db.store.counters().reads;
  PageReader c(db.store);
  c.borrow(&set);
  std::map<int, Locator> again;
  CHECK(read_level_by_level(c, nodes, root, root_loc, &again) == 0);
  CHECK(again == where);
  CHECK(db.store.counters().reads == reads_before);
  CHECK(c.counters().pages_reused == pages.size());
}

TEST_CASE("page reader stream: a corrupt page mid-stream is named, not cached, and the reader stays usable") {
  MemDb db;
  std::mt19937_64 rng(77);
  std::vector<TestNode> nodes;
  int root = -1;
  for (;;) {  // a tree of several pages
    nodes.clear();
    root = random_tree(rng, &nodes, 6, 700);
    if (nodes.size() > 60) break;
  }
  const Locator root_loc = write_tree(db, nodes, root);
  std::map<int, Locator> where;
  {
    PageReader r(db.store);
    REQUIRE(read_level_by_level(r, nodes, root, root_loc, &where) >= 3);
  }
  std::set<uint64_t> pages;
  for (auto& [i, l] : where) pages.insert(locator_page(l));
  pages.erase(locator_page(root_loc));
  REQUIRE(!pages.empty());
  db.store.set_completion_shuffle(5);
  PageReader r(db.store);
  for (uint64_t bad : pages) {
    CAPTURE(bad);
    db.store.raw_page(bad)[123] ^= 0x04;
    r.clear();
    std::map<int, Locator> got;
    const io::Status s = stream_all(r, nodes, root, root_loc, &got);
    CHECK(s.code() == io::Errc::corrupt_page);
    CHECK(s.message().find("page " + std::to_string(bad)) != std::string::npos);
    CHECK(r.idle());
    CHECK(r.outstanding() == 0);
    CHECK(db.store.outstanding() == 0);  // every read the stream started was reaped
    CHECK_FALSE(r.loaded(bad));
    db.store.raw_page(bad)[123] ^= 0x04;
    // The same reader, restored page: the whole tree again.
    r.clear();
    got.clear();
    REQUIRE(stream_all(r, nodes, root, root_loc, &got).ok());
    CHECK(got == where);
  }
  // A page beyond the store is an error too, naming it.
  r.clear();
  CHECK_FALSE(r.request(db.store.capacity_pages() + 5, 0));
  std::vector<uint32_t> woken;
  const io::Status s = r.poll(&woken, true);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find(std::to_string(db.store.capacity_pages() + 5)) != std::string::npos);
  CHECK(woken.empty());
  CHECK(r.idle());
}

// ---- the trees ----------------------------------------------------------------------------

namespace {

using pmpt_test::kTestSpec;
using pmpt_test::random_alloc;

DbOptions tree_options(const std::string& dir, io::TreeKind tree, StoreKind store, uint32_t qd) {
  DbOptions o;
  o.dir = dir;
  o.store = store;
  o.params.tree_kind = tree;
  o.params.hash_kind = tree == io::TreeKind::mpt ? io::HashKind::keccak256 : io::HashKind::sha256;
  o.params.group_depth = tree == io::TreeKind::mpt ? 0 : 4;
  o.params.page_size = 4096;
  o.queue_depth = qd;
  o.direct_io = false;
  return o;
}

bool same_answer(const LookupAnswer& a, const LookupAnswer& b) {
  return a.account.exists == b.account.exists && a.account.nonce == b.account.nonce &&
         a.account.balance == b.account.balance && a.account.code_hash == b.account.code_hash &&
         a.account.storage_root == b.account.storage_root && a.account.code_size == b.account.code_size &&
         a.slot_value == b.slot_value;
}

// Every key of the allocation, plus absent accounts and absent slots of present accounts,
// shuffled.
std::vector<st::state::StateKey> workload(const st::state::Allocation& a, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<st::state::StateKey> keys;
  for (const auto& [addr, acc] : a.accounts) {
    keys.push_back({addr, std::nullopt});
    for (const auto& [slot, v] : acc.storage) keys.push_back({addr, slot});
    if (rng() % 4 == 0) {
      st::state::Hash32 slot{};
      for (auto& x : slot) x = uint8_t(rng());
      keys.push_back({addr, slot});
    }
  }
  for (int i = 0; i < 40; ++i) {
    st::state::Address addr;
    for (auto& x : addr) x = uint8_t(rng());
    keys.push_back({addr, std::nullopt});
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

// Pages reachable from the committed root (breadth-first over record children).
std::vector<uint64_t> tree_pages(const DbOptions& o) {
  DbFiles files;
  REQUIRE(DbFiles::for_read(o, &files).ok());
  PageReader r(files.arena->pages());
  std::set<uint64_t> pages;
  std::vector<Locator> level{files.commit.root};
  while (!level.empty()) {
    REQUIRE(r.load(level).ok());
    std::vector<Locator> next;
    for (Locator l : level) {
      pages.insert(locator_page(l));
      RecordView v;
      REQUIRE(r.record(l, &v).ok());
      for (uint32_t c = 0; c < v.child_count; ++c) next.push_back(v.child(c));
    }
    level.swap(next);
  }
  pages.erase(locator_page(files.commit.root));
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

void check_tree(io::TreeKind tree) {
  st::io::test::TempDir dir;
  const st::state::Allocation a = random_alloc(tree == io::TreeKind::mpt ? 41 : 42, 400, 12, 150);
  st::state::AllocationSource src(a, kTestSpec);
  const DbOptions arena = tree_options(dir.file("arena"), tree, StoreKind::arena, 8);
  const DbOptions rocks = tree_options(dir.file("rocks"), tree, StoreKind::rocksdb, 8);
  BuildReport rep;
  REQUIRE(build_db(arena, src, &rep).ok());
  REQUIRE(build_db(rocks, src, &rep).ok());
  const std::vector<st::state::StateKey> keys = workload(a, 9);

  std::unique_ptr<TreeDb> rdb;
  REQUIRE(open_db(rocks, &rdb).ok());
  std::vector<LookupAnswer> want;
  LookupStats rst;
  REQUIRE(rdb->lookup(keys, &want, &rst).ok());
  REQUIRE(want.size() == keys.size());
  size_t present = 0;
  for (const auto& w : want) present += w.slot_value.has_value() || w.account.exists;
  CHECK(present > keys.size() / 2);

  for (uint32_t qd : {1u, 4u, 32u}) {
    CAPTURE(qd);
    DbOptions o = arena;
    o.queue_depth = qd;
    std::unique_ptr<TreeDb> db;
    REQUIRE(open_db(o, &db).ok());
    std::vector<LookupAnswer> got;
    LookupStats st;
    REQUIRE(db->lookup(keys, &got, &st).ok());
    REQUIRE(got.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      CAPTURE(i);
      CHECK(same_answer(got[i], want[i]));
    }
    CHECK(st.page_reads > 0);
    CHECK(st.rounds >= 1);
    CHECK(st.rounds <= st.page_reads);
    CHECK(st.reads_in_flight_max >= 1);
    if (qd == 4) {  // one key at a time: the same answers
      for (size_t i = 0; i < keys.size(); i += 7) {
        std::vector<LookupAnswer> one;
        REQUIRE(db->lookup({&keys[i], 1}, &one, nullptr).ok());
        REQUIRE(one.size() == 1);
        CHECK(same_answer(one[0], want[i]));
      }
    }
  }

  // Corrupt pages below the root: the batch fails naming the page and returns nothing;
  // restored, the same database answers as before.
  const std::vector<uint64_t> pages = tree_pages(arena);
  REQUIRE(pages.size() >= 3);
  std::unique_ptr<TreeDb> db;
  REQUIRE(open_db(arena, &db).ok());
  std::mt19937_64 rng(11);
  const std::string file = arena.dir + "/pages.arena";
  for (int round = 0; round < 5; ++round) {
    const uint64_t page = pages[rng() % pages.size()];
    CAPTURE(page);
    const uint64_t off = page * arena.params.page_size + rng() % (arena.params.page_size - 16);
    const uint8_t mask = uint8_t(1u << (rng() % 8));
    xor_file_byte(file, off, mask);
    std::vector<LookupAnswer> got;
    const io::Status s = db->lookup(keys, &got, nullptr);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("page " + std::to_string(page)) != std::string::npos);
    CHECK(got.empty());
    xor_file_byte(file, off, mask);
    REQUIRE(db->lookup(keys, &got, nullptr).ok());
    REQUIRE(got.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) CHECK(same_answer(got[i], want[i]));
  }
}

}  // namespace

TEST_CASE("streamed lookups (MPT): equal one-at-a-time and RocksDB level-by-level; corrupt pages fail cleanly") {
  check_tree(io::TreeKind::mpt);
}

TEST_CASE("streamed lookups (binary trie): equal one-at-a-time and RocksDB level-by-level; corrupt pages fail cleanly") {
  check_tree(io::TreeKind::bintrie);
}
