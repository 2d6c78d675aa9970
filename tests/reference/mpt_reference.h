// mpt_reference: a slow, obviously correct Merkle Patricia Trie, the oracle for the engine.
//
// Everything is recomputed from the whole key/value set by plain recursion over unpacked
// nibble vectors, with its own RLP (vector concatenation) and hex-prefix code: it shares
// nothing with engine/mpt or kernels/rlp except keccak256. The Ethereum state model here is a
// std::map of accounts; a StateDiff is applied field by field.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/state/state_types.h"

namespace st::ref {

using Bytes = std::vector<uint8_t>;
using Hash = std::array<uint8_t, 32>;

Bytes from_hex(const std::string& s);  // accepts an optional 0x prefix; aborts on bad hex
std::string to_hex(const uint8_t* p, size_t n);
template <class C> std::string to_hex(const C& c) { return to_hex(c.data(), c.size()); }

Bytes keccak(const Bytes& b);
Bytes rlp_string(const Bytes& s);
Bytes rlp_list(const std::vector<Bytes>& encoded_items);
Bytes rlp_uint_be(const Bytes& be);  // leading zeros trimmed

// Root of the trie holding exactly kv (empty values are not allowed in kv).
Hash mpt_root(const std::map<Bytes, Bytes>& kv);
// The encodings of the nodes on the path to key (root first), hashed nodes only: what a
// Merkle proof must contain.
std::vector<Bytes> mpt_proof(const std::map<Bytes, Bytes>& kv, const Bytes& key);
// Same with every key replaced by keccak(key).
Hash mpt_secure_root(const std::map<Bytes, Bytes>& kv);

// The state model.
struct Account {
  uint64_t nonce = 0;
  st::state::U256 balance{};
  Bytes code;
  std::map<st::state::Hash32, st::state::Hash32> storage;  // zero values never stored
};
using State = std::map<st::state::Address, Account>;

State from_allocation(const st::state::Allocation& alloc);
void apply_diff(State& s, const st::state::StateDiff& diff);
Hash storage_root(const Account& a);
Bytes account_rlp(const Account& a);  // rlp([nonce, balance, storage_root, code_hash])
Hash state_root(const State& s);

}  // namespace st::ref
