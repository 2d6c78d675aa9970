// sliced_ops: equal-sibling detection over word-sliced blocks. Word 0 of the two siblings
// is compared first (16 consecutive words per block: cheap, vectorizable); the other seven
// words are read only for a pair whose first words match, which real data almost never has.
#include "kernels/sliced_ops.h"

namespace st::kernels {

namespace {
inline bool pair_equal(const uint32_t* blk, size_t p) {
  uint32_t diff = 0;
  for (size_t w = 0; w < 8; ++w) diff |= blk[w * 16 + 2 * p] ^ blk[w * 16 + 2 * p + 1];
  return diff == 0;
}
}  // namespace

bool sliced_has_equal_siblings(const uint32_t* blocks, size_t node_count) {
  const size_t pairs = node_count / 2;  // complete pairs only
  const size_t full_blocks = pairs / 8;
  for (size_t b = 0; b < full_blocks; ++b) {
    const uint32_t* blk = blocks + b * 128;
    uint32_t first_word_match = 0;
    for (size_t p = 0; p < 8; ++p) first_word_match |= uint32_t(blk[2 * p] == blk[2 * p + 1]) << p;
    for (size_t p = 0; first_word_match; ++p, first_word_match >>= 1)
      if ((first_word_match & 1) && pair_equal(blk, p)) return true;
  }
  const uint32_t* blk = blocks + full_blocks * 128;
  for (size_t p = 0; p < pairs - full_blocks * 8; ++p)
    if (pair_equal(blk, p)) return true;
  return false;
}

}  // namespace st::kernels
