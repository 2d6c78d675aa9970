// page_writer: the write side of one copy-on-write commit. Hands out fresh page ids from the
// CowSpace (never a page reachable from the committed root) and writes finished page
// payloads through the NodeStore with up to `window` writes in flight (buffers recycled, no
// per-page allocation after warm-up). finish() reaps everything and returns the unused
// pre-allocated ids to free space; only then may the caller CowSpace::commit().
//
// Invariant: every id returned by new_page() is either written exactly once or released by
// finish(); on any error the caller must CowSpace::abort() (the commit's pages go back to
// free space and the committed root is untouched).
#pragma once

#include <cstdint>
#include <vector>

#include "io/cow_space.h"
#include "io/node_store.h"

namespace st::persist {

class PageWriter {
 public:
  PageWriter(io::NodeStore& store, io::CowSpace& space, uint32_t window = 64);
  PageWriter(const PageWriter&) = delete;
  PageWriter& operator=(const PageWriter&) = delete;
  ~PageWriter();

  uint32_t payload_bytes() const { return store_.payload_bytes(); }
  io::Status new_page(uint64_t* page_id);
  // Copies the payload (payload_bytes() long) and queues its write.
  io::Status write(uint64_t page_id, const uint8_t* payload);
  io::Status finish();

  uint64_t pages_written() const { return pages_written_; }
  uint64_t bytes_written() const { return pages_written_ * store_.page_size(); }
  // The page ids write() was given, in order (a reader's cached copies of them are stale).
  const std::vector<uint64_t>& written_ids() const { return written_ids_; }
  // Keep a copy of every payload written (written_copies(), in written_ids() order).
  void keep_copies(bool on) { keep_copies_ = on; }
  const std::vector<std::vector<uint8_t>>& written_copies() const { return copies_; }

 private:
  io::Status reap(size_t wait_for);

  io::NodeStore& store_;
  io::CowSpace& space_;
  uint32_t window_;
  std::vector<uint64_t> spare_ids_;          // allocated in this commit, not yet handed out
  std::vector<std::vector<uint8_t>> bufs_;   // window_ payload buffers
  std::vector<uint32_t> free_bufs_;
  std::vector<io::PageCompletion> done_;
  io::Status first_error_;
  uint64_t pages_written_ = 0;
  std::vector<uint64_t> written_ids_;
  bool keep_copies_ = false;
  std::vector<std::vector<uint8_t>> copies_;
};

}  // namespace st::persist
