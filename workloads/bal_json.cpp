// bal_json: see bal_json.h.
#include "workloads/bal_json.h"

#include <cstring>

#include "workloads/u256.h"

namespace st::workloads {

using nlohmann::json;

namespace {
std::string hex_bytes(const uint8_t* p, size_t n) { return bytes_to_hex(p, n, true); }

bool get_u256(const json& j, const std::string& what, state::U256* out, std::string* err) {
  if (!j.is_string()) { *err = what + ": expected a 0x-hex string"; return false; }
  auto v = parse_u256_hex(j.get<std::string>());
  if (auto* e = std::get_if<std::string>(&v)) { *err = what + ": " + *e; return false; }
  *out = std::get<U256>(v);
  return true;
}
bool get_u64(const json& j, const std::string& what, uint64_t max, uint64_t* out, std::string* err) {
  if (!j.is_number_unsigned()) { *err = what + ": expected a non-negative integer"; return false; }
  *out = j.get<uint64_t>();
  if (*out > max) { *err = what + ": " + std::to_string(*out) + " too large"; return false; }
  return true;
}
bool get_pairs(const json& j, const std::string& what, std::string* err) {
  if (!j.is_array()) { *err = what + ": expected an array"; return false; }
  for (const json& e : j)
    if (!e.is_array() || e.size() != 2) { *err = what + ": expected [index, value] pairs"; return false; }
  return true;
}
}  // namespace

json bal_to_json(const state::BlockAccessList& bal) {
  json accounts = json::array();
  for (const state::AccountChanges& a : bal.accounts) {
    json sc = json::array(), sr = json::array(), bc = json::array(), nc = json::array(), cc = json::array();
    for (const state::SlotChanges& s : a.storage_changes) {
      json ch = json::array();
      for (const state::StorageChange& c : s.changes) ch.push_back({c.index, u256_to_hex(c.value)});
      sc.push_back({u256_to_hex(s.slot), ch});
    }
    for (const state::Hash32& r : a.storage_reads) sr.push_back(u256_to_hex(r));
    for (const state::BalanceChange& c : a.balance_changes) bc.push_back({c.index, u256_to_hex(c.post_balance)});
    for (const state::NonceChange& c : a.nonce_changes) nc.push_back({c.index, c.nonce});
    for (const state::CodeChange& c : a.code_changes) cc.push_back({c.index, hex_bytes(c.code.data(), c.code.size())});
    accounts.push_back({{"address", hex_bytes(a.address.data(), 20)},
                        {"storage_changes", sc},
                        {"storage_reads", sr},
                        {"balance_changes", bc},
                        {"nonce_changes", nc},
                        {"code_changes", cc}});
  }
  return {{"accounts", accounts}};
}

json block_to_json(const state::Block& b) {
  json txs = json::array();
  for (const state::TxInfo& t : b.header.txs) txs.push_back({{"gas_used", t.gas_used}, {"calls", t.calls}});
  const state::Hash32 h = state::bal_hash(b.bal);
  json j = {{"number", b.header.number},
            {"tree", state::bal_tree_name(b.header.tree)},
            {"pre_state_root", b.header.pre_state_root ? json(hex_bytes(b.header.pre_state_root->data(), 32)) : json()},
            {"tx_count", b.header.tx_count ? json(*b.header.tx_count) : json()},
            {"txs", txs},
            {"bal_hash", hex_bytes(h.data(), 32)}};
  j["accounts"] = bal_to_json(b.bal)["accounts"];
  return j;
}

namespace {

// One account's address and the five change lists being arrays; sets *who (the prefix of
// every later message about this account).
bool account_header(const json& a, state::AccountChanges* ac, std::string* who, std::string* err) {
  if (!a.is_object() || !a.contains("address") || !a["address"].is_string()) {
    *err = "account: expected an object with an \"address\" string";
    return false;
  }
  auto addr = parse_hex_bytes(a["address"].get<std::string>());
  if (auto* e = std::get_if<std::string>(&addr)) { *err = "address: " + *e; return false; }
  const auto& ab = std::get<std::vector<uint8_t>>(addr);
  if (ab.size() != 20) { *err = "address: " + std::to_string(ab.size()) + " bytes, expected 20"; return false; }
  std::memcpy(ac->address.data(), ab.data(), 20);
  *who = "account " + hex_bytes(ac->address.data(), 20) + ": ";
  for (const char* f : {"storage_changes", "storage_reads", "balance_changes", "nonce_changes", "code_changes"})
    if (!a.contains(f) || !a[f].is_array()) { *err = *who + "\"" + f + "\" must be an array"; return false; }
  return true;
}

// A change's block access index (its pair's first element).
bool get_index(const json& c, const std::string& who, state::BalIndex* index, std::string* err) {
  uint64_t i;
  if (!get_u64(c[0], who + "index", 0xffffffffull, &i, err)) return false;
  *index = state::BalIndex(i);
  return true;
}

bool storage_from_json(const json& a, const std::string& who, state::AccountChanges* ac, std::string* err) {
  if (!get_pairs(a["storage_changes"], who + "storage_changes", err)) return false;
  for (const json& s : a["storage_changes"]) {
    state::SlotChanges sc;
    if (!get_u256(s[0], who + "slot", &sc.slot, err)) return false;
    if (!get_pairs(s[1], who + "slot changes", err)) return false;
    for (const json& c : s[1]) {
      state::StorageChange ch;
      if (!get_index(c, who, &ch.index, err)) return false;
      if (!get_u256(c[1], who + "storage value", &ch.value, err)) return false;
      sc.changes.push_back(ch);
    }
    ac->storage_changes.push_back(std::move(sc));
  }
  for (const json& r : a["storage_reads"]) {
    state::Hash32 slot;
    if (!get_u256(r, who + "read slot", &slot, err)) return false;
    ac->storage_reads.push_back(slot);
  }
  return true;
}

bool balances_nonces_from_json(const json& a, const std::string& who, state::AccountChanges* ac, std::string* err) {
  if (!get_pairs(a["balance_changes"], who + "balance_changes", err)) return false;
  for (const json& c : a["balance_changes"]) {
    state::BalanceChange ch;
    if (!get_index(c, who, &ch.index, err)) return false;
    if (!get_u256(c[1], who + "balance", &ch.post_balance, err)) return false;
    ac->balance_changes.push_back(ch);
  }
  if (!get_pairs(a["nonce_changes"], who + "nonce_changes", err)) return false;
  for (const json& c : a["nonce_changes"]) {
    state::NonceChange ch;
    if (!get_index(c, who, &ch.index, err)) return false;
    if (!get_u64(c[1], who + "nonce", ~0ull, &ch.nonce, err)) return false;
    ac->nonce_changes.push_back(ch);
  }
  return true;
}

bool code_from_json(const json& a, const std::string& who, state::AccountChanges* ac, std::string* err) {
  if (!get_pairs(a["code_changes"], who + "code_changes", err)) return false;
  for (const json& c : a["code_changes"]) {
    state::CodeChange ch;
    if (!get_index(c, who, &ch.index, err)) return false;
    if (!c[1].is_string()) { *err = who + "code: expected a 0x-hex string"; return false; }
    auto code = parse_hex_bytes(c[1].get<std::string>());
    if (auto* e = std::get_if<std::string>(&code)) { *err = who + "code: " + *e; return false; }
    ch.code = std::get<std::vector<uint8_t>>(code);
    ac->code_changes.push_back(std::move(ch));
  }
  return true;
}

}  // namespace

bool bal_from_json(const json& j, state::BlockAccessList* out, std::string* err) {
  out->accounts.clear();
  if (!j.is_object() || !j.contains("accounts") || !j["accounts"].is_array()) {
    *err = "expected an object with an \"accounts\" array";
    return false;
  }
  for (const json& a : j["accounts"]) {
    state::AccountChanges ac;
    std::string who;
    if (!account_header(a, &ac, &who, err) || !storage_from_json(a, who, &ac, err) ||
        !balances_nonces_from_json(a, who, &ac, err) || !code_from_json(a, who, &ac, err))
      return false;
    out->accounts.push_back(std::move(ac));
  }
  return true;
}

}  // namespace st::workloads
