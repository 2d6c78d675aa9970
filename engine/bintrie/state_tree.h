// state_tree: the Ethereum state model (accounts, code, storage) over the mutable binary
// trie, driven by the same Allocation / StateDiff types as the MPT, with go-ethereum's
// binary-trie semantics:
//   - a block's account diff becomes writes by account_leaves.h's rule (account_diff_writes
//     + resolve_header against the tree's old header leaves), the same rule as the disk
//     commit (engine/persist/bintrie/commit.h): a destroyed account gets zero basic data and
//     a zero code hash, nothing else; a storage write of zero is a present zero value
//     (nothing is ever removed);
//   - genesis storage entries with a zero value write nothing (SetState of zero on a fresh
//     slot is a no-op in go-ethereum).
//
// Invariants: commit() returns the root of exactly the leaves written so far; the code
// hash is keccak256(code) (kernels/keccak256.h).
#pragma once

#include <string>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/state/state_types.h"

namespace st::bintrie {

class StateTree {
 public:
  explicit StateTree(KeyScheme ks) : ks_(ks), tree_(ks.hasher) {}

  // Genesis: every account's leaves. Returns an error message (e.g. a balance over 128
  // bits) or an empty string; on error nothing is applied.
  std::string apply_allocation(const st::state::Allocation& alloc);
  // One block's diff (validated the same way).
  std::string apply_diff(const st::state::StateDiff& diff);
  Hash32 commit(CommitStats* stats = nullptr) { return tree_.commit(stats); }

  const MutableTree& tree() const { return tree_; }

 private:
  KeyScheme ks_;
  MutableTree tree_;
};

// keccak256(code) as a CodeHashFn.
void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32);

}  // namespace st::bintrie
