// synthetic_state: the deterministic ERC20 synthetic state (layout in synthetic_state.h).
// account() hashes its storage in three keccak256_batch passes over chunks of slots
// (holder addresses, then the mapping slots, then the outer allowance hash), with
// thread-local scratch, so a builder may call it from many threads without allocating per
// account after warm-up. slot_key() / slot_value() compute one entry with single-message
// hashes and must agree with account() (state_source_test checks it).
#include "workloads/synthetic_state.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>

#include "kernels/keccak256.h"
#include "kernels/support/splitmix64.h"

namespace st::state {
namespace {

constexpr uint64_t kTagNonce = 1, kTagEthBalance = 2, kTagWeiBalance = 3;
constexpr uint64_t kTagBlockSender = 50, kTagBlockContract = 51, kTagBlockKind = 52, kTagBlockPick = 53,
                   kTagBlockValue = 54, kTagBlockBalance = 56;
constexpr uint64_t kBlockNewPerMille = 333, kBlockDeletePerMille = 20;  // the rest are updates
constexpr uint64_t kTagOwnerPerm = 10, kTagSpenderPerm = 20, kTagValue = 30, kTagCode = 40;
constexpr uint8_t kBalancesMappingSlot = 2, kAllowancesMappingSlot = 3;
constexpr size_t kChunk = 256;  // slots hashed per batch pass

// The stream's value at a counter: the mix of counter + gamma (one splitmix64 step from it).
uint64_t splitmix64(uint64_t x) { return st::splitmix64_mix(x + st::kSplitmix64Gamma); }

void put_be64(uint8_t* p, uint64_t v) {
  for (int k = 7; k >= 0; --k, v >>= 8) p[k] = uint8_t(v);
}

// "statetree" || seed_be64 || i_be64 (25 bytes).
constexpr size_t kAddrMsgBytes = 25;
void address_message(uint64_t seed, uint64_t i, uint8_t* m) {
  std::memcpy(m, "statetree", 9);
  put_be64(m + 9, seed);
  put_be64(m + 17, i);
}

// pad32(address) || pad32(small) (64 bytes).
void mapping_message(const uint8_t* addr20, uint8_t mapping_slot, uint8_t* m) {
  std::memset(m, 0, 64);
  std::memcpy(m + 12, addr20, 20);
  m[63] = mapping_slot;
}

struct Scratch {
  std::vector<uint8_t> msgs, digests;
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
};

void batch(Scratch& s, size_t n, size_t msg_bytes) {
  s.ptrs.resize(n);
  s.lens.assign(n, msg_bytes);
  for (size_t k = 0; k < n; ++k) s.ptrs[k] = s.msgs.data() + k * msg_bytes;
  s.digests.resize(n * 32);
  kernels::keccak256_batch(s.ptrs.data(), s.lens.data(), s.digests.data(), n);
}

}  // namespace

struct ContractOverlay {
  uint64_t added = 0;                              // new entries S, S+1, ...
  std::vector<uint64_t> deleted;                   // sorted entry indices
  std::unordered_map<uint64_t, Hash32> values;    // changed / new entries
};
struct EoaOverlay {
  uint64_t nonce = 0;
  U256 balance{};
};
struct SyntheticState::Overlay {
  std::unordered_map<uint64_t, ContractOverlay> contracts;
  std::unordered_map<uint64_t, EoaOverlay> eoas;
  int64_t slot_delta = 0;
};

SyntheticState::SyntheticState(const SyntheticSpec& spec) : spec_(spec) {
  const uint64_t eoas = spec_.accounts >= spec_.contracts ? spec_.accounts - spec_.contracts : 0;
  domain_ = std::max<uint64_t>({eoas, spec_.slots_per_contract, 1});
  const uint64_t blocks = spec_.blocks;
  spec_.blocks = 0;
  for (uint64_t b = 0; b < blocks; ++b) next_block(nullptr);
}

uint64_t SyntheticState::block_rand(uint64_t tag, uint64_t block, uint64_t w) const {
  return splitmix64(splitmix64(splitmix64(spec_.block_seed ^ (tag * 0x9fb21c651e98df25ull)) ^ block) + w);
}

uint64_t SyntheticState::slot_count() const {
  return uint64_t(int64_t(spec_.contracts * spec_.slots_per_contract) + (overlay_ ? overlay_->slot_delta : 0));
}

uint64_t SyntheticState::storage_size(uint64_t i) const {
  if (i >= spec_.contracts) return 0;
  if (overlay_) {
    auto it = overlay_->contracts.find(i);
    if (it != overlay_->contracts.end())
      return spec_.slots_per_contract + it->second.added - it->second.deleted.size();
  }
  return spec_.slots_per_contract;
}

// The j-th present entry: the smallest e with e - #{deleted <= e} == j (a fixed point reached
// from below; the smallest one is never a deleted entry).
uint64_t SyntheticState::entry_of(uint64_t c, uint64_t j) const {
  if (!overlay_) return j;
  auto it = overlay_->contracts.find(c);
  if (it == overlay_->contracts.end()) return j;
  const std::vector<uint64_t>& d = it->second.deleted;
  uint64_t e = j;
  for (;;) {
    const uint64_t next = j + uint64_t(std::upper_bound(d.begin(), d.end(), e) - d.begin());
    if (next == e) return e;
    e = next;
  }
}

// A block's diff: one AccountDiff per account it writes (none without a StateDiff).
struct SyntheticState::BlockDiff {
  const SyntheticState& state;
  StateDiff* out;
  std::map<uint64_t, size_t> diff_of;  // account index -> its AccountDiff
  AccountDiff* of(uint64_t i) {
    if (!out) return nullptr;
    auto [it, fresh] = diff_of.emplace(i, out->accounts.size());
    if (fresh) {
      out->accounts.emplace_back();
      out->accounts.back().address = state.address(i);
    }
    return &out->accounts[it->second];
  }
};

// Block b's random non-zero slot value for write w.
Hash32 SyntheticState::block_value(uint64_t tag, uint64_t b, uint64_t w) const {
  Hash32 v{};
  put_be64(v.data() + 16, block_rand(tag, b, w));
  put_be64(v.data() + 24, block_rand(tag + 1, b, w));
  if (std::all_of(v.begin(), v.end(), [](uint8_t x) { return x == 0; })) v[31] = 1;
  return v;
}

// Write w (even) of block b: a transfer's sender, an EOA drawn at random, takes its next
// nonce and a new balance.
void SyntheticState::block_sender_write(uint64_t b, uint64_t w, BlockDiff& diff, SyntheticBlockWrite* trace) {
  const uint64_t eoas = spec_.accounts - spec_.contracts;
  const uint64_t i = spec_.contracts + block_rand(kTagBlockSender, b, w) % eoas;
  auto [it, fresh] = overlay_->eoas.emplace(i, EoaOverlay{});
  if (fresh) {
    AccountRecord r;
    account(i, &r);
    it->second.nonce = r.nonce;
  }
  it->second.nonce += 1;
  const unsigned __int128 wei =
      (unsigned __int128)(block_rand(kTagBlockBalance, b, w) % 1000) * 1000000000000000000ull +
      block_rand(kTagBlockBalance + 1, b, w) % 1000000000000000000ull + 1;
  it->second.balance = U256{};
  put_be64(it->second.balance.data() + 16, uint64_t(wei >> 64));
  put_be64(it->second.balance.data() + 24, uint64_t(wei));
  if (AccountDiff* d = diff.of(i)) d->nonce = it->second.nonce, d->balance = it->second.balance;
  if (trace) {
    trace->has_sender = true;
    trace->sender = address(i);
    trace->sender_nonce = it->second.nonce;
    trace->sender_balance = it->second.balance;
  }
}

// Write w of block b to a contract drawn at random: a new slot, or a live slot deleted or
// updated (by the per-mille rates).
void SyntheticState::block_slot_write(uint64_t b, uint64_t w, BlockDiff& diff, SyntheticBlockWrite* trace) {
  Overlay& ov = *overlay_;
  const uint64_t S = spec_.slots_per_contract;
  const uint64_t c = block_rand(kTagBlockContract, b, w) % spec_.contracts;
  ContractOverlay& co = ov.contracts[c];
  const uint64_t live = S + co.added - co.deleted.size();
  const uint64_t kind = block_rand(kTagBlockKind, b, w) % 1000;
  uint64_t e = 0;
  Hash32 v{};
  if (live == 0 || kind < kBlockNewPerMille) {
    e = S + co.added++;
    v = block_value(kTagBlockValue, b, w);
    co.values[e] = v;
    ++ov.slot_delta;
  } else {
    e = entry_of(c, block_rand(kTagBlockPick, b, w) % live);
    if (kind < kBlockNewPerMille + kBlockDeletePerMille) {
      co.deleted.insert(std::upper_bound(co.deleted.begin(), co.deleted.end(), e), e);
      co.values.erase(e);
      --ov.slot_delta;
    } else {
      v = block_value(kTagBlockValue, b, w);
      co.values[e] = v;
    }
  }
  if (AccountDiff* d = diff.of(c)) d->storage_writes.push_back({slot_of(c, e), v});
  if (trace) {
    trace->has_slot = true;
    trace->contract = address(c);
    trace->slot = slot_of(c, e);
    trace->value = v;
  }
}

void SyntheticState::next_block(StateDiff* out, std::vector<SyntheticBlockWrite>* writes) {
  if (!overlay_) overlay_ = std::make_shared<Overlay>();
  const uint64_t b = spec_.blocks++;
  const uint64_t eoas = spec_.accounts - spec_.contracts;
  BlockDiff diff{*this, out, {}};
  if (out) out->accounts.clear();
  if (writes) writes->clear(), writes->reserve(spec_.block_writes);
  for (uint64_t w = 0; w < spec_.block_writes; ++w) {
    SyntheticBlockWrite* trace = nullptr;
    if (writes) {
      trace = &writes->emplace_back();
      trace->transfer = w / 2;
    }
    if (w % 2 == 0 && eoas > 0) block_sender_write(b, w, diff, trace);  // the transfer's sender
    if (spec_.contracts == 0) continue;
    block_slot_write(b, w, diff, trace);
  }
}

uint64_t SyntheticState::rand(uint64_t tag, uint64_t i, uint64_t j) const {
  return splitmix64(splitmix64(splitmix64(spec_.seed ^ (tag * 0xd6e8feb86659fd93ull)) ^ i) + j);
}

// x -> (a*x + o) mod D with gcd(a, D) = 1: a bijection of [0, D) per (contract, tag).
SyntheticState::Perm SyntheticState::perm(uint64_t contract, uint64_t tag) const {
  Perm p;
  p.d = domain_;
  if (p.d == 1) return p;
  p.a = 1 + rand(tag, contract, 0) % (p.d - 1);
  while (std::gcd(p.a, p.d) != 1) p.a = p.a % (p.d - 1) + 1;
  p.o = rand(tag + 1, contract, 0) % p.d;
  return p;
}

Address SyntheticState::address(uint64_t i) const {
  uint8_t m[kAddrMsgBytes], h[32];
  address_message(spec_.seed, i, m);
  kernels::keccak256(m, sizeof m, h);
  Address a;
  std::memcpy(a.data(), h + 12, 20);
  return a;
}

Hash32 SyntheticState::value_of(uint64_t contract, uint64_t j) const {
  Hash32 v{};
  put_be64(v.data() + 16, rand(kTagValue, contract, j));
  put_be64(v.data() + 24, rand(kTagValue + 1, contract, j));
  if (std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; })) v[31] = 1;
  return v;
}

