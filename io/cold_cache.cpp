// cold_cache: drop_caches / fadvise eviction and the QD1 warm-up loop.
#include "io/cold_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <vector>

namespace st::io {

const char* cold_protocol_name(ColdProtocol p) {
  return p == ColdProtocol::drop_caches ? "drop_caches" : "fadvise_dontneed";
}

Status make_cold(std::span<const std::string> files, bool allow_drop_caches, ColdResult* result) {
  ::sync();
  if (allow_drop_caches) {
    const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t w;
      do w = ::write(fd, "3\n", 2);
      while (w < 0 && errno == EINTR);
      const int err = errno;
      ::close(fd);
      if (w == 2) {
        result->protocol = ColdProtocol::drop_caches;
        result->detail.clear();
        return {};
      }
      result->detail = std::string("drop_caches write failed: ") + std::strerror(err);
    } else {
      result->detail = std::string("drop_caches not permitted: ") + std::strerror(errno);
    }
  } else {
    result->detail = "drop_caches not requested";
  }
  result->protocol = ColdProtocol::fadvise_dontneed;
  for (const std::string& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::from_errno(errno, "open " + f + " to evict it");
    ::fdatasync(fd);
    const int r = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (r != 0) return Status::from_errno(r, "posix_fadvise(DONTNEED) " + f);
  }
  return {};
}

WarmUpResult warm_up(NodeStore& store, uint32_t reads, uint64_t seed) {
  WarmUpResult r;
  if (store.capacity_pages() == 0) return r;
  std::vector<unsigned char> buf(store.payload_bytes());
  uint64_t x = seed | 1;
  for (uint32_t i = 0; i < reads; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    PageOp op;
    op.kind = PageOpKind::read;
    op.page_id = (x >> 17) % store.capacity_pages();
    op.buffer = buf.data();
    store.submit(std::span<const PageOp>(&op, 1));
    PageCompletion c;
    const size_t n = store.reap(std::span<PageCompletion>(&c, 1), 1);
    assert(n == 1);
    (void)n;
    const double us = double(c.latency_ns) / 1000.0;
    if (i == 0) r.first_read_us = us;
    r.last_read_us = us;
    ++r.reads;
  }
  return r;
}

}  // namespace st::io
