// hasher: the binary trie's pluggable hash H (SHA-256, go-ethereum's choice and the default,
// or BLAKE3, the EIP's reference hash) as a small table of batch entry points, plus the
// trie's zero rule: hash(64 zero bytes) = 32 zero bytes (only for 64-byte node inputs).
//
// Invariants: a Hasher is a value (two pointers' worth of function table); the SHA-256
// table is the process-wide dispatched kernel (sha256_active()) captured at construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "kernels/support/hash32.h"
#include "kernels/support/tree_kinds.h"

namespace st::bintrie {

using st::Hash32;
using Stem = std::array<uint8_t, 31>;

// The binary trie hashes with HashKind::sha256 or HashKind::blake3 (the spine's kinds,
// kernels/support/tree_kinds.h); hash_kind_from_name accepts those two names only.
using st::HashKind;
using st::hash_kind_name;
std::optional<HashKind> hash_kind_from_name(std::string_view name);

struct Hasher {
  HashKind kind = HashKind::sha256;
  void (*hash)(const uint8_t* data, size_t len, uint8_t* out) = nullptr;
  void (*hash32_batch)(const uint8_t* in, uint8_t* out, size_t n) = nullptr;
  void (*hash64_batch)(const uint8_t* in, uint8_t* out, size_t n) = nullptr;
};

Hasher make_hasher(HashKind kind);

// Whether n bytes at p are all zero, n a multiple of 8 (32: a digest, 64: a pair).
template <int Bytes>
inline bool is_zero_bytes(const uint8_t* p) {
  static_assert(Bytes % 8 == 0);
  uint64_t acc = 0;
  for (int i = 0; i < Bytes / 8; ++i) { uint64_t w; std::memcpy(&w, p + 8 * i, 8); acc |= w; }
  return acc == 0;
}
inline bool is_zero32(const uint8_t* p) { return is_zero_bytes<32>(p); }
inline bool is_zero64(const uint8_t* p) { return is_zero_bytes<64>(p); }

// hash(left || right) with the zero rule, one node.
inline void hash_pair(const Hasher& h, const uint8_t* left32, const uint8_t* right32, uint8_t* out32) {
  uint8_t msg[64];
  std::memcpy(msg, left32, 32);
  std::memcpy(msg + 32, right32, 32);
  if (is_zero64(msg)) { std::memset(out32, 0, 32); return; }
  h.hash(msg, 64, out32);
}

// The stem node hash: H(stem31 || 0x00 || subtree_root) (no zero rule: never 64 zeros in
// practice, and go-ethereum applies none here).
inline void hash_stem_node(const Hasher& h, const uint8_t* stem31, const uint8_t* subtree_root32, uint8_t* out32) {
  uint8_t msg[64];
  std::memcpy(msg, stem31, 31);
  msg[31] = 0;
  std::memcpy(msg + 32, subtree_root32, 32);
  h.hash(msg, 64, out32);
}

}  // namespace st::bintrie
