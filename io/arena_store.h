// arena_store: the flat arena file store, the default node store. One preallocated file
// (fallocate) of fixed-size pages, page id p at byte offset p * page_size, opened with
// O_DIRECT and driven by io_uring (liburing is included only by arena_store.cpp):
//
//   caller ops --submit()--> pending FIFO --top_up()--> slots --SQE--> kernel (<= QD in flight)
//                                                         |  state: free | in_flight | landed
//   caller <--reap()-- done FIFO <--verify/copy-- landed <-+- CQE (EAGAIN/EINTR/short: resubmit)
//
//   buffer arena: one aligned allocation of 2 * QD * page_size bytes, slot i owns
//   [i * page_size, (i+1) * page_size); registered with the ring when the kernel allows.
//   A write run (PageOp::pages > 1, up to 64 KiB) goes through slot i's run buffer instead:
//   a second arena of 64 KiB per slot, allocated at the store's first run, written with
//   plain WRITE (not registered); one SQE, one completion, counted as its pages.
//   Reads that land are verified only after the queue has been topped up again with the
//   spare slots, so checksum + copy overlap the device instead of delaying it.
//
// Shared queue depth: with a QueueBudget set (share_queue), an op also needs one of the
// budget's units to enter the kernel and gives it back when it leaves (its CQE seen), so
// the stores sharing the budget have at most its limit in the kernel together; a reap()
// that waits while this store has ops pending but none in the kernel waits for a unit.
//
// Invariants: at most QD ops in the kernel; a slot is in_flight exactly while one SQE/CQE
// for it is outstanding; landed slots exist only inside one CQE-processing pass; a read's payload is copied to the caller only after its trailer
// verified; writes are sealed (trailer + crc) in the slot buffer, so the caller's buffer
// holds only the payload. Kernel features (io_uring itself, READ/WRITE ops, fixed buffers,
// fixed files, O_DIRECT on this filesystem) are probed once at open; missing optional ones
// fall back and are listed in features().
//
// File size: always a whole number of pages. grow() checks free space first (statvfs,
// keeping grow_headroom_bytes free for the manifest), and a fallocate that fails (ENOSPC
// after extending the file part-way, as ext4 does) is undone by truncating back to the old
// size, so a full disk leaves the file as it was. A trailing partial page found at open (a
// growth cut short by a crash or by an older build) is ignored, trimmed when the file is
// opened for writing, and named in one line on stderr.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "io/node_store.h"

namespace st::io {

struct ArenaOptions {
  std::string path;
  uint32_t page_size = kPageSize4K;
  // create: the file's size in pages (preallocated). open: 0 = take it from the file size.
  uint64_t capacity_pages = 0;
  uint32_t queue_depth = 32;     // 1..4096: ops in the kernel (ring entries); 2x as many buffers
  bool create = false;           // create (or extend) the file; false: it must exist
  bool read_only = false;        // O_RDONLY: writes and grow() are refused, a partial tail is not trimmed; excludes create
  bool direct_io = true;         // O_DIRECT; falls back to buffered if the fs refuses it
  bool use_registered_buffers = true;
  bool use_registered_file = true;
  // Test hook: sees every CQE result (bytes or -errno) before the store handles it and may
  // return another one, to force EINTR / EAGAIN / short transfers / errors.
  std::function<int(const PageOp& op, uint32_t bytes_done, int res)> cqe_filter;
  // grow() refuses (no space) unless the filesystem keeps this many bytes free after it.
  uint64_t grow_headroom_bytes = 1ull << 20;
  // Test hook: called instead of fallocate(fd, 0, offset, len); returns 0 or an errno. Lets
  // tests play a full disk, e.g. extend the file part-way and return ENOSPC as ext4 does.
  std::function<int(int fd, uint64_t offset, uint64_t len)> fallocate_hook;
};

struct ArenaFeatures {
  bool direct_io = false;
  bool registered_buffers = false;
  bool registered_file = false;
  std::string notes;  // why an optional feature is off ("" when all are on)
};

class ArenaFileStore final : public NodeStore {
 public:
  // Opens (or creates) the arena. Errors: io_uring unavailable (unsupported), the file
  // missing (not_found), an empty file when no capacity is asked for (bad_argument), no
  // space to preallocate capacity_pages (full), errno.
  static Status open(const ArenaOptions& options, std::unique_ptr<ArenaFileStore>* out);
  ~ArenaFileStore() override;

  uint32_t page_size() const override;
  uint64_t capacity_pages() const override;
  // Errors: read-only (bad_argument); no space (full: "no space left on device: need N
  // bytes, have M (...)", the file keeps its old size); errno.
  Status grow(uint64_t capacity_pages) override;
  // Writes of up to 64 KiB of consecutive pages (16 at 4 KiB) as one operation; 1 read-only.
  uint32_t max_write_pages() const override;
  void submit(std::span<const PageOp> ops) override;
  size_t reap(std::span<PageCompletion> out, size_t wait_for) override;
  size_t outstanding() const override;
  bool share_queue(QueueBudget* budget, uint64_t claim) override;
  Status sync() override;  // fdatasync
  const StoreCounters& counters() const override;

  const ArenaFeatures& features() const;
  uint32_t queue_depth() const;
  const std::string& path() const;

  struct Impl;

 private:
  explicit ArenaFileStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::io
