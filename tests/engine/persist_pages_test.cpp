// Tests of the shared persistent-tree layer: record pages (round trip, strict decoding of
// hostile bytes), the subtree packer + page writer + page reader over an in-memory store
// (random trees read back record by record), the page writer's write runs on the arena
// store (consecutive ids as one write, on and off), and the database files (commit record,
// rebuild = copy-on-write replacement, parameter mismatch, no-commit directories).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <random>

#include "engine/persist/db_files.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/record_page.h"
#include "engine/persist/subtree_packer.h"
#include "io/arena_store.h"
#include "io/memory_store.h"
#include "io/page_format.h"
#include "tests/io/io_test_util.h"

using namespace st::persist;
namespace io = st::io;

namespace {

struct TestNode {
  uint8_t kind = 0;
  std::vector<uint8_t> body;
  std::vector<int> kids;  // indices into the node vector
};

// A random tree in post-order (children before parents); returns the root index.
int random_tree(std::mt19937_64& rng, std::vector<TestNode>* nodes, int depth, int max_body) {
  TestNode n;
  if (depth > 0) {
    const int k = int(rng() % 6);  // 0..5 children
    for (int i = 0; i < k; ++i) n.kids.push_back(random_tree(rng, nodes, depth - 1, max_body));
  }
  n.kind = uint8_t(rng());
  n.body.resize(rng() % size_t(max_body));
  for (auto& b : n.body) b = uint8_t(rng());
  nodes->push_back(n);
  return int(nodes->size() - 1);
}

// Pushes the subtree at `root` in post-order.
void push_tree(SubtreePacker& p, const std::vector<TestNode>& nodes, int root) {
  for (int k : nodes[root].kids) push_tree(p, nodes, k);
  REQUIRE(p.push(nodes[root].kind, nodes[root].body, uint32_t(nodes[root].kids.size())).ok());
}

// Reads the tree back level by level through a PageReader and compares every record.
void check_tree(PageReader& r, const std::vector<TestNode>& nodes, int root, Locator root_loc, uint64_t* rounds) {
  std::vector<std::pair<int, Locator>> level{{root, root_loc}};
  while (!level.empty()) {
    std::vector<Locator> locs;
    for (auto& [i, l] : level) locs.push_back(l);
    REQUIRE(r.load(locs).ok());
    std::vector<std::pair<int, Locator>> next;
    for (auto& [i, l] : level) {
      RecordView v;
      REQUIRE(r.record(l, &v).ok());
      CHECK(v.kind == nodes[i].kind);
      REQUIRE(v.child_count == nodes[i].kids.size());
      CHECK(std::vector<uint8_t>(v.body.begin(), v.body.end()) == nodes[i].body);
      for (uint32_t c = 0; c < v.child_count; ++c) next.push_back({nodes[i].kids[c], v.child(c)});
    }
    level.swap(next);
    ++*rounds;
  }
}

struct MemDb {
  io::MemoryStore store{4096, 64};
  io::MemoryManifestSlot slot;
  io::StoreParams params;
  io::CowSpace space{store, slot, params};
  MemDb() { REQUIRE(space.open().ok()); }
};

}  // namespace