Hash32 SyntheticState::slot_of(uint64_t c, uint64_t j) const {
  Hash32 slot{};
  if (j == 0) return slot;  // totalSupply
  uint8_t m[64];
  if (j >= spec_.slots_per_contract) {  // a block's new slot: balances[H(D + k)]
    const Address holder = address(spec_.contracts + domain_ + (j - spec_.slots_per_contract));
    mapping_message(holder.data(), kBalancesMappingSlot, m);
    kernels::keccak256(m, 64, slot.data());
    return slot;
  }
  const Perm owner_of = perm(c, kTagOwnerPerm), spender_of = perm(c, kTagSpenderPerm);
  if (j % 2 == 0) {
    const Address holder = address(spec_.contracts + owner_of(j / 2 - 1));
    mapping_message(holder.data(), kBalancesMappingSlot, m);
    kernels::keccak256(m, 64, slot.data());
    return slot;
  }
  const uint64_t a = (j - 1) / 2;
  const Address owner = address(spec_.contracts + owner_of(a));
  const Address spender = address(spec_.contracts + spender_of(a));
  mapping_message(owner.data(), kAllowancesMappingSlot, m);
  uint8_t inner[32];
  kernels::keccak256(m, 64, inner);
  mapping_message(spender.data(), 0, m);
  std::memcpy(m + 32, inner, 32);
  kernels::keccak256(m, 64, slot.data());
  return slot;
}

