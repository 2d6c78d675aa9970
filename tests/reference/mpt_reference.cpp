// mpt_reference: the recursive oracle (see mpt_reference.h). Clarity over speed throughout.
#include "tests/reference/mpt_reference.h"

#include <cstdio>
#include <cstdlib>

#include "kernels/keccak256.h"

namespace st::ref {

namespace {

using Nibbles = std::vector<uint8_t>;
using Item = std::pair<Nibbles, Bytes>;

Nibbles to_nibbles(const Bytes& k) {
  Nibbles n;
  for (uint8_t b : k) { n.push_back(b >> 4); n.push_back(b & 15); }
  return n;
}

Bytes hex_prefix(const Nibbles& path, size_t from, size_t to, bool leaf) {
  Nibbles p(path.begin() + long(from), path.begin() + long(to));
  Bytes out;
  const bool odd = p.size() % 2 == 1;
  const int flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  size_t i = 0;
  if (odd) { out.push_back(uint8_t(flag * 16 + p[0])); i = 1; }
  else out.push_back(uint8_t(flag * 16));
  for (; i < p.size(); i += 2) out.push_back(uint8_t(p[i] * 16 + p[i + 1]));
  return out;
}

Bytes child_ref(const Bytes& enc) {
  if (enc.size() < 32) return enc;
  return rlp_string(keccak(enc));
}

// Encoding of the node holding items, all of which share nibbles [0, d).
Bytes node(const std::vector<Item>& items, size_t d) {
  if (items.size() == 1) {
    const Item& it = items[0];
    return rlp_list({rlp_string(hex_prefix(it.first, d, it.first.size(), true)), rlp_string(it.second)});
  }
  // Longest prefix shared by all items.
  size_t common = items[0].first.size();
  for (const Item& it : items) {
    size_t c = d;
    while (c < common && c < it.first.size() && it.first[c] == items[0].first[c]) ++c;
    common = c;
  }
  if (common > d) {
    return rlp_list({rlp_string(hex_prefix(items[0].first, d, common, false)), child_ref(node(items, common))});
  }
  std::vector<Bytes> slots;
  Bytes value;
  for (int nib = 0; nib < 16; ++nib) {
    std::vector<Item> group;
    for (const Item& it : items)
      if (it.first.size() > d && it.first[d] == nib) group.push_back(it);
    slots.push_back(group.empty() ? rlp_string({}) : child_ref(node(group, d + 1)));
  }
  for (const Item& it : items)
    if (it.first.size() == d) value = it.second;
  slots.push_back(rlp_string(value));
  return rlp_list(slots);
}

std::vector<Item> items_of(const std::map<Bytes, Bytes>& kv) {
  std::vector<Item> items;
  for (const auto& [k, v] : kv) {
    if (v.empty()) { std::fprintf(stderr, "mpt_reference: empty value\n"); std::abort(); }
    items.emplace_back(to_nibbles(k), v);
  }
  return items;
}

Hash to_hash(const Bytes& b) {
  Hash h;
  for (size_t i = 0; i < 32; ++i) h[i] = b[i];
  return h;
}

}  // namespace

Bytes from_hex(const std::string& s0) {
  std::string s = s0.rfind("0x", 0) == 0 ? s0.substr(2) : s0;
  auto val = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    std::fprintf(stderr, "from_hex: bad hex '%s'\n", s0.c_str());
    std::abort();
  };
  if (s.size() % 2) { std::fprintf(stderr, "from_hex: odd length '%s'\n", s0.c_str()); std::abort(); }
  Bytes out;
  for (size_t i = 0; i < s.size(); i += 2) out.push_back(uint8_t(val(s[i]) * 16 + val(s[i + 1])));
  return out;
}

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
  return s;
}

Bytes keccak(const Bytes& b) {
  Bytes out(32);
  st::kernels::keccak256(b.data(), b.size(), out.data());
  return out;
}

