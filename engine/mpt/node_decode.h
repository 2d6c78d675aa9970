// node_decode: the strict decoder of one MPT node's RLP (the hardened kernels/rlp.h decoder;
// nothing in the bytes is trusted), for every reader of stored nodes: the node stores'
// lookups, verify and block commits, and the trie's resolution of its unread children
// (trie.h, "Unread children").
//
//   DecodedNode (views into the decoded bytes, valid while they are):
//     leaf      : path (nibbles), value (the RLP string's payload)
//     extension : path, refs[0]
//     branch    : refs[0..16), value (empty = none)
//   ChildRef: none (0x80) | hash (32-byte string) | embedded (a list item < 32 bytes)
//
// Invariants: decode_node() accepts exactly the canonical encodings node_codec.h writes
// (plus what go-ethereum would accept of them); paths are at most 64 nibbles (keys of 32
// bytes); an embedded child is a list shorter than 32 bytes; a branch has at least two
// entries, an extension a non-empty path and a child; anything else is an error string.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace st::mpt {

struct ChildRef {
  enum Kind : uint8_t { none, hash, embedded };
  Kind kind = none;
  const uint8_t* bytes = nullptr;  // hash: the 32 bytes; embedded: the whole item
  uint32_t len = 0;
};

struct DecodedNode {
  enum Kind : uint8_t { leaf, extension, branch };
  Kind kind = leaf;
  uint8_t path_len = 0;
  std::array<uint8_t, 64> path{};  // unpacked nibbles
  std::span<const uint8_t> value;  // leaf value payload; branch value payload (empty = none)
  std::array<ChildRef, 16> refs{};
  // Hashed references (a stored node's children), in nibble order.
  uint32_t hashed_refs() const;
  // Index among the hashed references of refs[nibble] (precondition: it is a hash).
  uint32_t hashed_index(uint32_t nibble) const;
};

// Empty string on success, else "mpt node: <reason>".
std::string decode_node(std::span<const uint8_t> rlp, DecodedNode* out);

}  // namespace st::mpt
