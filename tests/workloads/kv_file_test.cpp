// kv_file_test: the --kv reader against a std::map oracle (last write wins, empty value
// deletes, blank and comment lines, CRLF, tabs, case and 0x prefixes), its one-line errors
// naming the line, the size limits, and a generated file of 150k lines with repeats and
// deletes that must give exactly the oracle's pairs.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "workloads/kv_file.h"
#include "workloads/u256.h"

using namespace st::workloads;

namespace {

using Bytes = std::vector<uint8_t>;

std::map<std::string, std::string> pairs_hex(const KvFile& f) {
  std::map<std::string, std::string> m;
  for (const auto& p : f.pairs) m[bytes_to_hex(p.key, p.key_len)] = bytes_to_hex(p.value, p.value_len);
  return m;
}

KvFile parse_ok(const std::string& text, bool secure = false) {
  auto r = parse_kv_text(text, "t.kv", secure);
  if (auto* e = std::get_if<std::string>(&r)) FAIL(*e);
  return std::get<KvFile>(std::move(r));
}

std::string parse_err(const std::string& text, bool secure = false) {
  auto r = parse_kv_text(text, "t.kv", secure);
  if (std::holds_alternative<KvFile>(r)) return "(no error)";
  const std::string& e = std::get<std::string>(r);
  CHECK(e.find('\n') == std::string::npos);
  return e;
}

bool strictly_ascending(const KvFile& f) {
  for (size_t i = 1; i < f.pairs.size(); ++i) {
    const auto& a = f.pairs[i - 1];
    const auto& b = f.pairs[i];
    const uint32_t n = std::min(a.key_len, b.key_len);
    const int c = n ? std::memcmp(a.key, b.key, n) : 0;
    if (c > 0 || (c == 0 && a.key_len >= b.key_len)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("kv_file: format, last write wins, empty value deletes") {
  const std::string text =
      "# comment\n"
      "\n"
      "   \t\n"
      "  # indented comment\n"
      "0x01 0xaa\n"
      "02\tBB\r\n"
      "0X0100  0x0c  \n"
      "01 0xab\n"       // overwrite
      "0x03 0x05\n"
      "03 0x\n"         // delete
      "0x04 01\n"
      "04 0x\n"
      "04 0x02\n"       // re-added after delete
      "0x 0x77\n"       // empty key
      "00 ee";          // last line without newline
  const KvFile f = parse_ok(text);
  CHECK(f.data_lines == 11);
  const std::map<std::string, std::string> expect = {
      {"0x", "0x77"}, {"0x00", "0xee"}, {"0x01", "0xab"}, {"0x0100", "0x0c"}, {"0x02", "0xbb"}, {"0x04", "0x02"}};
  CHECK(pairs_hex(f) == expect);
  CHECK(strictly_ascending(f));
  CHECK(f.pairs.size() == expect.size());
  CHECK(parse_ok("").pairs.empty());
  CHECK(parse_ok("# only\n\n").pairs.empty());
}

TEST_CASE("kv_file: errors name the line") {
  CHECK(parse_err("00 11\n0x0g 11\n") == "t.kv:2: bad hex key \"0x0g\"");
  CHECK(parse_err("00 11\n\n00 1z\n") == "t.kv:3: bad hex value \"1z\"");
  CHECK(parse_err("abc 01\n") == "t.kv:1: bad hex key \"abc\" (odd length)");
  CHECK(parse_err("ab 012\n") == "t.kv:1: bad hex value \"012\" (odd length)");
  CHECK(parse_err("00 11 22\n") == "t.kv:1: expected 'hexkey hexvalue', got 3 fields");
  CHECK(parse_err("# c\n00\n") == "t.kv:2: expected 'hexkey hexvalue', got 1 fields");
  CHECK(parse_err("00 11\r\r\n") == "t.kv:1: bad hex value \"11?\" (odd length)");  // only one '\r' is dropped
  // Limits are checked on the hex length, before decoding.
  CHECK(parse_err(std::string(2 * (1 << 20) + 2, 'a') + " 01\n") == "t.kv:1: key longer than 1 MiB");
  CHECK(parse_ok(std::string(2 * (1 << 20) + 2, 'a') + " 01\n", true).pairs.size() == 1);
}

TEST_CASE("kv_file: 150k generated lines with repeats and deletes equal the map oracle") {
  std::map<Bytes, Bytes> oracle;
  std::string text;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  size_t data_lines = 0;
  for (size_t line = 0; line < 150'000; ++line) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    // Keys from a small space (repeats) and of varied length (shared prefixes).
    const size_t key_len = 1 + (x >> 60) % 12;
    Bytes key(key_len);
    uint64_t k = (x >> 8) % 50'000;
    for (size_t i = 0; i < key_len; ++i) key[key_len - 1 - i] = uint8_t(k >> (8 * (i % 3)));
    Bytes value;
    if ((x & 15) != 0) value.assign(1 + (x >> 20) % 40, uint8_t(x >> 32));
    if (line % 1000 == 0) text += "# checkpoint\n\n";
    text += (x & 32) ? bytes_to_hex(key.data(), key.size(), true) : bytes_to_hex(key.data(), key.size(), false);
    text += (x & 64) ? "\t" : " ";
    text += bytes_to_hex(value.data(), value.size(), true);
    text += (x & 128) ? "\r\n" : "\n";
    ++data_lines;
    if (value.empty()) oracle.erase(key);
    else oracle[key] = value;
  }
  const KvFile f = parse_ok(text);
  CHECK(f.data_lines == data_lines);
  REQUIRE(f.pairs.size() == oracle.size());
  size_t i = 0, mismatches = 0;
  for (const auto& [k, v] : oracle) {
    const auto& p = f.pairs[i++];
    mismatches += Bytes(p.key, p.key + p.key_len) != k || Bytes(p.value, p.value + p.value_len) != v;
  }
  CHECK(mismatches == 0);
}
