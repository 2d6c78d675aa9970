// node_codec: RLP encodings of the three MPT node kinds, each with its length twin.
//
//   leaf      : list[ HP(path, leaf=1), value ]        (value as an RLP string, non-empty)
//   extension : list[ HP(path, leaf=0), child_ref ]    (child is a branch in canonical form)
//   branch    : list[ ref0 .. ref15, value ]           (empty slot = 0x80, empty value = 0x80)
//
// Paths come as unpacked nibbles or as a nibble range of a packed key (the batch builder
// never unpacks keys). Invariants: writers write exactly the *_size() bytes; no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/mpt/node_ref.h"
#include "kernels/hex_prefix.h"
#include "kernels/rlp.h"

namespace st::mpt {

// Size of the RLP string holding HP(path) for a path of n nibbles.
inline size_t hp_item_size(size_t n) {
  const size_t hp = st::kernels::hex_prefix_size(n);
  return hp == 1 ? 1 : st::kernels::rlp_header_size(hp) + hp;  // a 1-byte HP is < 0x80
}

inline size_t leaf_payload_size(size_t path_nibbles, const uint8_t* value, size_t value_len) {
  return hp_item_size(path_nibbles) + st::kernels::rlp_string_size(value, value_len);
}
inline size_t leaf_size(size_t path_nibbles, const uint8_t* value, size_t value_len) {
  return st::kernels::rlp_list_size(leaf_payload_size(path_nibbles, value, value_len));
}
inline size_t extension_size(size_t path_nibbles, const NodeRef& child) {
  return st::kernels::rlp_list_size(hp_item_size(path_nibbles) + child.size_in_parent());
}
// Branch: refs[16] (empty allowed) and a value (value_len 0 = none).
size_t branch_size(const NodeRef* refs, const uint8_t* value, size_t value_len);

// Writers (return one past the end).
uint8_t* put_leaf_nibbles(uint8_t* out, const uint8_t* nibbles, size_t n, const uint8_t* value, size_t value_len);
uint8_t* put_extension_key(uint8_t* out, const uint8_t* key, size_t nib_begin, size_t nib_end, const NodeRef& child);
uint8_t* put_extension_nibbles(uint8_t* out, const uint8_t* nibbles, size_t n, const NodeRef& child);
uint8_t* put_branch(uint8_t* out, const NodeRef* refs, const uint8_t* value, size_t value_len);
// Upper bound of a branch encoding without its value item: 9-byte header, 16 hash refs, 0x80.
inline constexpr size_t kBranchMaxFixed = 9 + 16 * 33 + 1;

// Hot-path writers, inline (the batch builder calls them once per node).
inline uint8_t* put_leaf_key(uint8_t* out, const uint8_t* key, size_t b, size_t e, const uint8_t* value, size_t value_len) {
  out = st::kernels::rlp_put_list_header(out, leaf_payload_size(e - b, value, value_len));
  out = (st::kernels::hex_prefix_size(e - b) == 1 ? out : st::kernels::rlp_put_string_header(out, st::kernels::hex_prefix_size(e - b)));
  out = st::kernels::hex_prefix_put_key(out, key, b, e, true);
  return st::kernels::rlp_put_string(out, value, value_len);
}

// The end of a branch written at body = out + 9: appends the value item (0x80 when empty)
// at p, puts the list header right in front of body, sets *end one past the last byte and
// returns the encoding's first byte.
inline uint8_t* finish_branch(uint8_t* body, uint8_t* p, const uint8_t* value, size_t value_len, uint8_t** end) {
  if (value_len) p = st::kernels::rlp_put_string(p, value, value_len);
  else *p++ = 0x80;
  const size_t payload = size_t(p - body);
  uint8_t* const begin = body - st::kernels::rlp_header_size(payload);
  st::kernels::rlp_put_list_header(begin, payload);
  *end = p;
  return begin;
}

// Branch in one pass over refs[16] (sizes and bytes together): the payload is written at
// out + 9 (room for the largest list header) and the header right in front of it. Returns
// the encoding's first byte (out + 9 - header size) and sets *end one past its last; writes
// only within out[0, kBranchMaxFixed + rlp_string_size(value)). Same bytes as put_branch.
inline uint8_t* put_branch_tail(uint8_t* out, const NodeRef* refs, const uint8_t* value, size_t value_len, uint8_t** end) {
  uint8_t* const body = out + 9;
  uint8_t* p = body;
  for (int i = 0; i < 16; ++i) {
    const NodeRef& r = refs[i];
    if (r.len == 32) {
      *p = 0xa0;
      std::memcpy(p + 1, r.bytes, 32);
      p += 33;
    } else if (r.len == 0) {
      *p++ = 0x80;
    } else {
      std::memcpy(p, r.bytes, r.len);
      p += r.len;
    }
  }
  return finish_branch(body, p, value, value_len, end);
}

}  // namespace st::mpt
