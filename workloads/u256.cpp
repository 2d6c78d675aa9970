// u256: see u256.h. The arithmetic works on four 64-bit limbs, least significant first,
// and converts to the big-endian byte array only at the end:
//
//   U256 bytes  [0] ........................................ [31]   (big-endian)
//   limbs       limb[3] (bytes 0..7) ... limb[0] (bytes 24..31)
#include "workloads/u256.h"

#include <array>

namespace st::workloads {

namespace {

using Limbs = std::array<uint64_t, 4>;  // least significant first

U256 limbs_to_bytes(const Limbs& l) {
  U256 out{};
  for (int i = 0; i < 4; ++i)
    for (int b = 0; b < 8; ++b) out[31 - (8 * i + b)] = uint8_t(l[i] >> (8 * b));
  return out;
}

Limbs bytes_to_limbs(const U256& v) {
  Limbs l{};
  for (int i = 0; i < 4; ++i)
    for (int b = 0; b < 8; ++b) l[i] |= uint64_t(v[31 - (8 * i + b)]) << (8 * b);
  return l;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool has_hex_prefix(std::string_view t) { return t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'); }

}  // namespace

std::string quote_for_error(std::string_view text) {
  std::string s = "\"";
  const size_t n = text.size() > 80 ? 80 : text.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    s += (c < 0x20 || c == 0x7f) ? '?' : char(c);
  }
  if (text.size() > 80) s += "...";
  s += '"';
  return s;
}

std::variant<U256, std::string> parse_u256_decimal(std::string_view text) {
  if (text.empty()) return std::string("empty number");
  Limbs l{};
  for (char c : text) {
    if (c < '0' || c > '9') return "not a decimal number: " + quote_for_error(text);
    // l = l * 10 + digit, with the carry out of the top limb meaning overflow.
    unsigned __int128 carry = unsigned(c - '0');
    for (int i = 0; i < 4; ++i) {
      const unsigned __int128 t = (unsigned __int128)l[i] * 10 + carry;
      l[i] = uint64_t(t);
      carry = t >> 64;
    }
    if (carry) return "number over 2^256-1: " + quote_for_error(text);
  }
  return limbs_to_bytes(l);
}

std::variant<U256, std::string> parse_u256_hex(std::string_view text) {
  if (!has_hex_prefix(text)) return "hex number without 0x prefix: " + quote_for_error(text);
  std::string_view digits = text.substr(2);
  if (digits.empty()) return "hex number without digits: " + quote_for_error(text);
  for (char c : digits)
    if (hex_digit(c) < 0) return "not a hex number: " + quote_for_error(text);
  while (digits.size() > 64 && digits[0] == '0') digits.remove_prefix(1);
  if (digits.size() > 64) return "number over 2^256-1: " + quote_for_error(text);
  U256 out{};
  // Digit k from the right goes to nibble k of the big-endian array.
  for (size_t k = 0; k < digits.size(); ++k) {
    const int d = hex_digit(digits[digits.size() - 1 - k]);
    out[31 - k / 2] |= uint8_t(k % 2 ? d << 4 : d);
  }
  return out;
}

std::variant<U256, std::string> parse_u256(std::string_view text) {
  return has_hex_prefix(text) ? parse_u256_hex(text) : parse_u256_decimal(text);
}

std::variant<uint64_t, std::string> parse_u64(std::string_view text) {
  auto r = parse_u256(text);
  if (auto* err = std::get_if<std::string>(&r)) return std::move(*err);
  const Limbs l = bytes_to_limbs(std::get<U256>(r));
  if (l[1] | l[2] | l[3]) return "number over 2^64-1: " + quote_for_error(text);
  return l[0];
}

U256 u256_from_u64(uint64_t v) { return limbs_to_bytes(Limbs{v, 0, 0, 0}); }

std::string u256_to_decimal(const U256& v) {
  Limbs l = bytes_to_limbs(v);
  std::string rev;
  // Repeated division by 10^19 (the largest power of ten in a limb), 19 digits at a time.
  constexpr uint64_t kChunk = 10000000000000000000ULL;
  while (l[0] | l[1] | l[2] | l[3]) {
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; --i) {
      const unsigned __int128 cur = (rem << 64) | l[i];
      l[i] = uint64_t(cur / kChunk);
      rem = cur % kChunk;
    }
    uint64_t r = uint64_t(rem);
    const bool last = !(l[0] | l[1] | l[2] | l[3]);
    for (int d = 0; d < 19 && (!last || r); ++d) {
      rev += char('0' + r % 10);
      r /= 10;
    }
  }
  if (rev.empty()) return "0";
  return std::string(rev.rbegin(), rev.rend());
}

std::string u256_to_hex(const U256& v) {
  std::string h = bytes_to_hex(v.data(), v.size(), false);
  const size_t first = h.find_first_not_of('0');
  return first == std::string::npos ? "0x0" : "0x" + h.substr(first);
}

std::variant<std::vector<uint8_t>, std::string> parse_hex_bytes(std::string_view text, bool allow_no_prefix) {
  std::string_view digits = text;
  if (has_hex_prefix(text)) digits.remove_prefix(2);
  else if (!allow_no_prefix) return "hex string without 0x prefix: " + quote_for_error(text);
  if (digits.size() % 2) return "hex string of odd length: " + quote_for_error(text);
  std::vector<uint8_t> out(digits.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_digit(digits[2 * i]), lo = hex_digit(digits[2 * i + 1]);
    if (hi < 0 || lo < 0) return "not a hex string: " + quote_for_error(text);
    out[i] = uint8_t(hi << 4 | lo);
  }
  return out;
}

std::string bytes_to_hex(const uint8_t* p, size_t n, bool prefix) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = prefix ? "0x" : "";
  s.reserve(s.size() + 2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}

}  // namespace st::workloads