std::optional<StateKey> SyntheticState::slot_key(uint64_t i, uint64_t j) const {
  if (i >= spec_.contracts || j >= storage_size(i)) return std::nullopt;
  return StateKey{address(i), slot_of(i, entry_of(i, j))};
}

std::optional<Hash32> SyntheticState::slot_value(uint64_t i, uint64_t j) const {
  if (i >= spec_.contracts || j >= storage_size(i)) return std::nullopt;
  const uint64_t e = entry_of(i, j);
  if (overlay_) {
    auto it = overlay_->contracts.find(i);
    if (it != overlay_->contracts.end()) {
      auto v = it->second.values.find(e);
      if (v != it->second.values.end()) return v->second;
    }
  }
  return value_of(i, e);
}

void SyntheticState::account_fields(uint64_t i, AccountRecord* out) const {
  out->address = address(i);
  out->balance = {};
  out->storage.clear();
  if (i >= spec_.contracts) {
    out->nonce = rand(kTagNonce, i, 0) % 1000;
    const unsigned __int128 wei = (unsigned __int128)(rand(kTagEthBalance, i, 0) % 1000) * 1000000000000000000ull +
                                  rand(kTagWeiBalance, i, 0) % 1000000000000000000ull + 1;
    put_be64(out->balance.data() + 16, uint64_t(wei >> 64));
    put_be64(out->balance.data() + 24, uint64_t(wei));
    out->code.clear();
    if (overlay_) {
      auto it = overlay_->eoas.find(i);
      if (it != overlay_->eoas.end()) out->nonce = it->second.nonce, out->balance = it->second.balance;
    }
    return;
  }
  const uint64_t c = i;
  out->nonce = 1;
  // The stub: PUSH1 0x80 PUSH1 0x40 MSTORE, a CALLVALUE guard, PUSH32 <per-contract
  // constant> POP, a selector dispatch prefix, then JUMPDEST/STOP padding.
  static constexpr uint8_t kHead[] = {0x60, 0x80, 0x60, 0x40, 0x52, 0x34, 0x80, 0x15, 0x61, 0x00,
                                      0x10, 0x57, 0x60, 0x00, 0x80, 0xfd, 0x5b, 0x50, 0x7f};
  static constexpr uint8_t kDispatch[] = {0x50, 0x60, 0x04, 0x36, 0x10, 0x61, 0x00, 0x41, 0x57, 0x60, 0x00,
                                          0x35, 0x60, 0xe0, 0x1c, 0x80, 0x63, 0x70, 0xa0, 0x82, 0x31, 0x14,
                                          0x80, 0x63, 0x09, 0x5e, 0xa7, 0xb3, 0x14, 0x80, 0x63, 0xa9, 0x05,
                                          0x9c, 0xbb, 0x14, 0x80, 0x63, 0x18, 0x16, 0x0d, 0xdd, 0x14};
  out->code.assign(kStubCodeBytes, 0x00);
  uint8_t* p = out->code.data();
  std::memcpy(p, kHead, sizeof kHead);
  for (int w = 0; w < 4; ++w) put_be64(p + sizeof kHead + 8 * w, rand(kTagCode, c, w));
  std::memcpy(p + sizeof kHead + 32, kDispatch, sizeof kDispatch);
  for (size_t k = sizeof kHead + 32 + sizeof kDispatch; k + 1 < kStubCodeBytes; ++k) out->code[k] = 0x5b;
}

