// splitmix64_test: the one seeded generator (kernels/support/splitmix64.h) against the reference
// SplitMix64 stream (seed 0: the first outputs published with Vigna's splitmix64.c), and
// uniform_below's range and its multiply-shift reduction (the draw every sample and
// resampling in the project uses: a change here changes every seeded figure).
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>

#include "kernels/support/splitmix64.h"

using st::splitmix64;
using st::splitmix64_mix;
using st::uniform_below;

TEST_CASE("splitmix64: the reference stream from seed 0") {
  uint64_t s = 0;
  CHECK(splitmix64(s) == 0xe220a8397b1dcdafull);
  CHECK(splitmix64(s) == 0x6e789e6aa1b965f4ull);
  CHECK(splitmix64(s) == 0x06c45d188009454full);
  CHECK(s == 3 * st::kSplitmix64Gamma);  // the state advances by the gamma per step
  CHECK(splitmix64_mix(st::kSplitmix64Gamma) == 0xe220a8397b1dcdafull);
}

TEST_CASE("splitmix64: uniform_below is the high word of output x n") {
  uint64_t a = 42, b = 42;
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 1ull << 40, ~0ull}) {
    const uint64_t want = uint64_t((unsigned __int128)splitmix64(b) * n >> 64);
    const uint64_t got = uniform_below(a, n);
    CHECK(got == want);
    CHECK(got < n);
  }
  uint64_t s = 7;
  for (int i = 0; i < 1000; ++i) CHECK(uniform_below(s, 1) == 0);
}
