// hash32: the one 32-byte value type of the project: every SHA-256, Keccak-256 and BLAKE3
// digest, every Merkle, MPT and binary-trie root, and the 32-byte keys and values the trees
// store (state keys, slot values) are a Hash32.
//
// Invariants: a plain value (std::array, trivially copyable, no padding, 32 bytes); byte 0
// is the first byte of the digest as the hash function writes it.
#pragma once

#include <array>
#include <cstdint>

namespace st {

using Hash32 = std::array<uint8_t, 32>;
static_assert(sizeof(Hash32) == 32);

}  // namespace st
