// hex_prefix: compact path encoding and its checked decoder (see hex_prefix.h).
#include "kernels/hex_prefix.h"

#include <cstring>

namespace st::kernels {

namespace {

// 8 unpacked nibbles (one per byte, values 0..15) -> 4 packed bytes, high nibble first, in
// 64-bit integer steps: x << 4 puts nibble 2k in the high half of byte 2k (its neighbour's
// bits shift out: nibbles are < 16), x >> 8 puts nibble 2k + 1 in the low half; then the
// even bytes are gathered into the low 4.
inline uint32_t pack8_nibbles(const uint8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  uint64_t t = ((x << 4) | (x >> 8)) & 0x00ff00ff00ff00ffull;
  t = (t | (t >> 8)) & 0x0000ffff0000ffffull;
  return uint32_t(t | (t >> 16));
}

}  // namespace

uint8_t* hex_prefix_put(uint8_t* out, const uint8_t* nib, size_t n, bool leaf) {
  const bool odd = n & 1;
  const uint8_t flag = uint8_t((leaf ? 2 : 0) + (odd ? 1 : 0));
  size_t i = 0;
  if (odd) { *out++ = uint8_t((flag << 4) | nib[0]); i = 1; }
  else *out++ = uint8_t(flag << 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= n; i += 8, out += 4) {  // (a secure leaf's path: ~60 nibbles)
    const uint32_t packed = pack8_nibbles(nib + i);
    std::memcpy(out, &packed, 4);
  }
#endif
  for (; i < n; i += 2) *out++ = uint8_t((nib[i] << 4) | nib[i + 1]);
  return out;
}

const char* hex_prefix_error_name(HexPrefixError e) {
  switch (e) {
    case HexPrefixError::ok: return "ok";
    case HexPrefixError::empty: return "empty hex-prefix path";
    case HexPrefixError::bad_flag: return "bad hex-prefix flag nibble";
    case HexPrefixError::nonzero_padding: return "nonzero padding nibble in an even hex-prefix path";
  }
  return "unknown hex-prefix error";
}

HexPrefixError hex_prefix_decode(const uint8_t* in, size_t len, uint8_t* out, size_t* n, bool* leaf) {
  if (len == 0) return HexPrefixError::empty;
  const uint8_t flag = in[0] >> 4;
  if (flag > 3) return HexPrefixError::bad_flag;
  *leaf = flag >= 2;
  const bool odd = flag & 1;
  size_t k = 0;
  if (odd) out[k++] = in[0] & 0x0f;
  else if (in[0] & 0x0f) return HexPrefixError::nonzero_padding;
  for (size_t i = 1; i < len; ++i) { out[k++] = in[i] >> 4; out[k++] = in[i] & 0x0f; }
  *n = k;
  return HexPrefixError::ok;
}

}  // namespace st::kernels
