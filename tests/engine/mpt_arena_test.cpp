// mpt_arena_test: the chunked arena across its doubling and fixed-size chunk regimes
// (indices past 2^17 + 2^16), reference stability under growth, and a
// mutable trie large enough (> 2^17 nodes) to use fixed-size chunks equals the builder.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/mpt/builder.h"
#include "engine/mpt/chunked_arena.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"

using namespace st::mpt;

TEST_CASE("chunked arena: every index in both regimes, references never move") {
  ChunkedArena<uint32_t> a;
  a.emplace_back() = 7;
  uint32_t* first = &a[0];
  const size_t n = (size_t(1) << 17) + 3 * (size_t(1) << 16) + 5;
  for (size_t i = 1; i < n; ++i) a.emplace_back() = uint32_t(i * 2654435761u);
  CHECK(a.size() == n);
  CHECK(first == &a[0]);
  CHECK(a[0] == 7);
  size_t bad = 0;
  for (size_t i = 1; i < n; ++i) bad += a[i] != uint32_t(i * 2654435761u);
  CHECK(bad == 0);
  // distinct elements have distinct addresses across chunk boundaries
  for (size_t i : {size_t(15), size_t(16), size_t(31), size_t(32), (size_t(1) << 17) - 1, size_t(1) << 17,
                   (size_t(1) << 17) + (size_t(1) << 16) - 1, (size_t(1) << 17) + (size_t(1) << 16)})
    CHECK(&a[i] != &a[i + 1]);
}

TEST_CASE("mpt trie past 2^17 nodes equals the batch builder") {
  const size_t n = 110000;  // ~150k nodes
  std::vector<uint8_t> keys(32 * n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = uint8_t(uint64_t(i) >> (56 - 8 * b));
    st::kernels::keccak256(be, 8, keys.data() + 32 * i);
  }
  Trie t;
  const uint8_t v[3] = {0xaa, 0xbb, 0xcc};
  for (size_t i = 0; i < n; ++i) t.put(std::span<const uint8_t>(keys.data() + 32 * i, 32), v);
  CHECK(t.live_nodes() > (size_t(1) << 17));
  std::vector<KeyValue> pairs(n);
  for (size_t i = 0; i < n; ++i) pairs[i] = {keys.data() + 32 * i, 32, v, 3};
  std::sort(pairs.begin(), pairs.end(), [](const KeyValue& a, const KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; });
  CHECK(t.root_hash() == build_root(pairs));
  for (size_t i = 0; i < n; i += 3) t.erase(std::span<const uint8_t>(keys.data() + 32 * i, 32));
  // the expected set: keys with index % 3 != 0
  std::vector<KeyValue> rest;
  for (size_t i = 0; i < n; ++i)
    if (i % 3) rest.push_back({keys.data() + 32 * i, 32, v, 3});
  std::sort(rest.begin(), rest.end(), [](const KeyValue& a, const KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; });
  CHECK(t.root_hash() == build_root(rest));
}
