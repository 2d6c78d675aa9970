// manifest_forged_test: a MANIFEST whose checksum is valid but whose fields are not (forged
// and re-sealed with crc32c over bytes [0, 140), as encode_manifest seals it) is a one-line
// error at open, never an abort or a huge allocation: for each field that names pages or
// sizes (free list page and count, high water, root page, page/node/key/payload counts,
// tree/hash kind, page size), and for the free-list blob it names (its length field, its
// extent count, its high water), at both page sizes. PageAllocator::deserialize refuses an
// extent count that disagrees with its bytes.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/support/byte_order.h"
#include "io/crc32c.h"
#include "io/store_dir.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::get_u64;
using st::put_u32;
using st::put_u64;
using st::io::test::TempDir;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// Re-seals a manifest the way encode_manifest does: crc32c of bytes [0, 140) at 140.
std::vector<uint8_t> sealed(std::vector<uint8_t> b) {
  put_u32(&b[140], crc32c(b.data(), 140));
  return b;
}

// A database with two commits, the second one leaving free extents (so the free list has
// content), its pages written with `fill`.
struct ForgeDb {
  TempDir tmp;
  StoreDirOptions o;
  Manifest committed;
  std::vector<uint64_t> freed;  // pages free after the second commit
  bool skipped = false;

  explicit ForgeDb(uint32_t page_size) {
    o.dir = tmp.file("db");
    o.params.page_size = page_size;
    o.initial_pages = 64;
    o.queue_depth = 4;
    std::unique_ptr<StoreDir> db;
    Status s = StoreDir::create(o, &db);
    if (s.code() == Errc::unsupported) { MESSAGE("skipped: " << s.message()); skipped = true; return; }
    REQUIRE_MESSAGE(s.ok(), s.message());
    std::vector<uint64_t> pages;
    REQUIRE(db->space().allocate(20, &pages).ok());
    REQUIRE(write(*db, pages).ok());
    Manifest m;
    m.root_page = pages[0];
    m.node_count = 40;
    m.key_count = 30;
    m.pages_used = 20;
    m.payload_bytes = 20 * 1000;
    REQUIRE(db->space().commit(m).ok());
    for (size_t i = 1; i < pages.size(); i += 3) {
      db->space().release(pages[i]);
      freed.push_back(pages[i]);
    }
    std::vector<uint64_t> one;
    REQUIRE(db->space().allocate(1, &one).ok());
    REQUIRE(write(*db, one).ok());
    m.root_page = one[0];
    REQUIRE(db->space().commit(m).ok());
    committed = db->space().committed();
    REQUIRE(committed.free_list_page != kNoPage);
    REQUIRE(db->space().allocator().free_pages() + db->space().allocator().deferred_pages() >= 2);  // freed or deferred (readers)
  }

  static Status write(StoreDir& db, const std::vector<uint64_t>& pages) {
    std::vector<unsigned char> buf(db.pages().payload_bytes(), 0x5a);
    std::vector<PageOp> ops;
    for (uint64_t p : pages) ops.push_back({PageOpKind::write, p, buf.data(), p});
    return run_batch(db.pages(), ops);
  }

  std::string manifest_path() const { return o.dir + "/MANIFEST"; }
  Status open() const {
    std::unique_ptr<StoreDir> db;
    return StoreDir::open(o, &db);
  }
  // Opens with the params the manifest claims (as `statetree verify` does via probe()).
  Status open_as_probed() const {
    FileManifestSlot slot(o.dir);
    Manifest m;
    if (Status s = slot.load(&m); !s.ok()) return s;
    StoreDirOptions p = o;
    p.params = m.params;
    std::unique_ptr<StoreDir> db;
    return StoreDir::open(p, &db);
  }
};

