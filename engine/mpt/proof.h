// proof: Merkle proofs in the eth_getProof shape and their verifier.
//
// A proof for key K is the list of RLP encodings of the nodes on the path from the root
// towards K, root first, listing only nodes that are referenced by hash (the root always;
// nodes shorter than 32 bytes are embedded in their parent's encoding and not repeated).
// It proves presence (the value) or absence (the path ends in an empty slot or a
// diverging leaf/extension).
//
// The verifier trusts nothing in the proof: each element must hash to the reference its
// parent (or the root) holds, is decoded with the hardened RLP decoder, and every element
// must be used. Any changed byte makes the proof fail (the element's hash changes).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/mpt/node_source.h"
#include "engine/state/state_types.h"

namespace st::mpt {

using Bytes = std::vector<uint8_t>;

// Proof of `path_key` (the trie key, already hashed for a secure trie) in a committed trie
// (precondition, checked: trie.committed(); compute the root first).
std::vector<Bytes> prove(const NodeSource& trie, std::span<const uint8_t> path_key);

struct ProofResult {
  std::string error;            // empty = the proof is valid
  std::optional<Bytes> value;   // valid proof: the value, or nullopt (key absent)
  bool ok() const { return error.empty(); }
};

ProofResult verify_proof(const Hash32& root, std::span<const uint8_t> path_key, std::span<const Bytes> proof);

// eth_getProof shape: the account (proved in the state trie at keccak(address)) and storage
// slots (each proved in the account's storage trie at keccak(slot)).
struct StorageProof {
  st::state::Hash32 slot{};
  st::state::Hash32 value{};  // zero when absent
  std::vector<Bytes> proof;
};
struct AccountProof {
  st::state::Address address{};
  bool exists = false;
  uint64_t nonce = 0;
  st::state::U256 balance{};
  Hash32 storage_root = kEmptyRoot;
  Hash32 code_hash = kEmptyCodeHash;
  std::vector<Bytes> account_proof;
  std::vector<StorageProof> storage_proofs;
};

// Checks the account proof against state_root and every storage proof against the proved
// storage root; the claimed fields must equal what the proofs prove. Empty string = valid.
std::string verify_account_proof(const Hash32& state_root, const AccountProof& p);

}  // namespace st::mpt
