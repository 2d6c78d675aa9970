// large_buffer: one zero-initialised, fixed-size allocation for big flat arrays (arenas,
// benchmark inputs). Buffers of 4 MiB and more are 2 MiB aligned and advised to use
// transparent huge pages (streaming passes over tens of MiB otherwise pay TLB misses);
// smaller ones are 64-byte aligned. Never grows, never moves.
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::memory {

class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(size_t bytes);
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
  size_t size_ = 0;
  size_t align_ = 64;
};

}  // namespace st::memory
