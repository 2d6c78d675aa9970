// mpt/node: the read side's view of one MPT node read from disk: a strict decoder of the
// node's RLP (hardened kernels/rlp.h decoder; nothing in the bytes is trusted) into kind,
// nibble path, value and child references, and the helpers both stores share (child
// index of a hashed ref among a record's children, go-ethereum path keys).
//
//   DiskNode (views into the decoded bytes, valid while they are):
//     leaf      : path (nibbles), value (the RLP string's payload)
//     extension : path, refs[0]
//     branch    : refs[0..16), value (empty = none)
//   ChildRef: none (0x80) | hash (32-byte string) | embedded (a list item < 32 bytes)
//
// Invariants: decode_disk_node() accepts exactly the canonical encodings node_codec.h
// writes (plus what go-ethereum would accept of them); paths are at most 64 nibbles; an
// embedded child is a list shorter than 32 bytes; anything else is an error string.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace st::persist {

struct MptChildRef {
  enum Kind : uint8_t { none, hash, embedded };
  Kind kind = none;
  const uint8_t* bytes = nullptr;  // hash: the 32 bytes; embedded: the whole item
  uint32_t len = 0;
};

struct DiskNode {
  enum Kind : uint8_t { leaf, extension, branch };
  Kind kind = leaf;
  uint8_t path_len = 0;
  std::array<uint8_t, 64> path{};  // unpacked nibbles
  std::span<const uint8_t> value;  // leaf value payload; branch value payload (empty = none)
  std::array<MptChildRef, 16> refs{};
  // Hashed references (the record's children), in nibble order.
  uint32_t hashed_refs() const;
  // Index among the hashed references of refs[nibble] (precondition: it is a hash).
  uint32_t hashed_index(uint32_t nibble) const;
};

// Empty string on success, else "mpt node: <reason>".
std::string decode_disk_node(std::span<const uint8_t> rlp, DiskNode* out);

// Checks a record's kind and child count (record_kind: MptRecordKind, mpt/db.h) against
// its decoded node: a storage leaf has no record children, an account leaf one exactly when
// its account has storage, an extension one when its child is hashed, a branch one per
// hashed child. Empty string when they agree, else what differs.
std::string check_mpt_record(uint8_t record_kind, uint32_t record_children, const DiskNode& n, bool storage_trie,
                             bool account_has_storage);

// Decodes a storage leaf value (RLP of the trimmed big-endian value) into 32 bytes.
std::string decode_storage_value(std::span<const uint8_t> rlp, std::array<uint8_t, 32>* out);

// go-ethereum path-scheme keys: 'A' || nibbles, 'O' || account hash || nibbles.
std::string account_node_key(const uint8_t* key32, size_t nibbles);
std::string storage_node_key(const uint8_t* account_hash32, const uint8_t* key32, size_t nibbles);
// Hex of a key for error messages.
std::string path_key_hex(std::string_view key);

}  // namespace st::persist