TEST_CASE("record page: build, decode, and every record as written") {
  RecordPageBuilder b(4080);
  const std::vector<uint8_t> body1{1, 2, 3}, body2(100, 7);
  const Locator kids[2] = {make_locator(5, 1), make_locator(1ull << 40, 65535)};
  CHECK(b.add(9, {}, body1) == 0);
  CHECK(b.add(3, kids, body2) == 1);
  CHECK(b.bytes_used() == kPageHeaderBytes + record_footprint(3, 0) + record_footprint(100, 2));
  std::vector<uint8_t> page(4080);
  b.finish(page.data());
  RecordPage parsed;
  REQUIRE(decode_record_page(7, page, &parsed).empty());
  REQUIRE(parsed.records.size() == 2);
  CHECK(parsed.records[0].kind == 9);
  CHECK(parsed.records[0].child_count == 0);
  CHECK(parsed.records[0].body.size() == 3);
  CHECK(parsed.records[1].child(0) == kids[0]);
  CHECK(parsed.records[1].child(1) == kids[1]);
  CHECK(locator_page(parsed.records[1].child(1)) == (1ull << 40));
  CHECK(locator_index(parsed.records[1].child(1)) == 65535);
  CHECK(std::vector<uint8_t>(parsed.records[1].body.begin(), parsed.records[1].body.end()) == body2);
  // Read in place (as the page reader does): the same views, nothing parsed kept.
  REQUIRE(check_record_page(7, page).empty());
  REQUIRE(checked_record_count(page.data()) == 2);
  const RecordView last = checked_record(page.data(), 1);
  CHECK(last.kind == 3);
  CHECK(last.child(1) == kids[1]);
  CHECK(last.body.data() == parsed.records[1].body.data());
  CHECK(std::vector<uint8_t>(last.body.begin(), last.body.end()) == body2);
  CHECK(checked_record(page.data(), 0).body.size() == 3);
}

TEST_CASE("record page: 16-bit child counts (a full GD-8 group's 256 children, and a page full of them)") {
  const uint32_t payload = st::io::page_payload_bytes(16384);
  for (uint32_t n : {255u, 256u, 257u, 1000u, 2030u}) {
    CAPTURE(n);
    RecordPageBuilder b(payload);
    std::vector<Locator> kids(n);
    for (uint32_t i = 0; i < n; ++i) kids[i] = make_locator(100 + i, i % 7);
    const std::vector<uint8_t> body(40, 0xab);
    REQUIRE(b.fits(body.size(), n));
    CHECK(b.add(2, kids, body) == 0);
    CHECK(b.add(1, {}, body) == 1);
    std::vector<uint8_t> page(payload);
    b.finish(page.data());
    RecordPage parsed;
    REQUIRE(decode_record_page(3, page, &parsed).empty());
    REQUIRE(parsed.records.size() == 2);
    CHECK(parsed.records[0].child_count == n);
    for (uint32_t i = 0; i < n; ++i) CHECK(parsed.records[0].child(i) == kids[i]);
    CHECK(std::vector<uint8_t>(parsed.records[0].body.begin(), parsed.records[0].body.end()) == body);
    CHECK(parsed.records[1].child_count == 0);
    CHECK(parsed.records[1].body.size() == body.size());
  }
  // A count whose high byte runs the child table past its record is refused.
  RecordPageBuilder b(payload);
  const Locator kid[1] = {make_locator(9, 0)};
  b.add(2, kid, std::vector<uint8_t>(30, 1));
  std::vector<uint8_t> page(payload);
  b.finish(page.data());
  const size_t count_hi = kPageHeaderBytes + kRecordOffsetBytes + 2;  // record 0: kind, count lo, count hi
  REQUIRE(page[count_hi] == 0);
  page[count_hi] = 1;  // 257 children in a record of 1 locator + 30 bytes
  RecordPage parsed;
  const std::string err = decode_record_page(3, page, &parsed);
  CHECK(err.find("page 3") != std::string::npos);
  CHECK(err.find("child table past its end") != std::string::npos);
  CHECK(parsed.records.empty());
}

