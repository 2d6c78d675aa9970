// diff_layer: see diff_layer.h.
#include "engine/pipeline/diff_layer.h"

#include <cassert>

namespace st::pipeline {

void DiffLayer::add(uint64_t seq, const state::StateDiff& diff) {
  std::lock_guard<std::mutex> g(mu_);
  for (const state::AccountDiff& ad : diff.accounts) {
    AccountFields f;
    f.nonce = ad.nonce;
    f.balance = ad.balance;
    f.code_changed = ad.code.has_value();
    auto& av = accounts_[ad.address];
    assert(av.empty() || av.back().first < seq);
    av.emplace_back(seq, f);
    for (const auto& [k, v] : ad.storage_writes) {
      auto& sv = slots_[{ad.address, k}];
      assert(sv.empty() || sv.back().first < seq);
      sv.emplace_back(seq, v);
    }
  }
}

void DiffLayer::drop_before(uint64_t seq) {
  std::lock_guard<std::mutex> g(mu_);
  auto trim = [seq](auto& m) {
    for (auto it = m.begin(); it != m.end();) {
      auto& v = it->second;
      size_t keep = 0;
      while (keep < v.size() && v[keep].first < seq) ++keep;
      v.erase(v.begin(), v.begin() + ptrdiff_t(keep));
      it = v.empty() ? m.erase(it) : std::next(it);
    }
  };
  trim(slots_);
  trim(accounts_);
}

std::optional<state::Hash32> DiffLayer::slot(const state::Address& a, const state::Hash32& s, uint64_t from,
                                              uint64_t to) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = slots_.find({a, s});
  if (it == slots_.end()) return std::nullopt;
  std::optional<state::Hash32> out;
  for (const auto& [seq, v] : it->second)
    if (seq >= from && seq < to) out = v;
  return out;
}

std::optional<DiffLayer::AccountFields> DiffLayer::account(const state::Address& a, uint64_t from, uint64_t to) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = accounts_.find(a);
  if (it == accounts_.end()) return std::nullopt;
  std::optional<AccountFields> out;
  for (const auto& [seq, f] : it->second) {
    if (seq < from || seq >= to) continue;
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
  for (const auto& [k, v] : slots_) n += v.size();
  for (const auto& [k, v] : accounts_) n += v.size();
  return n;
}

}  // namespace st::pipeline
