// bal_builder: see bal_builder.h.
#include "engine/state/bal_builder.h"

#include <cassert>

namespace st::state {

void BalBuilder::begin(BalIndex index) {
  assert(!open_);
  index_ = index;
  open_ = true;
}

void BalBuilder::touch(const Address& a) { acc(a); }

void BalBuilder::read_slot(const Address& a, const Hash32& slot, const U256& pre) {
  auto [it, fresh] = acc(a).slots.try_emplace(slot);
  if (fresh) it->second.tx_start = it->second.now = pre;
}

void BalBuilder::write_slot(const Address& a, const Hash32& slot, const U256& pre, const U256& value) {
  auto [it, fresh] = acc(a).slots.try_emplace(slot);
  auto& f = it->second;
  if (fresh) f.tx_start = f.now = pre;
  f.now = value;
  if (!f.dirty) {
    f.dirty = true;
    dirty_slots_.emplace_back(a, slot);
  }
}

void BalBuilder::set_balance(const Address& a, const U256& pre, const U256& post) {
  Acc& x = acc(a);
  if (!x.balance) x.balance.emplace(), x.balance->tx_start = pre;
  x.balance->now = post;
  if (!x.balance->dirty) x.balance->dirty = true, dirty_accounts_.push_back(a);
}

void BalBuilder::set_nonce(const Address& a, uint64_t pre, uint64_t post) {
  Acc& x = acc(a);
  if (!x.nonce) x.nonce.emplace(), x.nonce->tx_start = pre;
  x.nonce->now = post;
  if (!x.nonce->dirty) x.nonce->dirty = true, dirty_accounts_.push_back(a);
}

void BalBuilder::set_code(const Address& a, const std::vector<uint8_t>& pre, const std::vector<uint8_t>& post) {
  Acc& x = acc(a);
  if (!x.code) x.code.emplace(), x.code->tx_start = pre;
  x.code->now = post;
  if (!x.code->dirty) x.code->dirty = true, dirty_accounts_.push_back(a);
}

void BalBuilder::end() {
  assert(open_);
  for (const auto& [a, s] : dirty_slots_) {
    auto& f = accs_[a].slots[s];
    if (f.now != f.tx_start) f.changes.push_back({index_, f.now});
    f.tx_start = f.now;
    f.dirty = false;
  }
  auto settle = [&](auto& f) {
    if (!f || !f->dirty) return;
    if (f->now != f->tx_start) f->changes.push_back({index_, f->now});
    f->tx_start = f->now;
    f->dirty = false;
  };
  for (const Address& a : dirty_accounts_) {
    Acc& x = accs_[a];
    settle(x.balance);
    settle(x.nonce);
    settle(x.code);
  }
  dirty_slots_.clear();
  dirty_accounts_.clear();
  open_ = false;
}

BlockAccessList BalBuilder::finish() {
  assert(!open_);
  BlockAccessList bal;
  bal.accounts.reserve(accs_.size());
  for (auto& [a, x] : accs_) {
    AccountChanges ac;
    ac.address = a;
    for (auto& [s, f] : x.slots) {
      if (f.changes.empty()) ac.storage_reads.push_back(s);
      else ac.storage_changes.push_back({s, std::move(f.changes)});
    }
    if (x.balance)
      for (const BalanceChange& c : x.balance->changes) ac.balance_changes.push_back({c.index, c.post_balance});
    if (x.nonce)
      for (const NonceChange& c : x.nonce->changes) ac.nonce_changes.push_back(c);
    if (x.code)
      for (CodeChange& c : x.code->changes) ac.code_changes.push_back(std::move(c));
    bal.accounts.push_back(std::move(ac));
  }
  accs_.clear();
  return bal;
}

std::optional<U256> BalBuilder::slot_now(const Address& a, const Hash32& slot) const {
  auto it = accs_.find(a);
  if (it == accs_.end()) return std::nullopt;
  auto s = it->second.slots.find(slot);
  if (s == it->second.slots.end()) return std::nullopt;
  return s->second.now;
}

std::optional<U256> BalBuilder::slot_tx_start(const Address& a, const Hash32& slot) const {
  auto it = accs_.find(a);
  if (it == accs_.end()) return std::nullopt;
  auto s = it->second.slots.find(slot);
  if (s == it->second.slots.end()) return std::nullopt;
  return s->second.tx_start;
}

std::optional<U256> BalBuilder::balance_now(const Address& a) const {
  auto it = accs_.find(a);
  if (it == accs_.end() || !it->second.balance) return std::nullopt;
  return it->second.balance->now;
}

std::optional<uint64_t> BalBuilder::nonce_now(const Address& a) const {
  auto it = accs_.find(a);
  if (it == accs_.end() || !it->second.nonce) return std::nullopt;
  return it->second.nonce->now;
}

}  // namespace st::state
