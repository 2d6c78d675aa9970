// large_buffer: see large_buffer.h.
#include "engine/memory/large_buffer.h"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <utility>

namespace st::memory {

namespace {
constexpr size_t kHugeThreshold = size_t(4) << 20;
constexpr size_t kHugeAlign = size_t(2) << 20;
}  // namespace

LargeBuffer::LargeBuffer(size_t bytes) : size_(bytes), align_(bytes >= kHugeThreshold ? kHugeAlign : 64) {
  const size_t rounded = (bytes + align_ - 1) / align_ * align_;
  data_ = static_cast<uint8_t*>(::operator new(rounded ? rounded : align_, std::align_val_t(align_)));
#if defined(MADV_HUGEPAGE)
  if (align_ == kHugeAlign) madvise(data_, rounded, MADV_HUGEPAGE);
#endif
  std::memset(data_, 0, bytes);
}

LargeBuffer::~LargeBuffer() {
  if (data_) ::operator delete(data_, std::align_val_t(align_));
}

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), align_(other.align_) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) ::operator delete(data_, std::align_val_t(align_));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    align_ = other.align_;
  }
  return *this;
}

}  // namespace st::memory
