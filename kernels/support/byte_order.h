// byte_order: fixed-width integers at a byte address, in a stated byte order, at any
// alignment and on any host. The on-disk formats (manifest, free list, commit records,
// snapshot blocks) are little-endian (put_u32/put_u64, get_u32/get_u64); key prefixes
// compare as big-endian words (load_be64); SHA-256 reads and writes big-endian words
// (load_be32/store_be32); Keccak, BLAKE3, XXH64 and CRC-32C read little-endian words
// (load_le32/load_le64; BLAKE3 writes them with store_le32).
//
// Invariants: header-only and pure; the results do not depend on the host's byte order or
// the pointer's alignment (memcpy plus a byte swap where the host differs, or bytes
// composed one by one).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace st {

inline uint64_t load_le64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// The 32-bit words are composed byte by byte: the compiler turns that into one load (and a
// byte swap), and the form lets it vectorize loops over many words (SHA-256's sliced
// adapters), where a memcpy per word does not.
inline uint32_t load_le32(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

inline uint64_t load_be64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

inline void store_le32(void* p, uint32_t v) {
  uint8_t* b = static_cast<uint8_t*>(p);
  b[0] = uint8_t(v); b[1] = uint8_t(v >> 8); b[2] = uint8_t(v >> 16); b[3] = uint8_t(v >> 24);
}

inline uint32_t load_be32(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
}

inline void store_be32(void* p, uint32_t v) {
  uint8_t* b = static_cast<uint8_t*>(p);
  b[0] = uint8_t(v >> 24); b[1] = uint8_t(v >> 16); b[2] = uint8_t(v >> 8); b[3] = uint8_t(v);
}

// The on-disk formats' little-endian fields, byte by byte.
inline void put_u64(uint8_t* p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline void put_u32(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline uint64_t get_u64(const uint8_t* p) { uint64_t v = 0; for (int i = 7; i >= 0; --i) v = (v << 8) | p[i]; return v; }
inline uint32_t get_u32(const uint8_t* p) { uint32_t v = 0; for (int i = 3; i >= 0; --i) v = (v << 8) | p[i]; return v; }

}  // namespace st
