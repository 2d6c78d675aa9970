// arena_store: the io_uring engine of the flat arena file store (design in arena_store.h).
// The only place besides rocksdb_store.cpp that talks to the kernel's I/O interfaces.
#include "io/arena_store.h"
#include "io/disk_space.h"
#include "io/queue_budget.h"
#include "kernels/support/check.h"
#include "kernels/support/clock.h"

#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

namespace st::io {
namespace {

// free -> in_flight (SQE/CQE outstanding) -> [read landed: awaiting verify+copy] -> free
enum class SlotState : uint8_t { free, in_flight, landed };

struct Slot {
  SlotState state = SlotState::free;
  uint8_t resubmits = 0;
  uint32_t bytes_done = 0;  // of the op's pages already transferred (short transfers)
  uint64_t start_ns = 0;
  uint64_t landed_ns = 0;  // when a read's last CQE was seen (0: not landed)
  PageOp op;
};

// Resubmissions allowed per op (EAGAIN, EINTR, short transfers) before it fails.
constexpr uint8_t kMaxResubmits = 32;
// The largest write run (ArenaFileStore::max_write_pages): 64 KiB of consecutive pages.
constexpr uint32_t kMaxWriteRunBytes = 64 * 1024;


int retry_eintr_ftruncate(int fd, off_t bytes) {
  int r;
  do r = ::ftruncate(fd, bytes);
  while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : errno;
}

int retry_eintr_fallocate(int fd, off_t offset, off_t len) {
  int r;
  do r = ::fallocate(fd, 0, offset, len);
  while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : errno;
}

int retry_eintr_fdatasync(int fd) {
  int r;
  do r = ::fdatasync(fd);
  while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : errno;
}

}  // namespace

struct ArenaFileStore::Impl {
  ArenaOptions opt;
  ArenaFeatures features;
  int fd = -1;
  io_uring ring{};
  bool ring_ok = false;
  unsigned char* arena = nullptr;  // 2 * queue_depth * page_size, aligned to 4096
  // Write runs (PageOp::pages > 1): a buffer of max_run_pages() pages per slot, allocated at
  // the first run (a reader's store never has one), not registered with the ring.
  unsigned char* run_arena = nullptr;
  std::vector<Slot> slots;
  std::vector<uint32_t> free_slots;
  std::vector<uint32_t> landed;  // reads whose bytes arrived, verified after the top-up
  std::deque<PageOp> pending;
  std::deque<PageCompletion> done;
  uint64_t capacity = 0;
  uint32_t in_flight = 0;  // slots with an SQE/CQE outstanding: never more than queue_depth
  QueueBudget* budget = nullptr;  // shared with other stores: one unit per op in the kernel
  uint64_t claim = 0;             // this store's claim on the budget
  StoreCounters counters;

  bool shutting_down = false;  // the caller's read buffers may already be gone

  ~Impl() {
    if (ring_ok) {
      pending.clear();  // nothing new starts; what the kernel holds must finish first
      shutting_down = true;
      drain();
      io_uring_queue_exit(&ring);
    }
    std::free(arena);
    std::free(run_arena);
    if (fd >= 0) ::close(fd);
  }

  uint32_t ps() const { return opt.page_size; }
  uint32_t max_run_pages() const { return std::max<uint32_t>(1, kMaxWriteRunBytes / ps()); }
  unsigned char* slot_buf(uint32_t i) const { return arena + size_t(i) * ps(); }
  // Where slot i's op transfers from / to: its page buffer, or its run buffer for a run.
  unsigned char* op_buf(uint32_t i) const {
    return slots[i].op.pages > 1 ? run_arena + size_t(i) * max_run_pages() * ps() : slot_buf(i);
  }
  uint32_t op_bytes(const Slot& s) const { return s.op.pages * ps(); }

