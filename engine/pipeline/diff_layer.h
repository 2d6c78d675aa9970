// diff_layer: the values that blocks wrote and that a reader's pinned state may not show yet
// (blocks in flight, or committed after the reader loaded its manifest), consulted before
// the database's answer.
//
//   add(seq, diff)          block `seq`'s post-state diff (seq strictly increasing)
//   slot(a, s, from, to)    the value written last by a block in [from, to), if any
//   account(a, from, to)    the account fields written by blocks in [from, to), merged in
//                           block order (a later block's field wins)
//   drop_before(seq)        forgets the blocks < seq
//
// A reader pinned to the state after block `from - 1` (blocks 0..from-1 visible on disk)
// reading for block `to` sees the state after block `to - 1` as: the layer's entries of
// blocks [from, to) over the disk answer. Invariant: the caller never asks for a range
// that starts below the last drop_before(). Thread-safe (one mutex): the traverse stage
// adds and reads, nothing else touches it.
//
// Layout: one entry per block held, in block order, each two flat vectors sorted by key
// (its accounts; its slot writes) searched by binary search. A dropped block's vectors are
// kept and refilled by a later add(), so a run whose blocks have one shape allocates
// nothing here once the layer has held as many blocks as it will.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/state/state_types.h"

namespace st::pipeline {

class DiffLayer {
 public:
  struct AccountFields {
    std::optional<uint64_t> nonce;
    std::optional<state::U256> balance;
    bool code_changed = false;
  };

  void add(uint64_t seq, const state::StateDiff& diff);
  void drop_before(uint64_t seq);
  std::optional<state::Hash32> slot(const state::Address& a, const state::Hash32& s, uint64_t from, uint64_t to) const;
  // nullopt: no block of [from, to) wrote the account (nor any of its slots).
  std::optional<AccountFields> account(const state::Address& a, uint64_t from, uint64_t to) const;
  // Entries held (slot writes + account entries), for reports and tests.
  uint64_t entries() const;

 private:
  struct BlockWrites {
    uint64_t seq = 0;
    std::vector<std::pair<state::Address, AccountFields>> accounts;            // by address
    std::vector<std::tuple<state::Address, state::Hash32, state::Hash32>> slots;  // by (address, slot): value
  };
  // held_[first_ .. first_ + count_) (mod size) are the blocks held, oldest first; the rest
  // are dropped blocks whose vectors wait for reuse.
  BlockWrites& at(size_t i) { return held_[(first_ + i) % held_.size()]; }
  const BlockWrites& at(size_t i) const { return held_[(first_ + i) % held_.size()]; }

  mutable std::mutex mu_;
  std::vector<BlockWrites> held_;
  size_t first_ = 0, count_ = 0;
};

}  // namespace st::pipeline
