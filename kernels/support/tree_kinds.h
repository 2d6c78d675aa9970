// tree_kinds: the tree and hash kinds of the project, defined once. The manifest stores them
// as one byte each (tk, hk), so the numbers are part of the on-disk format.
//
// Invariants: header-only; the enumerators' values never change (they are on disk); every
// kind has a name (tree_kind_name / hash_kind_name), and names are lower case, as the CLI
// and the JSON results spell them.
#pragma once

#include <cstdint>

namespace st {

enum class TreeKind : uint8_t { merkle = 1, mpt = 2, bintrie = 3 };
enum class HashKind : uint8_t { sha256 = 1, keccak256 = 2, blake3 = 3 };

inline const char* tree_kind_name(TreeKind k) {
  switch (k) {
    case TreeKind::merkle: return "merkle";
    case TreeKind::mpt: return "mpt";
    case TreeKind::bintrie: return "bintrie";
  }
  return "unknown-tree";
}

inline const char* hash_kind_name(HashKind k) {
  switch (k) {
    case HashKind::sha256: return "sha256";
    case HashKind::keccak256: return "keccak256";
    case HashKind::blake3: return "blake3";
  }
  return "unknown-hash";
}

}  // namespace st
