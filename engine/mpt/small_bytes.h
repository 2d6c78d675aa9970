// small_bytes: a byte string with N bytes of inline storage and a heap fallback beyond,
// for trie node paths and values. A secure-trie leaf (path <= 64 nibbles, storage value
// <= 33 bytes) then lives entirely inside its node: one or two adjacent cache lines
// instead of the node plus two scattered heap blocks.
//
// Invariant: data() points to inline_ while size <= N and no heap block was ever needed,
// else to heap_ (capacity cap_); the contents are always data()[0 .. size()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

namespace st::mpt {

template <uint32_t N>
class SmallBytes {
 public:
  SmallBytes() = default;
  SmallBytes(const SmallBytes& o) { assign(o.data(), o.size()); }
  SmallBytes& operator=(const SmallBytes& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  SmallBytes(SmallBytes&& o) noexcept { take(o); }
  SmallBytes& operator=(SmallBytes&& o) noexcept {
    if (this != &o) { reset(); take(o); }
    return *this;
  }
  ~SmallBytes() { std::free(heap_); }

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* data() const { return heap_ ? heap_ : inline_; }
  uint8_t* data() { return heap_ ? heap_ : inline_; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size_; }
  uint8_t operator[](size_t i) const { return data()[i]; }
  operator std::span<const uint8_t>() const { return {data(), size_}; }
  std::vector<uint8_t> to_vector() const { return std::vector<uint8_t>(begin(), end()); }

  void clear() { size_ = 0; }
  void reset() {  // clear and give back any heap block
    std::free(heap_);
    heap_ = nullptr;
    cap_ = N;
    size_ = 0;
  }
  void assign(const uint8_t* p, size_t n) {
    reserve(n);
    if (n) std::memmove(data(), p, n);
    size_ = uint32_t(n);
  }
  void assign(std::span<const uint8_t> s) { assign(s.data(), s.size()); }
  void erase_prefix(size_t k) {  // drop the first k bytes
    std::memmove(data(), data() + k, size_ - k);
    size_ -= uint32_t(k);
  }
  void prepend(const uint8_t* p, size_t n) {  // p must not point into *this
    reserve(size_ + n);
    std::memmove(data() + n, data(), size_);
    std::memcpy(data(), p, n);
    size_ += uint32_t(n);
  }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = cap_ * 2 > n ? size_t(cap_) * 2 : n;
    uint8_t* h = static_cast<uint8_t*>(std::malloc(cap));
    if (!h) std::abort();
    if (size_) std::memcpy(h, data(), size_);
    std::free(heap_);
    heap_ = h;
    cap_ = uint32_t(cap);
  }
  void take(SmallBytes& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = N;
    } else {
      std::memcpy(inline_, o.inline_, o.size_);
    }
    o.size_ = 0;
  }

  uint8_t* heap_ = nullptr;
  uint32_t size_ = 0;
  uint32_t cap_ = N;
  uint8_t inline_[N];
};

}  // namespace st::mpt
