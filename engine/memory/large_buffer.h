// large_buffer: one zero-initialised, fixed-size allocation for big flat arrays (arenas,
// benchmark inputs), owning a large_alloc block (kernels/support/large_alloc.h: 2 MiB aligned
// and advised to use transparent huge pages from 4 MiB on, 64-byte aligned below; streaming
// passes over tens of MiB otherwise pay TLB misses). Never grows, never moves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace st::memory {

class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(size_t bytes, bool huge_pages = true);  // (large_alloc_nothrow's advice)
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& other) noexcept;
  LargeBuffer& operator=(LargeBuffer&& other) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;  // the byte count large_alloc got (it selects the alignment)
};

// Physical memory of this machine, in bytes.
uint64_t physical_memory_bytes();

// An error message when `bytes` for `what` exceed the machine's physical memory.
std::optional<std::string> check_fits_in_memory(uint64_t bytes, const std::string& what);

}  // namespace st::memory
