// bal_builder: records a block's accesses transaction by transaction and produces its
// EIP-7928 block access list, as a client's BAL builder does:
//
//   b.begin(1); b.read_slot(...); b.write_slot(a, s, pre, v); b.set_nonce(...); b.end(); ...
//   BlockAccessList bal = b.finish();
//
// Within a transaction only the value at its end counts: a field whose end value differs
// from its value at the transaction's start is a change at that index (post value); a slot
// written back to its start value, or only read, is a read; a slot with no change in the
// whole block lands in storage_reads; an account touched without any change is listed with
// empty lists. `pre` arguments give the value before the BLOCK and are used the first time
// the block sees that field (later calls may pass anything).
//
// Invariants: finish() returns a canonical BAL (sorted, unique, reads disjoint from writes,
// increasing indices); the builder's view of a field is its value after the writes so far.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "engine/state/bal.h"

namespace st::state {

class BalBuilder {
 public:
  void begin(BalIndex index);
  void touch(const Address& a);
  void read_slot(const Address& a, const Hash32& slot, const U256& pre);
  void write_slot(const Address& a, const Hash32& slot, const U256& pre, const U256& value);
  void set_balance(const Address& a, const U256& pre, const U256& post);
  void set_nonce(const Address& a, uint64_t pre, uint64_t post);
  void set_code(const Address& a, const std::vector<uint8_t>& pre, const std::vector<uint8_t>& post);
  void end();
  BlockAccessList finish();

  // The value now (after this block's writes so far), nullopt if the block has not seen it.
  std::optional<U256> slot_now(const Address& a, const Hash32& slot) const;
  // The value at the start of the current transaction (EIP-2200's "original").
  std::optional<U256> slot_tx_start(const Address& a, const Hash32& slot) const;
  std::optional<U256> balance_now(const Address& a) const;
  std::optional<uint64_t> nonce_now(const Address& a) const;

 private:
  template <class V, class C>
  struct Field {
    // User-provided: clang 14 takes a class nested here with only default member
    // initializers as not default-constructible inside std::optional (optional::emplace()).
    Field() {}
    V tx_start{}, now{};
    bool dirty = false;  // written in the current transaction
    std::vector<C> changes;
  };
  struct Acc {
    std::map<Hash32, Field<U256, StorageChange>> slots;
    std::optional<Field<U256, BalanceChange>> balance;
    std::optional<Field<uint64_t, NonceChange>> nonce;
    std::optional<Field<std::vector<uint8_t>, CodeChange>> code;
  };
  Acc& acc(const Address& a) { return accs_[a]; }
  std::map<Address, Acc> accs_;
  std::vector<std::pair<Address, Hash32>> dirty_slots_;
  std::vector<Address> dirty_accounts_;
  BalIndex index_ = 0;
  bool open_ = false;
};

}  // namespace st::state
