// keys: EIP-7864 key derivation and leaf encodings (the "embedding" of the Ethereum state
// into 32-byte keys), bit-compatible with go-ethereum's trie/bintrie.
//
//   get_tree_key(addr, tree_index, sub) = H(00*12 || addr20 || uint256_be(tree_index))[0..30] || sub
//
//   account header stem (tree_index 0):
//     sub 0        basic data      sub 64..127  storage slots 0..63
//     sub 1        code hash       sub 128..255 code chunks 0..127
//   code chunk i:   pos = 128 + i,      (pos >> 8, pos & 0xff)
//   storage s >= 64: pos = 2^248 + s,   (pos >> 8, s & 0xff)   (pos >> 8 < 2^249: fits)
//
//   basic data leaf (32 bytes, big-endian fields):
//   +---------+----------+-----------+-----------+----------------------+
//   | version | reserved | code_size |   nonce   |  balance (low 128 b) |
//   |  [0]    |  [1..4]  |  [5..7]   |  [8..15]  |       [16..31]       |
//   +---------+----------+-----------+-----------+----------------------+
//
// Invariants: keys are pure functions of their inputs and the hash; TreeIndexEndian::little
// exists only to reproduce the pre-2026-03 EIP text (jsign reference) vectors.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/bintrie/hasher.h"

namespace st::bintrie {

using Address = std::array<uint8_t, 20>;

inline constexpr uint8_t kBasicDataLeafKey = 0;
inline constexpr uint8_t kCodeHashLeafKey = 1;
inline constexpr uint64_t kHeaderStorageOffset = 64;
inline constexpr uint64_t kCodeOffset = 128;
inline constexpr size_t kStemSubtreeWidth = 256;
inline constexpr size_t kCodeChunkBytes = 31;

enum class TreeIndexEndian { big, little };

struct KeyScheme {
  Hasher hasher;
  TreeIndexEndian endian = TreeIndexEndian::big;
};

// tree_index is a 32-byte big-endian integer.
Hash32 get_tree_key(const KeyScheme& ks, const Address& addr, const Hash32& tree_index_be, uint8_t sub_index);

Hash32 basic_data_key(const KeyScheme& ks, const Address& addr);
Hash32 code_hash_key(const KeyScheme& ks, const Address& addr);
Hash32 storage_slot_key(const KeyScheme& ks, const Address& addr, const Hash32& slot_be);
Hash32 code_chunk_key(const KeyScheme& ks, const Address& addr, uint64_t chunk_index);

// (tree_index, sub_index) of a storage slot / code chunk (exposed for tests and proofs).
void storage_slot_position(const Hash32& slot_be, Hash32* tree_index_be, uint8_t* sub_index);
void code_chunk_position(uint64_t chunk_index, Hash32* tree_index_be, uint8_t* sub_index);

// balance_be must fit 128 bits (upper 16 bytes zero; checked by callers that parse input);
// code_size must fit 24 bits.
Hash32 basic_data_leaf(uint64_t nonce, const Hash32& balance_be, uint32_t code_size);

struct BasicData {
  uint8_t version = 0;
  uint32_t code_size = 0;
  uint64_t nonce = 0;
  Hash32 balance_be{};
};
BasicData parse_basic_data(const Hash32& leaf);

// Code chunks: code zero-padded to a multiple of 31 bytes; chunk j = [number of PUSHn data
// bytes still pending at offset 31j, capped at 31] || code[31j .. 31j+30].
std::vector<Hash32> chunkify_code(std::span<const uint8_t> code);

}  // namespace st::bintrie