void SyntheticState::account(uint64_t i, AccountRecord* out) const {
  account_fields(i, out);
  if (i >= spec_.contracts) return;
  const uint64_t c = i;
  const uint64_t s_count = spec_.slots_per_contract;
  out->storage.resize(s_count);
  if (s_count == 0) return overlay_storage(c, out);
  out->storage[0] = {Hash32{}, value_of(c, 0)};
  thread_local Scratch addr_s, map_s, outer_s;
  const Perm owner_of = perm(c, kTagOwnerPerm), spender_of = perm(c, kTagSpenderPerm);
  for (uint64_t first = 1; first < s_count; first += kChunk) {
    const uint64_t last = std::min<uint64_t>(first + kChunk, s_count);
    // Pass 1: the holder / owner / spender addresses (one or two per slot).
    addr_s.msgs.resize(2 * kChunk * kAddrMsgBytes);
    size_t n_addr = 0;
    for (uint64_t j = first; j < last; ++j) {
      const uint64_t idx = j % 2 == 0 ? owner_of(j / 2 - 1) : owner_of((j - 1) / 2);
      address_message(spec_.seed, spec_.contracts + idx, addr_s.msgs.data() + n_addr++ * kAddrMsgBytes);
      if (j % 2 == 1)
        address_message(spec_.seed, spec_.contracts + spender_of((j - 1) / 2),
                        addr_s.msgs.data() + n_addr++ * kAddrMsgBytes);
    }
    batch(addr_s, n_addr, kAddrMsgBytes);
    // Pass 2: balances[holder] and the inner keccak(owner || 3) of the allowances.
    map_s.msgs.resize(kChunk * 64);
    size_t a = 0, n_outer = 0;
    for (uint64_t j = first; j < last; ++j) {
      const uint8_t* owner = addr_s.digests.data() + a * 32 + 12;
      mapping_message(owner, j % 2 == 0 ? kBalancesMappingSlot : kAllowancesMappingSlot,
                      map_s.msgs.data() + (j - first) * 64);
      a += j % 2 == 0 ? 1 : 2;
    }
    batch(map_s, last - first, 64);
    // Pass 3: the allowances' outer keccak(spender || inner).
    outer_s.msgs.resize(kChunk * 64);
    a = 0;
    for (uint64_t j = first; j < last; ++j) {
      if (j % 2 == 1) {
        uint8_t* m = outer_s.msgs.data() + n_outer++ * 64;
        mapping_message(addr_s.digests.data() + (a + 1) * 32 + 12, 0, m);
        std::memcpy(m + 32, map_s.digests.data() + (j - first) * 32, 32);
      }
      a += j % 2 == 0 ? 1 : 2;
    }
    batch(outer_s, n_outer, 64);
    size_t o = 0;
    for (uint64_t j = first; j < last; ++j) {
      auto& e = out->storage[j];
      const uint8_t* d = j % 2 == 0 ? map_s.digests.data() + (j - first) * 32 : outer_s.digests.data() + o++ * 32;
      std::memcpy(e.first.data(), d, 32);
      e.second = value_of(c, j);
    }
  }
  overlay_storage(c, out);
}

