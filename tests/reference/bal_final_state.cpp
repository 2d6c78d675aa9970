// bal_final_state: see bal_final_state.h.
#include "reference/bal_final_state.h"

#include <algorithm>
#include <map>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "engine/bintrie/state_tree.h"
#include "engine/mpt/state.h"
#include "engine/state/bal_derive.h"

namespace st::reference {

BalFinalState bal_final_state(const state::Allocation& start, const std::vector<state::Block>& blocks) {
  std::map<state::Address, state::Account> m;
  std::vector<state::Address> order;
  for (const auto& [a, acc] : start.accounts) m[a] = acc, order.push_back(a);
  BalFinalState f;
  for (const state::Block& b : blocks)
    for (const state::AccountDiff& ad : state::post_state_diff(b.bal).accounts) {
      if (!m.count(ad.address)) order.push_back(ad.address);
      state::Account& acc = m[ad.address];
      if (ad.nonce) acc.nonce = *ad.nonce;
      if (ad.balance) acc.balance = *ad.balance;
      if (ad.code) acc.code = *ad.code;
      for (const auto& [k, v] : ad.storage_writes) {
        const bool zero = std::all_of(v.begin(), v.end(), [](uint8_t x) { return x == 0; });
        if (zero) acc.storage.erase(k), f.zeroed.insert({ad.address, k});
        else acc.storage[k] = v, f.zeroed.erase({ad.address, k});
      }
    }
  for (const state::Address& a : order) f.alloc.accounts.push_back({a, m[a]});
  return f;
}

state::Hash32 bal_final_root(const BalFinalState& f, bool bintrie) {
  if (!bintrie) return mpt::allocation_root(f.alloc);
  bintrie::KeyScheme ks;
  ks.hasher = bintrie::make_hasher(bintrie::HashKind::sha256);
  std::map<bintrie::Hash32, bintrie::Hash32> leaves;
  for (const bintrie::Entry& e : bintrie::allocation_leaves(ks, f.alloc, bintrie::code_hash_keccak256)) leaves[e.key] = e.value;
  for (const auto& [a, slot] : f.zeroed) leaves[bintrie::storage_slot_key(ks, a, slot)] = bintrie::Hash32{};
  std::vector<bintrie::Entry> v;
  for (const auto& [k, val] : leaves) v.push_back({k, val});
  return bintrie::batch_root(ks.hasher, v);
}

}  // namespace st::reference
