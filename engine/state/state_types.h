// state_types: the Ethereum state model shared by the MPT and the binary trie, so that one
// workload (a genesis allocation, a block's state diff) drives either tree.
//
// Invariants: all integers are held big-endian in fixed 32-byte arrays (U256); an Address is
// 20 bytes; storage slots and values are 32 bytes; a storage write of zero means "delete"
// for the MPT and "present zero value" for the binary trie (each tree applies its own rule).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "kernels/support/hash32.h"

namespace st::state {

using Address = std::array<uint8_t, 20>;
using st::Hash32;
using U256 = Hash32;  // big-endian 256-bit unsigned integer

// One account as a genesis allocation (or a full snapshot) describes it.
struct Account {
  uint64_t nonce = 0;
  U256 balance{};                       // big-endian
  std::vector<uint8_t> code;            // empty = no code
  std::map<Hash32, Hash32> storage;   // slot -> value (32-byte big-endian each)
};

// A whole allocation: accounts in the order given, addresses unique.
struct Allocation {
  std::vector<std::pair<Address, Account>> accounts;
};

// One block's writes, applied as a single batch. Fields that are nullopt are unchanged.
struct AccountDiff {
  Address address{};
  std::optional<uint64_t> nonce;
  std::optional<U256> balance;
  std::optional<std::vector<uint8_t>> code;
  std::vector<std::pair<Hash32, Hash32>> storage_writes;  // slot -> new value (zero = delete)
  bool destroyed = false;  // account deleted (applied before the other fields of this diff)
};

struct StateDiff {
  std::vector<AccountDiff> accounts;
};

}  // namespace st::state
