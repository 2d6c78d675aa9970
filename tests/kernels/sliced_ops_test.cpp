// sliced_ops_test: equal-sibling detection at every pair position, including pairs whose
// first words match but whose digests differ, and pairs past node_count.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "kernels/sliced_ops.h"

using st::kernels::sliced_has_equal_siblings;

TEST_CASE("sliced_has_equal_siblings finds exactly the equal real pairs") {
  std::mt19937 rng(5);
  const size_t nodes = 3 * 16 + 7;  // three full blocks and a partial one
  std::vector<uint32_t> blocks(4 * 128);
  auto word = [&](size_t node, size_t w) -> uint32_t& { return blocks[(node / 16) * 128 + w * 16 + node % 16]; };
  for (auto& v : blocks) v = rng();
  CHECK_FALSE(sliced_has_equal_siblings(blocks.data(), nodes));
  for (size_t left = 0; left + 1 < nodes + 2; left += 2) {
    auto saved = blocks;
    for (size_t w = 0; w < 8; ++w) word(left + 1, w) = word(left, w);
    CAPTURE(left);
    CHECK(sliced_has_equal_siblings(blocks.data(), nodes) == (left + 1 < nodes));
    word(left + 1, 7) ^= 1;  // first words still match, digests differ
    CHECK_FALSE(sliced_has_equal_siblings(blocks.data(), nodes));
    blocks = saved;
  }
  // Equal neighbours that are not siblings (2i+1, 2i+2) do not count.
  for (size_t w = 0; w < 8; ++w) word(2, w) = word(1, w);
  CHECK_FALSE(sliced_has_equal_siblings(blocks.data(), nodes));
}