TEST_CASE("record page: hostile bytes are an error naming the page, never an out-of-bounds view") {
  RecordPageBuilder b(4080);
  const std::vector<uint8_t> body(50, 1);
  const Locator kid[1] = {make_locator(2, 0)};
  for (int i = 0; i < 10; ++i) b.add(uint8_t(i), kid, body);
  std::vector<uint8_t> good(4080);
  b.finish(good.data());
  std::mt19937_64 rng(42);
  int rejected = 0;
  for (int t = 0; t < 3000; ++t) {
    std::vector<uint8_t> page = good;
    const int flips = 1 + int(rng() % 3);
    for (int f = 0; f < flips; ++f) page[rng() % 700] ^= uint8_t(1 + rng() % 255);
    RecordPage parsed;
    const std::string err = decode_record_page(11, page, &parsed);
    if (!err.empty()) {
      ++rejected;
      CHECK(err.find("page 11") != std::string::npos);
      CHECK(parsed.records.empty());
      continue;
    }
    for (const RecordView& r : parsed.records) {  // every view lies inside the payload
      CHECK(r.body.data() >= page.data());
      CHECK(r.body.data() + r.body.size() <= page.data() + page.size());
      CHECK(r.child_bytes + r.child_count * 8 <= r.body.data());
    }
  }
  CHECK(rejected > 0);
  std::vector<uint8_t> zero(4080, 0);
  RecordPage parsed;
  CHECK(!decode_record_page(1, zero, &parsed).empty());  // all zero: end offset inside the header
  RecordPageBuilder empty(4080);
  empty.finish(zero.data());
  CHECK(decode_record_page(1, zero, &parsed).empty());  // an empty page has no records
  CHECK(parsed.records.empty());
  zero[4079] = 1;
  CHECK(!decode_record_page(1, zero, &parsed).empty());  // non-zero padding
}

TEST_CASE("subtree packer: random trees read back exactly; children share their parent's page") {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 40; ++t) {
    MemDb db;
    std::vector<TestNode> nodes;
    const int max_body = t % 2 ? 600 : 60;
    const int root = random_tree(rng, &nodes, 2 + int(rng() % 5), max_body);
    std::vector<Locator> roots;
    uint64_t pages = 0;
    {
      PageWriter w(db.store, db.space, 8);
      SubtreePacker p(w);
      push_tree(p, nodes, root);
      CHECK(p.pending() == 1);
      REQUIRE(p.finish(&roots).ok());
      REQUIRE(w.finish().ok());
      pages = p.stats().pages;
      CHECK(p.stats().records == nodes.size());
      CHECK(w.pages_written() == pages);
      CHECK(p.stats().fill() <= 1.0);
    }
    REQUIRE(roots.size() == 1);
    PageReader r(db.store);
    uint64_t levels = 0;
    check_tree(r, nodes, root, roots[0], &levels);
    CHECK(r.counters().page_reads == pages);  // every page read exactly once
    if (max_body == 60 && nodes.size() <= 30) CHECK(pages == 1);  // a small tree is one page
  }
}

TEST_CASE("subtree packer: a node too large for a page is an error, several roots come back in order") {
  MemDb db;
  PageWriter w(db.store, db.space);
  SubtreePacker p(w);
  std::vector<uint8_t> huge(4100, 1);
  io::Status s = p.push(1, huge, 0);
  CHECK(s.code() == io::Errc::bad_argument);
  CHECK(s.message().find("does not fit a 4096-byte page") != std::string::npos);
  CHECK(p.push(1, std::vector<uint8_t>{1}, 1).code() == io::Errc::bad_argument);  // no pending child
  std::vector<uint8_t> a(3000, 2), b(3000, 3);
  REQUIRE(p.push(1, a, 0).ok());
  REQUIRE(p.push(2, b, 0).ok());
  std::vector<Locator> roots;
  REQUIRE(p.finish(&roots).ok());
  REQUIRE(w.finish().ok());
  REQUIRE(roots.size() == 2);
  CHECK(locator_page(roots[0]) != locator_page(roots[1]));
  PageReader r(db.store);
  REQUIRE(r.load(roots).ok());
  RecordView v;
  REQUIRE(r.record(roots[1], &v).ok());
  CHECK(v.kind == 2);
  CHECK(r.counters().rounds == 1);
  CHECK(r.counters().page_reads == 2);
  CHECK(r.record(make_locator(locator_page(roots[1]), 9), &v).code() == io::Errc::corrupt_page);
}

