// mpt/node: what both stores share about one MPT node read from disk, beside its strict
// decoding (engine/mpt/node_decode.h): the check of an arena
// record against its decoded node, storage values, go-ethereum path keys.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "engine/mpt/node_decode.h"

namespace st::persist {


// Checks a record's kind and child count (record_kind: MptRecordKind, mpt/db.h) against
// its decoded node: a storage leaf has no record children, an account leaf one exactly when
// its account has storage, an extension one when its child is hashed, a branch one per
// hashed child. Empty string when they agree, else what differs.
std::string check_mpt_record(uint8_t record_kind, uint32_t record_children, const mpt::DecodedNode& n, bool storage_trie,
                             bool account_has_storage);

// Decodes a storage leaf value (RLP of the trimmed big-endian value) into 32 bytes.
std::string decode_storage_value(std::span<const uint8_t> rlp, std::array<uint8_t, 32>* out);

// go-ethereum path-scheme keys: 'A' || nibbles, 'O' || account hash || nibbles.
std::string account_node_key(const uint8_t* key32, size_t nibbles);
std::string storage_node_key(const uint8_t* account_hash32, const uint8_t* key32, size_t nibbles);
// Hex of a key for error messages.
std::string path_key_hex(std::string_view key);

}  // namespace st::persist
