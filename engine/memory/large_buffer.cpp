// large_buffer: see large_buffer.h.
#include "engine/memory/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

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
  data_ = static_cast<uint8_t*>(::operator new(rounded ? rounded : align_, std::align_val_t(align_), std::nothrow));
  if (!data_) {  // callers size-check with check_fits_in_memory first; this is the backstop
    std::fprintf(stderr, "statetree: out of memory allocating %zu bytes\n", bytes);
    std::exit(70);
  }
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

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
}

std::optional<std::string> check_fits_in_memory(uint64_t bytes, const std::string& what) {
  const uint64_t have = physical_memory_bytes();
  if (bytes <= have) return std::nullopt;
  char msg[256];
  std::snprintf(msg, sizeof msg, "%s needs %.1f GiB of memory, this machine has %.1f GiB", what.c_str(),
                double(bytes) / double(1ull << 30), double(have) / double(1ull << 30));
  return std::string(msg);
}

}  // namespace st::memory
