// account_leaves: genesis-style account leaves (see account_leaves.h).
#include "engine/bintrie/account_leaves.h"

#include <string>

namespace st::bintrie {

void append_account_leaves(const KeyScheme& ks, const Address& addr, const st::state::Account& account,
                           const Hash32& code_hash, std::vector<Entry>* out) {
  // The header stem holds basic data, code hash, slots < 64 and chunks < 128: derive its
  // stem once.
  const Hash32 header = basic_data_key(ks, addr);
  auto header_key = [&](unsigned sub) { Hash32 k = header; k[31] = uint8_t(sub); return k; };
  out->push_back({header, basic_data_leaf(account.nonce, account.balance, uint32_t(account.code.size()))});
  out->push_back({header_key(kCodeHashLeafKey), code_hash});
  const std::vector<Hash32> chunks = chunkify_code(account.code);
  Hash32 last_ti{};
  Hash32 last_key{};
  bool have_last = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    Hash32 ti;
    uint8_t sub;
    code_chunk_position(i, &ti, &sub);
    Hash32 key;
    if (ti == Hash32{}) {
      key = header_key(sub);
    } else {
      if (!have_last || ti != last_ti) { last_key = get_tree_key(ks, addr, ti, 0); last_ti = ti; have_last = true; }
      key = last_key;
      key[31] = sub;
    }
    out->push_back({key, chunks[i]});
  }
  for (const auto& [slot, value] : account.storage) {
    if (value == Hash32{}) continue;
    Hash32 ti;
    uint8_t sub;
    storage_slot_position(slot, &ti, &sub);
    Hash32 key = ti == Hash32{} ? header_key(sub) : get_tree_key(ks, addr, ti, sub);
    out->push_back({key, value});
  }
}

std::vector<Entry> allocation_leaves(const KeyScheme& ks, const st::state::Allocation& alloc, CodeHashFn code_hash) {
  std::vector<Entry> out;
  for (const auto& [addr, account] : alloc.accounts) {
    Hash32 ch;
    code_hash(account.code.data(), account.code.size(), ch.data());
    append_account_leaves(ks, addr, account, ch, &out);
  }
  return out;
}

std::string check_account(const st::state::Account& account) {
  for (int i = 0; i < 16; ++i)
    if (account.balance[i] != 0) return "balance does not fit 128 bits (the basic-data leaf holds 16 bytes)";
  if (account.code.size() >= (size_t(1) << 24)) return "code longer than 2^24-1 bytes";
  return "";
}

}  // namespace st::bintrie
