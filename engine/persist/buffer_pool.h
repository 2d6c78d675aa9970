// buffer_pool: one process-wide pool of free byte buffers by size, shared by the page
// readers (page payloads) and the page writers (write-run buffers).
// Invariant: the pool holds at most kPoolBytes; what does not fit is freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace st::persist {

// Process-wide free page buffers, by size, bounded (kPoolBytes): a reader returns its
// buffers when it is destroyed or cleared, a page writer its run buffers when it is
// destroyed, and the next one takes them, so a batch or a commit reuses memory already
// mapped instead of faulting fresh pages in (a TreeDb reopened per batch,
// as read-bench does, would otherwise touch ~40 MB of new memory per batch of 4,096 keys;
// a pipeline block's prefetch reads 80-160 MB, and a fresh buffer's first-touch fault
// cost about as much CPU as its read's submission).
class BufferPool {
 public:
  static BufferPool& instance() {
    static BufferPool p;
    return p;
  }
  // Moves up to n buffers of `bytes` into out; allocates the rest.
  void take(uint32_t bytes, size_t n, std::vector<std::unique_ptr<uint8_t[]>>* out) {
    {
      std::lock_guard<std::mutex> g(m_);
      auto& v = free_[bytes];
      while (n > 0 && !v.empty()) {
        out->push_back(std::move(v.back()));
        v.pop_back();
        held_ -= bytes;
        --n;
      }
    }
    for (; n > 0; --n) out->emplace_back(new uint8_t[bytes]);
  }
  void give(uint32_t bytes, std::vector<std::unique_ptr<uint8_t[]>>* bufs) {
    std::lock_guard<std::mutex> g(m_);
    auto& v = free_[bytes];
    for (auto& b : *bufs) {
      if (!b) continue;  // a slot never filled
      if (held_ + bytes > kPoolBytes) break;
      v.push_back(std::move(b));
      held_ += bytes;
    }
    bufs->clear();  // the rest are freed
  }

 private:
  static constexpr size_t kPoolBytes = size_t(256) << 20;
  std::mutex m_;
  std::unordered_map<uint32_t, std::vector<std::unique_ptr<uint8_t[]>>> free_;
  size_t held_ = 0;
};

}  // namespace st::persist
