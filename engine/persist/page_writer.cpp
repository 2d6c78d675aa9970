// page_writer: copy-on-write page ids and windowed asynchronous page writes, consecutive
// pages in one write run (see header).
#include "engine/persist/page_writer.h"
#include "engine/persist/buffer_pool.h"

#include <algorithm>
#include <cstring>

namespace st::persist {

namespace {
constexpr uint64_t kIdBatch = 64;  // page ids allocated from the CowSpace at a time
}  // namespace

PageWriter::PageWriter(io::NodeStore& store, io::CowSpace& space, uint32_t window, uint32_t max_run_pages)
    : store_(store), space_(space), window_(window ? window : 1) {
  const uint32_t store_max = std::max<uint32_t>(1, store_.max_write_pages());
  run_cap_ = max_run_pages ? std::min(max_run_pages, store_max) : store_max;
  bufs_.resize(window_);
  for (uint32_t i = 0; i < window_; ++i) free_bufs_.push_back(window_ - 1 - i);
  done_.resize(window_);
}

PageWriter::~PageWriter() {
  // Never leave the store with writes into buffers that are about to be freed.
  while (store_.outstanding() > 0) store_.reap(done_, store_.outstanding());
  BufferPool::instance().give(run_cap_ * payload_bytes(), &bufs_);
}

io::Status PageWriter::new_page(uint64_t* page_id) {
  if (spare_ids_.empty()) {
    std::vector<uint64_t> ids;
    if (io::Status s = space_.allocate(kIdBatch, &ids); !s.ok()) return s;
    spare_ids_.assign(ids.rbegin(), ids.rend());  // hand out in the allocator's order
  }
  *page_id = spare_ids_.back();
  spare_ids_.pop_back();
  return {};
}

io::Status PageWriter::reap(size_t wait_for) {
  while (true) {
    const size_t got = store_.reap(done_, wait_for);
    for (size_t i = 0; i < got; ++i) {
      const io::PageCompletion& c = done_[i];
      free_bufs_.push_back(uint32_t(c.tag));
      if (!c.ok() && first_error_.ok()) first_error_ = io::Status(c.code, io::describe(c), c.sys_errno);
    }
    if (got >= wait_for) break;
    wait_for -= got;
  }
  return first_error_;
}

io::Status PageWriter::take_buffer(uint32_t* b) {
  if (free_bufs_.empty())
    if (io::Status s = reap(1); !s.ok()) return s;
  *b = free_bufs_.back();
  free_bufs_.pop_back();
  if (!bufs_[*b]) {
    std::vector<std::unique_ptr<uint8_t[]>> one;
    BufferPool::instance().take(run_cap_ * payload_bytes(), 1, &one);
    bufs_[*b] = std::move(one.back());
  }
  return {};
}

void PageWriter::submit_run() {
  if (run_pages_ == 0) return;
  io::PageOp op{io::PageOpKind::write, run_first_, bufs_[run_buf_].get(), run_buf_, run_pages_};
  store_.submit(std::span<const io::PageOp>(&op, 1));
  ++write_ops_;
  run_pages_ = 0;
}

io::Status PageWriter::write(uint64_t page_id, const uint8_t* payload) {
  if (!first_error_.ok()) return first_error_;
  const bool continues = run_pages_ > 0 && run_pages_ < run_cap_ && page_id == run_first_ + run_pages_;
  if (!continues) {
    submit_run();
    if (io::Status s = take_buffer(&run_buf_); !s.ok()) return s;
    run_first_ = page_id;
  }
  const size_t payload_size = payload_bytes();
  std::memcpy(bufs_[run_buf_].get() + size_t(run_pages_) * payload_size, payload, payload_size);
  ++run_pages_;
  written_ids_.push_back(page_id);
  if (copies_into_) (void)copies_into_->add(page_id, std::span<const uint8_t>(payload, payload_size));
  ++pages_written_;
  if (run_pages_ == run_cap_) submit_run();
  return {};
}

io::Status PageWriter::finish() {
  submit_run();
  if (store_.outstanding() > 0) (void)reap(store_.outstanding());
  for (uint64_t id : spare_ids_) space_.release(id);  // allocated in this commit: free again at once
  spare_ids_.clear();
  return first_error_;
}

}  // namespace st::persist
