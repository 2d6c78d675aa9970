// bintrie_state_reference: a slow, obvious model of the Ethereum state in the EIP-7864
// binary trie, written from the spec text (keys, leaves, code chunking) and go-ethereum's
// BinaryTrie methods (UpdateAccount, DeleteAccount, UpdateContractCode, UpdateStorage, with
// StateDB's reading of a deleted account as absent), independent of engine/bintrie: key
// derivation through OpenSSL SHA-256 and plain byte arithmetic, the root through
// bintrie_reference_root. Only the code hash (keccak256) comes from kernels/, as in
// mpt_reference.
//
// A block's AccountDiff is applied as go-ethereum's StateDB commits it: destroyed ->
// DeleteAccount; then, if nonce, balance or code is given, the account as GetAccount reads
// it (absent: nonce 0, balance 0, the empty code hash) with those fields -> UpdateAccount
// (and UpdateContractCode for code); then every storage write -> UpdateStorage.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "engine/state/state_types.h"
#include "tests/reference/bintrie_reference.h"

namespace st::reference {

class BintrieStateReference {
 public:
  void apply_allocation(const st::state::Allocation& alloc);
  void apply_diff(const st::state::StateDiff& diff);
  RefBytes32 root() const;

  // GetAccount: nullopt when the account is absent (both header leaves missing, or both
  // zero: deleted); a missing code-hash leaf of a present account reads as the empty code's.
  struct Account {
    uint64_t nonce = 0, code_size = 0;
    st::state::U256 balance{};
    RefBytes32 code_hash{};
  };
  std::optional<Account> get_account(const st::state::Address& a) const;
  const std::map<RefBytes32, RefBytes32>& leaves() const { return leaves_; }

 private:
  void update_account(const st::state::Address& a, uint64_t nonce, const st::state::U256& balance, uint64_t code_size,
                      const RefBytes32& code_hash);
  void delete_account(const st::state::Address& a);
  void update_code(const st::state::Address& a, const std::vector<uint8_t>& code);
  void update_storage(const st::state::Address& a, const RefBytes32& slot, const RefBytes32& value);

  std::map<RefBytes32, RefBytes32> leaves_;
};

// The spec's pieces, exposed for tests.
RefBytes32 ref_tree_key(const st::state::Address& a, const RefBytes32& tree_index_be, uint8_t sub);
std::vector<RefBytes32> ref_chunkify(const std::vector<uint8_t>& code);

}  // namespace st::reference
