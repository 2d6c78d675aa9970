// rlp: Recursive Length Prefix encoding (Ethereum yellow paper, appendix B).
//
// Encoding appends into a caller's buffer and every writer has a length twin that returns
// exactly how many bytes it will write, so callers size a flat buffer once and never
// allocate per item:
//
//   size_t n = rlp_string_size(data, len);  uint8_t* end = rlp_put_string(out, data, len);
//   // end - out == n, always
//
//   string, 1 byte < 0x80 :  [b]
//   string, 0..55 bytes    :  [0x80+len][bytes]
//   string, >= 56 bytes    :  [0xb7+lenlen][len big-endian, lenlen bytes][bytes]
//   list,   payload 0..55  :  [0xc0+len][payload]
//   list,   payload >= 56  :  [0xf7+lenlen][len big-endian][payload]
//   integer                :  big-endian without leading zeros as a string; 0 = 0x80
//
// Decoding is hardened: every length is checked against the bytes actually present before
// anything is read, non-canonical forms (a single byte < 0x80 wrapped as 0x81 b, a long
// form for a length < 56, a length with leading zero bytes, a length that overflows size_t)
// are errors, and nesting is walked iteratively with a fixed depth bound. Errors are
// values (RlpError), never crashes, exceptions or out-of-bounds reads.
//
// Invariants: pure functions, no allocation, no locks, no I/O, never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace st::kernels {

// ---- encoding --------------------------------------------------------------------------

// Bytes of the big-endian representation of n without leading zeros (0 for n == 0).
inline size_t rlp_be_length(size_t n) {
  size_t k = 0;
  while (n) { ++k; n >>= 8; }
  return k;
}

// Size of a string or list header for a payload of payload_len bytes (not for the
// single-byte string case, see rlp_string_size).
inline size_t rlp_header_size(size_t payload_len) {
  return payload_len < 56 ? 1 : 1 + rlp_be_length(payload_len);
}

// Total encoded size of the byte string data[0..len).
inline size_t rlp_string_size(const uint8_t* data, size_t len) {
  if (len == 1 && data[0] < 0x80) return 1;
  return rlp_header_size(len) + len;
}

// Total encoded size of a list whose items' encodings total payload_len bytes.
inline size_t rlp_list_size(size_t payload_len) { return rlp_header_size(payload_len) + payload_len; }

// Writers: return the pointer one past the last byte written. Inline: they sit in the
// per-node hot loops of the MPT engine.
inline uint8_t* rlp_put_header_(uint8_t* out, size_t payload_len, uint8_t short_base, uint8_t long_base) {
  if (payload_len < 56) {
    *out++ = uint8_t(short_base + payload_len);
    return out;
  }
  const size_t k = rlp_be_length(payload_len);
  *out++ = uint8_t(long_base + k);
  for (size_t i = k; i > 0; --i) *out++ = uint8_t(payload_len >> (8 * (i - 1)));
  return out;
}
inline uint8_t* rlp_put_string_header(uint8_t* out, size_t payload_len) {  // long/short string header
  return rlp_put_header_(out, payload_len, 0x80, 0xb7);
}
inline uint8_t* rlp_put_list_header(uint8_t* out, size_t payload_len) {
  return rlp_put_header_(out, payload_len, 0xc0, 0xf7);
}
inline uint8_t* rlp_put_string(uint8_t* out, const uint8_t* data, size_t len) {
  if (len == 1 && data[0] < 0x80) {
    *out++ = data[0];
    return out;
  }
  out = rlp_put_string_header(out, len);
  if (len) std::memcpy(out, data, len);
  return out + len;
}

// Unsigned integers: uint64 and big-endian byte strings of any width (leading zeros are
// trimmed, so a 32-byte U256 of value 0 encodes as 0x80).
size_t rlp_uint_size(uint64_t v);
uint8_t* rlp_put_uint(uint8_t* out, uint64_t v);
size_t rlp_uint_be_size(const uint8_t* be, size_t len);
uint8_t* rlp_put_uint_be(uint8_t* out, const uint8_t* be, size_t len);

// ---- decoding --------------------------------------------------------------------------

enum class RlpError : uint8_t {
  ok = 0,
  empty_input,                // no bytes where an item was expected
  truncated,                  // a header or payload runs past the end of the input
  non_canonical_single_byte,  // 0x81 b with b < 0x80
  non_canonical_length,       // long form for < 56 bytes, or a length with a leading zero
  length_overflow,            // a length field that does not fit in size_t
  trailing_bytes,             // bytes after the item where exactly one was expected
  too_deep,                   // nesting deeper than the bound
  too_many_items,             // a list with more items than the caller's array holds
  expected_list,
  expected_string,
};

const char* rlp_error_name(RlpError e);

// One decoded item: header_len + payload_len bytes starting at the item's first byte.
struct RlpItem {
  const uint8_t* payload = nullptr;
  size_t payload_len = 0;
  size_t header_len = 0;
  bool is_list = false;
  size_t size() const { return header_len + payload_len; }
};

// Decodes the header of the item at data[0..len) (the item may be followed by more bytes).
RlpError rlp_decode_item(const uint8_t* data, size_t len, RlpItem* out);

// Like rlp_decode_item, but the item must span exactly len bytes.
RlpError rlp_decode_exact(const uint8_t* data, size_t len, RlpItem* out);

// Splits the payload of a list into its top-level items (headers checked, contents not
// recursed). Fails with too_many_items when the list holds more than max_items.
RlpError rlp_list_items(const RlpItem& list, RlpItem* items, size_t max_items, size_t* count);

// Walks the whole structure of exactly one item spanning data[0..len), every nested item
// included, iteratively; nesting deeper than max_depth (clamped to kRlpMaxDepth) is an error.
inline constexpr size_t kRlpMaxDepth = 64;
RlpError rlp_validate(const uint8_t* data, size_t len, size_t max_depth = kRlpMaxDepth);

}  // namespace st::kernels