TEST_CASE("subtree packer: push_placed children are referenced by their locators, never rewritten") {
  MemDb db;
  std::vector<Locator> old;
  {
    PageWriter w(db.store, db.space);
    SubtreePacker p(w);
    for (uint8_t k = 1; k <= 3; ++k) REQUIRE(p.push(k, std::vector<uint8_t>(40, k), 0).ok());
    REQUIRE(p.finish(&old).ok());
    REQUIRE(w.finish().ok());
  }
  REQUIRE(old.size() == 3);
  std::vector<Locator> roots;
  uint64_t pages = 0;
  {
    PageWriter w(db.store, db.space);
    SubtreePacker p(w);
    p.push_placed(old[0]);
    REQUIRE(p.push(7, std::vector<uint8_t>(30, 7), 0).ok());
    p.push_placed(old[2]);
    CHECK(p.pending() == 3);
    REQUIRE(p.push(8, std::vector<uint8_t>(20, 8), 3).ok());
    p.push_placed(old[1]);  // a lone placed subtree: finish() returns it as is
    REQUIRE(p.finish(&roots).ok());
    REQUIRE(w.finish().ok());
    pages = p.stats().pages;
    CHECK(p.stats().records == 2);  // the placed ones are not records of this packer
  }
  CHECK(pages == 1);
  REQUIRE(roots.size() == 2);
  CHECK(roots[1] == old[1]);
  PageReader r(db.store);
  REQUIRE(r.load(roots).ok());
  RecordView v;
  REQUIRE(r.record(roots[0], &v).ok());
  CHECK(v.kind == 8);
  REQUIRE(v.child_count == 3);
  CHECK(v.child(0) == old[0]);
  CHECK(v.child(2) == old[2]);
  CHECK(locator_page(v.child(1)) == locator_page(roots[0]));  // the new child shares the parent's page
  RecordView c;
  REQUIRE(r.record(v.child(1), &c).ok());
  CHECK(c.kind == 7);
}

namespace {

struct ArenaDb {
  io::test::TempDir dir;
  std::unique_ptr<io::ArenaFileStore> store;
  io::MemoryManifestSlot slot;
  io::StoreParams params;
  std::optional<io::CowSpace> space;
  explicit ArenaDb(uint64_t pages) {
    io::ArenaOptions o;
    o.path = dir.file("arena");
    o.capacity_pages = pages;
    o.queue_depth = 8;
    o.create = true;
    store = io::test::open_arena_or_skip(o);
    if (!store) return;
    space.emplace(*store, slot, params);
    REQUIRE(space->open().ok());
  }
};

// The write operations `ids` (in write order) make with runs of at most `cap` pages.
uint64_t expected_write_ops(const std::vector<uint64_t>& ids, uint32_t cap) {
  uint64_t ops = 0, run = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i == 0 || ids[i] != ids[i - 1] + 1 || run == cap) ++ops, run = 0;
    ++run;
  }
  return ops;
}

}  // namespace

