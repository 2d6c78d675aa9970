// builder_codec: the batch builder's per-node hot paths, inline: adjacent-key common prefix,
// small copies without a libc call, and a leaf writer for the common shapes.
//
//   lcp_nibbles_of(x, xl, y, yl)   nibbles shared by two packed keys (8 bytes per step; the
//                                  first differing byte is found from the XOR word, no loop)
//   copy_small(dst, src, n)        n <= 64 bytes as two overlapping loads/stores of the
//                                  largest power-of-two width <= n (never reads or writes
//                                  outside [src, src+n) / [dst, dst+n))
//   put_leaf_suffix(out, key, key_len, b, value, value_len)
//                                  leaf [HP(nibbles [b, 2*key_len) of key, leaf), value];
//                                  same bytes as put_leaf_key(out, key, b, 2*key_len, ...)
//
// A leaf path always runs to the end of its key, so its nibble count has the parity of b:
// after the flag byte (which takes the first nibble when b is odd) the rest of the path is
// whole key bytes, key[(b+1)/2 .. key_len): one copy, never a nibble shift.
//
//   short leaf (payload < 56):  c0+P | [80+H] | 2o [nibble] | path bytes | [80+V] value
//   long leaf:                  f8 P | ...
//     P = payload bytes, H = hex-prefix bytes (no header when H = 1), o = odd flag
//
// Invariants: pure functions, no allocation, no reads past the key or the value.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/mpt/node_codec.h"

namespace st::mpt {

// Nibbles shared by keys x[0..xl) and y[0..yl) (a prefix key shares all of its nibbles).
inline size_t lcp_nibbles_of(const uint8_t* x, size_t xl, const uint8_t* y, size_t yl) {
  const size_t n = xl < yl ? xl : yl;
  size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      uint64_t a, b;
      std::memcpy(&a, x + i, 8);
      std::memcpy(&b, y + i, 8);
      if (const uint64_t d = a ^ b) {
        // Lowest set bit = first differing byte (little-endian load); the byte shares its
        // high nibble when its XOR is below 0x10.
        const unsigned byte = unsigned(std::countr_zero(d)) / 8;
        return 2 * (i + byte) + (uint8_t(d >> (8 * byte)) < 0x10 ? 1 : 0);
      }
    }
  }
  for (; i < n; ++i)
    if (const uint8_t d = uint8_t(x[i] ^ y[i])) return 2 * i + (d < 0x10 ? 1 : 0);
  return 2 * n;
}

// dst[0..n) = src[0..n) for n <= 64, as two possibly overlapping copies of one width.
[[gnu::always_inline]] inline void copy_small(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 16) {
    if (n <= 32) {
      std::memcpy(dst, src, 16);
      std::memcpy(dst + n - 16, src + n - 16, 16);
    } else {
      std::memcpy(dst, src, 32);
      std::memcpy(dst + n - 32, src + n - 32, 32);
    }
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Upper bound of put_leaf_suffix's output (list header, HP header and flag byte, the path
// bytes, value header and value, each header at most 9 bytes).
inline size_t leaf_suffix_bound(size_t key_len, size_t value_len) { return 28 + key_len + value_len; }

// Nibble i of a packed key, without a branch on the parity of i.
inline unsigned nibble_at(const uint8_t* key, size_t i) { return (key[i >> 1] >> (4 * (~i & 1))) & 0x0f; }

// Leaf over nibbles [b, 2*key_len) of key with a non-empty value; returns one past the end.
[[gnu::always_inline]] inline uint8_t* put_leaf_suffix(uint8_t* out, const uint8_t* key, size_t key_len, size_t b,
                                                       const uint8_t* value, size_t value_len) {
  if (key_len - 1 >= 52 || value_len > 55) [[unlikely]]  // key_len 0 or > 52, long value
    return put_leaf_key(out, key, b, 2 * key_len, value, value_len);
  const size_t odd = b & 1;              // = parity of the path's nibble count 2*key_len - b
  const size_t from = (b + odd) >> 1;    // first whole path byte
  const size_t m = key_len - from;       // whole path bytes; hex-prefix = 1 + m bytes (<= 53)
  const size_t hp_item = m ? 2 + m : 1;  // a 1-byte HP (empty path) is < 0x80: no header
  const bool single = value_len == 1 && value[0] < 0x80;
  const size_t payload = hp_item + (single ? 1 : 1 + value_len);  // <= 110
  uint8_t* p = out;
  if (payload < 56) {
    *p++ = uint8_t(0xc0 + payload);
  } else {
    p[0] = 0xf8;
    p[1] = uint8_t(payload);
    p += 2;
  }
  if (m) *p++ = uint8_t(0x81 + m);
  // Flag byte without a branch on the parity: 0x20, or 0x30 | the path's first nibble
  // (= low half of key[from - 1]; for an even path key[0] is read and masked away).
  const uint8_t odd_mask = uint8_t(0 - odd);
  *p++ = uint8_t(0x20 | (odd_mask & (0x10 | (key[(b >> 1) & (0 - odd)] & 0x0f))));
  copy_small(p, key + from, m);
  p += m;
  if (single) {
    *p++ = value[0];
    return p;
  }
  *p++ = uint8_t(0x80 + value_len);
  copy_small(p, value, value_len);
  return p + value_len;
}

}  // namespace st::mpt
