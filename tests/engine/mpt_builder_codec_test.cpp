// mpt_builder_codec_test: the batch builder's inline hot paths (builder_codec.h) against the
// plain encoders and a nibble-by-nibble common prefix, over every path start, key lengths
// 0..60 (fast path and fallback), value lengths 1..70 and single bytes below/above 0x80.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "engine/mpt/builder_codec.h"
#include "engine/mpt/node_codec.h"

using namespace st;

namespace {

size_t lcp_slow(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y) {
  const size_t n = 2 * std::min(x.size(), y.size());
  size_t i = 0;
  while (i < n && st::kernels::key_nibble(x.data(), i) == st::kernels::key_nibble(y.data(), i)) ++i;
  return i;
}

}  // namespace

TEST_CASE("mpt builder codec: common prefix of packed keys equals the nibble-by-nibble one") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> x(rng() % 40), y;
    for (auto& b : x) b = uint8_t(rng());
    y = x;
    // Keep a random prefix, then change or cut the rest (a nibble or a byte apart, or a prefix).
    const size_t keep = x.empty() ? 0 : rng() % (x.size() + 1);
    y.resize(keep + rng() % 8);
    for (size_t i = keep; i < y.size(); ++i) y[i] = uint8_t(rng());
    if (keep < y.size() && rng() % 2) y[keep] = uint8_t((x.size() > keep ? x[keep] : 0) ^ (rng() % 2 ? 0x01 : 0x10));
    CAPTURE(round);
    CHECK(st::mpt::lcp_nibbles_of(x.data(), x.size(), y.data(), y.size()) == lcp_slow(x, y));
    CHECK(st::mpt::lcp_nibbles_of(y.data(), y.size(), x.data(), x.size()) == lcp_slow(x, y));
  }
}

TEST_CASE("mpt builder codec: copy_small copies exactly n bytes") {
  std::vector<uint8_t> src(64), dst(80);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i + 1);
  for (size_t n = 0; n <= 64; ++n) {
    std::fill(dst.begin(), dst.end(), 0xee);
    st::mpt::copy_small(dst.data() + 8, src.data(), n);
    for (size_t i = 0; i < dst.size(); ++i) {
      CAPTURE(n); CAPTURE(i);
      CHECK(dst[i] == (i >= 8 && i < 8 + n ? src[i - 8] : 0xee));
    }
  }
}

TEST_CASE("mpt builder codec: leaf writer equals put_leaf_key for every path start") {
  std::mt19937_64 rng(5);
  std::vector<uint8_t> a(256), b(256);
  for (size_t key_len = 0; key_len <= 60; ++key_len) {
    std::vector<uint8_t> key(key_len);
    for (auto& x : key) x = uint8_t(rng());
    for (size_t vlen : {size_t(1), size_t(2), size_t(31), size_t(32), size_t(33), size_t(55), size_t(56), size_t(70)}) {
      std::vector<uint8_t> value(vlen);
      for (auto& x : value) x = uint8_t(rng());
      for (int single = 0; single < (vlen == 1 ? 3 : 1); ++single) {
        if (vlen == 1) value[0] = single == 0 ? 0x00 : single == 1 ? 0x7f : 0x80;
        for (size_t begin = 0; begin <= 2 * key_len; ++begin) {
          CAPTURE(key_len); CAPTURE(vlen); CAPTURE(begin);
          const size_t want = st::mpt::leaf_size(2 * key_len - begin, value.data(), vlen);
          REQUIRE(want <= st::mpt::leaf_suffix_bound(key_len, vlen));
          uint8_t* ea = st::mpt::put_leaf_key(a.data(), key.data(), begin, 2 * key_len, value.data(), vlen);
          uint8_t* eb = st::mpt::put_leaf_suffix(b.data(), key.data(), key_len, begin, value.data(), vlen);
          REQUIRE(size_t(ea - a.data()) == want);
          REQUIRE(size_t(eb - b.data()) == want);
          CHECK(std::equal(a.begin(), a.begin() + long(want), b.begin()));
        }
      }
    }
  }
}