TEST_CASE("page writer: consecutive page ids go out as write runs on the arena; every tree reads back, runs on and off") {
  std::mt19937_64 rng(19);
  for (uint32_t max_run : {0u, 1u, 5u}) {
    CAPTURE(max_run);
    ArenaDb db(2048);
    if (!db.store) return;
    std::vector<TestNode> nodes;
    int root = 0;
    do {
      nodes.clear();
      root = random_tree(rng, &nodes, 7, 600);
    } while (nodes.size() < 500);  // many pages
    std::vector<Locator> roots;
    std::vector<uint64_t> ids;
    {
      PageWriter w(*db.store, *db.space, 8, max_run);
      CHECK(w.max_run_pages() == (max_run ? max_run : 16));
      SubtreePacker p(w);
      push_tree(p, nodes, root);
      REQUIRE(p.finish(&roots).ok());
      REQUIRE(w.finish().ok());
      ids = w.written_ids();
      REQUIRE(ids.size() > 40);
      CHECK(w.pages_written() == ids.size());
      CHECK(w.write_ops() == expected_write_ops(ids, w.max_run_pages()));
      if (max_run == 1) CHECK(w.write_ops() == ids.size());
      else CHECK(w.write_ops() * 2 < ids.size());  // fresh space: ascending ids, long runs
      CHECK(db.store->counters().writes == ids.size());
      CHECK(db.store->counters().write_ops == w.write_ops());
    }
    PageReader r(*db.store);
    uint64_t levels = 0;
    check_tree(r, nodes, root, roots[0], &levels);
    CHECK(r.counters().page_reads == ids.size());
  }
}

TEST_CASE("page writer: ids written out of order break the runs where they stop being consecutive; every page as written") {
  ArenaDb db(256);
  if (!db.store) return;
  const uint32_t payload = db.store->payload_bytes();
  std::vector<uint64_t> ids;
  {
    PageWriter w(*db.store, *db.space, 4);
    std::vector<uint64_t> got(100);
    for (uint64_t& id : got) REQUIRE(w.new_page(&id).ok());
    // Blocks of 1..9 consecutive ids, the blocks in reverse order.
    std::vector<uint64_t> order;
    for (size_t end = got.size(); end > 0;) {
      const size_t len = std::min<size_t>(end, 1 + end % 9);
      for (size_t i = end - len; i < end; ++i) order.push_back(got[i]);
      end -= len;
    }
    std::vector<uint8_t> page(payload);
    for (uint64_t id : order) {
      io::test::fill_payload(page.data(), payload, id, 5);
      REQUIRE(w.write(id, page.data()).ok());
    }
    REQUIRE(w.finish().ok());
    ids = w.written_ids();
    CHECK(ids == order);
    CHECK(w.write_ops() == expected_write_ops(ids, 16));
    CHECK(w.write_ops() < ids.size());
  }
  std::vector<std::vector<uint8_t>> back(ids.size(), std::vector<uint8_t>(payload));
  std::vector<io::PageOp> reads;
  for (size_t i = 0; i < ids.size(); ++i) reads.push_back(io::PageOp{io::PageOpKind::read, ids[i], back[i].data(), i});
  REQUIRE(io::run_batch(*db.store, reads).ok());
  std::vector<uint8_t> expect(payload);
  for (size_t i = 0; i < ids.size(); ++i) {
    io::test::fill_payload(expect.data(), payload, ids[i], 5);
    CHECK(back[i] == expect);
  }
}

TEST_CASE("page reader: a corrupt page is named and nothing of its round is cached") {
  MemDb db;
  std::vector<Locator> roots;
  {
    PageWriter w(db.store, db.space);
    SubtreePacker p(w);
    REQUIRE(p.push(1, std::vector<uint8_t>(3000, 1), 0).ok());
    REQUIRE(p.push(1, std::vector<uint8_t>(3000, 2), 0).ok());
    REQUIRE(p.finish(&roots).ok());
    REQUIRE(w.finish().ok());
  }
  REQUIRE(db.store.sync().ok());
  db.store.raw_page(locator_page(roots[1]))[100] ^= 0x10;
  PageReader r(db.store);
  io::Status s = r.load(roots);
  CHECK(s.code() == io::Errc::corrupt_page);
  CHECK(s.message().find("page " + std::to_string(locator_page(roots[1]))) != std::string::npos);
  CHECK(r.cached_pages() == 0);
}

