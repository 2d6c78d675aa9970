// synthetic_state: the deterministic synthetic state of `statetree build`: EOAs plus
// ERC20-like contracts whose storage holds what a token's storage holds, at Solidity's
// mapping slots (specs/workloads.md):
//
//   account i, i < contracts           : contract c = i; code = a small fixed-size ERC20
//                                        runtime stub (distinct per contract), nonce 1
//     slot 2 (totalSupply)              : present when slots_per_contract >= 1
//     balances[holder]  (mapping slot 0): keccak256(pad32(holder) || pad32(0))
//     allowances[owner][spender] (slot 1): keccak256(pad32(spender) || keccak256(pad32(owner) || pad32(1)))
//     storage slot j >= 1 of contract c : even j -> a balance, odd j -> an allowance, holders
//                                        drawn from the EOAs by a seeded generator
//   account i, i >= contracts          : EOA; nonce and balance from the generator
//   addresses                          : keccak256("statetree" || seed || i)[12..32)
//
// Every value is a function of (seed, i, j) through splitmix64, so account(i) and
// slot_key(i, j) are random-access and reproducible on any machine.
#pragma once

#include "engine/state/state_source.h"

namespace st::state {

struct SyntheticSpec {
  uint64_t accounts = 1000;          // total accounts (EOAs + contracts)
  uint64_t contracts = 0;            // the first `contracts` accounts are token contracts
  uint64_t slots_per_contract = 0;   // storage slots per contract
  uint64_t seed = 1;
};

class SyntheticState final : public StateSource {
 public:
  explicit SyntheticState(const SyntheticSpec& spec);
  const SyntheticSpec& spec() const { return spec_; }
  uint64_t account_count() const override { return spec_.accounts; }
  uint64_t slot_count() const override { return spec_.contracts * spec_.slots_per_contract; }
  void account(uint64_t i, AccountRecord* out) const override;
  std::optional<StateKey> slot_key(uint64_t i, uint64_t j) const override;
  uint64_t storage_size(uint64_t i) const override { return i < spec_.contracts ? spec_.slots_per_contract : 0; }
  std::string spec_json() const override;
  Address address(uint64_t i) const;

 private:
  Bytes32 slot_of(uint64_t contract, uint64_t j) const;
  SyntheticSpec spec_;
};

}  // namespace st::state
