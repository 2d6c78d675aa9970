// sliced_ops: equal-sibling detection over word-sliced blocks.
#include "kernels/sliced_ops.h"

namespace st::kernels {

bool sliced_has_equal_siblings(const uint32_t* blocks, size_t node_count) {
  const size_t pairs = node_count / 2;  // complete pairs only
  const size_t full_blocks = pairs / 8;
  for (size_t b = 0; b < full_blocks; ++b) {
    const uint32_t* blk = blocks + b * 128;
    uint32_t diff[8] = {};
    for (size_t w = 0; w < 8; ++w)
      for (size_t p = 0; p < 8; ++p) diff[p] |= blk[w * 16 + 2 * p] ^ blk[w * 16 + 2 * p + 1];
    uint32_t any_equal = 0;
    for (size_t p = 0; p < 8; ++p) any_equal |= diff[p] == 0;
    if (any_equal) return true;
  }
  const size_t rest = pairs - full_blocks * 8;
  const uint32_t* blk = blocks + full_blocks * 128;
  for (size_t p = 0; p < rest; ++p) {
    uint32_t diff = 0;
    for (size_t w = 0; w < 8; ++w) diff |= blk[w * 16 + 2 * p] ^ blk[w * 16 + 2 * p + 1];
    if (diff == 0) return true;
  }
  return false;
}

}  // namespace st::kernels
