// node_ref: how an MPT parent refers to a child, and the constants every MPT file shares.
//
//   NodeRef (33 bytes):  [len][bytes[0..31]]
//     len <  32 : the child's whole RLP encoding is embedded in the parent (bytes[0..len))
//     len == 32 : bytes = keccak256(child encoding); the parent holds a0 || bytes
//
// An encoding of exactly 32 bytes is hashed (embedding needs < 32), so len == 32 always
// means "hash" and the two cases never collide. The root is always hashed (root_hash()).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/support/hash32.h"

namespace st::mpt {

using st::Hash32;

// keccak256(rlp("")) = keccak256(0x80): the root of the empty trie.
inline constexpr Hash32 kEmptyRoot = {0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45,
                                      0xe6, 0x92, 0xc0, 0xf8, 0x6e, 0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c,
                                      0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21};
// keccak256(""): the code hash of an account without code.
inline constexpr Hash32 kEmptyCodeHash = {0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d,
                                          0xb2, 0xdc, 0xc7, 0x03, 0xc0, 0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82,
                                          0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70};

struct NodeRef {
  uint8_t len = 0;  // 0 = no node (empty slot); 1..31 embedded encoding; 32 = hash
  uint8_t bytes[32];

  bool empty() const { return len == 0; }
  bool is_hash() const { return len == 32; }
  // Bytes this reference takes inside the parent's RLP (an empty slot is 0x80: 1 byte).
  size_t size_in_parent() const { return len == 32 ? 33 : (len == 0 ? 1 : len); }
  uint8_t* put(uint8_t* out) const {
    if (len == 0) { *out++ = 0x80; return out; }
    if (len == 32) *out++ = 0xa0;
    std::memcpy(out, bytes, len);
    return out + len;
  }
};

// The reference to a node whose encoding is enc[0..len): embedded when short, else hashed.
inline NodeRef make_ref(const uint8_t* enc, size_t len) {
  NodeRef r;
  if (len < 32) {
    r.len = uint8_t(len);
    std::memcpy(r.bytes, enc, len);
  } else {
    r.len = 32;
    st::kernels::keccak256(enc, len, r.bytes);
  }
  return r;
}

// The trie root for a top node reference: hashes an embedded top node; empty -> kEmptyRoot.
inline Hash32 root_hash_of(const NodeRef& top) {
  Hash32 h;
  if (top.len == 0) return kEmptyRoot;
  if (top.len == 32) std::memcpy(h.data(), top.bytes, 32);
  else st::kernels::keccak256(top.bytes, top.len, h.data());
  return h;
}

}  // namespace st::mpt