void expect_refused(const Status& s, const std::string& part) {
  CHECK(s.code() == Errc::corrupt_page);
  CHECK_MESSAGE(s.message().find(part) != std::string::npos, s.message());
  CHECK(s.message().find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("forged manifest: every page and size field is checked against the arena before use") {
  for (uint32_t ps : {kPageSize4K, kPageSize16K}) {
    CAPTURE(ps);
    ForgeDb db(ps);
    if (db.skipped) return;
    REQUIRE(db.open().ok());
    const std::vector<uint8_t> good = read_file(db.manifest_path());
    REQUIRE(good.size() == kManifestBytes);
    const Manifest& m = db.committed;
    const uint64_t hw = m.page_high_water;
    const uint64_t capacity = 64;

    struct Forge {
      size_t offset;
      uint64_t value;
      const char* part;  // of the expected message
    };
    const Forge cases[] = {
        {88, uint64_t(1) << 40, "free list at page"},          // free_list_pages: the reported abort
        {88, 0, "free list at page"},                          // a free list of no pages
        {88, hw, "free list at page"},                         // runs past the pages in use
        {80, ~uint64_t(0) - 1, "free list at page"},           // free_list_page + pages overflows
        {80, hw, "free list at page"},                         // beyond the pages in use
        {80, ~uint64_t(0), "pages in use but no free list"},   // no free list, pages in use
        {80, m.root_page, "free list: length"},                // a node page read as the free list
        {72, capacity + 1, "manifest names"},                  // high water beyond the file
        {72, uint64_t(1) << 40, "manifest names"},
        {72, m.free_list_page, "free list at page"},           // high water cut below the free list
        {64, hw, "root page"},                                 // root beyond the pages in use
        {64, db.freed[0], "root page"},                        // root on a free page
        {64, m.free_list_page, "root page"},                   // root on the free list
        {104, hw + 1, "pages used"},
        {96, uint64_t(1) << 62, "nodes in"},
        {112, ~uint64_t(0), "keys in"},
        {120, uint64_t(1) << 62, "payload bytes"},
    };
    for (const Forge& f : cases) {
      CAPTURE(f.offset);
      CAPTURE(f.value);
      std::vector<uint8_t> b = good;
      put_u64(&b[f.offset], f.value);
      write_file(db.manifest_path(), sealed(b));
      expect_refused(db.open(), f.part);
    }
    // Fields that select code paths: decoding refuses unknown values.
    const std::pair<size_t, uint8_t> kinds[] = {{8, 0}, {8, 9}, {9, 0}, {9, 200}};
    for (const auto& [offset, value] : kinds) {
      CAPTURE(offset);
      std::vector<uint8_t> b = good;
      b[offset] = value;
      write_file(db.manifest_path(), sealed(b));
      expect_refused(db.open_as_probed(), offset == 8 ? "unknown tree kind" : "unknown hash kind");
    }
    std::vector<uint8_t> b = good;
    put_u32(&b[16], 8192);
    write_file(db.manifest_path(), sealed(b));
    expect_refused(db.open_as_probed(), "page size 8192 is not 4096 or 16384");

    write_file(db.manifest_path(), good);
    CHECK(db.open().ok());
  }
}

TEST_CASE("forged free list: its length, extent count and high water are checked against its bytes") {
  for (uint32_t ps : {kPageSize4K, kPageSize16K}) {
    CAPTURE(ps);
    ForgeDb db(ps);
    if (db.skipped) return;
    const Manifest& m = db.committed;
    // Written through the arena store itself, so each forged page is sealed (checksum valid).
    ArenaOptions a;
    a.path = db.o.dir + "/pages.arena";
    a.page_size = ps;
    a.queue_depth = 4;
    auto put_page = [&](const std::vector<unsigned char>& page) {
      auto store = st::io::test::open_arena_or_skip(a);
      REQUIRE(store);
      PageOp w{PageOpKind::write, m.free_list_page, const_cast<unsigned char*>(page.data()), 0};
      REQUIRE(run_batch(*store, std::span<const PageOp>(&w, 1)).ok());
      REQUIRE(store->sync().ok());
    };
    std::vector<unsigned char> good(page_payload_bytes(ps));
    {
      auto store = st::io::test::open_arena_or_skip(a);
      REQUIRE(store);
      PageOp r{PageOpKind::read, m.free_list_page, good.data(), 0};
      REQUIRE(run_batch(*store, std::span<const PageOp>(&r, 1)).ok());
    }
    const uint64_t len = get_u64(good.data());
    REQUIRE(len >= 16);
    const uint64_t extents = get_u64(good.data() + 16);
    REQUIRE(extents >= 1);
    REQUIRE(len == 16 + 16 * extents);

    struct Forge {
      size_t offset;
      uint64_t value;
      const char* part;
      bool poke_after_end = false;  // also set a byte past the length
    };
    const Forge cases[] = {
        {0, uint64_t(page_payload_bytes(ps)) * m.free_list_pages, "free list: length"},  // past its pages
        {0, ~uint64_t(0), "free list: length"},
        {0, len - 16, "not zero"},                        // cuts the last extent off
        {0, len, "not zero", true},                       // stale bytes after the end
        {0, len + 16, "extents in"},                      // a zero extent the count does not name
        {16, uint64_t(1) << 60, "extents in"},            // count * 16 wraps
        {16, extents + 1, "extents in"},
        {8, m.page_high_water + 1, "high water does not match"},
        {8, ~uint64_t(0), "beyond capacity"},
    };
    for (const Forge& f : cases) {
      CAPTURE(f.offset);
      CAPTURE(f.value);
      std::vector<unsigned char> page = good;
      put_u64(page.data() + f.offset, f.value);
      if (f.poke_after_end) page[8 + len + 4] = 1;
      put_page(page);
      expect_refused(db.open(), f.part);
    }
    put_page(good);
    CHECK(db.open().ok());
  }
}

TEST_CASE("page allocator: deserialize checks the extent count against the bytes before using it") {
  auto blob = [](std::vector<uint64_t> words) {
    std::vector<uint8_t> b(words.size() * 8);
    for (size_t i = 0; i < words.size(); ++i) put_u64(&b[i * 8], words[i]);
    return b;
  };
  PageAllocator a;
  CHECK(PageAllocator::deserialize(blob({100, 1, 10, 5}), 200, &a).ok());
  CHECK(a.free_pages() == 5);
  const std::vector<uint64_t> bad[] = {
      {100, uint64_t(1) << 60},                 // count * 16 wraps to 0 bytes
      {100, 2, 10, 5},                          // two extents, bytes for one
      {100, 1, 10, 5, 20},                      // stray bytes after the extents
      {3, 3, 0, 1, 2, 1, 4, 1},                 // more extents than 3 pages can hold apart
  };
  for (const auto& words : bad) {
    CAPTURE(words.size());
    const Status s = PageAllocator::deserialize(blob(words), 200, &a);
    CHECK(s.code() == Errc::corrupt_page);
    CHECK(s.message().rfind("free list: ", 0) == 0);
  }
}
