// node_bytes: a trie node's variable bytes -- its path (nibbles, one per byte) followed by
// its value -- in one inline area with a heap fallback, so that a secure-trie leaf (path
// <= 64 nibbles, storage value <= 33 bytes) fits, with the node's fixed fields, in two
// 64-byte lines (trie.h). An extension keeps its child's committed ref in the value part.
//
//   NodeBytes (116 B):  value_len u32 | path_len u16 | store[110]
//     inline (path_len + value_len <= 110):  store = path[0..path_len) value[0..value_len)
//     on the heap (the sum > 110):           store[0..8) = uint8_t* to the same bytes,
//                                            store[8..12) = the heap block's capacity (u32)
//
// Invariant: the bytes are on the heap exactly when path_len + value_len > kInline (every
// mutation restores it), so no flag is needed; data() is the path, data() + path_len the
// value.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

namespace st::mpt {

class NodeBytes {
 public:
  static constexpr size_t kInline = 110;
  static constexpr size_t kHeapHeader = 12;  // on the heap: store_ holds the pointer and capacity

  NodeBytes() = default;
  NodeBytes(const NodeBytes&) = delete;
  NodeBytes& operator=(const NodeBytes&) = delete;
  NodeBytes(NodeBytes&& o) noexcept { take(o); }
  NodeBytes& operator=(NodeBytes&& o) noexcept {
    if (this != &o) { reset(); take(o); }
    return *this;
  }
  ~NodeBytes() { reset(); }

  size_t path_size() const { return path_len_; }
  size_t value_size() const { return value_len_; }
  const uint8_t* path_data() const { return data(); }
  const uint8_t* value_data() const { return data() + path_len_; }
  std::span<const uint8_t> path() const { return {data(), path_len_}; }
  std::span<const uint8_t> value() const { return {data() + path_len_, value_len_}; }

  void reset() {  // empty, heap block given back
    if (on_heap()) std::free(heap());
    path_len_ = 0;
    value_len_ = 0;
  }
  void set_value(const uint8_t* v, size_t n) {
    const size_t total = path_len_ + n;
    if (!on_heap() && total <= kInline) {  // the common case: inline before and after
      if (n) std::memmove(store_ + path_len_, v, n);
      value_len_ = uint32_t(n);
      return;
    }
    rebuild(data(), path_len_, nullptr, 0, v, n);
  }
  void set_value(std::span<const uint8_t> v) { set_value(v.data(), v.size()); }
  void set_path(const uint8_t* p, size_t n) { rebuild(p, n, nullptr, 0, value_data(), value_len_); }
  void erase_path_prefix(size_t k) { rebuild(data() + k, path_len_ - k, nullptr, 0, value_data(), value_len_); }
  void prepend_path(const uint8_t* p, size_t n) { rebuild(p, n, data(), path_len_, value_data(), value_len_); }

 private:
  bool on_heap() const { return size_t(path_len_) + value_len_ > kInline; }
  uint8_t* heap() const {
    uint8_t* h;
    std::memcpy(&h, store_, sizeof h);
    return h;
  }
  uint32_t heap_cap() const {
    uint32_t c;
    std::memcpy(&c, store_ + 8, 4);
    return c;
  }
  const uint8_t* data() const { return on_heap() ? heap() : store_; }

  // New contents: path = a[0..an) ++ b[0..bn), value = v[0..vn); the sources may point into
  // this object's own bytes (they are copied out first when the storage changes).
  void rebuild(const uint8_t* a, size_t an, const uint8_t* b, size_t bn, const uint8_t* v, size_t vn) {
    const size_t total = an + bn + vn;
    assert(an + bn <= 0xffff);  // paths are at most 2 * Trie::kMaxKeyBytes nibbles
    uint8_t small[kInline];
    std::vector<uint8_t> big;
    uint8_t* tmp = total <= kInline ? small : (big.resize(total), big.data());
    if (an) std::memcpy(tmp, a, an);
    if (bn) std::memcpy(tmp + an, b, bn);
    if (vn) std::memcpy(tmp + an + bn, v, vn);
    uint8_t* dst;
    if (total <= kInline) {
      reset();
      dst = store_;
    } else if (on_heap() && heap_cap() >= total) {
      dst = heap();
    } else {
      const size_t cap = std::max<size_t>(total, 2 * size_t(path_len_ + value_len_));
      dst = static_cast<uint8_t*>(std::malloc(cap));
      if (!dst) std::abort();
      reset();
      std::memcpy(store_, &dst, sizeof dst);
      const uint32_t c = uint32_t(cap);
      std::memcpy(store_ + 8, &c, 4);
    }
    if (total) std::memcpy(dst, tmp, total);
    path_len_ = uint16_t(an + bn);
    value_len_ = uint32_t(vn);
  }
  // Only the bytes in use are copied (an empty node's move writes no store_ line: a slot
  // reused for a stub then touches only its first line).
  void take(NodeBytes& o) {
    std::memcpy(store_, o.store_, o.on_heap() ? kHeapHeader : size_t(o.path_len_) + o.value_len_);
    path_len_ = o.path_len_;
    value_len_ = o.value_len_;
    o.path_len_ = 0;
    o.value_len_ = 0;
  }

  uint32_t value_len_ = 0;
  uint16_t path_len_ = 0;
  uint8_t store_[kInline];
};

}  // namespace st::mpt
