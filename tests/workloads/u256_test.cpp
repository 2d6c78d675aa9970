// u256_test: decimal / hex U256 and u64 parsing edge cases (bounds, signs, spaces, empty,
// prefixes, leading zeros) and formatting round trips, including the 10^19 chunk boundary
// of the decimal formatter.
#include <doctest/doctest.h>

#include <string>

#include "workloads/u256.h"

using namespace st::workloads;

namespace {

const char* kMax = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
const char* kTwoTo256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936";

bool ok(const std::variant<U256, std::string>& r) { return std::holds_alternative<U256>(r); }
std::string err(const std::variant<U256, std::string>& r) {
  return ok(r) ? std::string() : std::get<std::string>(r);
}
std::string dec(std::string_view s) {
  auto r = parse_u256(s);
  REQUIRE_MESSAGE(ok(r), err(r));
  return u256_to_decimal(std::get<U256>(r));
}

}  // namespace

TEST_CASE("u256 decimal: bounds") {
  auto zero = parse_u256_decimal("0");
  REQUIRE(ok(zero));
  CHECK(std::get<U256>(zero) == U256{});
  auto max = parse_u256_decimal(kMax);
  REQUIRE(ok(max));
  U256 all_ff;
  all_ff.fill(0xff);
  CHECK(std::get<U256>(max) == all_ff);
  CHECK(err(parse_u256_decimal(kTwoTo256)).find("over 2^256-1") != std::string::npos);
  CHECK_FALSE(ok(parse_u256_decimal(std::string(kMax) + "0")));
  CHECK_FALSE(ok(parse_u256_decimal("999999999999999999999999999999999999999999999999999999999999999999999999999999")));
}

TEST_CASE("u256 decimal: rejects signs, spaces, empty, junk") {
  for (const char* bad : {"", "+1", "-1", " 1", "1 ", "1 000", "1_000", "1e3", "0x", "12a", "١"}) {
    CAPTURE(bad);
    CHECK_FALSE(ok(parse_u256_decimal(bad)));
  }
  CHECK(err(parse_u256_decimal("")).find("empty") != std::string::npos);
  CHECK(err(parse_u256_decimal("+1")).find("\"+1\"") != std::string::npos);  // quotes the input
}

TEST_CASE("u256 decimal: leading zeros allowed, values exact") {
  CHECK(dec("007") == "7");
  CHECK(dec("0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001") == "1");
  CHECK(dec("18446744073709551616") == "18446744073709551616");  // 2^64
  CHECK(dec("10000000000000000000") == "10000000000000000000");  // 10^19, formatter chunk
  CHECK(dec("100000000000000000000000000000000000000") == "100000000000000000000000000000000000000");
  CHECK(dec("10000000000000000000000000000000000000000000000000000000009") ==
        "10000000000000000000000000000000000000000000000000000000009");
  CHECK(dec(kMax) == kMax);
  auto v = parse_u256_decimal("258");
  REQUIRE(ok(v));
  CHECK(std::get<U256>(v)[31] == 2);
  CHECK(std::get<U256>(v)[30] == 1);
}

TEST_CASE("u256 hex: prefix, digits, bounds") {
  CHECK(dec("0xff") == "255");
  CHECK(dec("0XFF") == "255");
  CHECK(dec("0x1") == "1");
  CHECK(dec("0x0") == "0");
  CHECK(dec("0x" + std::string(64, 'f')) == kMax);
  CHECK(dec("0x0000" + std::string(64, 'f')) == kMax);  // extra leading zeros are fine
  CHECK(err(parse_u256_hex("0x1" + std::string(64, '0'))).find("over 2^256-1") != std::string::npos);
  for (const char* bad : {"0x", "ff", "0xg", "0x 1", " 0x1", "0x1 ", "0x-1", "-0x1"}) {
    CAPTURE(bad);
    CHECK_FALSE(ok(parse_u256_hex(bad)));
  }
  CHECK_FALSE(ok(parse_u256("0x")));
  CHECK_FALSE(ok(parse_u256("0xz")));
}

TEST_CASE("u256 formatting") {
  CHECK(u256_to_decimal(U256{}) == "0");
  CHECK(u256_to_hex(U256{}) == "0x0");
  CHECK(u256_to_hex(u256_from_u64(0x1234)) == "0x1234");
  CHECK(u256_to_decimal(u256_from_u64(~uint64_t(0))) == "18446744073709551615");
  U256 all_ff;
  all_ff.fill(0xff);
  CHECK(u256_to_hex(all_ff) == "0x" + std::string(64, 'f'));
  CHECK(u256_to_decimal(all_ff) == kMax);
}

TEST_CASE("u64 parsing") {
  auto m = parse_u64("18446744073709551615");
  REQUIRE(std::holds_alternative<uint64_t>(m));
  CHECK(std::get<uint64_t>(m) == ~uint64_t(0));
  auto h = parse_u64("0xffffffffffffffff");
  REQUIRE(std::holds_alternative<uint64_t>(h));
  CHECK(std::get<uint64_t>(h) == ~uint64_t(0));
  CHECK(std::get<std::string>(parse_u64("18446744073709551616")).find("over 2^64-1") != std::string::npos);
  CHECK(std::holds_alternative<std::string>(parse_u64("0x10000000000000000")));
  CHECK(std::holds_alternative<std::string>(parse_u64("")));
  CHECK(std::get<uint64_t>(parse_u64("42")) == 42);
}

TEST_CASE("hex bytes") {
  auto r = parse_hex_bytes("0x00aBff");
  REQUIRE(std::holds_alternative<std::vector<uint8_t>>(r));
  CHECK(std::get<std::vector<uint8_t>>(r) == std::vector<uint8_t>{0x00, 0xab, 0xff});
  CHECK(std::get<std::vector<uint8_t>>(parse_hex_bytes("0x")).empty());
  CHECK(std::holds_alternative<std::string>(parse_hex_bytes("0x0")));   // odd
  CHECK(std::holds_alternative<std::string>(parse_hex_bytes("00")));    // no prefix
  CHECK(std::holds_alternative<std::vector<uint8_t>>(parse_hex_bytes("00", true)));
  CHECK(std::holds_alternative<std::string>(parse_hex_bytes("0xgg")));
  const uint8_t b[3] = {0x00, 0xab, 0xff};
  CHECK(bytes_to_hex(b, 3) == "0x00abff");
  CHECK(bytes_to_hex(b, 3, false) == "00abff");
}