  // Prepares the SQE that transfers the rest of slot i's op.
  void prep(uint32_t i) {
    Slot& s = slots[i];
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    ST_CHECK(sqe, "SQ ring holds at most queue_depth entries, one per slot");
    unsigned char* buf = op_buf(i) + s.bytes_done;
    const unsigned len = op_bytes(s) - s.bytes_done;
    const uint64_t off = s.op.page_id * ps() + s.bytes_done;
    const int fd_arg = features.registered_file ? 0 : fd;
    const bool fixed = features.registered_buffers && s.op.pages == 1;
    if (s.op.kind == PageOpKind::read) {
      if (fixed) io_uring_prep_read_fixed(sqe, fd_arg, buf, len, off, 0);
      else io_uring_prep_read(sqe, fd_arg, buf, len, off);
    } else {
      if (fixed) io_uring_prep_write_fixed(sqe, fd_arg, buf, len, off, 0);
      else io_uring_prep_write(sqe, fd_arg, buf, len, off);
    }
    if (features.registered_file) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(uintptr_t(i)));
  }

  // Hands prepared SQEs to the kernel. EINTR: retry; EAGAIN/EBUSY: the kernel needs CQ
  // room first, so leave them queued (reap() retries after consuming completions).
  void flush_sq() {
    for (int attempt = 0; io_uring_sq_ready(&ring) > 0 && attempt < 64; ++attempt) {
      const int r = io_uring_submit(&ring);
      ++counters.submit_calls;
      if (r >= 0 || r == -EINTR) continue;
      if (r == -EAGAIN || r == -EBUSY) return;
      assert(false && "io_uring_submit failed on a valid ring");
      return;
    }
  }

  // Starts queued ops while slots are free (the top-up loop), then submits unless the
  // caller is about to submit-and-wait anyway (one syscall instead of two).
  void top_up(bool flush = true) {
    while (in_flight < opt.queue_depth && !free_slots.empty() && !pending.empty() && (!budget || budget->take(claim))) {
      const uint32_t i = free_slots.back();
      free_slots.pop_back();
      Slot& s = slots[i];
      s.op = pending.front();
      pending.pop_front();
      s.state = SlotState::in_flight;
      s.bytes_done = 0;
      s.resubmits = 0;
      s.start_ns = monotonic_ns();
      if (s.op.kind == PageOpKind::write) seal_write(i);
      ++in_flight;
      assert(in_flight <= opt.queue_depth);
      prep(i);
    }
    if (flush) flush_sq();
  }

  void alloc_run_arena() {
    const size_t bytes = slots.size() * size_t(max_run_pages()) * ps();
    void* p = nullptr;
    ST_CHECK(posix_memalign(&p, 4096, bytes) == 0, "cannot allocate the write-run buffers");
    run_arena = static_cast<unsigned char*>(p);
  }

  // A write's pages copied into slot i's buffer, each sealed (trailer + crc) on its own.
  void seal_write(uint32_t i) {
    const Slot& s = slots[i];
    const uint32_t payload = page_payload_bytes(ps());
    for (uint32_t p = 0; p < s.op.pages; ++p) {
      unsigned char* page = op_buf(i) + size_t(p) * ps();
      std::memcpy(page, s.op.buffer + size_t(p) * payload, payload);
      seal_page(page, ps(), s.op.page_id + p);
    }
  }

  // An op left the kernel: its queue slot (and its unit of a shared budget) is free.
  void leave_kernel() {
    --in_flight;
    if (budget) budget->give();
  }

  // Finishes slot i (in_flight, or landed: then in_flight was already decremented).
  void finish(uint32_t i, Errc code, int err, PageCheck check) {
    Slot& s = slots[i];
    PageCompletion c;
    c.tag = s.op.tag;
    c.page_id = s.op.page_id;
    c.pages = s.op.pages;
    c.kind = s.op.kind;
    c.code = code;
    c.sys_errno = err;
    c.check = check;
    c.resubmits = s.resubmits;
    c.latency_ns = (s.landed_ns ? s.landed_ns : monotonic_ns()) - s.start_ns;
    s.landed_ns = 0;
    if (code == Errc::ok) {
      if (s.op.kind == PageOpKind::read) { ++counters.reads; counters.bytes_read += ps(); }
      else { counters.writes += s.op.pages; ++counters.write_ops; counters.bytes_written += op_bytes(s); }
    } else {
      ++counters.errors;
      if (code == Errc::corrupt_page) ++counters.corrupt_pages;
    }
    done.push_back(c);
    if (s.state == SlotState::in_flight) leave_kernel();
    s.state = SlotState::free;
    free_slots.push_back(i);
  }

