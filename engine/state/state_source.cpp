// state_source: the generic parts of StateSource and the AllocationSource adapter (a
// genesis Allocation offered account by account; zero storage values dropped).
#include "engine/state/state_source.h"

namespace st::state {

std::optional<Hash32> StateSource::slot_value(uint64_t i, uint64_t j) const {
  if (i >= account_count() || j >= storage_size(i)) return std::nullopt;
  AccountRecord rec;
  account(i, &rec);
  if (j >= rec.storage.size()) return std::nullopt;
  return rec.storage[j].second;
}

namespace {
bool is_zero(const Hash32& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}
}  // namespace

AllocationSource::AllocationSource(const Allocation& alloc, std::string spec_json)
    : alloc_(alloc), spec_(std::move(spec_json)) {
  nonzero_.resize(alloc_.accounts.size());
  for (size_t i = 0; i < alloc_.accounts.size(); ++i) {
    for (const auto& kv : alloc_.accounts[i].second.storage)
      if (!is_zero(kv.second)) nonzero_[i].push_back(&kv);
    slots_ += nonzero_[i].size();
  }
}

void AllocationSource::account(uint64_t i, AccountRecord* out) const {
  const auto& [address, acc] = alloc_.accounts[i];
  out->address = address;
  out->nonce = acc.nonce;
  out->balance = acc.balance;
  out->code.assign(acc.code.begin(), acc.code.end());
  out->storage.clear();
  out->storage.reserve(nonzero_[i].size());
  for (const auto* kv : nonzero_[i]) out->storage.emplace_back(kv->first, kv->second);
}

std::optional<StateKey> AllocationSource::slot_key(uint64_t i, uint64_t j) const {
  if (i >= nonzero_.size() || j >= nonzero_[i].size()) return std::nullopt;
  return StateKey{alloc_.accounts[i].first, nonzero_[i][j]->first};
}

std::optional<Hash32> AllocationSource::slot_value(uint64_t i, uint64_t j) const {
  if (i >= nonzero_.size() || j >= nonzero_[i].size()) return std::nullopt;
  return nonzero_[i][j]->second;
}

Allocation allocation_of(const StateSource& src) {
  Allocation a;
  a.accounts.reserve(src.account_count());
  AccountRecord r;
  for (uint64_t i = 0; i < src.account_count(); ++i) {
    src.account(i, &r);
    Account acc;
    acc.nonce = r.nonce;
    acc.balance = r.balance;
    acc.code = r.code;
    for (const auto& [k, v] : r.storage) acc.storage[k] = v;
    a.accounts.emplace_back(r.address, std::move(acc));
  }
  return a;
}

}  // namespace st::state
