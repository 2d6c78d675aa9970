// rlp: encoders (with their length twins in rlp.h) and the hardened decoder.
// Invariant: no read ever happens before the bytes it touches were checked to be present.
#include "kernels/rlp.h"

#include <cstring>

namespace st::kernels {

namespace {

uint8_t* put_be(uint8_t* out, size_t n, size_t nbytes) {
  for (size_t i = nbytes; i > 0; --i) *out++ = uint8_t(n >> (8 * (i - 1)));
  return out;
}

}  // namespace

size_t rlp_uint_size(uint64_t v) {
  if (v < 0x80) return 1;  // 0 -> 0x80, 1..127 -> itself
  return 1 + rlp_be_length(size_t(v));
}

uint8_t* rlp_put_uint(uint8_t* out, uint64_t v) {
  if (v == 0) { *out++ = 0x80; return out; }
  if (v < 0x80) { *out++ = uint8_t(v); return out; }
  const size_t k = rlp_be_length(size_t(v));
  *out++ = uint8_t(0x80 + k);
  return put_be(out, size_t(v), k);
}

size_t rlp_uint_be_size(const uint8_t* be, size_t len) {
  size_t z = 0;
  while (z < len && be[z] == 0) ++z;
  return rlp_string_size(be + z, len - z);
}

uint8_t* rlp_put_uint_be(uint8_t* out, const uint8_t* be, size_t len) {
  size_t z = 0;
  while (z < len && be[z] == 0) ++z;
  return rlp_put_string(out, be + z, len - z);
}

const char* rlp_error_name(RlpError e) {
  switch (e) {
    case RlpError::ok: return "ok";
    case RlpError::empty_input: return "empty input";
    case RlpError::truncated: return "truncated (length past the end of the input)";
    case RlpError::non_canonical_single_byte: return "non-canonical single byte string";
    case RlpError::non_canonical_length: return "non-canonical length";
    case RlpError::length_overflow: return "length overflow";
    case RlpError::trailing_bytes: return "trailing bytes after the item";
    case RlpError::too_deep: return "nesting too deep";
    case RlpError::too_many_items: return "too many list items";
    case RlpError::expected_list: return "expected a list";
    case RlpError::expected_string: return "expected a string";
  }
  return "unknown rlp error";
}

RlpError rlp_decode_item(const uint8_t* data, size_t len, RlpItem* out) {
  if (len == 0) return RlpError::empty_input;
  const uint8_t b = data[0];
  RlpItem it;
  if (b < 0x80) {
    it.payload = data; it.payload_len = 1; it.header_len = 0; it.is_list = false;
    *out = it;
    return RlpError::ok;
  }
  const bool is_list = b >= 0xc0;
  const uint8_t base = is_list ? 0xc0 : 0x80;
  const uint8_t off = uint8_t(b - base);
  size_t payload_len, header_len;
  if (off <= 55) {
    payload_len = off;
    header_len = 1;
  } else {
    const size_t k = off - 55;  // 1..8 length bytes
    if (k > sizeof(size_t)) return RlpError::length_overflow;
    if (len - 1 < k) return RlpError::truncated;
    if (data[1] == 0) return RlpError::non_canonical_length;
    size_t n = 0;
    for (size_t i = 0; i < k; ++i) n = (n << 8) | data[1 + i];
    if (n < 56) return RlpError::non_canonical_length;
    payload_len = n;
    header_len = 1 + k;
  }
  if (len - header_len < payload_len) return RlpError::truncated;
  if (!is_list && payload_len == 1 && header_len == 1 && data[1] < 0x80) return RlpError::non_canonical_single_byte;
  it.payload = data + header_len; it.payload_len = payload_len; it.header_len = header_len; it.is_list = is_list;
  *out = it;
  return RlpError::ok;
}

RlpError rlp_decode_exact(const uint8_t* data, size_t len, RlpItem* out) {
  RlpError e = rlp_decode_item(data, len, out);
  if (e != RlpError::ok) return e;
  return out->size() == len ? RlpError::ok : RlpError::trailing_bytes;
}

RlpError rlp_list_items(const RlpItem& list, RlpItem* items, size_t max_items, size_t* count) {
  *count = 0;
  if (!list.is_list) return RlpError::expected_list;
  const uint8_t* p = list.payload;
  size_t left = list.payload_len;
  while (left) {
    if (*count == max_items) return RlpError::too_many_items;
    RlpItem it;
    RlpError e = rlp_decode_item(p, left, &it);
    if (e != RlpError::ok) return e;
    items[(*count)++] = it;
    p += it.size();
    left -= it.size();
  }
  return RlpError::ok;
}

RlpError rlp_validate(const uint8_t* data, size_t len, size_t max_depth) {
  if (max_depth > kRlpMaxDepth) max_depth = kRlpMaxDepth;
  RlpItem top;
  RlpError e = rlp_decode_exact(data, len, &top);
  if (e != RlpError::ok) return e;
  if (!top.is_list) return RlpError::ok;
  // Explicit stack of the ends of the enclosing lists' payloads.
  const uint8_t* ends[kRlpMaxDepth];
  size_t depth = 0;
  if (max_depth == 0) return RlpError::too_deep;
  ends[depth++] = top.payload + top.payload_len;
  const uint8_t* p = top.payload;
  while (depth) {
    const uint8_t* end = ends[depth - 1];
    if (p == end) { --depth; continue; }
    RlpItem it;
    e = rlp_decode_item(p, size_t(end - p), &it);
    if (e != RlpError::ok) return e;
    if (it.is_list) {
      if (depth == max_depth) return RlpError::too_deep;
      ends[depth++] = it.payload + it.payload_len;
      p = it.payload;
    } else {
      p += it.size();
    }
  }
  return RlpError::ok;
}

}  // namespace st::kernels
