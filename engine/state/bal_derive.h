// bal_derive: what a replay derives from a block access list without executing anything.
//
//   post_state_diff   the block's post-state diff: per account the LAST change of every
//                     field (highest block access index), storage writes in slot order; an
//                     account with only reads contributes nothing. Applied to the pre-state
//                     it gives the post-state of either tree (MptState::apply,
//                     bintrie::StateTree::apply_diff, the on-disk committers).
//   access_by_index   per block access index 0..tx_count+1, the accounts and slots written
//                     at that index (exact: the BAL indexes every change) and read (the BAL
//                     does not index reads: a written slot counts as read by each index that
//                     writes it, since the client looks up its original value; read-only
//                     slots and accounts touched without changes are assigned to the
//                     transactions 1..n by a stated rule, see ReadAssignment).
//   summary           counts for `statetree workload --show`.
//
// Invariants: pure functions of their inputs; orders are the BAL's (accounts by address,
// slots ascending) unless ReadAssignment::shuffle reorders the read-only accesses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/state/bal.h"
#include "engine/state/state_types.h"

namespace st::state {

StateDiff post_state_diff(const BlockAccessList& bal);
// The same into *out, reusing its accounts' vectors (no allocation once they are as large).
void post_state_diff(const BlockAccessList& bal, StateDiff* out);

struct SlotRef {
  Address address{};
  Hash32 slot{};
  bool operator==(const SlotRef&) const = default;
};

struct IndexAccess {
  std::vector<Address> accounts_written;  // balance, nonce, code or storage changed at this index
  std::vector<SlotRef> slots_written;
  std::vector<Address> accounts_read;     // touched without a change at this index
  std::vector<SlotRef> slots_read;        // read-only slots assigned to this index
};

// How read-only slots and change-less accounts (not indexed in a BAL) are given to
// transactions. bal_order: contiguous runs in BAL order, transaction t taking a share
// proportional to weights[t-1] (equal shares when weights is empty). shuffle: the same
// shares after a seeded shuffle (splitmix64 Fisher-Yates) of the read-only accesses.
struct ReadAssignment {
  enum class Kind { bal_order, shuffle } kind = Kind::bal_order;
  uint64_t seed = 0;
  std::vector<uint64_t> weights;  // per transaction (e.g. its calls); empty = equal
};

// One entry per index 0..tx_count+1 (tx_count 0: the reads go to index 0).
std::vector<IndexAccess> access_by_index(const BlockAccessList& bal, uint32_t tx_count, const ReadAssignment& rule);

// access_by_index's result and its scratch, rebuilt in place: once its vectors are as large
// as a block needs, filling it again allocates nothing.
struct IndexAccesses {
  struct ReadOnly {  // an account touched without change in the whole block, or a read slot
    Address address;
    std::optional<Hash32> slot;
  };
  std::vector<IndexAccess> by_index;  // one entry per index 0..tx_count+1
  std::vector<ReadOnly> reads;        // scratch: the read-only accesses in BAL order
};
void access_by_index(const BlockAccessList& bal, uint32_t tx_count, const ReadAssignment& rule, IndexAccesses* out);

struct BalSummary {
  uint64_t accounts = 0;           // accounts listed
  uint64_t accounts_changed = 0;   // with at least one change
  uint64_t slots_read = 0;         // read-only slots
  uint64_t slots_written = 0;      // distinct written slots
  uint64_t storage_changes = 0;    // (slot, index) changes
  uint64_t slots_zeroed = 0;       // written slots whose final value is zero
  uint64_t balance_changes = 0, nonce_changes = 0, code_changes = 0;
  uint32_t max_index = 0;
};
BalSummary summarize_bal(const BlockAccessList& bal);

}  // namespace st::state
