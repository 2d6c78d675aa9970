// mpt_codec_test: the one-pass branch writer (put_branch_tail, header placed in front of the
// payload after it is written) produces exactly put_branch's bytes, for random mixes of
// empty, embedded and hashed child refs and values of every header size.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "engine/mpt/node_codec.h"

using namespace st::mpt;

TEST_CASE("mpt codec: put_branch_tail equals put_branch") {
  std::mt19937_64 rng(7);
  const size_t value_lens[] = {0, 1, 2, 20, 55, 56, 300, 70000};
  for (int iter = 0; iter < 4000; ++iter) {
    NodeRef refs[16];
    for (NodeRef& r : refs) {
      const unsigned pick = unsigned(rng() % 4);
      r.len = pick == 0 ? 0 : pick == 1 ? uint8_t(1 + rng() % 31) : 32;
      for (uint8_t& b : r.bytes) b = uint8_t(rng());
    }
    std::vector<uint8_t> value(value_lens[iter % 8]);
    for (uint8_t& b : value) b = uint8_t(rng());
    if (value.size() == 1) value[0] = uint8_t(rng() % 256);
    const uint8_t* v = value.empty() ? nullptr : value.data();
    std::vector<uint8_t> want(branch_size(refs, v, value.size()));
    CHECK(put_branch(want.data(), refs, v, value.size()) == want.data() + want.size());
    const size_t bound = kBranchMaxFixed + (value.empty() ? 0 : st::kernels::rlp_string_size(v, value.size()));
    std::vector<uint8_t> got(bound);
    uint8_t* end = nullptr;
    uint8_t* begin = put_branch_tail(got.data(), refs, v, value.size(), &end);
    REQUIRE(begin >= got.data());
    REQUIRE(end <= got.data() + got.size());
    CHECK(std::vector<uint8_t>(begin, end) == want);
  }
}
