// page_writer: copy-on-write page ids and windowed asynchronous page writes (see header).
#include "engine/persist/page_writer.h"

#include <cstring>

namespace st::persist {

namespace {
constexpr uint64_t kIdBatch = 64;  // page ids allocated from the CowSpace at a time
}

PageWriter::PageWriter(io::NodeStore& store, io::CowSpace& space, uint32_t window)
    : store_(store), space_(space), window_(window ? window : 1) {
  bufs_.resize(window_);
  for (uint32_t i = 0; i < window_; ++i) {
    bufs_[i].resize(store_.payload_bytes());
    free_bufs_.push_back(window_ - 1 - i);
  }
  done_.resize(window_);
}

PageWriter::~PageWriter() {
  // Never leave the store with writes into buffers that are about to be freed.
  while (store_.outstanding() > 0) store_.reap(done_, store_.outstanding());
}

io::Status PageWriter::new_page(uint64_t* page_id) {
  if (spare_ids_.empty()) {
    std::vector<uint64_t> ids;
    if (io::Status s = space_.allocate(kIdBatch, &ids); !s.ok()) return s;
    spare_ids_.assign(ids.rbegin(), ids.rend());  // hand out ascending
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

io::Status PageWriter::write(uint64_t page_id, const uint8_t* payload) {
  if (!first_error_.ok()) return first_error_;
  if (free_bufs_.empty())
    if (io::Status s = reap(1); !s.ok()) return s;
  const uint32_t b = free_bufs_.back();
  free_bufs_.pop_back();
  std::memcpy(bufs_[b].data(), payload, bufs_[b].size());
  written_ids_.push_back(page_id);
  if (keep_copies_) copies_.emplace_back(payload, payload + bufs_[b].size());
  io::PageOp op{io::PageOpKind::write, page_id, bufs_[b].data(), b};
  store_.submit(std::span<const io::PageOp>(&op, 1));
  ++pages_written_;
  return {};
}

io::Status PageWriter::finish() {
  if (store_.outstanding() > 0) (void)reap(store_.outstanding());
  for (uint64_t id : spare_ids_) space_.release(id);  // allocated in this commit: free again at once
  spare_ids_.clear();
  return first_error_;
}

}  // namespace st::persist
