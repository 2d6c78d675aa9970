// stem_bits: bit access and common-prefix length over 31-byte stems (bits MSB first:
// bit(stem, d) = (stem[d >> 3] >> (7 - (d & 7))) & 1; bit 0 selects the root's child).
//
// Invariants: header-only, pure; lcp of two distinct stems is at most 247.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "kernels/support/byte_order.h"

namespace st::bintrie {

inline constexpr unsigned kStemBits = 248;

inline unsigned stem_bit(const uint8_t* stem31, unsigned d) { return (stem31[d >> 3] >> (7 - (d & 7))) & 1u; }

// Number of leading bits two stems share (248 when equal).
inline unsigned stem_lcp(const uint8_t* a, const uint8_t* b) {
  for (unsigned off = 0; off < 24; off += 8) {
    const uint64_t x = load_be64(a + off) ^ load_be64(b + off);
    if (x) return off * 8 + unsigned(std::countl_zero(x));
  }
  // Last 7 bytes (24..30).
  uint64_t ta = 0, tb = 0;
  for (int i = 24; i < 31; ++i) { ta = ta << 8 | a[i]; tb = tb << 8 | b[i]; }
  const uint64_t x = (ta ^ tb) << 8;
  if (x) return 192 + unsigned(std::countl_zero(x));
  return kStemBits;
}

}  // namespace st::bintrie