namespace {
// A one-record "tree" committed through DbFiles.
io::Status commit_one(DbFiles& f, uint8_t tag, const std::string& spec) {
  PageWriter w(f.arena->pages(), f.arena->space());
  SubtreePacker p(w);
  if (io::Status s = p.push(tag, std::vector<uint8_t>(500, tag), 0); !s.ok()) return s;
  std::vector<Locator> roots;
  if (io::Status s = p.finish(&roots); !s.ok()) return s;
  DbFiles::Fields fields;
  fields.root_hash[0] = tag;
  fields.node_count = 1;
  return f.commit_arena(w, roots[0], fields, spec);
}
}  // namespace

TEST_CASE("db files: commit record round trip and version check") {
  CommitInfo c;
  c.root = make_locator(12, 3);
  c.spec = "{\"kind\":\"synthetic\"}";
  std::vector<uint8_t> b = encode_commit_record(c);
  CommitInfo d;
  REQUIRE(decode_commit_record(b, &d).ok());
  CHECK(d.root == c.root);
  CHECK(d.spec == c.spec);
  b[4] = 9;
  CHECK(decode_commit_record(b, &d).code() == io::Errc::mismatch);
  b[4] = 1;
  b[0] ^= 1;
  CHECK(decode_commit_record(b, &d).code() == io::Errc::corrupt_page);
  CHECK(decode_commit_record(std::span<const uint8_t>(b.data(), 5), &d).code() == io::Errc::corrupt_page);
}

TEST_CASE("db files: build, reopen, rebuild replaces the state copy-on-write, mismatches are one line") {
  const st::io::test::TempDir tmp;
  const std::string& dir = tmp.path();
  DbOptions o;
  o.dir = dir + "/db";
  o.params.tree_kind = io::TreeKind::bintrie;
  o.params.hash_kind = io::HashKind::sha256;
  o.params.group_depth = 4;
  {
    DbFiles f;
    REQUIRE(DbFiles::for_build(o, &f).ok());
    DbFiles r;  // before any commit: "holds no state"
    io::Status s = DbFiles::for_read(o, &r);
    CHECK(s.code() == io::Errc::not_found);
    CHECK(s.message().find("holds no state") != std::string::npos);
    REQUIRE(commit_one(f, 1, "A").ok());
  }
  uint64_t high_water_after_a = 0;
  {
    DbFiles r;
    REQUIRE(DbFiles::for_read(o, &r).ok());
    CHECK(r.commit.spec == "A");
    CHECK(r.manifest.root_hash[0] == 1);
    CHECK(r.manifest.commit_seq == 1);
    high_water_after_a = r.manifest.page_high_water;
  }
  for (int round = 0; round < 4; ++round) {  // rebuilds reuse the old state's pages
    DbFiles f;
    REQUIRE(DbFiles::for_build(o, &f).ok());
    REQUIRE(commit_one(f, uint8_t(2 + round), "B").ok());
  }
  {
    DbFiles r;
    REQUIRE(DbFiles::for_read(o, &r).ok());
    CHECK(r.commit.spec == "B");
    CHECK(r.manifest.root_hash[0] == 5);
    CHECK(r.manifest.commit_seq == 5);
    CHECK(r.manifest.page_high_water <= high_water_after_a + 4);  // space is recycled
    PageReader reader(r.arena->pages());
    REQUIRE(reader.load(std::span<const Locator>(&r.commit.root, 1)).ok());
    RecordView v;
    REQUIRE(reader.record(r.commit.root, &v).ok());
    CHECK(v.kind == 5);
  }
  {
    DbOptions other = o;
    other.params.group_depth = 8;
    DbFiles r;
    io::Status s = DbFiles::for_read(other, &r);
    CHECK(s.code() == io::Errc::mismatch);
    CHECK(s.message().find("group depth") != std::string::npos);
    DbOptions probed;
    REQUIRE(DbFiles::probe(o.dir, &probed).ok());
    CHECK(probed.store == StoreKind::arena);
    CHECK(probed.params.group_depth == 4);
    CHECK(DbFiles::probe(dir + "/nothing", &probed).code() == io::Errc::not_found);
  }
}
