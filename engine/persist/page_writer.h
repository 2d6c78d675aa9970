// page_writer: the write side of one copy-on-write commit. Hands out fresh page ids from the
// CowSpace (never a page reachable from the committed root) and writes finished page
// payloads through the NodeStore with up to `window` write operations in flight (buffers
// recycled, no per-page allocation after warm-up). finish() reaps everything and returns
// the unused pre-allocated ids to free space; only then may the caller CowSpace::commit().
//
// Write runs: pages written with consecutive ids (id, id + 1, ...) go to the store as one
// write of up to max_write_pages() pages (the store's, or the constructor's cap if lower),
// so a commit whose ids come in ascending runs makes a fraction of the device operations.
// A run is handed to the store when it is full, when the next page does not continue it,
// and at finish(). write_ops() counts the operations.
//
// Invariant: every id returned by new_page() is either written exactly once or released by
// finish(); on any error the caller must CowSpace::abort() (the commit's pages go back to
// free space and the committed root is untouched).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/persist/page_reader.h"
#include "io/cow_space.h"
#include "io/node_store.h"

namespace st::persist {

class PageWriter {
 public:
  // max_run_pages: the longest write run (0: the store's max_write_pages(); 1: page by page).
  PageWriter(io::NodeStore& store, io::CowSpace& space, uint32_t window = 64, uint32_t max_run_pages = 0);
  PageWriter(const PageWriter&) = delete;
  PageWriter& operator=(const PageWriter&) = delete;
  ~PageWriter();

  uint32_t payload_bytes() const { return store_.payload_bytes(); }
  io::Status new_page(uint64_t* page_id);
  // Copies the payload (payload_bytes() long) and queues its write (in the open run).
  io::Status write(uint64_t page_id, const uint8_t* payload);
  io::Status finish();

  uint64_t pages_written() const { return pages_written_; }
  uint64_t bytes_written() const { return pages_written_ * store_.page_size(); }
  // Device write operations handed to the store (a run of consecutive pages is one).
  uint64_t write_ops() const { return write_ops_; }
  uint32_t max_run_pages() const { return run_cap_; }
  // The page ids write() was given, in order (a reader's cached copies of them are stale).
  const std::vector<uint64_t>& written_ids() const { return written_ids_; }
  // Every payload written from now on is also added to `into` (SharedPages::add: a decoded
  // copy in a pooled buffer), until keep_copies(nullptr).
  void keep_copies(SharedPages* into) { copies_into_ = into; }

 private:
  io::Status reap(size_t wait_for);
  // A free buffer for a new run (reaping one when all are in flight); its index.
  io::Status take_buffer(uint32_t* b);
  void submit_run();  // the open run, if any, to the store

  io::NodeStore& store_;
  io::CowSpace& space_;
  uint32_t window_;
  uint32_t run_cap_;                         // pages per write op at most
  std::vector<uint64_t> spare_ids_;          // allocated in this commit, not yet handed out
  std::vector<std::unique_ptr<uint8_t[]>> bufs_;  // window_ run buffers (run_cap_ payloads), made on first use
  std::vector<uint32_t> free_bufs_;
  std::vector<io::PageCompletion> done_;
  io::Status first_error_;
  uint64_t pages_written_ = 0, write_ops_ = 0;
  // The open run: pages run_first_ .. run_first_ + run_pages_ - 1 in buffer run_buf_.
  uint64_t run_first_ = 0;
  uint32_t run_pages_ = 0, run_buf_ = 0;
  std::vector<uint64_t> written_ids_;
  SharedPages* copies_into_ = nullptr;
};

}  // namespace st::persist