Bytes rlp_string(const Bytes& s) {
  if (s.size() == 1 && s[0] < 0x80) return s;
  Bytes out;
  if (s.size() < 56) {
    out.push_back(uint8_t(0x80 + s.size()));
  } else {
    Bytes len;
    for (size_t n = s.size(); n; n >>= 8) len.insert(len.begin(), uint8_t(n & 0xff));
    out.push_back(uint8_t(0xb7 + len.size()));
    out.insert(out.end(), len.begin(), len.end());
  }
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

Bytes rlp_list(const std::vector<Bytes>& items) {
  Bytes payload;
  for (const Bytes& it : items) payload.insert(payload.end(), it.begin(), it.end());
  Bytes out;
  if (payload.size() < 56) {
    out.push_back(uint8_t(0xc0 + payload.size()));
  } else {
    Bytes len;
    for (size_t n = payload.size(); n; n >>= 8) len.insert(len.begin(), uint8_t(n & 0xff));
    out.push_back(uint8_t(0xf7 + len.size()));
    out.insert(out.end(), len.begin(), len.end());
  }
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Bytes rlp_uint_be(const Bytes& be) {
  size_t z = 0;
  while (z < be.size() && be[z] == 0) ++z;
  return rlp_string(Bytes(be.begin() + long(z), be.end()));
}

Hash mpt_root(const std::map<Bytes, Bytes>& kv) {
  if (kv.empty()) return to_hash(keccak(rlp_string({})));
  return to_hash(keccak(node(items_of(kv), 0)));
}

std::vector<Bytes> mpt_proof(const std::map<Bytes, Bytes>& kv, const Bytes& key) {
  std::vector<Bytes> proof;
  if (kv.empty()) return proof;
  const Nibbles target = to_nibbles(key);
  std::vector<Item> items = items_of(kv);
  size_t d = 0;
  bool is_root = true;
  // Follow the path; every node of >= 32 bytes (and the root) is a proof element.
  while (!items.empty()) {
    const Bytes enc = node(items, d);
    if (is_root || enc.size() >= 32) proof.push_back(enc);
    is_root = false;
    if (items.size() == 1) break;
    size_t common = items[0].first.size();
    for (const Item& it : items) {
      size_t c = d;
      while (c < common && c < it.first.size() && it.first[c] == items[0].first[c]) ++c;
      common = c;
    }
    if (common > d) {
      bool match = target.size() >= common;
      for (size_t i = d; match && i < common; ++i) match = target[i] == items[0].first[i];
      if (!match) break;
      // the extension's child (a branch) is the next node on the path
      const Bytes child = node(items, common);
      if (child.size() >= 32) proof.push_back(child);
      d = common;
    }
    if (target.size() <= d) break;
    std::vector<Item> group;
    for (const Item& it : items)
      if (it.first.size() > d && it.first[d] == target[d]) group.push_back(it);
    items.swap(group);
    ++d;
  }
  return proof;
}

Hash mpt_secure_root(const std::map<Bytes, Bytes>& kv) {
  std::map<Bytes, Bytes> hashed;
  for (const auto& [k, v] : kv) hashed[keccak(k)] = v;
  return mpt_root(hashed);
}

State from_allocation(const st::state::Allocation& alloc) {
  State s;
  for (const auto& [addr, acc] : alloc.accounts) {
    Account a;
    a.nonce = acc.nonce;
    a.balance = acc.balance;
    a.code = acc.code;
    for (const auto& [slot, val] : acc.storage) {
      bool zero = true;
      for (uint8_t b : val) zero = zero && b == 0;
      if (!zero) a.storage[slot] = val;
    }
    s[addr] = a;
  }
  return s;
}

void apply_diff(State& s, const st::state::StateDiff& diff) {
  for (const st::state::AccountDiff& d : diff.accounts) {
    if (d.destroyed) s.erase(d.address);
    const bool touches = d.nonce || d.balance || d.code || !d.storage_writes.empty();
    if (!touches) continue;
    Account& a = s[d.address];
    if (d.nonce) a.nonce = *d.nonce;
    if (d.balance) a.balance = *d.balance;
    if (d.code) a.code = *d.code;
    for (const auto& [slot, val] : d.storage_writes) {
      bool zero = true;
      for (uint8_t b : val) zero = zero && b == 0;
      if (zero) a.storage.erase(slot);
      else a.storage[slot] = val;
    }
  }
}

Hash storage_root(const Account& a) {
  std::map<Bytes, Bytes> kv;
  for (const auto& [slot, val] : a.storage) kv[Bytes(slot.begin(), slot.end())] = rlp_uint_be(Bytes(val.begin(), val.end()));
  return mpt_secure_root(kv);
}

Bytes account_rlp(const Account& a) {
  Bytes nonce_be;
  for (int i = 7; i >= 0; --i) nonce_be.push_back(uint8_t(a.nonce >> (8 * i)));
  const Hash sr = storage_root(a);
  return rlp_list({rlp_uint_be(nonce_be), rlp_uint_be(Bytes(a.balance.begin(), a.balance.end())),
                   rlp_string(Bytes(sr.begin(), sr.end())), rlp_string(keccak(a.code))});
}

Hash state_root(const State& s) {
  std::map<Bytes, Bytes> kv;
  for (const auto& [addr, a] : s) kv[Bytes(addr.begin(), addr.end())] = account_rlp(a);
  return mpt_secure_root(kv);
}

}  // namespace st::ref
