// bal_final_state: the from-scratch reference for block files. The starting allocation with
// every block's post-state diff (engine/state/bal_derive.h) applied in order, and the root of
// that final state computed from scratch (the MPT of the allocation; the binary trie's leaves
// batch-hashed, SHA-256 key scheme). The binary trie keeps a slot set to zero as a present zero
// leaf, so the slots ever zeroed (and not set again since) are kept beside the allocation.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "engine/state/bal.h"
#include "engine/state/state_types.h"

namespace st::reference {

struct BalFinalState {
  state::Allocation alloc;  // accounts in first-seen order: the start's, then new ones
  std::set<std::pair<state::Address, state::Hash32>> zeroed;
};

BalFinalState bal_final_state(const state::Allocation& start, const std::vector<state::Block>& blocks);

// bintrie: the binary trie's root (SHA-256 key scheme), else the MPT's.
state::Hash32 bal_final_root(const BalFinalState& f, bool bintrie);

}  // namespace st::reference
