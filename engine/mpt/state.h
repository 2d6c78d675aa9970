// state: the Ethereum state model on MPTs. Accounts (nonce, balance, storage root, code hash)
// live in a secure account trie (key keccak256(address)); each contract's storage lives in
// its own secure storage trie (key keccak256(slot32), value RLP(trimmed value), zero = no
// leaf). A StateDiff is applied as one batch: its storage slot keys are hashed in one
// keccak batch, root() then re-hashes the dirty paths of ALL touched storage tries together
// (one keccak batch per depth across tries), writes the changed account leaves, and
// re-hashes the account trie.
//
// Semantics of an AccountDiff: `destroyed` removes the account and its storage first; then
// any given field (nonce, balance, code, storage writes) creates the account if missing and
// sets the field. Accounts are never deleted implicitly (no EIP-161 emptiness rule); genesis
// commits every allocated account, empty ones included.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "engine/mpt/account.h"
#include "engine/mpt/builder.h"
#include "engine/mpt/proof.h"
#include "engine/mpt/trie.h"
#include "engine/state/state_types.h"

namespace st::mpt {

struct AddressHash {
  size_t operator()(const st::state::Address& a) const {
    size_t h;
    std::memcpy(&h, a.data(), sizeof h);
    return h;
  }
};

class MptState {
 public:
  MptState() = default;
  MptState(const MptState&) = delete;
  MptState& operator=(const MptState&) = delete;

  void load(const st::state::Allocation& alloc);  // adds every account (state must be empty)
  void apply(const st::state::StateDiff& diff);
  Hash32 root(CommitStats* stats = nullptr, NodeCapture* capture = nullptr);

  std::optional<AccountFields> account(const st::state::Address& a);  // commits first
  size_t account_count() const { return accounts_.size(); }
  // eth_getProof for an address and slots (commits first).
  AccountProof prove(const st::state::Address& a, std::span<const st::state::Hash32> slots);

 private:
  struct Acc {
    AccountFields fields;
    Hash32 key{};  // keccak256(address)
    std::unique_ptr<Trie> storage;
  };
  Acc& touch(const st::state::Address& a);

  std::unordered_map<st::state::Address, Acc, AddressHash> accounts_;
  std::unordered_map<st::state::Address, Hash32, AddressHash> pending_;  // address -> its key
  Trie trie_;
};

// State root of an allocation with the batch builder (no mutable tries): every storage trie
// and the account trie built from scratch. Equals MptState{load(alloc)}.root().
Hash32 allocation_root(const st::state::Allocation& alloc, const BuildOptions& options = {});

}  // namespace st::mpt
