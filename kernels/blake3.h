// blake3: our own portable BLAKE3 (unkeyed hash mode, 32-byte output), the EIP-7864
// reference hash and the binary trie's alternative to SHA-256.
//
// The hot shapes of the binary trie are single-block messages (32-byte leaves, 64-byte
// node pairs): those take one compression with flags CHUNK_START|CHUNK_END|ROOT and skip
// the chunk/tree machinery. Longer inputs use the full chunk tree (1024-byte chunks,
// 64-byte blocks, parent nodes merged with a stack as the BLAKE3 paper describes).
//
// Invariants: pure functions, no allocation, no locks, no exceptions; out may alias in only
// for the batch entry points (exact aliasing).
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::kernels {

inline constexpr size_t kBlake3DigestBytes = 32;

// One message of any length (0 allowed) -> out[32].
void blake3(const uint8_t* data, size_t len, uint8_t* out);

// n independent 32-byte messages in[32*i] -> out[32*i] (in == out allowed).
void blake3_hash32_batch(const uint8_t* in, uint8_t* out, size_t n);

// n independent 64-byte messages in[64*i] -> out[32*i] (out may equal in).
void blake3_hash64_batch(const uint8_t* in, uint8_t* out, size_t n);

// n independent messages of any lengths: msgs[i] / lens[i] -> out[32*i].
void blake3_hash_batch(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);

}  // namespace st::kernels
