// proof: sibling-path proofs for one key (presence or absence) and for all values of a
// stem, a verifier, and the serialized proof size (the binary trie's witness argument).
//
// Key proof, serialized (proof_size_bytes is the length of this encoding):
//   +-------+-------------------+-----+---------+----------------------------------------+
//   | depth | depth x 32-byte   | end | stem 31 | end = 1 (the key's stem): 8 x 32 stem   |
//   | (1 B) | internal siblings | 1 B | (end>0) |   siblings, 1 B present, [32 B value]   |
//   |       | root first        |     |         | end = 2 (another stem: absence): 32 B R |
//   +-------+-------------------+-----+---------+----------------------------------------+
//   end = 0: the walk reached an empty child (absence); no stem follows.
//
// Stem proof: depth, internal siblings, stem 31, presence bitmap 32, present values.
//
// Invariants: verification recomputes the root from the proof alone and compares it with
// the trusted root; any change to a sibling, value, stem or the claimed key fails.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"

namespace st::bintrie {

enum class ProofEnd : uint8_t { empty = 0, key_stem = 1, other_stem = 2 };

struct KeyProof {
  std::vector<Hash32> siblings;  // internal siblings from the root down
  ProofEnd end = ProofEnd::empty;
  Stem stem{};                    // for key_stem / other_stem
  Hash32 stem_siblings[8] = {};  // key_stem: leaf level first
  std::optional<Hash32> value;   // key_stem: the value, if present
  Hash32 other_subtree_root{};   // other_stem: that stem's subtree root R
};

struct StemProof {
  std::vector<Hash32> siblings;
  Stem stem{};
  std::array<uint8_t, 32> bitmap{};
  std::vector<Hash32> values;
};

// Precondition: the tree is committed.
KeyProof prove_key(const MutableTree& tree, const Hash32& key);
// nullopt when the key's stem is absent.
std::optional<StemProof> prove_stem(const MutableTree& tree, const uint8_t* stem31);

// The proven value (nullopt = proven absent), or why the proof is invalid.
std::variant<std::optional<Hash32>, std::string> verify_key_proof(const Hasher& h, const Hash32& root,
                                                                   const Hash32& key, const KeyProof& proof);
std::string verify_stem_proof(const Hasher& h, const Hash32& root, const StemProof& proof);  // "" = valid

std::vector<uint8_t> serialize_key_proof(const KeyProof& proof);
size_t proof_size_bytes(const KeyProof& proof);
size_t proof_size_bytes(const StemProof& proof);

}  // namespace st::bintrie
