// mpt/dirty_trie_paths.h: nibble-path helpers of the block committer's partial trie
// (dirty_trie.h), shared by its resolve, apply and encoding passes. Internal to those files.
//
// Paths are packed nibbles, high nibble first (the RocksDB path key's form).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/persist/mpt/node.h"
#include "engine/persist/record_page.h"

namespace st::persist::mpt_commit_detail {

inline uint8_t nib(const uint8_t* key, uint32_t i) { return i % 2 == 0 ? key[i / 2] >> 4 : key[i / 2] & 0x0f; }
inline void set_nib(uint8_t* key, uint32_t i, uint8_t v) {
  key[i / 2] = i % 2 == 0 ? uint8_t((key[i / 2] & 0x0f) | (v << 4)) : uint8_t((key[i / 2] & 0xf0) | v);
}
// at[0..depth) followed by nibs[0..n) (the rest of `at` zero).
inline std::array<uint8_t, 32> extend(const std::array<uint8_t, 32>& at, uint32_t depth, const uint8_t* nibs,
                                      uint32_t n) {
  std::array<uint8_t, 32> out{};
  for (uint32_t i = 0; i < depth; ++i) set_nib(out.data(), i, nib(at.data(), i));
  for (uint32_t i = 0; i < n; ++i) set_nib(out.data(), depth + i, nibs[i]);
  return out;
}
inline std::string key_name(std::string_view key) { return "node at path key " + path_key_hex(key); }

}  // namespace st::persist::mpt_commit_detail
