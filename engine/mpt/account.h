// account: the state-trie leaf value of an account and the storage-trie leaf value of a slot.
//
//   account leaf value = RLP([nonce, balance, storage_root, code_hash])
//     nonce, balance: minimal big-endian integers; storage_root, code_hash: 32-byte strings
//   storage leaf value = RLP(value with leading zero bytes trimmed); zero = no leaf
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/mpt/node_ref.h"
#include "engine/state/state_types.h"

namespace st::mpt {

struct AccountFields {
  uint64_t nonce = 0;
  st::state::U256 balance{};
  Hash32 storage_root = kEmptyRoot;
  Hash32 code_hash = kEmptyCodeHash;
};

size_t account_rlp_size(const AccountFields& a);
uint8_t* put_account_rlp(uint8_t* out, const AccountFields& a);
std::vector<uint8_t> account_rlp(const AccountFields& a);
// Decodes an account leaf value strictly; empty string on success, else the reason.
std::string decode_account_rlp(std::span<const uint8_t> enc, AccountFields* out);

bool is_zero(const st::state::Hash32& v);
// Storage leaf value (empty vector for zero = delete).
std::vector<uint8_t> storage_value_rlp(const st::state::Hash32& v);
// The same into out[0..33); returns its length (0 for zero = delete). No allocation.
size_t put_storage_value_rlp(uint8_t* out, const st::state::Hash32& v);

}  // namespace st::mpt
