// node_codec: MPT node encoders (see node_codec.h).
#include "engine/mpt/node_codec.h"

#include <cstring>

namespace st::mpt {

using namespace st::kernels;

namespace {

uint8_t* put_hp_item_header(uint8_t* out, size_t n) {
  const size_t hp = hex_prefix_size(n);
  return hp == 1 ? out : rlp_put_string_header(out, hp);
}

size_t branch_payload(const NodeRef* refs, const uint8_t* value, size_t value_len) {
  size_t p = value_len ? rlp_string_size(value, value_len) : 1;
  for (int i = 0; i < 16; ++i) p += refs[i].size_in_parent();
  return p;
}

}  // namespace

size_t branch_size(const NodeRef* refs, const uint8_t* value, size_t value_len) {
  return rlp_list_size(branch_payload(refs, value, value_len));
}

uint8_t* put_leaf_nibbles(uint8_t* out, const uint8_t* nib, size_t n, const uint8_t* value, size_t value_len) {
  out = rlp_put_list_header(out, leaf_payload_size(n, value, value_len));
  out = put_hp_item_header(out, n);
  out = hex_prefix_put(out, nib, n, true);
  return rlp_put_string(out, value, value_len);
}

uint8_t* put_extension_key(uint8_t* out, const uint8_t* key, size_t b, size_t e, const NodeRef& child) {
  out = rlp_put_list_header(out, hp_item_size(e - b) + child.size_in_parent());
  out = put_hp_item_header(out, e - b);
  out = hex_prefix_put_key(out, key, b, e, false);
  return child.put(out);
}

uint8_t* put_extension_nibbles(uint8_t* out, const uint8_t* nib, size_t n, const NodeRef& child) {
  out = rlp_put_list_header(out, hp_item_size(n) + child.size_in_parent());
  out = put_hp_item_header(out, n);
  out = hex_prefix_put(out, nib, n, false);
  return child.put(out);
}

uint8_t* put_branch(uint8_t* out, const NodeRef* refs, const uint8_t* value, size_t value_len) {
  out = rlp_put_list_header(out, branch_payload(refs, value, value_len));
  for (int i = 0; i < 16; ++i) out = refs[i].put(out);
  if (value_len) return rlp_put_string(out, value, value_len);
  *out++ = 0x80;
  return out;
}

}  // namespace st::mpt
