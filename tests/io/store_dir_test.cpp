// store_dir_test: a database directory: create publishes an empty manifest, commits
// survive reopen, creating over an existing database and opening with another group depth
// or page size are one-line errors naming both values.
#include <doctest/doctest.h>

#include "io/store_dir.h"
#include "tests/io/io_test_util.h"

using namespace st::io;

TEST_CASE("store dir: create, commit, reopen, parameter mismatch") {
  st::io::test::TempDir tmp;
  StoreDirOptions o;
  o.dir = tmp.file("db");
  o.params.tree_kind = TreeKind::bintrie;
  o.params.hash_kind = HashKind::sha256;
  o.params.group_depth = 8;
  o.params.page_size = kPageSize16K;
  o.initial_pages = 16;
  o.queue_depth = 4;
  {
    std::unique_ptr<StoreDir> db;
    Status s = StoreDir::create(o, &db);
    if (s.code() == Errc::unsupported) { MESSAGE("skipped: " << s.message()); return; }
    REQUIRE_MESSAGE(s.ok(), s.message());
    std::vector<uint64_t> pages;
    REQUIRE(db->space().allocate(3, &pages).ok());
    std::vector<unsigned char> buf(db->pages().payload_bytes(), 0x11);
    std::vector<PageOp> ops;
    for (uint64_t p : pages) ops.push_back({PageOpKind::write, p, buf.data(), p});
    REQUIRE(run_batch(db->pages(), ops).ok());
    Manifest m;
    m.root_page = pages[2];
    m.node_count = 3;
    REQUIRE(db->space().commit(m).ok());
  }
  std::unique_ptr<StoreDir> db;
  CHECK(StoreDir::create(o, &db).message() == o.dir + " already holds a database (MANIFEST exists)");
  REQUIRE(StoreDir::open(o, &db).ok());
  CHECK(db->space().committed().commit_seq == 1);
  CHECK(db->space().committed().node_count == 3);
  std::vector<unsigned char> buf(db->pages().payload_bytes());
  PageOp op{PageOpKind::read, db->space().committed().root_page, buf.data(), 0};
  REQUIRE(run_batch(db->pages(), std::span<const PageOp>(&op, 1)).ok());
  CHECK(buf[100] == 0x11);
  db.reset();

  StoreDirOptions w = o;
  w.params.group_depth = 4;
  CHECK(StoreDir::open(w, &db).message() == "group depth mismatch: database built with 8, opened with 4");
  w = o;
  w.params.page_size = kPageSize4K;
  CHECK(StoreDir::open(w, &db).message() == "page size mismatch: database built with 16384, opened with 4096");
  w.dir = tmp.file("nothing");
  CHECK(StoreDir::open(w, &db).code() == Errc::not_found);
}
