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
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
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
  mutable std::mutex mu_;
  std::map<std::pair<state::Address, state::Hash32>, std::vector<std::pair<uint64_t, state::Hash32>>> slots_;
  std::map<state::Address, std::vector<std::pair<uint64_t, AccountFields>>> accounts_;
};

}  // namespace st::pipeline