void SyntheticState::overlay_storage(uint64_t c, AccountRecord* out) const {
  const uint64_t s_count = spec_.slots_per_contract;
  if (!overlay_) return;
  auto it = overlay_->contracts.find(c);
  if (it == overlay_->contracts.end()) return;
  // The blocks' changes: deleted entries dropped, changed values, new entries appended.
  const ContractOverlay& co = it->second;
  thread_local std::vector<std::pair<Hash32, Hash32>> live;
  live.clear();
  for (uint64_t e = 0; e < s_count + co.added; ++e) {
    if (std::binary_search(co.deleted.begin(), co.deleted.end(), e)) continue;
    auto v = co.values.find(e);
    if (e < s_count) live.push_back({out->storage[e].first, v != co.values.end() ? v->second : out->storage[e].second});
    else live.push_back({slot_of(c, e), v->second});
  }
  out->storage.swap(live);
}

std::string SyntheticState::spec_json() const {
  return "{\"kind\":\"synthetic\",\"version\":" + std::to_string(kSyntheticSpecVersion) +
         ",\"accounts\":" + std::to_string(spec_.accounts) + ",\"contracts\":" + std::to_string(spec_.contracts) +
         ",\"slots_per_contract\":" + std::to_string(spec_.slots_per_contract) +
         ",\"seed\":" + std::to_string(spec_.seed) +
         (spec_.blocks ? ",\"blocks\":" + std::to_string(spec_.blocks) + ",\"block_seed\":" +
                             std::to_string(spec_.block_seed) + ",\"block_writes\":" + std::to_string(spec_.block_writes)
                       : std::string()) +
         "}";
}

