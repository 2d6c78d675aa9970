// rlp_decode_test: the hardened decoder. Valid items decode; every malformed form (lengths
// past the end, non-canonical lengths and single bytes, overflow, trailing bytes, deep
// nesting) is an error value; random and truncated inputs never read out of bounds (ASan).
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <vector>

#include "kernels/rlp.h"
#include "tests/reference/mpt_reference.h"

using namespace st::kernels;
using st::ref::Bytes;

namespace {
RlpError validate(const Bytes& b) {
  // copy into an exact-size heap block so ASan catches any read past the end
  std::unique_ptr<uint8_t[]> p(new uint8_t[b.size() ? b.size() : 1]);
  for (size_t i = 0; i < b.size(); ++i) p[i] = b[i];
  return rlp_validate(p.get(), b.size());
}
}  // namespace

TEST_CASE("rlp decode: valid items") {
  Bytes b = st::ref::from_hex("c88363617483646f67");
  RlpItem it;
  REQUIRE(rlp_decode_exact(b.data(), b.size(), &it) == RlpError::ok);
  CHECK(it.is_list);
  CHECK(it.payload_len == 8);
  RlpItem items[4];
  size_t n = 0;
  REQUIRE(rlp_list_items(it, items, 4, &n) == RlpError::ok);
  CHECK(n == 2);
  CHECK(items[1].payload_len == 3);
  CHECK(items[1].payload[0] == 'd');
  CHECK(rlp_list_items(it, items, 1, &n) == RlpError::too_many_items);
  CHECK(validate(b) == RlpError::ok);
  CHECK(validate(st::ref::from_hex("7f")) == RlpError::ok);
  CHECK(validate(st::ref::from_hex("c0")) == RlpError::ok);
  CHECK(validate(st::ref::from_hex("80")) == RlpError::ok);
  CHECK(validate(st::ref::from_hex("8180")) == RlpError::ok);
  Bytes long_list = st::ref::rlp_list(std::vector<Bytes>(30, st::ref::rlp_string(Bytes{1, 2})));
  CHECK(validate(long_list) == RlpError::ok);
}

TEST_CASE("rlp decode: malformed inputs are errors") {
  CHECK(validate({}) == RlpError::empty_input);
  CHECK(validate(st::ref::from_hex("83646f")) == RlpError::truncated);
  CHECK(validate(st::ref::from_hex("b8")) == RlpError::truncated);
  CHECK(validate(st::ref::from_hex("b90400")) == RlpError::truncated);
  CHECK(validate(st::ref::from_hex("8105")) == RlpError::non_canonical_single_byte);
  CHECK(validate(st::ref::from_hex("b80561626364650000")) == RlpError::non_canonical_length);
  CHECK(validate(st::ref::from_hex("b8056162636465")) == RlpError::non_canonical_length);
  CHECK(validate(st::ref::from_hex("b9000100")) == RlpError::non_canonical_length);
  CHECK(validate(st::ref::from_hex("f800")) == RlpError::non_canonical_length);
  CHECK(validate(st::ref::from_hex("bfffffffffffffffff")) == RlpError::truncated);
  CHECK(validate(st::ref::from_hex("c0c0")) == RlpError::trailing_bytes);
  CHECK(validate(st::ref::from_hex("c3836162")) == RlpError::truncated);      // inner item past the list
  CHECK(validate(st::ref::from_hex("c283616263")) == RlpError::trailing_bytes);  // list shorter than item
  // nesting: 100 levels deep fails, 10 levels passes
  Bytes deep = st::ref::from_hex("c0");
  for (int i = 0; i < 100; ++i) deep = st::ref::rlp_list({deep});
  CHECK(validate(deep) == RlpError::too_deep);
  Bytes shallow = st::ref::from_hex("c0");
  for (int i = 0; i < 10; ++i) shallow = st::ref::rlp_list({shallow});
  CHECK(validate(shallow) == RlpError::ok);
  CHECK(rlp_validate(shallow.data(), shallow.size(), 5) == RlpError::too_deep);
  RlpItem it;
  Bytes s = st::ref::from_hex("83646f67");
  CHECK(rlp_decode_item(s.data(), s.size(), &it) == RlpError::ok);
  RlpItem items[2];
  size_t n;
  CHECK(rlp_list_items(it, items, 2, &n) == RlpError::expected_list);
  for (int e = 0; e <= int(RlpError::expected_string); ++e) CHECK(std::string(rlp_error_name(RlpError(e))).size() > 1);
}

TEST_CASE("rlp decode: random bytes and every truncation of valid encodings never crash") {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    Bytes b(rng() % 24);
    for (auto& x : b) x = uint8_t(rng());
    if (!b.empty() && i % 2) b[0] = uint8_t(0xb8 + rng() % 0x48);  // long forms
    (void)validate(b);
  }
  Bytes v = st::ref::rlp_list({st::ref::rlp_string(Bytes(70, 9)), st::ref::rlp_list({st::ref::rlp_string(Bytes{1})}),
                               st::ref::rlp_string(Bytes{})});
  REQUIRE(validate(v) == RlpError::ok);
  for (size_t k = 0; k < v.size(); ++k) CHECK(validate(Bytes(v.begin(), v.begin() + long(k))) != RlpError::ok);
}
