// diff_layer: see diff_layer.h.
#include "engine/pipeline/diff_layer.h"

#include <algorithm>
#include <cassert>

namespace st::pipeline {

void DiffLayer::add(uint64_t seq, const state::StateDiff& diff) {
  std::lock_guard<std::mutex> g(mu_);
  assert(count_ == 0 || at(count_ - 1).seq < seq);
  if (count_ == held_.size()) {  // full: grow, the held blocks moved to the front in order
    std::rotate(held_.begin(), held_.begin() + ptrdiff_t(first_), held_.end());
    first_ = 0;
    held_.emplace_back();
  }
  BlockWrites& b = at(count_++);
  b.seq = seq;
  b.accounts.clear();
  b.slots.clear();
  for (const state::AccountDiff& ad : diff.accounts) {
    b.accounts.emplace_back(ad.address, AccountFields{ad.nonce, ad.balance, ad.code.has_value()});
    for (const auto& [k, v] : ad.storage_writes) b.slots.emplace_back(ad.address, k, v);
  }
  // A diff comes in BAL order (sorted already); sorting keeps the search right for any order.
  auto by_address = [](const auto& x, const auto& y) { return x.first < y.first; };
  if (!std::is_sorted(b.accounts.begin(), b.accounts.end(), by_address))
    std::sort(b.accounts.begin(), b.accounts.end(), by_address);
  if (!std::is_sorted(b.slots.begin(), b.slots.end())) std::sort(b.slots.begin(), b.slots.end());
}

void DiffLayer::drop_before(uint64_t seq) {
  std::lock_guard<std::mutex> g(mu_);
  while (count_ > 0 && at(0).seq < seq) {
    first_ = (first_ + 1) % held_.size();
    --count_;
  }
}

std::optional<state::Hash32> DiffLayer::slot(const state::Address& a, const state::Hash32& s, uint64_t from,
                                              uint64_t to) const {
  std::lock_guard<std::mutex> g(mu_);
  for (size_t i = count_; i-- > 0;) {  // the latest block first
    const BlockWrites& b = at(i);
    if (b.seq >= to) continue;
    if (b.seq < from) break;
    auto it = std::lower_bound(b.slots.begin(), b.slots.end(), std::tie(a, s),
                               [](const auto& e, const auto& k) { return std::tie(std::get<0>(e), std::get<1>(e)) < k; });
    if (it != b.slots.end() && std::get<0>(*it) == a && std::get<1>(*it) == s) return std::get<2>(*it);
  }
  return std::nullopt;
}

std::optional<DiffLayer::AccountFields> DiffLayer::account(const state::Address& a, uint64_t from, uint64_t to) const {
  std::lock_guard<std::mutex> g(mu_);
  std::optional<AccountFields> out;
  for (size_t i = 0; i < count_; ++i) {  // in block order: a later block's field wins
    const BlockWrites& b = at(i);
    if (b.seq < from || b.seq >= to) continue;
    auto it = std::lower_bound(b.accounts.begin(), b.accounts.end(), a, [](const auto& e, const state::Address& k) { return e.first < k; });
    if (it == b.accounts.end() || it->first != a) continue;
    const AccountFields& f = it->second;
    if (!out) out.emplace();
    if (f.nonce) out->nonce = f.nonce;
    if (f.balance) out->balance = f.balance;
    out->code_changed = out->code_changed || f.code_changed;
  }
  return out;
}

uint64_t DiffLayer::entries() const {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t n = 0;
  for (size_t i = 0; i < count_; ++i) n += at(i).accounts.size() + at(i).slots.size();
  return n;
}

}  // namespace st::pipeline