// A strict reader of a flat JSON object whose values are strings (no escapes) or unsigned
// decimal integers: all spec_json() writes.
namespace {

using SpecFields = std::map<std::string, std::variant<uint64_t, std::string>>;

// A cursor over a flat JSON object: whitespace, single characters, plain strings (no
// escapes), unsigned decimal numbers.
struct FlatJson {
  std::string_view json;
  size_t p = 0;
  void ws() {
    while (p < json.size() && (json[p] == ' ' || json[p] == '\t' || json[p] == '\n' || json[p] == '\r')) ++p;
  }
  bool expect(char ch) {
    ws();
    if (p < json.size() && json[p] == ch) { ++p; return true; }
    return false;
  }
  bool string_token(std::string* out) {
    ws();
    if (p >= json.size() || json[p] != '"') return false;
    const size_t end = json.find('"', p + 1);
    if (end == std::string_view::npos) return false;
    *out = std::string(json.substr(p + 1, end - p - 1));
    if (out->find('\\') != std::string::npos) return false;
    p = end + 1;
    return true;
  }
  // A string or a number as the value of field `key`; "" or what is wrong with it.
  std::string value(const std::string& key, const std::string& bad, std::variant<uint64_t, std::string>* out) {
    ws();
    if (p < json.size() && json[p] == '"') {
      std::string s;
      if (!string_token(&s)) return bad;
      *out = s;
      return {};
    }
    uint64_t v = 0;
    const size_t start = p;
    while (p < json.size() && json[p] >= '0' && json[p] <= '9') {
      const uint64_t d = uint64_t(json[p] - '0');
      if (v > (~uint64_t(0) - d) / 10) return "synthetic state spec: number out of range in field '" + key + "'";
      v = v * 10 + d;
      ++p;
    }
    if (p == start) return bad;
    *out = v;
    return {};
  }
};

// The fields of a flat JSON object (each once); "" or what is wrong with it.
std::string parse_spec_fields(std::string_view json, SpecFields* fields) {
  FlatJson j{json};
  const std::string bad = "synthetic state spec: not a flat JSON object: " + std::string(json.substr(0, 80));
  if (!j.expect('{')) return bad;
  if (!j.expect('}')) {
    for (;;) {
      std::string key;
      if (!j.string_token(&key) || !j.expect(':')) return bad;
      std::variant<uint64_t, std::string> value;
      if (std::string err = j.value(key, bad, &value); !err.empty()) return err;
      if (!fields->emplace(key, value).second) return "synthetic state spec: duplicate field '" + key + "'";
      if (j.expect(',')) continue;
      if (j.expect('}')) break;
      return bad;
    }
  }
  j.ws();
  if (j.p != json.size()) return bad;
  return {};
}

// The spec from its fields: kind, version, the state's four numbers and, when "blocks" is
// there, the blocks' three; no other field.
std::variant<SyntheticSpec, std::string> spec_from_fields(const SpecFields& fields) {
  auto str_field = [&](const char* k) -> const std::string* {
    auto it = fields.find(k);
    return it == fields.end() ? nullptr : std::get_if<std::string>(&it->second);
  };
  auto num_field = [&](const char* k) -> const uint64_t* {
    auto it = fields.find(k);
    return it == fields.end() ? nullptr : std::get_if<uint64_t>(&it->second);
  };
  const std::string* kind = str_field("kind");
  if (!kind || *kind != "synthetic") return "synthetic state spec: \"kind\" must be \"synthetic\"";
  const uint64_t* version = num_field("version");
  if (!version || *version != kSyntheticSpecVersion)
    return "synthetic state spec: \"version\" must be " + std::to_string(kSyntheticSpecVersion);
  SyntheticSpec s;
  const char* names[] = {"accounts", "contracts", "slots_per_contract", "seed"};
  uint64_t* dst[] = {&s.accounts, &s.contracts, &s.slots_per_contract, &s.seed};
  for (int k = 0; k < 4; ++k) {
    const uint64_t* v = num_field(names[k]);
    if (!v) return std::string("synthetic state spec: missing number \"") + names[k] + "\"";
    *dst[k] = *v;
  }
  size_t known = 6;
  if (fields.count("blocks")) {
    const char* bnames[] = {"blocks", "block_seed", "block_writes"};
    uint64_t* bdst[] = {&s.blocks, &s.block_seed, &s.block_writes};
    for (int k = 0; k < 3; ++k) {
      const uint64_t* v = num_field(bnames[k]);
      if (!v) return std::string("synthetic state spec: missing number \"") + bnames[k] + "\"";
      *bdst[k] = *v;
    }
    known += 3;
  }
  if (fields.size() != known) return "synthetic state spec: unknown fields";
  if (s.contracts > s.accounts) return "synthetic state spec: contracts > accounts";
  return s;
}

}  // namespace

std::variant<SyntheticSpec, std::string> parse_synthetic_spec(std::string_view json) {
  SpecFields fields;
  if (std::string err = parse_spec_fields(json, &fields); !err.empty()) return err;
  return spec_from_fields(fields);
}

}  // namespace st::state
