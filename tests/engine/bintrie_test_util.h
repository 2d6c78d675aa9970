// bintrie_test_util: hex helpers, the vectors file, and the vectors' random-key generator
// (key_i = SHA256(uint64_be(i)), value_i = SHA256(key_i)) and a uniformly random entry for
// the bintrie tests.
#pragma once

#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "test_paths.h"

namespace bintrie_test {

using st::bintrie::Hash32;
using st::bintrie::Entry;

inline std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out;
  size_t i = (s.rfind("0x", 0) == 0) ? 2 : 0;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::runtime_error("bad hex");
  };
  for (; i + 1 < s.size(); i += 2) out.push_back(uint8_t(nib(s[i]) << 4 | nib(s[i + 1])));
  return out;
}

inline Hash32 b32(const std::string& s) {
  auto v = unhex(s);
  if (v.size() != 32) throw std::runtime_error("not 32 bytes: " + s);
  Hash32 b;
  std::copy(v.begin(), v.end(), b.begin());
  return b;
}

inline std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
  return s;
}
inline std::string hex(const Hash32& b) { return hex(b.data(), 32); }

inline const nlohmann::json& vectors() {
  static const nlohmann::json j = [] {
    std::ifstream f(std::string(STATETREE_VECTORS_DIR) + "/bintrie/bintrie_vectors.json");
    if (!f) throw std::runtime_error("cannot open bintrie vectors");
    return nlohmann::json::parse(f);
  }();
  return j;
}

inline std::vector<Entry> random_entries(uint64_t begin, uint64_t end) {
  std::vector<Entry> out;
  out.reserve(end - begin);
  for (uint64_t i = begin; i < end; ++i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = uint8_t(i >> (56 - 8 * b));
    Entry e;
    SHA256(be, 8, e.key.data());
    SHA256(e.key.data(), 32, e.value.data());
    out.push_back(e);
  }
  return out;
}

// A uniformly random key and value.
inline Entry random_entry(std::mt19937_64& rng) {
  Entry e;
  for (auto& x : e.key) x = uint8_t(rng());
  for (auto& x : e.value) x = uint8_t(rng());
  return e;
}

// Decimal string -> 32-byte big-endian.
inline Hash32 dec_to_be(const std::string& dec) {
  Hash32 out{};
  for (char c : dec) {
    if (c < '0' || c > '9') throw std::runtime_error("bad decimal");
    unsigned carry = unsigned(c - '0');
    for (int i = 31; i >= 0; --i) {
      const unsigned v = unsigned(out[i]) * 10 + carry;
      out[i] = uint8_t(v);
      carry = v >> 8;
    }
  }
  return out;
}

// Short hex value -> 32-byte left-padded.
inline Hash32 left_pad(const std::string& hexs) {
  auto v = unhex(hexs);
  Hash32 out{};
  std::copy(v.begin(), v.end(), out.begin() + (32 - v.size()));
  return out;
}

}  // namespace bintrie_test
