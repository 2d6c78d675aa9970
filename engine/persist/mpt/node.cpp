// mpt/node: record checks, storage values, path keys (see mpt/node.h).
#include "engine/persist/mpt/node.h"

#include "engine/persist/mpt/db.h"

#include <cstring>

#include "kernels/hex_prefix.h"
#include "kernels/rlp.h"

namespace st::persist {

using namespace st::kernels;

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

std::string check_mpt_record(uint8_t record_kind, uint32_t record_children, const mpt::DecodedNode& n, bool storage_trie,
                             bool account_has_storage) {
  const uint8_t k = record_kind;
  uint32_t want_children = 0;
  switch (n.kind) {
    case mpt::DecodedNode::leaf:
      if (k != uint8_t(storage_trie ? MptRecordKind::leaf : MptRecordKind::account_leaf)) return "record kind does not match its leaf node";
      want_children = (!storage_trie && account_has_storage) ? 1 : 0;
      break;
    case mpt::DecodedNode::extension:
      if (k != uint8_t(MptRecordKind::extension)) return "record kind does not match its extension node";
      want_children = n.refs[0].kind == mpt::ChildRef::hash ? 1 : 0;
      break;
    case mpt::DecodedNode::branch:
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
