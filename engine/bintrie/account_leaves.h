// account_leaves: the leaves an Ethereum account contributes to the binary trie, as
// go-ethereum writes them.
//
// Genesis (UpdateAccount + code + storage): basic data (sub 0), code hash (sub 1,
// keccak256(code)), code chunks at CODE_OFFSET + i, storage slots with a non-zero value
// (header slots < 64 at sub 64 + s, the rest at MAIN_STORAGE_OFFSET + s). A zero genesis
// storage value writes nothing.
//
// A block's account diff (the one rule of the in-memory state and the disk commit; go-ethereum's
// BinaryTrie with its StateDB in binary-trie mode, EIP-7864):
//   destroyed (applied first)  basic data := 32 zero bytes, code hash := 32 zero bytes
//                              (DeleteAccount); its storage slots and code chunks stay (the
//                              trie has no way to enumerate them; go-ethereum wipes none)
//   nonce / balance / code     basic data := the old one (zeros if absent or destroyed) with
//                              the given fields (code: its size); code hash := keccak256(code)
//                              when code is given, else the empty-code hash when the account
//                              did not exist (account_exists: a destroyed account reads as
//                              absent) or had no code-hash leaf, else unchanged
//   code                       chunks 0..n-1 (the chunks of a longer old code stay)
//   storage write              the slot's leaf := the value (zero: a present zero value)
// The header leaves depend on the old ones, so a diff becomes a HeaderPatch (resolved
// against the old leaves by resolve_header, where they are read: the tree in memory, the
// stem blob on disk) plus plain leaf writes.
//
// Invariants: the code hash is supplied by the caller (keccak256 lives in kernels/); the
// output order is irrelevant to the root (batch_root sorts), except that a later write of
// one key wins.
#pragma once

#include <optional>
#include <string>
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

// What an account diff does to the header leaves (sub 0 basic data, sub 1 code hash).
struct HeaderPatch {
  bool reset = false;   // destroyed: the old header leaves are not read
  bool fields = false;  // nonce, balance or code given (after any reset)
  std::optional<uint64_t> nonce;
  std::optional<Hash32> balance_be;
  std::optional<uint32_t> code_size;
  std::optional<Hash32> code_hash;  // keccak256 of the given code
  bool active() const { return reset || fields; }
};

// One account diff as writes: the header patch and the plain leaf writes (code chunks,
// storage slots; full keys, in the diff's order).
struct AccountWrites {
  Hash32 header{};  // the basic-data key; the code-hash key differs in byte 31 only
  HeaderPatch patch;
  std::vector<Entry> leaves;
};

// The header leaves after a patch; code_hash nullopt = the old leaf stays.
struct HeaderLeaves {
  Hash32 basic_data{};
  std::optional<Hash32> code_hash;
};

// An empty string when the diff fits the basic-data layout (balance < 2^128, code
// < 2^24 bytes), else why not.
std::string check_account_diff(const st::state::AccountDiff& diff);

// The diff's writes (the rule above). Precondition: check_account_diff(diff) is empty.
void account_diff_writes(const KeyScheme& ks, const st::state::AccountDiff& diff, CodeHashFn code_hash,
                         AccountWrites* out);

// A later diff of the same account in one batch folded over an earlier one, so that
// resolving the merged patch once equals resolving the two in turn.
void merge_header_patch(HeaderPatch* into, const HeaderPatch& later);

// Whether the account exists, from its header leaves (nullopt = absent), as go-ethereum's
// BinaryTrie.GetAccount reads them: absent when both are missing or both are zero (a
// destroyed account, DeleteAccount's leaves).
bool account_exists(const std::optional<Hash32>& basic_data_leaf, const std::optional<Hash32>& code_hash_leaf);

// The header leaves after `patch` given the old ones (nullopt = absent). Precondition:
// patch.active().
HeaderLeaves resolve_header(const HeaderPatch& patch, const std::optional<Hash32>& old_basic_data,
                            const std::optional<Hash32>& old_code_hash, CodeHashFn code_hash);

}  // namespace st::bintrie
