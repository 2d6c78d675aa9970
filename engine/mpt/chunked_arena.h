// chunked_arena: a growable array of T addressed by 32-bit index, stored in chunks that are
// allocated once and never move (growth appends a chunk; no realloc-and-copy; references
// stay valid). Chunk sizes double up to 2^16 elements, then stay at 2^16: chunk 0 holds
// [0, 16), chunk c in 1..13 holds [2^(c+3), 2^(c+4)), chunk 14 + k holds
// [2^17 + k*2^16, 2^17 + (k+1)*2^16). A small trie (one contract's few slots) costs a few
// hundred bytes, a 1M-node trie has ~28 chunks whose table stays in L1 (std::deque's map
// of 512-byte blocks is itself a cache miss per access at that size), and the unused
// capacity is at most one chunk. Chunk storage is a
// memory::LargeBuffer: chunks of 4 MiB and more are 2 MiB aligned and advised to use
// transparent huge pages (random node accesses in a 1M-slot trie otherwise pay a TLB miss
// and a page walk each), unless set_huge_pages(false).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/memory/large_buffer.h"

namespace st::mpt {

template <class T>
class ChunkedArena {
 public:
  ChunkedArena() = default;
  ChunkedArena(const ChunkedArena&) = delete;
  ChunkedArena& operator=(const ChunkedArena&) = delete;
  ~ChunkedArena() {
    for (size_t c = 0; c < chunks_.size(); ++c) std::destroy_n(base(c), chunk_size(c));
  }

  T& operator[](size_t i) { return at(i); }
  const T& operator[](size_t i) const { return const_cast<ChunkedArena*>(this)->at(i); }
  size_t size() const { return size_; }

  // Appends a default-constructed element and returns it.
  T& emplace_back() {
    const size_t c = chunk_of(size_);
    if (c == chunks_.size()) {
      chunks_.emplace_back(sizeof(T) * chunk_size(c), huge_pages_);
      std::uninitialized_default_construct_n(base(c), chunk_size(c));
    }
    T& t = at(size_);
    if (size_ < used_) t = T{};  // (a slot used before clear())
    ++size_;
    return t;
  }
  // Whether chunks allocated from now on are advised to use huge pages (the default).
  void set_huge_pages(bool on) { huge_pages_ = on; }
  // Empties the array, its chunks kept for reuse.
  void clear() {
    used_ = std::max(used_, size_);
    size_ = 0;
  }

 private:
  static constexpr size_t kSteady = size_t(1) << 17;  // first index in fixed-size chunks
  static size_t chunk_of(size_t i) {
    if (i >= kSteady) return 14 + ((i - kSteady) >> 16);
    return i < 16 ? 0 : size_t(63 - __builtin_clzll(i)) - 3;
  }
  static size_t chunk_size(size_t c) { return c == 0 ? 16 : c <= 13 ? size_t(1) << (c + 3) : size_t(1) << 16; }
  T* base(size_t c) { return reinterpret_cast<T*>(chunks_[c].data()); }
  [[gnu::always_inline]] T& at(size_t i) {
    if (i >= kSteady) return base(14 + ((i - kSteady) >> 16))[(i - kSteady) & 0xffff];
    if (i < 16) return base(0)[i];
    const unsigned b = unsigned(63 - __builtin_clzll(i));
    return base(b - 3)[i - (size_t(1) << b)];
  }

  std::vector<st::memory::LargeBuffer> chunks_;
  bool huge_pages_ = true;
  size_t size_ = 0;
  size_t used_ = 0;  // slots used before the last clear() (emplace_back resets them)
};

}  // namespace st::mpt
