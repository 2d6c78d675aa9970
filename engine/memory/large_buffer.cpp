// large_buffer: see large_buffer.h.
#include "engine/memory/large_buffer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <cstring>
#include <utility>

#include "kernels/support/large_alloc.h"

namespace st::memory {

LargeBuffer::LargeBuffer(size_t bytes, bool huge_pages) : size_(bytes) {
  data_ = static_cast<uint8_t*>(large_alloc_nothrow(bytes, huge_pages));
  if (!data_) {  // callers size-check with check_fits_in_memory first; this is the backstop
    std::fprintf(stderr, "statetree: out of memory allocating %zu bytes\n", bytes);
    std::exit(70);
  }
  std::memset(data_, 0, bytes);
}

LargeBuffer::~LargeBuffer() {
  if (data_) large_free(data_, size_);
}

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) large_free(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
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
