// encoding_chunks: byte storage for the node encodings a commit keeps (Trie::hash_pending),
// in chunks that are allocated once and never move: an encoding is written where it stays,
// the keccak kernel may read it while later ones are written, and a sink may hold a span of
// it until the storage is cleared. Chunk sizes double from 4 KiB up to 1 MiB, so a trie
// with a few dirty nodes (one contract's slots) holds a few KiB; clear() keeps the chunks
// for the next commit. The bytes are written once where they stay, so their lines are
// fetched for writing ahead of the encoder (take()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace st::mpt {

class EncodingChunks {
 public:
  // At least `need` writable bytes that no earlier encoding uses; take() then claims the
  // first n of them (n <= need).
  uint8_t* space(size_t need) {
    while (at_ < chunks_.size() && used_ + need > chunks_[at_].size) ++at_, used_ = 0;
    if (at_ == chunks_.size()) {
      const size_t grown = chunks_.empty() ? kFirstChunk : std::min(chunks_.back().size * 2, kMaxChunk);
      const size_t size = std::max(grown, need);
      chunks_.push_back({std::make_unique_for_overwrite<uint8_t[]>(size), size});
      used_ = 0;
    }
    return chunks_[at_].bytes.get() + used_;
  }
  // The next encodings' lines (last written a commit ago, out of cache by now) are fetched
  // for writing kWriteAhead bytes ahead, as many as this one took, within the chunk: the
  // encoder's stores then find their lines instead of waiting for each.
  void take(size_t n) {
    const Chunk& c = chunks_[at_];
    used_ += n;
    if (used_ + kWriteAhead + n <= c.size)
      for (size_t off = 0; off < n; off += 64) __builtin_prefetch(c.bytes.get() + used_ + kWriteAhead + off, 1);
  }
  // Every encoding given up (their spans are no longer valid); the chunks are kept.
  void clear() { at_ = 0, used_ = 0; }

 private:
  static constexpr size_t kFirstChunk = size_t(4) << 10;
  static constexpr size_t kMaxChunk = size_t(1) << 20;
  static constexpr size_t kWriteAhead = 4096;
  struct Chunk {
    std::unique_ptr<uint8_t[]> bytes;
    size_t size;
  };
  std::vector<Chunk> chunks_;
  size_t at_ = 0, used_ = 0;  // the chunk written now, and its bytes taken
};

}  // namespace st::mpt