  // One CQE: finish, or resubmit the remainder (EAGAIN, EINTR, short transfer).
  void handle(uint32_t i, int res) {
    ST_CHECK(i < slots.size() && slots[i].state == SlotState::in_flight, "a completion for a slot not in flight");
    Slot& s = slots[i];
    if (opt.cqe_filter) res = opt.cqe_filter(s.op, s.bytes_done, res);
    const uint32_t remaining = op_bytes(s) - s.bytes_done;
    if (res == -EINTR || res == -EAGAIN) {
      (res == -EINTR ? counters.resubmits_eintr : counters.resubmits_eagain)++;
      if (++s.resubmits > kMaxResubmits) return finish(i, Errc::sys, -res, PageCheck::ok);
      return prep(i);
    }
    if (res < 0) return finish(i, Errc::sys, -res, PageCheck::ok);
    if (res == 0) {  // no progress: end of file for a read, a device refusing a write
      return s.op.kind == PageOpKind::read ? finish(i, Errc::end_of_file, 0, PageCheck::ok)
                                           : finish(i, Errc::sys, EIO, PageCheck::ok);
    }
    ST_CHECK(uint32_t(res) <= remaining, "a transfer longer than the rest of its op");
    if (uint32_t(res) < remaining) {
      s.bytes_done += uint32_t(res);
      ++counters.resubmits_short;
      if (++s.resubmits > kMaxResubmits) return finish(i, Errc::sys, EIO, PageCheck::ok);
      return prep(i);
    }
    if (s.op.kind == PageOpKind::read) {
      // The device is done with this slot: verify after the queue has been topped up.
      s.state = SlotState::landed;
      s.landed_ns = monotonic_ns();
      leave_kernel();
      landed.push_back(i);
      return;
    }
    finish(i, Errc::ok, 0, PageCheck::ok);
  }

  // Verifies each landed read and copies its payload out; a bad page is named, not returned.
  void verify_landed() {
    for (uint32_t i : landed) {
      const PageCheck check = check_page(slot_buf(i), ps(), slots[i].op.page_id);
      if (check != PageCheck::ok) {
        finish(i, Errc::corrupt_page, 0, check);
        continue;
      }
      if (!shutting_down) std::memcpy(slots[i].op.buffer, slot_buf(i), page_payload_bytes(ps()));
      finish(i, Errc::ok, 0, PageCheck::ok);
    }
    landed.clear();
  }

  // Handles every CQE available now; returns how many.
  unsigned process_cqes() {
    io_uring_cqe* cqe;
    unsigned head, count = 0;
    if (IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_TASKRUN) io_uring_get_events(&ring);  // post what landed
    io_uring_for_each_cqe(&ring, head, cqe) {
      handle(uint32_t(reinterpret_cast<uintptr_t>(io_uring_cqe_get_data(cqe))), cqe->res);
      ++count;
    }
    io_uring_cq_advance(&ring, count);
    if (!landed.empty()) {
      top_up();  // the device gets new reads (into spare buffers) before the CPU verifies
      verify_landed();
    }
    return count;
  }

  // Blocks until at least one CQE is available (submitting queued SQEs on the way).
  void wait_one() {
    for (;;) {
      io_uring_cqe* cqe = nullptr;
      const int r = io_uring_sq_ready(&ring) > 0 ? io_uring_submit_and_wait(&ring, 1)
                                                 : io_uring_wait_cqe(&ring, &cqe);
      if (r >= 0) return;
      if (r == -EINTR) continue;
      if (r == -EAGAIN || r == -EBUSY) { sched_yield(); continue; }
      assert(false && "io_uring wait failed on a valid ring");
      return;
    }
  }

  void drain() {
    while (in_flight > 0) {
      wait_one();
      process_cqes();
    }
  }
};

