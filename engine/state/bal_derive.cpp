// bal_derive: see bal_derive.h.
#include "engine/state/bal_derive.h"

#include <algorithm>

#include "kernels/support/splitmix64.h"

namespace st::state {

namespace {
bool is_zero(const Hash32& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}
}  // namespace

StateDiff post_state_diff(const BlockAccessList& bal) {
  StateDiff d;
  post_state_diff(bal, &d);
  return d;
}

void post_state_diff(const BlockAccessList& bal, StateDiff* out) {
  size_t n = 0;
  for (const AccountChanges& a : bal.accounts) {
    if (a.balance_changes.empty() && a.nonce_changes.empty() && a.code_changes.empty() && a.storage_changes.empty())
      continue;
    if (n == out->accounts.size()) out->accounts.emplace_back();
    AccountDiff& ad = out->accounts[n++];
    ad.address = a.address;
    ad.balance.reset(), ad.nonce.reset(), ad.code.reset();
    ad.destroyed = false;
    if (!a.balance_changes.empty()) ad.balance = a.balance_changes.back().post_balance;
    if (!a.nonce_changes.empty()) ad.nonce = a.nonce_changes.back().nonce;
    if (!a.code_changes.empty()) ad.code = a.code_changes.back().code;
    ad.storage_writes.clear();
    for (const SlotChanges& s : a.storage_changes) ad.storage_writes.emplace_back(s.slot, s.changes.back().value);
  }
  out->accounts.resize(n);
}

std::vector<IndexAccess> access_by_index(const BlockAccessList& bal, uint32_t tx_count, const ReadAssignment& rule) {
  IndexAccesses a;
  access_by_index(bal, tx_count, rule, &a);
  return std::move(a.by_index);
}

namespace {
// Transaction t's (1..n) weight in the read shares.
uint64_t read_weight(const ReadAssignment& rule, uint32_t n, uint32_t t) {
  return rule.weights.size() == n ? rule.weights[t] : 1;
}
}  // namespace

void access_by_index(const BlockAccessList& bal, uint32_t tx_count, const ReadAssignment& rule, IndexAccesses* acc) {
  std::vector<IndexAccess>& out = acc->by_index;
  out.resize(size_t(tx_count) + 2);
  for (IndexAccess& ia : out)
    ia.accounts_written.clear(), ia.slots_written.clear(), ia.accounts_read.clear(), ia.slots_read.clear();
  auto at = [&](BalIndex i) -> IndexAccess& { return out[std::min<size_t>(i, out.size() - 1)]; };
  // An account changed at index i joins that index's accounts_written once: its changes are
  // visited together, so a repeat is the list's last entry.
  bool changed = false;  // the account being visited has a change at some index
  auto written_at = [&](BalIndex i, const Address& a) {
    changed = true;
    std::vector<Address>& w = at(i).accounts_written;
    if (w.empty() || w.back() != a) w.push_back(a);
  };
  std::vector<IndexAccesses::ReadOnly>& reads = acc->reads;
  reads.clear();
  for (const AccountChanges& a : bal.accounts) {
    changed = false;
    for (const SlotChanges& s : a.storage_changes)
      for (const StorageChange& c : s.changes) {
        at(c.index).slots_written.push_back({a.address, s.slot});
        at(c.index).slots_read.push_back({a.address, s.slot});  // the original value is looked up
        written_at(c.index, a.address);
      }
    for (const BalanceChange& c : a.balance_changes) written_at(c.index, a.address);
    for (const NonceChange& c : a.nonce_changes) written_at(c.index, a.address);
    for (const CodeChange& c : a.code_changes) written_at(c.index, a.address);
    if (!changed && a.storage_reads.empty()) reads.push_back({a.address, std::nullopt});
    for (const Hash32& r : a.storage_reads) reads.push_back({a.address, r});
  }
  if (rule.kind == ReadAssignment::Kind::shuffle) {
    uint64_t s = rule.seed;
    for (size_t i = reads.size(); i > 1; --i) std::swap(reads[i - 1], reads[st::splitmix64(s) % i]);
  }
  // Shares: transaction t (1..n) takes reads [cum(t-1), cum(t)) of total weight W.
  const uint32_t n = tx_count;
  unsigned __int128 total = 0;
  for (uint32_t t = 0; t < n; ++t) total += read_weight(rule, n, t);
  auto give = [&](size_t from, size_t to, BalIndex index) {
    for (size_t k = from; k < to; ++k) {
      if (reads[k].slot) out[index].slots_read.push_back({reads[k].address, *reads[k].slot});
      else out[index].accounts_read.push_back(reads[k].address);
    }
  };
  if (n == 0) {
    give(0, reads.size(), 0);
    return;
  }
  size_t next = 0;
  unsigned __int128 cum = 0;
  for (uint32_t t = 0; t < n; ++t) {
    cum += read_weight(rule, n, t);
    const size_t upto = t + 1 == n ? reads.size() : total ? size_t(cum * reads.size() / total) : 0;
    give(next, upto, t + 1);
    next = upto;
  }
}

BalSummary summarize_bal(const BlockAccessList& bal) {
  BalSummary s;
  s.accounts = bal.accounts.size();
  for (const AccountChanges& a : bal.accounts) {
    const bool changed = !a.storage_changes.empty() || !a.balance_changes.empty() || !a.nonce_changes.empty() ||
                         !a.code_changes.empty();
    s.accounts_changed += changed;
    s.slots_read += a.storage_reads.size();
    s.slots_written += a.storage_changes.size();
    for (const SlotChanges& c : a.storage_changes) {
      s.storage_changes += c.changes.size();
      s.slots_zeroed += is_zero(c.changes.back().value);
      s.max_index = std::max(s.max_index, c.changes.back().index);
    }
    s.balance_changes += a.balance_changes.size();
    s.nonce_changes += a.nonce_changes.size();
    s.code_changes += a.code_changes.size();
    if (!a.balance_changes.empty()) s.max_index = std::max(s.max_index, a.balance_changes.back().index);
    if (!a.nonce_changes.empty()) s.max_index = std::max(s.max_index, a.nonce_changes.back().index);
    if (!a.code_changes.empty()) s.max_index = std::max(s.max_index, a.code_changes.back().index);
  }
  return s;
}

}  // namespace st::state
