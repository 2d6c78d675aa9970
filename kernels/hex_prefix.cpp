// hex_prefix: compact path encoding and its checked decoder (see hex_prefix.h).
#include "kernels/hex_prefix.h"

#include <cstring>

namespace st::kernels {

uint8_t* hex_prefix_put(uint8_t* out, const uint8_t* nib, size_t n, bool leaf) {
  const bool odd = n & 1;
  const uint8_t flag = uint8_t((leaf ? 2 : 0) + (odd ? 1 : 0));
  size_t i = 0;
  if (odd) { *out++ = uint8_t((flag << 4) | nib[0]); i = 1; }
  else *out++ = uint8_t(flag << 4);
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
