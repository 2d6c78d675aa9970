// mpt/node: strict decoding of MPT nodes read from disk, path keys (see mpt/node.h).
#include "engine/persist/mpt/node.h"

#include "engine/persist/mpt/db.h"

#include <cstring>

#include "kernels/hex_prefix.h"
#include "kernels/rlp.h"

namespace st::persist {

using namespace st::kernels;

uint32_t DiskNode::hashed_refs() const {
  uint32_t n = 0;
  for (const auto& r : refs) n += r.kind == MptChildRef::hash;
  return n;
}

uint32_t DiskNode::hashed_index(uint32_t nibble) const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < nibble; ++i) n += refs[i].kind == MptChildRef::hash;
  return n;
}

namespace {

std::string fail(const char* why) { return std::string("mpt node: ") + why; }

std::string decode_ref(const RlpItem& it, MptChildRef* out) {
  if (it.is_list) {
    if (it.size() >= 32) return fail("embedded child of 32 bytes or more");
    out->kind = MptChildRef::embedded;
    out->bytes = it.payload - it.header_len;
    out->len = uint32_t(it.size());
    return {};
  }
  if (it.payload_len == 0) {
    out->kind = MptChildRef::none;
    return {};
  }
  if (it.payload_len != 32) return fail("child reference is neither a hash nor an embedded node");
  out->kind = MptChildRef::hash;
  out->bytes = it.payload;
  out->len = 32;
  return {};
}

}  // namespace

std::string decode_disk_node(std::span<const uint8_t> rlp, DiskNode* out) {
  RlpItem top, items[17];
  size_t n = 0;
  RlpError e = rlp_decode_exact(rlp.data(), rlp.size(), &top);
  if (e == RlpError::ok && !top.is_list) e = RlpError::expected_list;
  if (e == RlpError::ok) e = rlp_list_items(top, items, 17, &n);
  if (e != RlpError::ok) return std::string("mpt node: rlp: ") + rlp_error_name(e);
  *out = DiskNode{};
  if (n == 17) {
    out->kind = DiskNode::branch;
    for (int i = 0; i < 16; ++i)
      if (std::string err = decode_ref(items[i], &out->refs[i]); !err.empty()) return err;
    if (items[16].is_list) return fail("branch value is a list");
    out->value = {items[16].payload, items[16].payload_len};
    uint32_t used = 0;
    for (const auto& r : out->refs) used += r.kind != MptChildRef::none;
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
    out->kind = DiskNode::leaf;
    if (items[1].is_list || items[1].payload_len == 0) return fail("bad leaf value");
    out->value = {items[1].payload, items[1].payload_len};
    return {};
  }
  out->kind = DiskNode::extension;
  if (plen == 0) return fail("extension with an empty path");
  if (std::string err = decode_ref(items[1], &out->refs[0]); !err.empty()) return err;
  if (out->refs[0].kind == MptChildRef::none) return fail("extension without a child");
  return {};
}

std::string decode_storage_value(std::span<const uint8_t> rlp, std::array<uint8_t, 32>* out) {
  RlpItem it;
  const RlpError e = rlp_decode_exact(rlp.data(), rlp.size(), &it);
  if (e != RlpError::ok) return std::string("storage value: rlp: ") + rlp_error_name(e);
  if (it.is_list) return "storage value: a list";
  if (it.payload_len == 0 || it.payload_len > 32) return "storage value: not 1..32 bytes";
  if (it.payload[0] == 0) return "storage value: leading zero byte";
  out->fill(0);
  std::memcpy(out->data() + 32 - it.payload_len, it.payload, it.payload_len);
  return {};
}

std::string account_node_key(const uint8_t* key32, size_t nibbles) {
  std::string k(1 + nibbles, 'A');
  for (size_t i = 0; i < nibbles; ++i) k[1 + i] = char(key_nibble(key32, i));
  return k;
}

std::string storage_node_key(const uint8_t* account_hash32, const uint8_t* key32, size_t nibbles) {
  std::string k(33 + nibbles, 'O');
  std::memcpy(k.data() + 1, account_hash32, 32);
  for (size_t i = 0; i < nibbles; ++i) k[33 + i] = char(key_nibble(key32, i));
  return k;
}

std::string path_key_hex(std::string_view key) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  s.reserve(2 * key.size());
  for (unsigned char c : key) { s += hex[c >> 4]; s += hex[c & 15]; }
  return s;
}

std::string check_mpt_record(uint8_t record_kind, uint32_t record_children, const DiskNode& n, bool storage_trie,
                             bool account_has_storage) {
  const uint8_t k = record_kind;
  uint32_t want_children = 0;
  switch (n.kind) {
    case DiskNode::leaf:
      if (k != uint8_t(storage_trie ? MptRecordKind::leaf : MptRecordKind::account_leaf)) return "record kind does not match its leaf node";
      want_children = (!storage_trie && account_has_storage) ? 1 : 0;
      break;
    case DiskNode::extension:
      if (k != uint8_t(MptRecordKind::extension)) return "record kind does not match its extension node";
      want_children = n.refs[0].kind == MptChildRef::hash ? 1 : 0;
      break;
    case DiskNode::branch:
      if (k != uint8_t(MptRecordKind::branch)) return "record kind does not match its branch node";
      want_children = n.hashed_refs();
      break;
  }
  if (record_children != want_children)
    return "record has " + std::to_string(record_children) + " children, its node references " +
           std::to_string(want_children) + " by hash";
  return {};
}

}  // namespace st::persist
