// gas_schedule: the gas the study's workloads pay, charged by rule (docs/specs/workloads.md),
// never typed in as totals:
//
//   MPT (EIP-2929 + EIP-2200 + EIP-3529)
//     account access  cold 2,600 / warm 100
//     SLOAD           cold 2,100 / warm 100
//     SSTORE          +2,100 if the slot is cold; then, with original o, current c, new v:
//                     v == c: 100;  c == o: 20,000 if o == 0 else 2,900;  otherwise 100
//                     refunds (EIP-3529): 4,800 for clearing; restores and re-dirtying as
//                     EIP-2200 with EIP-3529's figures; capped at gas_used / 5 per transaction
//   binary trie (EIP-4762 as go-ethereum charges it), per transaction access events:
//     reading a leaf  1,900 the first time its stem is read, + 200 the first time the leaf is
//     writing a leaf  3,000 the first time its stem is edited, + 500 the first time the leaf is
//                     (a write also pays the read costs); CHUNK_FILL_COST (6,200) is never
//                     charged, as go-ethereum does not; an access that costs no witness gas
//                     pays the warm 100 (SLOAD, SSTORE, CALL)
//   transaction       21,000 + 2,400 per access-list address + 1,900 per access-list slot +
//                     calldata 4 per zero byte, 16 per non-zero byte
//
// A call of the study's attack loop = evm_work (the ERC20 code and loop, a warm CALL
// included: 627 balanceOf, 797 approve by default) + the state gas of its one slot access.
// The binary trie charges, once per transaction, the token's basic-data leaf for the CALL
// (its witness replaces the warm 100 that evm_work holds) and 200 per code chunk executed
// (leaves of the contracts' header stems).
//
// Invariants: pure functions and a per-transaction value type; no I/O.
#pragma once

#include <cstdint>
#include <set>
#include <span>

#include "engine/bintrie/keys.h"
#include "engine/state/state_types.h"
#include "kernels/support/tree_kinds.h"

namespace st::workloads::gas {

// EIP-2929 / EIP-2200 / EIP-3529
inline constexpr uint64_t kTxBase = 21000;
inline constexpr uint64_t kAccessListAddress = 2400;
inline constexpr uint64_t kAccessListSlot = 1900;
inline constexpr uint64_t kCalldataZeroByte = 4;
inline constexpr uint64_t kCalldataNonZeroByte = 16;
inline constexpr uint64_t kColdAccountAccess = 2600;
inline constexpr uint64_t kColdSload = 2100;
inline constexpr uint64_t kWarmStorageRead = 100;
inline constexpr uint64_t kSstoreSet = 20000;
inline constexpr uint64_t kSstoreReset = 5000 - kColdSload;  // 2,900
inline constexpr uint64_t kSstoreClearsRefund = kSstoreReset + kAccessListSlot;  // 4,800 (EIP-3529)
inline constexpr uint64_t kMaxRefundQuotient = 5;  // EIP-3529
// EIP-4762
inline constexpr uint64_t kWitnessBranchCost = 1900;
inline constexpr uint64_t kWitnessChunkCost = 200;
inline constexpr uint64_t kSubtreeEditCost = 3000;
inline constexpr uint64_t kChunkEditCost = 500;
inline constexpr uint64_t kChunkFillCost = 6200;  // in the EIP text; go-ethereum never charges it

// The study's per-call EVM work (ERC20 code + attack loop, a warm CALL included).
inline constexpr uint64_t kEvmWorkBalanceOf = 627;
inline constexpr uint64_t kEvmWorkApprove = 797;
// Code chunks executed per transaction (the bytecode's paths): token balanceOf / approve,
// attack contract.
inline constexpr uint64_t kChunksBalanceOf = 11;
inline constexpr uint64_t kChunksApprove = 14;
inline constexpr uint64_t kChunksAttack = 3;

// ---- MPT ---------------------------------------------------------------------------------
uint64_t mpt_account_access(bool warm);
uint64_t mpt_sload(bool warm);
struct SstoreCharge {
  uint64_t gas = 0;
  int64_t refund = 0;  // may be negative (a refund taken back)
};
SstoreCharge mpt_sstore(bool warm, const state::U256& original, const state::U256& current, const state::U256& value);

// ---- binary trie -------------------------------------------------------------------------
// go-ethereum's per-transaction AccessEvents, for leaves given by their tree keys.
class WitnessCharges {
 public:
  // Witness gas of reading / writing (read + edit costs) the leaf `key` (stem = key[0..31)).
  uint64_t read(const bintrie::Hash32& key);
  uint64_t write(const bintrie::Hash32& key);
  // The opcode's charge: the witness gas, or the warm 100 when it is zero.
  uint64_t sload(const bintrie::Hash32& key) { return or_warm(read(key)); }
  uint64_t sstore(const bintrie::Hash32& key) { return or_warm(write(key)); }
  static uint64_t or_warm(uint64_t g) { return g ? g : kWarmStorageRead; }
  // What read / write would charge now, without recording the access.
  uint64_t peek_read(const bintrie::Hash32& key) const;
  uint64_t peek_write(const bintrie::Hash32& key) const;

 private:
  std::set<bintrie::Stem> stems_read_, stems_edited_;
  std::set<bintrie::Hash32> leaves_read_, leaves_edited_;
};

// ---- transactions ------------------------------------------------------------------------
uint64_t calldata_gas(std::span<const uint8_t> data);
uint64_t intrinsic_gas(std::span<const uint8_t> calldata, uint64_t access_list_addresses, uint64_t access_list_slots);
// gas_used after the EIP-3529 refund cap.
uint64_t apply_refund(uint64_t gas_before_refund, int64_t refund);

// The attack transaction's calldata: run(uint256 first, uint256 count) (selector + two words).
std::vector<uint8_t> attack_calldata(uint64_t first, uint64_t count);

// The published per-call totals, from the rules above: a call on a cold slot never seen in
// the transaction, original value zero (approve) or present (balanceOf).
enum class Call { balance_of, approve };
using Tree = st::TreeKind;  // the schedules exist for TreeKind::mpt and TreeKind::bintrie
uint64_t per_call_gas(Call call, Tree tree, uint64_t evm_work);

}  // namespace st::workloads::gas
