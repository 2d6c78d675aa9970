// generators: the study's workloads (docs/specs/workloads.md) as EIP-7928 block files, on
// the synthetic state of `statetree build` (workloads/synthetic_state.h), deterministic
// by (state, options). Counter k runs over the calls of the whole file (all transactions
// and blocks); the token is contract --contract of the state.
//
//   erc20_balanceof     call k reads one balance slot of the token:
//                         --slots existing  the state's balance entry of holder start + k
//                                           (entry 2(start+k)+2, a present slot)
//                         --slots empty     balance(start + k) = keccak256(pad32(start + k) ||
//                                           pad32(2)) for the integer address start + k (absent)
//   erc20_approve       call k writes allowance(A, start + k) := start + k, A a fresh owner per
//                       seed (every slot empty -> non-zero: one read + one write); with
//                       --slots existing the state's allowance entry 2(start+k)+1 instead (an
//                       update of a present slot)
//   mixed_sload_sstore  per transaction n_load balanceOf calls then n_store approve calls
//                       continuing the counter; n_load / n_store from --loads / --stores, or
//                       from the gas share p of balanceOf (--load-share, %) of the budget
//   mainnet_like        per 36M gas (scaled by --block-gas): 200 transactions, ~820 read-only
//                       slots (88 % absent), ~580 written slots (1/3 new, 2 % deletes, the
//                       rest updates), contracts drawn Zipf-like (exponent --zipf over a
//                       seeded order of the state's contracts)
//   synthetic_writes    the blocks of `statetree commit`: SyntheticState::next_block's ERC20
//                       transfers (--writes storage writes per block, block seed --seed; a
//                       third new slots, 2 % deletes, the rest updates; one sender per two
//                       writes), continuing the state's own block sequence. Transfer t is
//                       transaction t + 1: its sender's nonce and balance and each slot's
//                       last value in it are changes at index t + 1, every write a change
//                       (a slot added and deleted in one transfer is a change to zero, as
//                       commit writes it). No reads, no gas (the header's per-transaction list
//                       is empty), no fee recipient; block numbers are the state's.
//
// The ERC20 workloads and mainnet_like: every transaction also changes its sender (an EOA of the state: nonce + 1, balance minus
// gas_used x 1 gwei) and the fee recipient (a fresh address: balance plus the same), and the
// ERC20 workloads touch the attack contract (a fresh address, no changes). Gas is charged by
// gas_schedule.h for the chosen tree (per-slot warm/cold, per-transaction witness), calls
// filling a transaction up to --tx-gas unless --calls is given, transactions filling a block
// up to --block-gas unless --txs is given. Block headers carry each transaction's gas and
// calls; the first block carries the database's root when the caller gives it.
//
// The published cold-tail conditions (--other-slots N, ERC20 kinds only): in every block,
// each transaction after the first also touches N distinct existing slots of the state's
// other contracts (every contract but the token), drawn uniformly over those contracts'
// slots with a seeded splitmix64 sequence, never the same slot twice in the file (so each is
// a cold access in its block). --other-access read (default): each slot is an SLOAD (a
// read-only slot of the BAL; a BAL does not index reads, so a replay shares them out by its
// own rule); write: each slot is updated to a new non-zero value (a change at the
// transaction's index: exact per transaction, and committed). Gas by rule, per slot: an
// access of its contract's account (MPT 2,600 the first time in the transaction, 100 after;
// binary trie: its basic-data witness) and a cold SLOAD or SSTORE; no EVM work besides. The
// calls fill what the cap leaves. The call counter and the header's calls are the ERC20
// calls only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/bintrie/hasher.h"
#include "engine/state/bal.h"
#include "workloads/gas_schedule.h"
#include "workloads/synthetic_state.h"

namespace st::workloads {

enum class WorkloadKind { erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like, synthetic_writes };
std::optional<WorkloadKind> workload_kind_from_name(std::string_view name);
const char* workload_kind_name(WorkloadKind k);

enum class SlotsMode { existing, empty };

struct WorkloadOptions {
  WorkloadKind kind = WorkloadKind::erc20_balanceof;
  gas::Tree tree = gas::Tree::mpt;
  bintrie::HashKind bintrie_hash = bintrie::HashKind::sha256;  // stems for the witness charges
  std::optional<SlotsMode> slots;          // default: existing for balanceOf, empty for approve
  uint64_t blocks = 1;
  std::optional<uint64_t> calls;           // per transaction (balanceof / approve)
  std::optional<uint64_t> loads, stores;   // per transaction (mixed)
  uint64_t load_share_percent = 50;        // mixed: balanceOf's share of the gas budget
  std::optional<uint64_t> txs;             // per block
  uint64_t tx_gas = 1ull << 24;            // per-transaction cap
  std::optional<uint64_t> block_gas;       // default 100M (ERC20), 36M (mainnet_like)
  uint64_t start = 1;                      // first holder index / integer address
  uint64_t contract = 0;                   // the token: contract index in the state
  uint64_t seed = 1;                       // synthetic_writes: the block seed
  uint64_t writes = 4096;                  // synthetic_writes: storage writes per block
  double zipf = 1.8;
  uint64_t other_slots = 0;                // per transaction after a block's first (ERC20 kinds)
  bool other_write = false;                // other slots updated instead of read
  uint64_t evm_work_balance_of = gas::kEvmWorkBalanceOf;
  uint64_t evm_work_approve = gas::kEvmWorkApprove;
  uint64_t first_block_number = 0;
  std::optional<state::Hash32> pre_state_root;  // of the first block
};

// The blocks, or a one-line error (options that do not fit the state; synthetic_writes: a
// --writes or --seed other than those of the blocks the state already has).
std::variant<std::vector<state::Block>, std::string> generate_workload(const state::SyntheticState& src,
                                                                        const WorkloadOptions& o);

// synthetic_writes one block at a time: block number src->spec().blocks, drawn by
// SyntheticState::next_block, which advances *src by it (overlay and block count). Needs
// src->spec().block_writes >= 1. No pre-state root in the header.
state::Block next_synthetic_writes_block(state::SyntheticState* src, gas::Tree tree);

// Solidity mapping keys (docs/specs/workloads.md).
state::Hash32 erc20_balance_slot(const state::Address& holder);                              // slot 2
state::Hash32 erc20_allowance_slot(const state::Address& owner, const state::Address& spender);  // slot 3
state::Address integer_address(uint64_t n);  // the 20-byte big-endian integer n

}  // namespace st::workloads
