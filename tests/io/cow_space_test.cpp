// cow_space_test: the commit protocol's own guarantees: the arena grows when full, a
// fragmented free list spans several pages and round-trips through reopen, a failed
// publish leaves the previous commit current, and opening with other parameters fails
// with the one-line mismatch.
#include <doctest/doctest.h>

#include <vector>

#include "io/cow_space.h"
#include "io/memory_store.h"
#include "tests/io/cow_harness.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::params4k;

namespace {

Status write_pages(NodeStore& store, const std::vector<uint64_t>& pages) {
  std::vector<unsigned char> buf(store.payload_bytes(), 0x5a);
  std::vector<PageOp> ops;
  for (uint64_t p : pages) ops.push_back({PageOpKind::write, p, buf.data(), p});
  return run_batch(store, ops);
}

}  // namespace

TEST_CASE("cow space: grows the store, multi-page free list survives reopen") {
  MemoryStore store(kPageSize4K, 8);
  MemoryManifestSlot slot;
  CowSpace space(store, slot, params4k());
  REQUIRE(space.open().ok());
  CHECK(!space.has_commit());
  std::vector<uint64_t> pages;
  REQUIRE(space.allocate(1000, &pages).ok());  // beyond capacity 8: grows
  CHECK(store.capacity_pages() >= 1000);
  REQUIRE(write_pages(store, pages).ok());
  Manifest m;
  m.root_page = pages[0];
  REQUIRE(space.commit(m).ok());
  CHECK(space.committed().commit_seq == 1);
  // Fragment: release every other page -> ~500 extents (~8 KB), more than one 4 KiB page.
  for (size_t i = 1; i < pages.size(); i += 2) space.release(pages[i]);
  std::vector<uint64_t> more;
  REQUIRE(space.allocate(1, &more).ok());
  REQUIRE(write_pages(store, more).ok());
  m.root_page = more[0];
  REQUIRE(space.commit(m).ok());
  CHECK(space.committed().free_list_pages >= 2);
  const auto before = space.allocator().serialize();

  CowSpace reopened(store, slot, params4k());
  REQUIRE(reopened.open().ok());
  CHECK(reopened.committed().commit_seq == 2);
  CHECK(reopened.committed().root_page == more[0]);
  CHECK(reopened.allocator().serialize() == before);
  for (size_t i = 0; i < pages.size(); ++i) CHECK(reopened.allocator().is_free(pages[i]) == (i % 2 == 1));
}

TEST_CASE("cow space: a failed publish keeps the previous commit; parameters are checked") {
  MemoryStore store(kPageSize4K, 64);
  MemoryManifestSlot slot;
  CowSpace space(store, slot, params4k());
  REQUIRE(space.open().ok());
  std::vector<uint64_t> pages;
  REQUIRE(space.allocate(4, &pages).ok());
  REQUIRE(write_pages(store, pages).ok());
  Manifest m;
  m.root_page = pages[0];
  REQUIRE(space.commit(m).ok());
  for (uint64_t p : pages) space.release(p);
  std::vector<uint64_t> next;
  REQUIRE(space.allocate(4, &next).ok());
  for (uint64_t p : next) CHECK(std::find(pages.begin(), pages.end(), p) == pages.end());
  REQUIRE(write_pages(store, next).ok());
  slot.fail_next_publish = true;
  m.root_page = next[0];
  CHECK(space.commit(m).code() == Errc::injected_fault);
  CHECK(space.committed().commit_seq == 1);
  CHECK(space.committed().root_page == pages[0]);
  for (uint64_t p : pages) CHECK(!space.allocator().is_free(p));  // the committed root's pages

  StoreParams other = params4k();
  other.tree_kind = TreeKind::bintrie;
  CowSpace wrong(store, slot, other);
  Status s = wrong.open();
  CHECK(s.code() == Errc::mismatch);
  CHECK(s.message() == "tree mismatch: database built with mpt, opened with bintrie");
}

TEST_CASE("cow space: a publish that may have happened blocks further commits until reopen") {
  st::io::test::TempDir dir;
  MemoryStore store(kPageSize4K, 64);
  FileManifestSlot slot(dir.path());
  CowSpace space(store, slot, params4k());
  REQUIRE(space.open().ok());
  std::vector<uint64_t> pages;
  REQUIRE(space.allocate(2, &pages).ok());
  REQUIRE(write_pages(store, pages).ok());
  Manifest m;
  m.root_page = pages[0];
  REQUIRE(space.commit(m).ok());

  // Stop before the rename: a clean failure, the old manifest is current, pages reusable.
  std::vector<uint64_t> next;
  REQUIRE(space.allocate(2, &next).ok());
  REQUIRE(write_pages(store, next).ok());
  slot.stop_after_step = 2;
  m.root_page = next[0];
  CHECK(space.commit(m).code() == Errc::injected_fault);
  CHECK(!space.needs_reopen());
  for (uint64_t p : next) CHECK(space.allocator().is_free(p));

  // Stop after the rename: the new manifest is on disk, so its pages must stay allocated.
  next.clear();
  REQUIRE(space.allocate(2, &next).ok());
  REQUIRE(write_pages(store, next).ok());
  slot.stop_after_step = 3;
  m.root_page = next[0];
  Status s = space.commit(m);
  CHECK(s.code() == Errc::injected_fault);
  CHECK(s.message().find("commit outcome unknown") == 0);
  CHECK(space.needs_reopen());
  for (uint64_t p : next) CHECK(!space.allocator().is_free(p));
  slot.stop_after_step.reset();
  CHECK(space.commit(m).message().find("reopen the database") != std::string::npos);
  REQUIRE(space.open().ok());
  CHECK(space.committed().commit_seq == 2);  // the renamed manifest is the live one
  CHECK(space.committed().root_page == next[0]);
  for (uint64_t p : next) CHECK(!space.allocator().is_free(p));
}