namespace {

// The steps of ArenaFileStore::open, each on the Impl being built (its destructor closes
// whatever a failed step left open).

Status check_arena_options(const ArenaOptions& options) {
  if (!valid_page_size(options.page_size))
    return Status(Errc::bad_argument, "page size " + std::to_string(options.page_size) +
                                          " is not supported (4096 or 16384)");
  if (options.queue_depth < 1 || options.queue_depth > 4096)
    return Status(Errc::bad_argument,
                  "queue depth " + std::to_string(options.queue_depth) + " is not in 1..4096");
  if (options.path.empty()) return Status(Errc::bad_argument, "arena path is empty");
  if (options.read_only && options.create)
    return Status(Errc::bad_argument, "arena " + options.path + ": create and read-only exclude each other");
  return {};
}

// Opens the file (O_DIRECT unless the option or the filesystem says no).
Status open_arena_file(ArenaFileStore::Impl& m) {
  const ArenaOptions& options = m.opt;
  const int flags = (options.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | (options.create ? O_CREAT : 0);
  if (options.direct_io) {
    m.fd = ::open(options.path.c_str(), flags | O_DIRECT, 0644);
    if (m.fd >= 0) m.features.direct_io = true;
    else if (errno == EINVAL) m.features.notes += "O_DIRECT refused by the filesystem: buffered I/O; ";
  }
  if (m.fd < 0 && (!options.direct_io || errno == EINVAL)) m.fd = ::open(options.path.c_str(), flags, 0644);
  if (m.fd < 0) {
    if (errno == ENOENT) return Status(Errc::not_found, "arena file " + options.path + " does not exist");
    return Status::from_errno(errno, "open " + options.path);
  }
  if (!options.direct_io) m.features.notes += "O_DIRECT off by option; ";
  return {};
}

// The capacity in whole pages; a partial page past the last whole one is trimmed (or
// ignored read-only).
Status size_arena_file(ArenaFileStore::Impl& m) {
  const ArenaOptions& options = m.opt;
  const uint64_t ps = options.page_size;
  struct stat st;
  if (::fstat(m.fd, &st) != 0) return Status::from_errno(errno, "fstat " + options.path);
  m.capacity = uint64_t(st.st_size) / ps;
  if (const uint64_t tail = uint64_t(st.st_size) % ps; tail != 0) {
    // A growth cut short (a crash mid-fallocate, or an older build on a full disk): the
    // partial page past the last whole one was never part of the database.
    if (!options.read_only) {
      if (const int err = retry_eintr_ftruncate(m.fd, off_t(m.capacity * ps)); err != 0)
        return Status::from_errno(err, "ftruncate " + options.path + " to its last whole page");
    }
    std::fprintf(stderr, "statetree: %s: %llu bytes past its last whole %llu-byte page (a growth cut short) %s\n",
                 options.path.c_str(), static_cast<unsigned long long>(tail), static_cast<unsigned long long>(ps),
                 options.read_only ? "ignored" : "trimmed");
  }
  if (!options.create && m.capacity == 0 && options.capacity_pages == 0)
    return Status(Errc::bad_argument, "arena file " + options.path + " is empty");
  return {};
}

// io_uring and the opcodes it must have; *fixed_ops: READ_FIXED / WRITE_FIXED exist.
Status init_arena_ring(ArenaFileStore::Impl& m, bool* fixed_ops) {
  // Completions do not interrupt the thread while it runs in user space (COOP_TASKRUN): they
  // are posted at its next io_uring_enter, or when process_cqes sees the TASKRUN flag. Older
  // kernels refuse the flags: plain ring then.
  io_uring_params params{};
  params.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  int qr = io_uring_queue_init_params(m.opt.queue_depth, &m.ring, &params);
  if (qr == -EINVAL) qr = io_uring_queue_init(m.opt.queue_depth, &m.ring, 0);
  if (qr < 0)
    return Status(Errc::unsupported,
                  std::string("io_uring unavailable (io_uring_queue_init: ") + std::strerror(-qr) +
                      "); check /proc/sys/kernel/io_uring_disabled", -qr);
  m.ring_ok = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&m.ring);
  if (!probe) return Status(Errc::unsupported, "io_uring opcode probe unavailable (kernel < 5.6)");
  const bool rw = io_uring_opcode_supported(probe, IORING_OP_READ) &&
                  io_uring_opcode_supported(probe, IORING_OP_WRITE);
  *fixed_ops = io_uring_opcode_supported(probe, IORING_OP_READ_FIXED) &&
               io_uring_opcode_supported(probe, IORING_OP_WRITE_FIXED);
  io_uring_free_probe(probe);
  if (!rw) return Status(Errc::unsupported, "io_uring lacks IORING_OP_READ/WRITE (kernel < 5.6)");
  return {};
}

// Two buffers per queue slot (while landed reads are verified, new reads use the spares),
// registered with the ring where it can; the file registered too where it can.
Status setup_arena_buffers(ArenaFileStore::Impl& m, bool fixed_ops) {
  const ArenaOptions& options = m.opt;
  const uint32_t buffers = 2 * options.queue_depth;
  const size_t arena_bytes = size_t(buffers) * options.page_size;
  void* p = nullptr;
  if (posix_memalign(&p, 4096, arena_bytes) != 0) return Status(Errc::sys, "cannot allocate buffer arena", ENOMEM);
  m.arena = static_cast<unsigned char*>(p);
  std::memset(m.arena, 0, arena_bytes);
  if (options.use_registered_buffers) {
    if (!fixed_ops) {
      m.features.notes += "READ_FIXED/WRITE_FIXED unsupported: plain READ/WRITE; ";
    } else {
      iovec iov{m.arena, arena_bytes};
      const int r = io_uring_register_buffers(&m.ring, &iov, 1);
      if (r == 0) m.features.registered_buffers = true;
      else m.features.notes += std::string("registered buffers unavailable (") + std::strerror(-r) + "); ";
    }
  }
  if (options.use_registered_file) {
    const int r = io_uring_register_files(&m.ring, &m.fd, 1);
    if (r == 0) m.features.registered_file = true;
    else m.features.notes += std::string("registered file unavailable (") + std::strerror(-r) + "); ";
  }
  m.slots.resize(buffers);
  for (uint32_t i = buffers; i-- > 0;) m.free_slots.push_back(i);
  return {};
}

}  // namespace

