// io_test_util: shared helpers for the io tests: a self-deleting temp directory under /tmp,
// deterministic page payloads, MPT store parameters with 4 KiB pages, one whole commit
// through a CowSpace, a child process that holds a lock until it is SIGKILLed, and an
// arena-open helper that skips (with a MESSAGE) where
// the kernel lacks io_uring instead of failing.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/arena_store.h"
#include "io/cow_space.h"
#include "kernels/support/splitmix64.h"

namespace st::io::test {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/statetree-io-test-XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

using st::splitmix64;

// Deterministic payload bytes for (page, version).
inline void fill_payload(unsigned char* p, size_t n, uint64_t page, uint64_t version) {
  uint64_t x = page * 0x100000001b3ull + version * 0x9e3779b97f4a7c15ull + 7;
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = splitmix64(x);
    std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
  }
}

inline StoreParams params4k() {
  StoreParams p;
  p.tree_kind = TreeKind::mpt;
  p.hash_kind = HashKind::keccak256;
  p.page_size = kPageSize4K;
  return p;
}

// One commit through `space`: releases `*live`, allocates n pages, writes them (0x5a),
// publishes; *live becomes the new pages.
inline void commit_pages(CowSpace& space, NodeStore& store, std::vector<uint64_t>* live, uint64_t n) {
  for (uint64_t p : *live) space.release(p);
  std::vector<uint64_t> pages;
  REQUIRE(space.allocate(n, &pages).ok());
  std::vector<unsigned char> buf(store.payload_bytes(), 0x5a);
  std::vector<PageOp> ops;
  for (uint64_t p : pages) ops.push_back({PageOpKind::write, p, buf.data(), p});
  REQUIRE(run_batch(store, ops).ok());
  Manifest m;
  m.root_page = pages[0];
  REQUIRE(space.commit(m).message() == "");
  *live = pages;
}

// A forked child that runs `take` (which takes a lock and keeps it: whatever holds it must
// outlive the call, the child never returns) and then waits to be killed. Returns the
// child's pid once it reported that `take` succeeded.
inline pid_t fork_holder(const std::function<bool()>& take) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const char ok = take() ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(3);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  ::close(ready[0]);
  REQUIRE(ok == 'y');
  return child;
}

// SIGKILLs a fork_holder() child and reaps it.
inline void kill_holder(pid_t child) {
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
}

// Opens an arena; returns nullptr after a MESSAGE when io_uring is unavailable here.
inline std::unique_ptr<ArenaFileStore> open_arena_or_skip(const ArenaOptions& o) {
  std::unique_ptr<ArenaFileStore> s;
  Status st = ArenaFileStore::open(o, &s);
  if (st.code() == Errc::unsupported) {
    MESSAGE("skipped: " << st.message());
    return nullptr;
  }
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

}  // namespace st::io::test
