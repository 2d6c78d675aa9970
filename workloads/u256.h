// u256: parsing and formatting of st::state::U256 (32-byte big-endian unsigned integers)
// and the small hex helpers the loaders share.
//
// Accepted spellings (strict, nothing else):
//   decimal  "0" .. "115792089237316195423570985008687907853269984665640564039457584007913129639935"
//            digits only: no sign, no spaces, no "_", not empty; leading zeros are allowed.
//   hex      "0x" or "0X" then 1..64 hex digits of either case (more digits only when the extra
//            leading ones are zeros); odd digit counts are fine ("0x1" = 1).
// Values above 2^256-1 are rejected, never wrapped. Errors are one-line strings that quote
// the offending text (truncated to 80 characters).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/state/state_types.h"

namespace st::workloads {

using st::state::U256;

// "123" -> U256.
std::variant<U256, std::string> parse_u256_decimal(std::string_view text);
// "0x7b" -> U256 (the 0x prefix is required).
std::variant<U256, std::string> parse_u256_hex(std::string_view text);
// Either of the two: hex when it starts with 0x/0X, decimal otherwise.
std::variant<U256, std::string> parse_u256(std::string_view text);

// Same spellings, limited to 2^64-1.
std::variant<uint64_t, std::string> parse_u64(std::string_view text);

// Minimal decimal ("0" for zero) and minimal 0x-hex ("0x0" for zero, lowercase).
std::string u256_to_decimal(const U256& v);
std::string u256_to_hex(const U256& v);
U256 u256_from_u64(uint64_t v);

// Hex bytes: optional 0x/0X prefix when allow_no_prefix, else required; an even number of
// digits (possibly zero). Returns the bytes or an error.
std::variant<std::vector<uint8_t>, std::string> parse_hex_bytes(std::string_view text,
                                                                bool allow_no_prefix = false);
// Lowercase hex of n bytes, with a 0x prefix when prefix is true.
std::string bytes_to_hex(const uint8_t* p, size_t n, bool prefix = true);

// Quote a user string for an error message: "..." truncated to 80 characters, control
// characters shown as '?', so that the message stays one line.
std::string quote_for_error(std::string_view text);

}  // namespace st::workloads
