// raw_reads: the store-less io_uring read loop (see the header).
#include "io/raw_reads.h"
#include "kernels/support/clock.h"

#include <fcntl.h>
#include <liburing.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace st::io {
namespace {


}  // namespace

Status raw_random_reads(const std::string& path, uint32_t page_size, uint64_t pages, uint32_t qd,
                        uint64_t reads, uint64_t seed, RandomReadResult* result) {
  *result = RandomReadResult{};
  if (pages == 0 || qd == 0) return Status(Errc::bad_argument, "raw reads: no pages or queue depth 0");
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return Status::from_errno(errno, "open " + path + " (O_DIRECT)");
  io_uring ring;
  const int qr = io_uring_queue_init(qd, &ring, 0);
  if (qr < 0) {
    ::close(fd);
    return Status(Errc::unsupported, std::string("io_uring unavailable: ") + std::strerror(-qr), -qr);
  }
  void* mem = nullptr;
  if (posix_memalign(&mem, 4096, size_t(qd) * page_size) != 0) {
    io_uring_queue_exit(&ring);
    ::close(fd);
    return Status(Errc::sys, "raw reads: cannot allocate buffers", ENOMEM);
  }
  auto* buf = static_cast<unsigned char*>(mem);
  std::vector<uint64_t> start_ns(qd);
  std::vector<uint32_t> free_slots;
  for (uint32_t i = 0; i < qd; ++i) free_slots.push_back(i);
  result->latency_ns.reserve(reads);
  uint64_t rng = seed, issued = 0, done = 0;
  Status status;
  const uint64_t t0 = monotonic_ns();
  while (done < reads && status.ok()) {
    while (!free_slots.empty() && issued < reads) {
      const uint32_t slot = free_slots.back();
      free_slots.pop_back();
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_read(sqe, fd, buf + size_t(slot) * page_size, page_size,
                         random_page(rng, pages) * page_size);
      io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(uintptr_t(slot)));
      start_ns[slot] = monotonic_ns();
      ++issued;
    }
    const int r = io_uring_submit_and_wait(&ring, 1);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      status = Status(Errc::sys, std::string("io_uring_submit_and_wait: ") + std::strerror(-r), -r);
      break;
    }
    io_uring_cqe* cqe;
    unsigned head, count = 0;
    const uint64_t now = monotonic_ns();
    io_uring_for_each_cqe(&ring, head, cqe) {
      const uint32_t slot = uint32_t(reinterpret_cast<uintptr_t>(io_uring_cqe_get_data(cqe)));
      if (cqe->res != int(page_size) && status.ok())
        status = cqe->res < 0 ? Status(Errc::sys, std::string("raw read: ") + std::strerror(-cqe->res), -cqe->res)
                              : Status(Errc::end_of_file, "raw read: short read of " + std::to_string(cqe->res) + " bytes");
      result->latency_ns.push_back(now - start_ns[slot]);
      free_slots.push_back(slot);
      ++count;
    }
    io_uring_cq_advance(&ring, count);
    done += count;
  }
  // Drain anything still in flight before the buffers go away.
  while (done < issued) {
    io_uring_cqe* cqe;
    if (io_uring_wait_cqe(&ring, &cqe) == 0) { io_uring_cqe_seen(&ring, cqe); ++done; }
  }
  result->wall_ns = monotonic_ns() - t0;
  result->reads = result->latency_ns.size();
  std::free(mem);
  io_uring_queue_exit(&ring);
  ::close(fd);
  return status;
}

}  // namespace st::io
