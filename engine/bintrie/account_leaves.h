// account_leaves: the leaves an Ethereum account contributes to the binary trie, as
// go-ethereum writes them for a genesis allocation (UpdateAccount + code + storage):
//   basic data (sub 0), code hash (sub 1, keccak256(code)), code chunks at CODE_OFFSET + i,
//   storage slots with a non-zero value (header slots < 64 at sub 64 + s, the rest at
//   MAIN_STORAGE_OFFSET + s). A zero genesis storage value writes nothing.
//
// Invariants: the code hash is supplied by the caller (keccak256 lives in kernels/); the
// output order is irrelevant to the root (batch_root sorts).
#pragma once

#include <vector>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "engine/state/state_types.h"

namespace st::bintrie {

using CodeHashFn = void (*)(const uint8_t* code, size_t len, uint8_t* out32);

// Appends the account's leaves. Precondition: balance fits 128 bits, code < 2^24 bytes
// (checked by callers that parse input; see check_account).
void append_account_leaves(const KeyScheme& ks, const Address& addr, const st::state::Account& account,
                           const Hash32& code_hash, std::vector<Entry>* out);

// Every account of an allocation.
std::vector<Entry> allocation_leaves(const KeyScheme& ks, const st::state::Allocation& alloc, CodeHashFn code_hash);

// An empty string when the account fits the basic-data layout, else why not.
std::string check_account(const st::state::Account& account);

}  // namespace st::bintrie
