// arena_full_disk_test: a full disk never leaves an arena that will not open. At both page
// sizes: a growth whose fallocate fails (ENOSPC after extending the file part-way, as ext4
// does; played by ArenaOptions::fallocate_hook) leaves the file at its old size; a real file
// ending in a partial page opens (the tail ignored read-only, trimmed for writing, one line on
// stderr); growth is refused before fallocate when statvfs shows too little room; CowSpace
// halves its growth step down to what the commit needs, and a commit that still does not fit
// fails with "no space left on device: need N bytes, have M" and keeps the previous commit.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/arena_store.h"
#include "io/cow_space.h"
#include "io/manifest.h"
#include "tests/io/io_test_util.h"
#include "workloads/persist_cli.h"

using namespace st::io;
using st::io::test::fill_payload;
using st::io::test::open_arena_or_skip;
using st::io::test::TempDir;

namespace {

constexpr uint32_t kPageSizes[] = {kPageSize4K, kPageSize16K};

// A disk that holds the arena file up to limit_bytes: a growth past it extends the file
// part-way (to the limit, which is not on a page boundary) and fails with ENOSPC.
struct SmallDisk {
  uint64_t limit_bytes = 0;
  int calls = 0, refused = 0;
  std::function<int(int, uint64_t, uint64_t)> hook() {
    return [this](int fd, uint64_t offset, uint64_t len) -> int {
      ++calls;
      if (offset + len <= limit_bytes) return ::fallocate(fd, 0, off_t(offset), off_t(len)) == 0 ? 0 : errno;
      ++refused;
      if (::ftruncate(fd, off_t(limit_bytes)) != 0) return errno;
      return ENOSPC;
    };
  }
  // A new arena file on this disk: no headroom kept, so only the disk's limit refuses growth.
  ArenaOptions arena_options(const std::string& path, uint32_t page_size, uint64_t capacity_pages, uint32_t queue_depth) {
    ArenaOptions o;
    o.path = path;
    o.page_size = page_size;
    o.capacity_pages = capacity_pages;
    o.queue_depth = queue_depth;
    o.create = true;
    o.grow_headroom_bytes = 0;
    o.fallocate_hook = hook();
    return o;
  }
};

// Captures what is written to stderr (fd 2) between construction and text().
class StderrCapture {
 public:
  explicit StderrCapture(const std::string& path) : path_(path) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

Status write_pages(NodeStore& store, uint64_t first, uint64_t count, uint64_t version) {
  std::vector<std::vector<unsigned char>> bufs(count, std::vector<unsigned char>(store.payload_bytes()));
  std::vector<PageOp> ops;
  for (uint64_t i = 0; i < count; ++i) {
    fill_payload(bufs[i].data(), bufs[i].size(), first + i, version);
    ops.push_back({PageOpKind::write, first + i, bufs[i].data(), i});
  }
  return run_batch(store, ops);
}

Status write_list(NodeStore& store, const std::vector<uint64_t>& pages, uint64_t version) {
  for (uint64_t p : pages)
    if (Status s = write_pages(store, p, 1, version); !s.ok()) return s;
  return {};
}

// Every page reads back verified with the payload of `version`.
bool pages_hold(NodeStore& store, const std::vector<uint64_t>& pages, uint64_t version) {
  std::vector<unsigned char> got(store.payload_bytes()), want(store.payload_bytes());
  for (uint64_t p : pages) {
    PageOp op{PageOpKind::read, p, got.data(), 0};
    if (!run_batch(store, std::span<const PageOp>(&op, 1)).ok()) return false;
    fill_payload(want.data(), want.size(), p, version);
    if (got != want) return false;
  }
  return true;
}

std::vector<uint64_t> range(uint64_t first, uint64_t count) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

bool is_no_space_message(const std::string& m) {
  return m.rfind("no space left on device: need ", 0) == 0 && m.find(" bytes, have ") != std::string::npos &&
         m.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("arena full disk: a growth that fails leaves the file as it was") {
  for (uint32_t ps : kPageSizes) {
    CAPTURE(ps);
    TempDir dir;
    SmallDisk disk;
    disk.limit_bytes = 20 * uint64_t(ps) + 1234;
    ArenaOptions o = disk.arena_options(dir.file("pages.arena"), ps, 8, 4);
    auto arena = open_arena_or_skip(o);
    if (!arena) return;
    REQUIRE(write_pages(*arena, 0, 8, 1).ok());

    const Status s = arena->grow(64);  // past the disk: ext4 leaves 20 pages + 1234 bytes
    CHECK(s.code() == Errc::full);
    CHECK(s.sys_errno() == ENOSPC);
    CHECK_MESSAGE(is_no_space_message(s.message()), s.message());
    CHECK(disk.refused == 1);
    CHECK(arena->capacity_pages() == 8);
    CHECK(std::filesystem::file_size(o.path) == 8 * uint64_t(ps));
    CHECK(pages_hold(*arena, range(0, 8), 1));

    REQUIRE(arena->grow(20).ok());  // what fits still grows
    CHECK(std::filesystem::file_size(o.path) == 20 * uint64_t(ps));
    REQUIRE(write_pages(*arena, 8, 12, 1).ok());
    arena.reset();

    StderrCapture err(dir.file("stderr"));
    ArenaOptions r = o;
    r.create = false;
    r.capacity_pages = 0;
    r.fallocate_hook = nullptr;
    auto reopened = open_arena_or_skip(r);
    REQUIRE(reopened);
    CHECK(reopened->capacity_pages() == 20);
    CHECK(pages_hold(*reopened, range(0, 20), 1));
    CHECK(err.text().empty());  // nothing to trim
  }
}

TEST_CASE("arena full disk: a trailing partial page is ignored, and trimmed when opened for writing") {
  for (uint32_t ps : kPageSizes) {
    CAPTURE(ps);
    TempDir dir;
    ArenaOptions o;
    o.path = dir.file("pages.arena");
    o.page_size = ps;
    o.capacity_pages = 6;
    o.queue_depth = 4;
    o.create = true;
    {
      auto arena = open_arena_or_skip(o);
      if (!arena) return;
      REQUIRE(write_pages(*arena, 0, 6, 7).ok());
      REQUIRE(arena->sync().ok());
    }
    // What an interrupted growth leaves: bytes past the last whole page.
    const uint64_t tail = ps / 2 + 123;
    {
      std::ofstream f(o.path, std::ios::binary | std::ios::app);
      f << std::string(tail, '\x5a');
    }
    REQUIRE(std::filesystem::file_size(o.path) == 6 * uint64_t(ps) + tail);
    o.create = false;
    o.capacity_pages = 0;

    {  // read-only: the tail is ignored and left alone; writes and growth are refused
      ArenaOptions r = o;
      r.read_only = true;
      StderrCapture err(dir.file("stderr"));
      auto arena = open_arena_or_skip(r);
      const std::string line = err.text();
      REQUIRE(arena);
      CHECK(arena->capacity_pages() == 6);
      CHECK(pages_hold(*arena, range(0, 6), 7));
      CHECK(std::filesystem::file_size(o.path) == 6 * uint64_t(ps) + tail);
      CHECK(line == "statetree: " + o.path + ": " + std::to_string(tail) + " bytes past its last whole " +
                        std::to_string(ps) + "-byte page (a growth cut short) ignored\n");
      const Status w = write_pages(*arena, 0, 1, 8);
      CHECK(w.code() == Errc::bad_argument);
      CHECK(arena->grow(10).code() == Errc::bad_argument);
      CHECK(pages_hold(*arena, range(0, 6), 7));
    }
    {  // for writing: trimmed to the last whole page, then used as usual
      StderrCapture err(dir.file("stderr"));
      auto arena = open_arena_or_skip(o);
      const std::string line = err.text();
      REQUIRE(arena);
      CHECK(arena->capacity_pages() == 6);
      CHECK(std::filesystem::file_size(o.path) == 6 * uint64_t(ps));
      CHECK(line == "statetree: " + o.path + ": " + std::to_string(tail) + " bytes past its last whole " +
                        std::to_string(ps) + "-byte page (a growth cut short) trimmed\n");
      CHECK(pages_hold(*arena, range(0, 6), 7));
      REQUIRE(arena->grow(9).ok());
      REQUIRE(write_pages(*arena, 6, 3, 7).ok());
    }
    StderrCapture err(dir.file("stderr"));
    auto arena = open_arena_or_skip(o);
    CHECK(err.text().empty());
    REQUIRE(arena);
    CHECK(pages_hold(*arena, range(0, 9), 7));
  }
}

TEST_CASE("arena full disk: growth is refused before fallocate when statvfs shows too little room") {
  TempDir dir;
  SmallDisk disk;
  disk.limit_bytes = ~uint64_t(0);
  ArenaOptions o;
  o.path = dir.file("pages.arena");
  o.capacity_pages = 4;
  o.queue_depth = 4;
  o.create = true;
  auto arena = open_arena_or_skip(o);
  if (!arena) return;
  o.fallocate_hook = disk.hook();
  arena.reset();
  o.create = false;
  o.capacity_pages = 0;
  o.grow_headroom_bytes = uint64_t(1) << 60;  // more than any filesystem here has free
  arena = open_arena_or_skip(o);
  REQUIRE(arena);
  const Status s = arena->grow(8);
  CHECK(s.code() == Errc::full);
  CHECK_MESSAGE(is_no_space_message(s.message()), s.message());
  const std::string need = "need " + std::to_string(4 * uint64_t(kPageSize4K) + (uint64_t(1) << 60)) + " bytes";
  CHECK_MESSAGE(s.message().find(need) != std::string::npos, s.message());
  CHECK(disk.calls == 0);  // refused before fallocate could extend the file part-way
  CHECK(std::filesystem::file_size(o.path) == 4 * uint64_t(kPageSize4K));
  CHECK(arena->capacity_pages() == 4);
}

TEST_CASE("cow space full disk: growth halves down to what the commit needs; a commit that does not fit keeps the previous one") {
  for (uint32_t ps : kPageSizes) {
    CAPTURE(ps);
    TempDir dir;
    SmallDisk disk;
    disk.limit_bytes = 100 * uint64_t(ps) + 777;
    ArenaOptions o = disk.arena_options(dir.file("pages.arena"), ps, 16, 8);
    auto arena = open_arena_or_skip(o);
    if (!arena) return;
    StoreParams params;
    params.page_size = ps;
    FileManifestSlot slot(dir.path());
    CowSpace space(*arena, slot, params);
    REQUIRE(space.open().ok());

    std::vector<uint64_t> first;
    REQUIRE(space.allocate(10, &first).ok());
    REQUIRE(write_list(*arena, first, 1).ok());
    Manifest m;
    m.root_page = first[0];
    REQUIRE(space.commit(m).ok());

    // 60 more pages: doubling (to 135 pages) does not fit the 100-page disk; halving does.
    std::vector<uint64_t> second;
    const Status g = space.allocate(60, &second);
    REQUIRE_MESSAGE(g.ok(), g.message());
    CHECK(disk.refused >= 1);
    CHECK(arena->capacity_pages() <= 100);
    REQUIRE(write_list(*arena, second, 2).ok());
    m.root_page = second[0];
    REQUIRE(space.commit(m).ok());
    CHECK(space.committed().commit_seq == 2);

    // 40 more: no step fits any more. The error names what was needed and what is free.
    std::vector<uint64_t> third;
    const Status f = space.allocate(40, &third);
    CHECK(f.code() == Errc::full);
    CHECK_MESSAGE(is_no_space_message(f.message()), f.message());
    CHECK(st::cli::exit_code_for(f) == 2);  // the commands exit 2 on it
    space.abort();
    const uint64_t cap = arena->capacity_pages();
    CHECK(std::filesystem::file_size(o.path) == cap * ps);  // whole pages: it reopens
    arena.reset();

    o.create = false;
    o.capacity_pages = 0;
    o.fallocate_hook = nullptr;
    auto reopened = open_arena_or_skip(o);
    REQUIRE(reopened);
    CHECK(reopened->capacity_pages() == cap);
    CowSpace again(*reopened, slot, params);
    REQUIRE(again.open().ok());
    CHECK(again.committed().commit_seq == 2);
    CHECK(again.committed().root_page == second[0]);
    CHECK(pages_hold(*reopened, first, 1));
    CHECK(pages_hold(*reopened, second, 2));
  }
}
