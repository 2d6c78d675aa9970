// genesis_values: see genesis_values.h. The digit loops are u256.h's; this file adds the
// go-ethereum prefixes, signs and empty-string rules around them.
#include "workloads/genesis_values.h"

#include "workloads/u256.h"

namespace st::workloads {

namespace {

bool has_hex_prefix(std::string_view t) { return t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::variant<st::state::U256, std::string> geth_balance(std::string_view text) {
  if (text.empty()) return st::state::U256{};
  const bool hex = has_hex_prefix(text);
  std::string_view digits = hex ? text.substr(2) : text;
  if (!digits.empty() && digits[0] == '-') return "negative: " + quote_for_error(text);
  const bool plus = !digits.empty() && digits[0] == '+';
  if (plus) digits.remove_prefix(1);
  if (!hex) {
    if (digits.empty()) return "empty number: " + quote_for_error(text);
    return parse_u256_decimal(digits);
  }
  if (!plus) return parse_u256_hex(text);
  return parse_u256_hex("0x" + std::string(digits));  // "0x+..." (rare)
}

std::variant<uint64_t, std::string> geth_nonce(std::string_view text) {
  if (text.empty()) return uint64_t{0};
  return parse_u64(text);
}

std::variant<std::vector<uint8_t>, std::string> geth_code(std::string_view text) {
  if (text.empty()) return std::vector<uint8_t>{};
  return parse_hex_bytes(text, false);
}

std::variant<st::state::Hash32, std::string> geth_storage_word(std::string_view text) {
  std::string_view digits = text;
  if (digits.size() >= 2 && digits[0] == '0' && digits[1] == 'x') digits.remove_prefix(2);
  if (digits.size() > 64) return "more than 32 bytes: " + quote_for_error(text);
  if (digits.size() % 2) return "hex of odd length: " + quote_for_error(text);
  st::state::Hash32 out{};
  const size_t offset = 32 - digits.size() / 2;
  for (size_t i = 0; i < digits.size() / 2; ++i) {
    const int hi = hex_digit(digits[2 * i]), lo = hex_digit(digits[2 * i + 1]);
    if (hi < 0 || lo < 0) return "not a hex number: " + quote_for_error(text);
    out[offset + i] = uint8_t(hi << 4 | lo);
  }
  return out;
}

}  // namespace st::workloads
