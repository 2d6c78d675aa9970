// hex_prefix: the compact ("hex-prefix") encoding of a nibble path in MPT leaves and
// extensions (yellow paper appendix C).
//
//   byte 0 = (flag << 4) | (odd ? first nibble : 0),  flag = 2*is_leaf + is_odd
//   then the remaining nibbles, two per byte, high nibble first
//
//   leaf, path []        -> 20          extension [1]   -> 11
//   leaf  0 f 1 c b 8    -> 20 0f 1c b8  leaf f 1 c b 8 -> 3f 1c b8
//
// Nibble paths come either unpacked (one nibble per byte, values 0..15) or as a range
// [nib_begin, nib_end) of nibbles of a packed key (nibble i of key = high half of key[i/2]
// for even i). Invariants: pure functions, no allocation, never throw; decoding checks its
// input and returns an error value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace st::kernels {

inline size_t hex_prefix_size(size_t nibble_count) { return 1 + nibble_count / 2; }

// Nibble i of a packed key.
inline uint8_t key_nibble(const uint8_t* key, size_t i) { return i & 1 ? key[i >> 1] & 0x0f : key[i >> 1] >> 4; }

// Writers return one past the last byte written (exactly hex_prefix_size(n) bytes).
uint8_t* hex_prefix_put(uint8_t* out, const uint8_t* nibbles, size_t n, bool leaf);
inline uint8_t* hex_prefix_put_key(uint8_t* out, const uint8_t* key, size_t b, size_t e, bool leaf) {
  const size_t n = e - b;
  const bool odd = n & 1;
  const uint8_t flag = uint8_t((leaf ? 2 : 0) + (odd ? 1 : 0));
  size_t i = b;
  if (odd) { *out++ = uint8_t((flag << 4) | key_nibble(key, i)); ++i; }
  else *out++ = uint8_t(flag << 4);
  if ((i & 1) == 0) {  // byte-aligned: whole bytes
    const size_t m = (e - i) / 2;
    if (m) std::memcpy(out, key + (i >> 1), m);
    return out + m;
  }
  // Odd start: output byte k = low nibble of src[k], high nibble of src[k + 1] (a plain
  // byte loop the compiler vectorizes; reads end at byte (e - 1) / 2, inside the key).
  const uint8_t* src = key + (i >> 1);
  const size_t m = (e - i) / 2;
  for (size_t k = 0; k < m; ++k) out[k] = uint8_t((src[k] << 4) | (src[k + 1] >> 4));
  return out + m;
}

enum class HexPrefixError : uint8_t { ok = 0, empty, bad_flag, nonzero_padding };
const char* hex_prefix_error_name(HexPrefixError e);

// Decodes in[0..len) into unpacked nibbles (out_nibbles must hold 2*len - 1 bytes; len >= 1).
HexPrefixError hex_prefix_decode(const uint8_t* in, size_t len, uint8_t* out_nibbles, size_t* n, bool* leaf);

}  // namespace st::kernels
