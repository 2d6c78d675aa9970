// node_decode: the strict MPT node decoder (see node_decode.h).
#include "engine/mpt/node_decode.h"

#include <cstring>

#include "kernels/hex_prefix.h"
#include "kernels/rlp.h"

namespace st::mpt {

using namespace st::kernels;

uint32_t DecodedNode::hashed_refs() const {
  uint32_t n = 0;
  for (const auto& r : refs) n += r.kind == ChildRef::hash;
  return n;
}

uint32_t DecodedNode::hashed_index(uint32_t nibble) const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < nibble; ++i) n += refs[i].kind == ChildRef::hash;
  return n;
}

namespace {

std::string fail(const char* why) { return std::string("mpt node: ") + why; }

std::string decode_ref(const RlpItem& it, ChildRef* out) {
  if (it.is_list) {
    if (it.size() >= 32) return fail("embedded child of 32 bytes or more");
    out->kind = ChildRef::embedded;
    out->bytes = it.payload - it.header_len;
    out->len = uint32_t(it.size());
    return {};
  }
  if (it.payload_len == 0) {
    out->kind = ChildRef::none;
    return {};
  }
  if (it.payload_len != 32) return fail("child reference is neither a hash nor an embedded node");
  out->kind = ChildRef::hash;
  out->bytes = it.payload;
  out->len = 32;
  return {};
}

}  // namespace

std::string decode_node(std::span<const uint8_t> rlp, DecodedNode* out) {
  RlpItem top, items[17];
  size_t n = 0;
  RlpError e = rlp_decode_exact(rlp.data(), rlp.size(), &top);
  if (e == RlpError::ok && !top.is_list) e = RlpError::expected_list;
  if (e == RlpError::ok) e = rlp_list_items(top, items, 17, &n);
  if (e != RlpError::ok) return std::string("mpt node: rlp: ") + rlp_error_name(e);
  *out = DecodedNode{};
  if (n == 17) {
    out->kind = DecodedNode::branch;
    for (int i = 0; i < 16; ++i)
      if (std::string err = decode_ref(items[i], &out->refs[i]); !err.empty()) return err;
    if (items[16].is_list) return fail("branch value is a list");
    out->value = {items[16].payload, items[16].payload_len};
    uint32_t used = 0;
    for (const auto& r : out->refs) used += r.kind != ChildRef::none;
    if (used + (out->value.empty() ? 0 : 1) < 2) return fail("branch with fewer than two entries");
    return {};
  }
  if (n != 2) return fail("neither a 2-item nor a 17-item list");
  if (items[0].is_list || items[0].payload_len == 0) return fail("bad hex-prefix path item");
  if (items[0].payload_len > 33) return fail("path longer than 64 nibbles");
  uint8_t nib[65];
  size_t plen = 0;
  bool leaf = false;
  if (const HexPrefixError e = hex_prefix_decode(items[0].payload, items[0].payload_len, nib, &plen, &leaf);
      e != HexPrefixError::ok)
    return fail(hex_prefix_error_name(e));
  if (plen > 64) return fail("path longer than 64 nibbles");
  out->path_len = uint8_t(plen);
  std::memcpy(out->path.data(), nib, plen);
  if (leaf) {
    out->kind = DecodedNode::leaf;
    if (items[1].is_list || items[1].payload_len == 0) return fail("bad leaf value");
    out->value = {items[1].payload, items[1].payload_len};
    return {};
  }
  out->kind = DecodedNode::extension;
  if (plen == 0) return fail("extension with an empty path");
  if (std::string err = decode_ref(items[1], &out->refs[0]); !err.empty()) return err;
  if (out->refs[0].kind == ChildRef::none) return fail("extension without a child");
  return {};
}

}  // namespace st::mpt
