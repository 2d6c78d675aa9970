// chunked_arena: a growable array of T addressed by 32-bit index, stored in chunks that are
// allocated once and never move (growth appends a chunk; no realloc-and-copy; references
// stay valid). Chunk sizes double: chunk 0 holds [0, 16), chunk c >= 1 holds
// [2^(c+3), 2^(c+4)), so a small trie (one contract's few slots) costs a few hundred bytes
// while a 1M-node trie has ~17 chunks whose table stays in L1 (std::deque's map of
// 512-byte blocks is itself a cache miss per access at that size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace st::mpt {

template <class T>
class ChunkedArena {
 public:
  T& operator[](size_t i) { return at(i); }
  const T& operator[](size_t i) const { return const_cast<ChunkedArena*>(this)->at(i); }
  size_t size() const { return size_; }

  // Appends a default-constructed element and returns it.
  T& emplace_back() {
    const size_t c = chunk_of(size_);
    if (c == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(c == 0 ? 16 : size_t(1) << (c + 3)));
    T& t = at(size_);
    ++size_;
    return t;
  }

 private:
  static size_t chunk_of(size_t i) { return i < 16 ? 0 : size_t(63 - __builtin_clzll(i)) - 3; }
  T& at(size_t i) {
    if (i < 16) return chunks_[0][i];
    const unsigned b = unsigned(63 - __builtin_clzll(i));
    return chunks_[b - 3][i - (size_t(1) << b)];
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace st::mpt