ArenaFileStore::ArenaFileStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ArenaFileStore::~ArenaFileStore() = default;

Status ArenaFileStore::open(const ArenaOptions& options, std::unique_ptr<ArenaFileStore>* out) {
  if (Status s = check_arena_options(options); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  impl->opt = options;
  bool fixed_ops = false;
  Status s = open_arena_file(*impl);
  if (s.ok()) s = size_arena_file(*impl);
  if (s.ok()) s = init_arena_ring(*impl, &fixed_ops);
  if (s.ok()) s = setup_arena_buffers(*impl, fixed_ops);
  if (!s.ok()) return s;
  std::unique_ptr<ArenaFileStore> store(new ArenaFileStore(std::move(impl)));
  if (options.capacity_pages > store->capacity_pages()) {
    Status g = store->grow(options.capacity_pages);
    if (!g.ok()) return g;
  }
  *out = std::move(store);
  return {};
}

uint32_t ArenaFileStore::page_size() const { return impl_->opt.page_size; }
uint64_t ArenaFileStore::capacity_pages() const { return impl_->capacity; }
const ArenaFeatures& ArenaFileStore::features() const { return impl_->features; }
uint32_t ArenaFileStore::queue_depth() const { return impl_->opt.queue_depth; }
const std::string& ArenaFileStore::path() const { return impl_->opt.path; }
const StoreCounters& ArenaFileStore::counters() const { return impl_->counters; }

Status ArenaFileStore::grow(uint64_t capacity_pages) {
  Impl& m = *impl_;
  if (capacity_pages <= m.capacity) return {};
  const std::string& path = m.opt.path;
  if (m.opt.read_only) return Status(Errc::bad_argument, "arena file " + path + " is open read-only: it cannot grow");
  const uint64_t ps = m.opt.page_size;
  constexpr uint64_t kMaxFileBytes = uint64_t(1) << 62;  // far below off_t's limit
  if (capacity_pages > kMaxFileBytes / ps)
    return Status(Errc::bad_argument, "arena file " + path + ": " + std::to_string(capacity_pages) + " pages is too large");
  const uint64_t old_bytes = m.capacity * ps, len = (capacity_pages - m.capacity) * ps;
  const uint64_t need = len + m.opt.grow_headroom_bytes;
  const std::string what = "growing " + path + " from " + std::to_string(m.capacity) + " to " +
                           std::to_string(capacity_pages) + " pages of " + std::to_string(ps) + " bytes, " +
                           std::to_string(m.opt.grow_headroom_bytes) + " bytes kept free";
  // Check first: a fallocate that runs out of space may leave the file extended part-way.
  uint64_t avail = 0;
  if (available_bytes(path, &avail).ok() && avail < need) return no_space(path, need, what);
  int err = m.opt.fallocate_hook ? m.opt.fallocate_hook(m.fd, old_bytes, len)
                                 : retry_eintr_fallocate(m.fd, off_t(old_bytes), off_t(len));
  if (err == EOPNOTSUPP) err = retry_eintr_ftruncate(m.fd, off_t(old_bytes + len));  // no fallocate here
  if (err != 0) {
    // Put the size back (ext4 extends the file part-way before it reports ENOSPC), so the
    // file stays a whole number of pages. Should that fail too, open() trims the tail.
    (void)retry_eintr_ftruncate(m.fd, off_t(old_bytes));
    if (is_no_space_errno(err)) return no_space(path, need, what);
    return Status::from_errno(err, "fallocate " + path);
  }
  m.capacity = capacity_pages;
  return {};
}

void ArenaFileStore::submit(std::span<const PageOp> ops) {
  Impl& m = *impl_;
  for (const PageOp& op : ops) {
    assert(op.buffer != nullptr);
    const bool refused_write = op.kind == PageOpKind::write && m.opt.read_only;
    const bool bad_run = op.pages == 0 || op.pages > (op.kind == PageOpKind::write ? m.max_run_pages() : 1u);
    if (op.page_id >= m.capacity || op.pages > m.capacity - op.page_id || refused_write || bad_run) {
      PageCompletion c;
      c.tag = op.tag;
      c.page_id = op.page_id;
      c.pages = op.pages;
      c.kind = op.kind;
      c.code = refused_write || bad_run ? Errc::bad_argument : Errc::out_of_range;
      ++m.counters.errors;
      m.done.push_back(c);
      continue;
    }
    if (op.pages > 1 && !m.run_arena) m.alloc_run_arena();
    m.pending.push_back(op);
  }
  m.top_up();
}

uint32_t ArenaFileStore::max_write_pages() const { return impl_->opt.read_only ? 1 : impl_->max_run_pages(); }

bool ArenaFileStore::share_queue(QueueBudget* budget, uint64_t claim) {
  ST_CHECK(impl_->in_flight == 0 && impl_->pending.empty(), "a store changes its queue budget only when idle");
  impl_->budget = budget;
  impl_->claim = claim;
  return true;
}

size_t ArenaFileStore::outstanding() const {
  return impl_->pending.size() + impl_->in_flight + impl_->done.size();
}

size_t ArenaFileStore::reap(std::span<PageCompletion> out, size_t wait_for) {
  Impl& m = *impl_;
  const size_t want = std::min({wait_for, outstanding(), out.size()});
  size_t n = 0;
  for (;;) {
    m.process_cqes();
    m.top_up(/*flush=*/false);
    while (n < out.size() && !m.done.empty()) {
      out[n++] = m.done.front();
      m.done.pop_front();
    }
    if (n < want && m.in_flight == 0 && m.budget && !m.pending.empty()) {
      m.budget->wait_available(m.claim);  // the other stores hold the whole budget: wait for a unit
      continue;
    }
    if (n >= want || n == out.size() || m.in_flight == 0) {
      m.flush_sq();  // never return with prepared SQEs the kernel has not seen
      return n;
    }
    m.wait_one();  // submits the prepared SQEs and waits in one io_uring_enter
  }
}

Status ArenaFileStore::sync() {
  ++impl_->counters.syncs;
  const int err = retry_eintr_fdatasync(impl_->fd);
  return err == 0 ? Status() : Status::from_errno(err, "fdatasync " + impl_->opt.path);
}

}  // namespace st::io
