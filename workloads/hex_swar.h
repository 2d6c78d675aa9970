// hex_swar: hex digits decoded 8 characters at a time in one 64-bit word (SWAR), for the
// loaders' hot loops (--kv keys and values, genesis addresses): no branch per digit, so
// random hex costs no mispredictions.
//
// Invariants: little-endian words (character 0 is the low byte; kSwar is false elsewhere and
// callers use their scalar loop); decode8 accepts exactly [0-9a-fA-F] and writes 4 bytes only
// when all 8 characters are hex digits.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace st::workloads::hex_swar {

constexpr bool kSwar = std::endian::native == std::endian::little;
constexpr uint64_t k01 = 0x0101010101010101ULL, k80 = 0x8080808080808080ULL;

inline uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// High bit of each byte set iff the byte is in [lo, hi] (bytes must be < 0x80: no carries).
inline uint64_t bytes_in_range(uint64_t x, unsigned lo, unsigned hi) {
  return (x + k01 * (0x80 - lo)) & ~(x + k01 * (0x7f - hi)) & k80;
}

// 8 hex digits -> 4 bytes; false if any is not a hex digit. *upper (optional) gets one bit per
// character (bit k: character k is one of A-F).
inline bool decode8(const char* in, uint8_t* out, unsigned* upper = nullptr) {
  const uint64_t x = load8(in);
  if (x & k80) return false;
  const uint64_t digit = bytes_in_range(x, '0', '9');
  const uint64_t alpha = bytes_in_range(x | (k01 * 0x20), 'a', 'f');
  if ((digit | alpha) != k80) return false;
  if (upper) {
    const uint64_t up = (alpha & ~(x << 2)) & k80;  // letters without the 0x20 bit (moved to 0x80)
    *upper = unsigned(((up >> 7) * 0x0102040810204080ULL) >> 56);
  }
  const uint64_t nibbles = (x & (k01 * 0x0f)) + (alpha >> 7) * 9;
  uint64_t t = (nibbles << 4) | (nibbles >> 8);  // byte k = nibble k << 4 | nibble k+1
  t &= 0x00ff00ff00ff00ffULL;                    // keep bytes 0, 2, 4, 6
  t = (t | (t >> 8)) & 0x0000ffff0000ffffULL;
  t = (t | (t >> 16)) & 0x00000000ffffffffULL;
  const uint32_t four = uint32_t(t);
  std::memcpy(out, &four, 4);
  return true;
}

}  // namespace st::workloads::hex_swar
