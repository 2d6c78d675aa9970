// synthetic_state: a workload generator, the deterministic synthetic state of `statetree
// build` (and the blocks of `statetree commit`). It implements the engine's StateSource
// interface (engine/state/state_source.h); the engine itself never names it. It keeps the
// namespace st::state of the types it produces. EOAs plus
// ERC20-like contracts whose storage holds what a token's storage holds, at Solidity's
// mapping slots, in the storage layout of the study's ERC20 (specs/workloads.md):
//
//   account i, i < contracts           : contract c = i; nonce 1, balance 0; code = a
//                                        kStubCodeBytes-byte ERC20-like runtime stub whose
//                                        PUSH32 constant makes it distinct per contract
//     storage entry j = 0               : slot 0 (totalSupply)
//     storage entry j odd  (a=(j-1)/2)  : allowances[owner(a)][spender(a)] (mapping slot 3):
//                                        keccak256(pad32(spender) || keccak256(pad32(owner) || pad32(3)))
//     storage entry j even (b=j/2-1)    : balances[holder(b)] (mapping slot 2):
//                                        keccak256(pad32(holder) || pad32(2))
//     holder(b) = owner(b) = H(perm_c(b)), spender(a) = H(perm'_c(a)), where perm_c is a
//     seeded affine bijection of [0, D), D = max(EOAs, slots_per_contract, 1), and
//     H(h) = address(contracts + h) (an EOA when h < EOAs, otherwise an address that holds
//     no account). perm_c being a bijection makes the slots of one contract distinct.
//   account i, i >= contracts          : EOA; nonce 0..999, balance 1 wei .. 1000 ETH
//   addresses                          : keccak256("statetree" || seed_be64 || i_be64)[12..32)
//   storage values                     : non-zero, up to 128 bits, from (seed, c, j)
//
// Every value is a function of (seed, i, j) through splitmix64, so account(i),
// slot_key(i, j) and slot_value(i, j) are random-access and reproducible on any machine.
// spec_json() = {"kind":"synthetic","version":1,"accounts":N,"contracts":C,
// "slots_per_contract":S,"seed":X}; parse_synthetic_spec() reads it back (strict).
//
// Blocks (statetree commit): spec.blocks > 0 means the state after that many deterministic
// blocks of block_writes storage writes each, drawn from block_seed; spec_json() then adds
// "blocks":B,"block_seed":Y,"block_writes":W. Block b is a batch of ERC20 transfers: every
// two writes one sender EOA (nonce + 1, a new balance) and one contract, whose write is
//   1/3    a new slot: balances[fresh holder], holder = H(D + k), k = the contract's count of
//          new slots so far (entry S + k; never one of the built slots)
//   2 %    a delete (value zero) of a present slot, uniform over the contract's live slots
//   rest   an update of a present slot to a new random non-zero value
// The overlay (per touched contract: new entries, deleted entries, changed values; per
// touched EOA: nonce, balance) is built by replaying the blocks at construction, so
// account(), slot_key(), slot_value() describe the state after them. Entry indices j of
// slot_key / slot_value are LIVE indices: deleted entries are skipped (the j-th present
// slot), so every j < storage_size(i) names a present slot, as the StateSource contract says.
// next_block can also list the block's writes in draw order (SyntheticBlockWrite, one per
// write w, transfer w / 2), so a caller can index them by transaction (the synthetic_writes
// workload, workloads/generators.h, writes them as an EIP-7928 block).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/state/state_source.h"

namespace st::state {

struct SyntheticSpec {
  uint64_t accounts = 1000;          // total accounts (EOAs + contracts)
  uint64_t contracts = 0;            // the first `contracts` accounts are token contracts
  uint64_t slots_per_contract = 0;   // storage slots per contract
  uint64_t seed = 1;
  uint64_t blocks = 0, block_seed = 0, block_writes = 0;  // blocks applied on top (see above)
  bool operator==(const SyntheticSpec&) const = default;
};

// Write w of a synthetic block, in draw order: transfer w / 2's sender update (even w, a
// state with EOAs) and one storage write (a state with contracts; value zero = delete).
struct SyntheticBlockWrite {
  uint64_t transfer = 0;  // w / 2
  bool has_sender = false;
  Address sender{};
  uint64_t sender_nonce = 0;  // after this write
  U256 sender_balance{};
  bool has_slot = false;
  Address contract{};
  Hash32 slot{}, value{};
};

inline constexpr size_t kStubCodeBytes = 128;
inline constexpr uint64_t kSyntheticSpecVersion = 1;

class SyntheticState final : public StateSource {
 public:
  // Precondition: spec.contracts <= spec.accounts (the CLI checks it).
  explicit SyntheticState(const SyntheticSpec& spec);
  const SyntheticSpec& spec() const { return spec_; }
  uint64_t account_count() const override { return spec_.accounts; }
  uint64_t slot_count() const override;
  void account(uint64_t i, AccountRecord* out) const override;
  void account_fields(uint64_t i, AccountRecord* out) const override;
  std::optional<StateKey> slot_key(uint64_t i, uint64_t j) const override;
  std::optional<Hash32> slot_value(uint64_t i, uint64_t j) const override;
  uint64_t storage_size(uint64_t i) const override;
  std::string spec_json() const override;
  Address address(uint64_t i) const;
  // Generates block number spec().blocks (needs spec().block_writes), applies it to the
  // overlay and counts it in spec().blocks; *out = its diff (nullptr: replay only);
  // *writes (when given) = its block_writes writes in draw order.
  void next_block(StateDiff* out, std::vector<SyntheticBlockWrite>* writes = nullptr);

 private:
  struct Overlay;
  void overlay_storage(uint64_t contract, AccountRecord* out) const;  // the blocks' storage changes
  uint64_t entry_of(uint64_t contract, uint64_t live_j) const;  // live index -> entry
  uint64_t block_rand(uint64_t tag, uint64_t block, uint64_t w) const;
  // next_block's steps: a block's diff, a random slot value, a sender's and a slot's write.
  struct BlockDiff;
  Hash32 block_value(uint64_t tag, uint64_t block, uint64_t w) const;
  void block_sender_write(uint64_t block, uint64_t w, BlockDiff& diff, SyntheticBlockWrite* trace);
  void block_slot_write(uint64_t block, uint64_t w, BlockDiff& diff, SyntheticBlockWrite* trace);
  std::shared_ptr<Overlay> overlay_;  // null: no blocks
  Hash32 slot_of(uint64_t contract, uint64_t j) const;
  Hash32 value_of(uint64_t contract, uint64_t j) const;
  struct Perm {
    uint64_t a = 0, o = 0, d = 1;
    uint64_t operator()(uint64_t x) const { return uint64_t(((unsigned __int128)a * x + o) % d); }
  };
  Perm perm(uint64_t contract, uint64_t tag) const;
  uint64_t rand(uint64_t tag, uint64_t i, uint64_t j) const;
  SyntheticSpec spec_;
  uint64_t domain_;  // D above
};

// Parses what spec_json() wrote (fields in any order, whitespace allowed; every field
// required, unknown fields and a "kind" other than "synthetic" are errors).
std::variant<SyntheticSpec, std::string> parse_synthetic_spec(std::string_view json);

}  // namespace st::state
