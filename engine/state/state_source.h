// state_source: a whole state (accounts, code, storage) offered account by account with
// random access, so a tree builder can visit accounts in whatever order its key layout
// needs (the MPT by keccak(address), the binary trie by stem) without holding the whole
// state twice. The engine depends on this interface only. Implementations: a genesis
// Allocation (AllocationSource below) and, outside the engine, the workloads' generators
// (the deterministic synthetic ERC20 state, workloads/synthetic_state.h).
//
// Invariants: account(i) is a pure function of i (same output on every call, any order,
// any thread with its own scratch); addresses are unique; storage slots of one account are
// unique; values are non-zero (a source describes present state, not writes); entry j of
// account(i).storage is the slot slot_key(i, j) names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/state/state_types.h"

namespace st::state {

// One account, in caller-owned scratch (reused between calls: no allocation per account
// after warm-up).
struct AccountRecord {
  Address address{};
  uint64_t nonce = 0;
  U256 balance{};
  std::vector<uint8_t> code;
  std::vector<std::pair<Hash32, Hash32>> storage;  // slot -> value, any order, no zero values
};

// A key of the state: an account, or one storage slot of it.
struct StateKey {
  Address address{};
  std::optional<Hash32> slot;
};

class StateSource {
 public:
  virtual ~StateSource() = default;
  virtual uint64_t account_count() const = 0;
  virtual uint64_t slot_count() const = 0;  // sum of storage sizes
  virtual void account(uint64_t i, AccountRecord* out) const = 0;
  // account(i) without its storage (out->storage empty): what read-bench checks a lookup's
  // account fields against. The default generates the whole account and drops the storage.
  virtual void account_fields(uint64_t i, AccountRecord* out) const {
    account(i, out);
    out->storage.clear();
  }
  // The key of storage slot j (0 <= j < storage size) of account i, without generating the
  // whole account: read-bench samples existing keys this way. nullopt if j is out of range.
  virtual std::optional<StateKey> slot_key(uint64_t i, uint64_t j) const = 0;
  // The value of that slot (what account(i) lists for it); nullopt if j is out of range.
  // Lets read-bench check every looked-up value without generating whole accounts. The
  // default generates account(i) (storage[j] is slot j, see the invariant above).
  virtual std::optional<Hash32> slot_value(uint64_t i, uint64_t j) const;
  virtual uint64_t storage_size(uint64_t i) const = 0;
  // One line that recreates the source, stored with a database (JSON object text).
  virtual std::string spec_json() const = 0;
};

// Every account of a source, in source order, as an in-memory Allocation (what the
// from-scratch roots take): the inverse of AllocationSource below.
Allocation allocation_of(const StateSource& src);

// A genesis allocation (or any Allocation) as a StateSource; zero storage values are
// dropped (they are absent state); storage entries keep the allocation's (sorted) slot
// order. The allocation must outlive the source. spec_json is whatever the caller wants
// stored with a database (the CLI writes {"kind":"alloc","path":...,"accounts":...}).
class AllocationSource final : public StateSource {
 public:
  AllocationSource(const Allocation& alloc, std::string spec_json);
  uint64_t account_count() const override { return alloc_.accounts.size(); }
  uint64_t slot_count() const override { return slots_; }
  void account(uint64_t i, AccountRecord* out) const override;
  std::optional<StateKey> slot_key(uint64_t i, uint64_t j) const override;
  std::optional<Hash32> slot_value(uint64_t i, uint64_t j) const override;
  uint64_t storage_size(uint64_t i) const override { return nonzero_[i].size(); }
  std::string spec_json() const override { return spec_; }

 private:
  const Allocation& alloc_;
  std::string spec_;
  std::vector<std::vector<const std::pair<const Hash32, Hash32>*>> nonzero_;
  uint64_t slots_ = 0;
};

}  // namespace st::state
