// rlp_encode_test: RLP writers against the yellow-paper examples and the reference encoder,
// and every writer's length twin equals the bytes it writes. Hex-prefix examples of the spec.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "kernels/hex_prefix.h"
#include "kernels/rlp.h"
#include "tests/reference/mpt_reference.h"

using namespace st::kernels;
using st::ref::Bytes;

namespace {
Bytes enc_string(const Bytes& s) {
  Bytes out(rlp_string_size(s.data(), s.size()) + 8, 0xee);
  uint8_t* end = rlp_put_string(out.data(), s.data(), s.size());
  CHECK(size_t(end - out.data()) == rlp_string_size(s.data(), s.size()));
  out.resize(size_t(end - out.data()));
  return out;
}
std::string hx(const Bytes& b) { return st::ref::to_hex(b); }
}  // namespace

TEST_CASE("rlp strings and integers: yellow-paper examples") {
  CHECK(hx(enc_string(Bytes{'d', 'o', 'g'})) == "83646f67");
  CHECK(hx(enc_string(Bytes{})) == "80");
  CHECK(hx(enc_string(Bytes{0x00})) == "00");
  CHECK(hx(enc_string(Bytes{0x7f})) == "7f");
  CHECK(hx(enc_string(Bytes{0x80})) == "8180");
  Bytes lorem(56, 'a');
  CHECK(hx(enc_string(lorem)).substr(0, 4) == "b838");
  Bytes big(1024, 1);
  CHECK(hx(enc_string(big)).substr(0, 6) == "b90400");
  uint8_t buf[16];
  auto u = [&](uint64_t v) {
    uint8_t* e = rlp_put_uint(buf, v);
    CHECK(size_t(e - buf) == rlp_uint_size(v));
    return st::ref::to_hex(buf, size_t(e - buf));
  };
  CHECK(u(0) == "80");
  CHECK(u(15) == "0f");
  CHECK(u(127) == "7f");
  CHECK(u(128) == "8180");
  CHECK(u(1024) == "820400");
  CHECK(u(~uint64_t(0)) == "88ffffffffffffffff");
  uint8_t be[32] = {};
  uint8_t* e = rlp_put_uint_be(buf, be, 32);
  CHECK(st::ref::to_hex(buf, size_t(e - buf)) == "80");
  CHECK(rlp_uint_be_size(be, 32) == 1);
  be[30] = 4;
  e = rlp_put_uint_be(buf, be, 32);
  CHECK(st::ref::to_hex(buf, size_t(e - buf)) == "820400");
}

TEST_CASE("rlp lists: [cat, dog], empty list, long list header") {
  Bytes payload = enc_string(Bytes{'c', 'a', 't'});
  Bytes d = enc_string(Bytes{'d', 'o', 'g'});
  payload.insert(payload.end(), d.begin(), d.end());
  uint8_t hdr[9];
  uint8_t* e = rlp_put_list_header(hdr, payload.size());
  CHECK(st::ref::to_hex(hdr, size_t(e - hdr)) == "c8");
  e = rlp_put_list_header(hdr, 0);
  CHECK(st::ref::to_hex(hdr, size_t(e - hdr)) == "c0");
  e = rlp_put_list_header(hdr, 60);
  CHECK(st::ref::to_hex(hdr, size_t(e - hdr)) == "f83c");
  CHECK(rlp_list_size(60) == 62);
}

TEST_CASE("rlp strings agree with the reference encoder for random lengths") {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 400; ++i) {
    Bytes s(i < 100 ? size_t(i) : size_t(rng() % 70000));
    for (auto& b : s) b = uint8_t(rng() % (i % 2 ? 256 : 0x81));
    CHECK(enc_string(s) == st::ref::rlp_string(s));
  }
}

TEST_CASE("hex-prefix: spec examples and round trip") {
  uint8_t out[40], nib[80];
  auto hp = [&](std::vector<uint8_t> n, bool leaf) {
    uint8_t* e = hex_prefix_put(out, n.data(), n.size(), leaf);
    CHECK(size_t(e - out) == hex_prefix_size(n.size()));
    size_t m = 0;
    bool l2 = !leaf;
    CHECK(hex_prefix_decode(out, size_t(e - out), nib, &m, &l2) == HexPrefixError::ok);
    CHECK(l2 == leaf);
    CHECK(std::vector<uint8_t>(nib, nib + m) == n);
    return st::ref::to_hex(out, size_t(e - out));
  };
  CHECK(hp({}, true) == "20");
  CHECK(hp({1}, false) == "11");
  CHECK(hp({0, 0xf, 1, 0xc, 0xb, 8}, true) == "200f1cb8");
  CHECK(hp({0xf, 1, 0xc, 0xb, 8}, true) == "3f1cb8");
  CHECK(hp({1, 2, 3, 4, 5}, false) == "112345");
  // every length 0..70 (the packer takes 8 nibbles at a time), random nibbles incl. 0 and 15,
  // against a byte-by-byte packing
  std::mt19937_64 rng(7);
  for (size_t len = 0; len <= 70; ++len) {
    CAPTURE(len);
    std::vector<uint8_t> n(len);
    for (auto& x : n) x = uint8_t(rng() % 16);
    if (len) n[len - 1] = 15;
    std::string want = std::string(1, "0123"[(len & 1) + 2 * (len % 3 == 0)]);
    want += len & 1 ? "0123456789abcdef"[n[0]] : '0';
    for (size_t i = len & 1; i < len; ++i) want += "0123456789abcdef"[n[i]];
    CHECK(hp(n, len % 3 == 0) == want);
  }
  // packed-key ranges, odd and even starts
  const uint8_t key[3] = {0x12, 0x34, 0x56};
  uint8_t* e = hex_prefix_put_key(out, key, 1, 6, true);
  CHECK(st::ref::to_hex(out, size_t(e - out)) == "323456");
  e = hex_prefix_put_key(out, key, 2, 6, false);
  CHECK(st::ref::to_hex(out, size_t(e - out)) == "003456");
  e = hex_prefix_put_key(out, key, 1, 5, false);
  CHECK(st::ref::to_hex(out, size_t(e - out)) == "002345");
  size_t m;
  bool leaf;
  const uint8_t bad_flag[] = {0x40};
  CHECK(hex_prefix_decode(bad_flag, 1, nib, &m, &leaf) == HexPrefixError::bad_flag);
  const uint8_t bad_pad[] = {0x21, 0x00};
  CHECK(hex_prefix_decode(bad_pad, 2, nib, &m, &leaf) == HexPrefixError::nonzero_padding);
  CHECK(hex_prefix_decode(out, 0, nib, &m, &leaf) == HexPrefixError::empty);
}
