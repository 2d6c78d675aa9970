// generators: see generators.h. One Generator per file: it keeps the state the file's
// earlier blocks wrote (slot values, sender and fee-recipient nonces and balances), a
// BalBuilder per block, and a per-transaction gas simulation (TxGas) that can price the
// next call before taking it, so transactions and blocks fill exactly up to their caps.
#include "workloads/generators.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "engine/bintrie/keys.h"
#include "engine/state/bal_builder.h"
#include "kernels/keccak256.h"
#include "kernels/support/splitmix64.h"

namespace st::workloads {

using state::Address;
using state::Hash32;
using state::U256;

std::optional<WorkloadKind> workload_kind_from_name(std::string_view n) {
  if (n == "erc20_balanceof") return WorkloadKind::erc20_balanceof;
  if (n == "erc20_approve") return WorkloadKind::erc20_approve;
  if (n == "mixed_sload_sstore") return WorkloadKind::mixed_sload_sstore;
  if (n == "mainnet_like") return WorkloadKind::mainnet_like;
  if (n == "synthetic_writes") return WorkloadKind::synthetic_writes;
  return std::nullopt;
}

const char* workload_kind_name(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::erc20_balanceof: return "erc20_balanceof";
    case WorkloadKind::erc20_approve: return "erc20_approve";
    case WorkloadKind::mixed_sload_sstore: return "mixed_sload_sstore";
    case WorkloadKind::synthetic_writes: return "synthetic_writes";
    default: return "mainnet_like";
  }
}

namespace {

Hash32 keccak(const uint8_t* p, size_t n) {
  Hash32 h;
  kernels::keccak256(p, n, h.data());
  return h;
}
U256 u256(uint64_t v) {
  U256 r{};
  for (int i = 31; i >= 24; --i, v >>= 8) r[size_t(i)] = uint8_t(v);
  return r;
}
// a + b, a - b (saturating at 0) with b = x * y (x, y < 2^64).
U256 add_mul(U256 a, uint64_t x, uint64_t y) {
  unsigned __int128 b = (unsigned __int128)x * y, carry = 0;
  for (int i = 31; i >= 0; --i) {
    const unsigned __int128 s = (unsigned __int128)a[size_t(i)] + (b & 0xff) + carry;
    a[size_t(i)] = uint8_t(s);
    carry = s >> 8;
    b >>= 8;
  }
  return a;
}
U256 sub_mul_saturating(U256 a, uint64_t x, uint64_t y) {
  unsigned __int128 b = (unsigned __int128)x * y;
  int borrow = 0;
  U256 r = a;
  for (int i = 31; i >= 0; --i) {
    int d = int(a[size_t(i)]) - int(b & 0xff) - borrow;
    borrow = d < 0;
    r[size_t(i)] = uint8_t(d + (borrow ? 256 : 0));
    b >>= 8;
  }
  return borrow ? U256{} : r;
}
// One splitmix64 step from state z (kernels/support/splitmix64.h).
uint64_t mix(uint64_t z) { return splitmix64(z); }
// A fresh address named by a tag and the seed: keccak256(tag || seed_be64)[12..32).
Address tagged_address(const char* tag, uint64_t seed) {
  std::vector<uint8_t> m(tag, tag + std::strlen(tag));
  for (int i = 7; i >= 0; --i) m.push_back(uint8_t(seed >> (8 * i)));
  const Hash32 h = keccak(m.data(), m.size());
  Address a;
  std::memcpy(a.data(), h.data() + 12, 20);
  return a;
}

constexpr uint64_t kGasPriceWei = 1000000000;  // 1 gwei
constexpr uint64_t kMainnetGas = 36000000;

using SlotKey = std::pair<Address, Hash32>;

class Generator;

// One transaction's gas by the tree's rules (execution gas; intrinsic added by the caller).
class TxGas {
 public:
  TxGas(gas::Tree tree, const bintrie::KeyScheme& ks) : tree_(tree), ks_(ks) {}
  // The witness of the transaction's sender and target (free in go-ethereum).
  void start(const Address& sender, const Address& target) {
    if (tree_ != gas::Tree::bintrie) return;
    w_.read(bintrie::basic_data_key(ks_, sender));
    w_.read(bintrie::basic_data_key(ks_, target));
    w_.read(bintrie::code_hash_key(ks_, target));
  }
  // The state gas of an SLOAD / SSTORE (peek: without recording it).
  uint64_t sload(const Address& a, const Hash32& slot, bool peek) {
    if (tree_ == gas::Tree::mpt) {
      const bool warm = warm_.count({a, slot});
      if (!peek) warm_.insert({a, slot});
      return gas::mpt_sload(warm);
    }
    const bintrie::Hash32 key = bintrie::storage_slot_key(ks_, a, slot);
    return gas::WitnessCharges::or_warm(peek ? w_.peek_read(key) : w_.read(key));
  }
  uint64_t sstore(const Address& a, const Hash32& slot, const U256& original, const U256& current, const U256& value,
                  bool peek) {
    if (tree_ == gas::Tree::mpt) {
      const bool warm = warm_.count({a, slot});
      const gas::SstoreCharge c = gas::mpt_sstore(warm, original, current, value);
      if (!peek) warm_.insert({a, slot}), refund_ += c.refund;
      return c.gas;
    }
    const bintrie::Hash32 key = bintrie::storage_slot_key(ks_, a, slot);
    return gas::WitnessCharges::or_warm(peek ? w_.peek_write(key) : w_.write(key));
  }
  // A CALL into `callee` whose EVM work already holds the warm 100 (the token, warm through
  // the access list on the MPT): the binary trie's witness replaces it.
  uint64_t call_extra(const Address& callee, bool peek) {
    if (tree_ != gas::Tree::bintrie) return 0;
    const bintrie::Hash32 key = bintrie::basic_data_key(ks_, callee);
    return gas::WitnessCharges::or_warm(peek ? w_.peek_read(key) : w_.read(key)) - gas::kWarmStorageRead;
  }
  // Code chunks 0..n-1 of `code_owner` executed (binary trie: 200 each the first time).
  uint64_t chunks(const Address& code_owner, uint64_t n, bool peek) {
    if (tree_ != gas::Tree::bintrie) return 0;
    uint64_t g = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const bintrie::Hash32 key = bintrie::code_chunk_key(ks_, code_owner, i);
      g += peek ? w_.peek_read(key) : w_.read(key);
    }
    return g;
  }
  // A cold account access outside the access list (mainnet_like's contract calls).
  uint64_t account(const Address& a, bool peek) {
    if (tree_ == gas::Tree::mpt) {
      const bool warm = warm_accounts_.count(a);
      if (!peek) warm_accounts_.insert(a);
      return gas::mpt_account_access(warm);
    }
    const bintrie::Hash32 key = bintrie::basic_data_key(ks_, a);
    return gas::WitnessCharges::or_warm(peek ? w_.peek_read(key) : w_.read(key));
  }
  int64_t refund() const { return tree_ == gas::Tree::mpt ? refund_ : 0; }

 private:
  gas::Tree tree_;
  const bintrie::KeyScheme& ks_;
  gas::WitnessCharges w_;
  std::set<SlotKey> warm_;
  std::set<Address> warm_accounts_;
  int64_t refund_ = 0;
};

class Generator {
 public:
  Generator(const state::SyntheticState& src, const WorkloadOptions& o) : src_(src), o_(o) {
    ks_.hasher = bintrie::make_hasher(o.bintrie_hash);
    attack_ = tagged_address("statetree attack contract", o.seed);
    coinbase_ = tagged_address("statetree fee recipient", o.seed);
    owner_ = tagged_address("statetree approve owner", o.seed);
  }

  std::variant<std::vector<state::Block>, std::string> run();

 private:
  // ---- the state before the current block, and inside it ----
  U256 slot_value(const Address& a, const Hash32& slot, const U256& base) const {
    if (auto v = b_.slot_now(a, slot)) return *v;
    auto it = slots_.find({a, slot});
    return it == slots_.end() ? base : it->second;
  }
  U256 slot_block_pre(const Address& a, const Hash32& slot, const U256& base) const {
    auto it = slots_.find({a, slot});
    return it == slots_.end() ? base : it->second;
  }
  std::pair<uint64_t, U256> account_block_pre(const Address& a, std::optional<uint64_t> index) const {
    auto it = accounts_.find(a);
    if (it != accounts_.end()) return it->second;
    if (!index) return {0, U256{}};
    state::AccountRecord r;
    src_.account_fields(*index, &r);
    return {r.nonce, r.balance};
  }
  void read(const Address& a, const Hash32& slot, const U256& base) { b_.read_slot(a, slot, slot_block_pre(a, slot, base)); }
  void write(const Address& a, const Hash32& slot, const U256& base, const U256& v) {
    b_.write_slot(a, slot, slot_block_pre(a, slot, base), v);
  }

  // ---- the ERC20 calls ----
  struct CallSlot {
    Hash32 slot{};
    U256 base{};  // its value in the state the file starts from
    U256 value{}; // approve: the value written
  };
  std::optional<std::string> call_slot(bool approve, uint64_t k, CallSlot* out) const;
  uint64_t call_gas(TxGas& g, bool approve, const CallSlot& s, bool first_of_kind, bool first_call, bool peek);

  // A transaction's planned call: approve or balanceOf, and its slot.
  struct PlannedCall {
    bool approve;
    CallSlot slot;
  };
  void call_counts(uint64_t cap, uint64_t* n_load, uint64_t* n_store, bool* fill) const;
  std::optional<std::string> plan_calls(const TxGas& g, uint64_t cap, uint64_t n_load, uint64_t n_store, bool fill,
                                        std::vector<PlannedCall>* plan);
  std::optional<std::string> erc20_tx(TxGas& g, uint64_t cap, uint64_t* exec_gas, state::TxInfo* info, uint64_t* first_k);
  // The outcome of a block's next ERC20 transaction when it is not an error.
  enum class TxOutcome { done, block_full };
  std::variant<TxOutcome, std::string> erc20_block_tx(TxGas& g, const state::Block& blk, uint64_t t, uint64_t block_gas,
                                                      uint64_t used, uint64_t* exec, uint64_t* intrinsic, state::TxInfo* info);
  void carry_post_state(const state::BlockAccessList& bal);
  std::optional<std::string> mainnet_tx(TxGas& g, uint64_t tx, uint64_t* exec_gas, state::TxInfo* info);
  uint64_t zipf_contract(uint64_t r);
  Address sender_for(uint64_t tx, uint64_t* index);
  void settle_fees(const Address& sender, uint64_t sender_index, uint64_t gas_used, state::BalIndex idx);

  const state::SyntheticState& src_;
  const WorkloadOptions& o_;
  bintrie::KeyScheme ks_;
  Address attack_, coinbase_, owner_, token_{};
  std::map<SlotKey, U256> slots_;                         // written by earlier blocks of the file
  std::map<Address, std::pair<uint64_t, U256>> accounts_; // nonce, balance after earlier blocks
  std::map<Address, uint64_t> eoa_index_;                 // senders: their index in the state
  state::BalBuilder b_;
  uint64_t k_ = 0;           // the call counter
  uint64_t tx_counter_ = 0;  // over the file
  std::vector<double> zipf_cdf_;
  uint64_t zipf_step_ = 1, zipf_offset_ = 0;

  // ---- the other work of the published cold tail (--other-slots) ----
  struct OtherSlot {
    uint64_t global = 0;  // index over the other contracts' slots, concatenated
    Address contract{};
    Hash32 slot{};
    U256 base{};
  };
  std::optional<std::string> draw_other(uint64_t tx, std::vector<OtherSlot>* out);
  uint64_t other_work(TxGas& g, const std::vector<OtherSlot>& other, bool record);
  std::vector<uint64_t> other_contracts_, other_end_;  // contract indices, cumulative slot counts
  std::set<uint64_t> other_used_;                      // global indices drawn by earlier transactions
};

// N distinct slots of the other contracts for transaction `tx` of the file, none drawn
// before: global indices u = r mod total from a splitmix64 sequence seeded by (seed, tx),
// skipping repeats. Refused once the file would take more than half of those slots.
std::optional<std::string> Generator::draw_other(uint64_t tx, std::vector<OtherSlot>* out) {
  out->clear();
  if (other_end_.empty()) {
    uint64_t acc = 0;
    for (uint64_t c = 0; c < src_.spec().contracts; ++c) {
      if (c == o_.contract) continue;
      const uint64_t n = src_.storage_size(c);
      if (n == 0) continue;
      other_contracts_.push_back(c);
      other_end_.push_back(acc += n);
    }
  }
  const uint64_t total = other_end_.empty() ? 0 : other_end_.back();
  if (other_used_.size() + o_.other_slots > total / 2)
    return "--other-slots " + std::to_string(o_.other_slots) + ": the state's other contracts hold " +
           std::to_string(total) + " slots, and the file's transactions would take more than half of them (" +
           std::to_string(other_used_.size() + o_.other_slots) + "); a larger state, fewer blocks or fewer slots";
  std::set<uint64_t> mine;
  uint64_t r = mix(o_.seed ^ 0x6f74686572ull ^ mix(tx));
  while (mine.size() < o_.other_slots) {
    r = mix(r);
    const uint64_t u = r % total;
    if (other_used_.count(u) || !mine.insert(u).second) continue;
    const size_t ci = size_t(std::upper_bound(other_end_.begin(), other_end_.end(), u) - other_end_.begin());
    const uint64_t c = other_contracts_[ci], j = u - (ci ? other_end_[ci - 1] : 0);
    OtherSlot s;
    s.global = u;
    s.contract = src_.address(c);
    s.slot = src_.slot_key(c, j)->slot.value();
    s.base = src_.slot_value(c, j).value();
    out->push_back(s);
  }
  return std::nullopt;
}

// The other work's gas on `g` (per slot its contract's account access, cold the first time
// in the transaction, and a cold SLOAD or SSTORE); with `record` also its accesses in the block's BAL and the file's drawn set.
uint64_t Generator::other_work(TxGas& g, const std::vector<OtherSlot>& other, bool record) {
  uint64_t gas = 0;
  for (const OtherSlot& s : other) {
    gas += g.account(s.contract, false);
    if (record) b_.touch(s.contract), other_used_.insert(s.global);
    if (!o_.other_write) {
      gas += g.sload(s.contract, s.slot, false);
      if (record) read(s.contract, s.slot, s.base);
      continue;
    }
    const U256 cur = slot_value(s.contract, s.slot, s.base);
    U256 value = add_mul(cur, 1, 1);
    if (value == U256{}) value = u256(1);
    gas += g.sstore(s.contract, s.slot, b_.slot_tx_start(s.contract, s.slot).value_or(cur), cur, value, false);
    if (record) write(s.contract, s.slot, s.base, value);
  }
  return gas;
}

std::optional<std::string> Generator::call_slot(bool approve, uint64_t k, CallSlot* out) const {
  const uint64_t n = o_.start + k;
  const SlotsMode mode = o_.slots.value_or(approve ? SlotsMode::empty : SlotsMode::existing);
  if (mode == SlotsMode::existing) {
    const uint64_t j = 2 * n + (approve ? 1 : 2);
    const uint64_t size = src_.storage_size(o_.contract);
    if (j >= size)
      return "call " + std::to_string(k) + " needs storage entry " + std::to_string(j) + " of contract " +
             std::to_string(o_.contract) + ", which holds " + std::to_string(size) +
             " slots (fewer calls, a smaller --start, a larger state or --slots empty)";
    out->slot = src_.slot_key(o_.contract, j)->slot.value();
    out->base = src_.slot_value(o_.contract, j).value();
    out->value = u256(n + 1);
    if (out->value == out->base) out->value = u256(n + 2);
    return std::nullopt;
  }
  if (approve) {
    out->slot = erc20_allowance_slot(owner_, integer_address(n));
    out->value = u256(n);
  } else {
    out->slot = erc20_balance_slot(integer_address(n));
  }
  out->base = U256{};  // absent: the state's holders are hashed addresses, never small integers
  return std::nullopt;
}

uint64_t Generator::call_gas(TxGas& g, bool approve, const CallSlot& s, bool first_of_kind, bool first_call, bool peek) {
  uint64_t gas = approve ? o_.evm_work_approve : o_.evm_work_balance_of;
  if (first_call) gas += g.call_extra(token_, peek) + g.chunks(attack_, gas::kChunksAttack, peek);
  if (first_of_kind) gas += g.chunks(token_, approve ? gas::kChunksApprove : gas::kChunksBalanceOf, peek);
  if (!approve) return gas + g.sload(token_, s.slot, peek);
  const auto orig = b_.slot_tx_start(token_, s.slot);
  const U256 cur = slot_value(token_, s.slot, s.base);
  return gas + g.sstore(token_, s.slot, orig.value_or(cur), cur, s.value, peek);
}

// How many calls of each kind a transaction makes (~0: as many as fit, *fill set): --calls,
// --loads / --stores, or, for the mixed kind without them, the loads by gas share and the
// stores filling what is left up to the cap.
void Generator::call_counts(uint64_t cap, uint64_t* n_load, uint64_t* n_store, bool* fill) const {
  *n_load = 0, *n_store = 0, *fill = false;
  switch (o_.kind) {
    case WorkloadKind::erc20_balanceof:
      if (o_.calls) *n_load = *o_.calls; else *fill = true, *n_load = ~0ull;
      break;
    case WorkloadKind::erc20_approve:
      if (o_.calls) *n_store = *o_.calls; else *fill = true, *n_store = ~0ull;
      break;
    default: {
      if (o_.loads || o_.stores) {
        *n_load = o_.loads.value_or(0), *n_store = o_.stores.value_or(0);
        break;
      }
      // The split by gas share: the budget after the intrinsic cost, priced at the per-call
      // figures of the rules; the stores then fill what is left up to the cap.
      const std::vector<uint8_t> cd = gas::attack_calldata(o_.start + k_, 0xffff);
      const uint64_t intrinsic = gas::intrinsic_gas(cd, 1, 0);
      const uint64_t budget = cap > intrinsic ? cap - intrinsic : 0;
      const gas::Tree t = o_.tree;
      *n_load = uint64_t(double(budget) * double(o_.load_share_percent) / 100.0 /
                         double(gas::per_call_gas(gas::Call::balance_of, t, o_.evm_work_balance_of)));
      *n_store = ~0ull;
      *fill = true;
    }
  }
}

// Dry run on a copy of the gas state: how many calls fit (the builder stays untouched, so
// a transaction that does not fit leaves no trace).
std::optional<std::string> Generator::plan_calls(const TxGas& g, uint64_t cap, uint64_t n_load, uint64_t n_store,
                                                 bool fill, std::vector<PlannedCall>* plan) {
  TxGas dry = g;
  uint64_t exec = 0;
  for (int phase = 0; phase < 2; ++phase) {
    const bool approve = phase == 1;
    const uint64_t want = approve ? n_store : n_load;
    bool first_of_kind = true;
    for (uint64_t c = 0; c < want; ++c) {
      const uint64_t n = plan->size();
      CallSlot s;
      if (auto e = call_slot(approve, k_ + n, &s)) {
        if (fill && want == ~0ull && n > 0) break;  // filling: the state ends the transaction
        return e;
      }
      const uint64_t cg = call_gas(dry, approve, s, first_of_kind, n == 0, false);
      const uint64_t total = gas::intrinsic_gas(gas::attack_calldata(o_.start + k_, n + 1), 1, 0) + exec + cg;
      if (total > cap) {
        if (fill && want == ~0ull) break;
        return "transaction " + std::to_string(tx_counter_) + " needs more than " + std::to_string(cap) +
               " gas at call " + std::to_string(n + 1) + " (raise --tx-gas / --block-gas, or fewer calls)";
      }
      exec += cg;
      first_of_kind = false;
      plan->push_back({approve, s});
    }
  }
  return std::nullopt;
}

// One ERC20 transaction of the attack loop: calls while they fit in `cap` (or exactly
// --calls / --loads + --stores).
std::optional<std::string> Generator::erc20_tx(TxGas& g, uint64_t cap, uint64_t* exec_gas, state::TxInfo* info,
                                               uint64_t* first_k) {
  *first_k = k_;
  uint64_t n_load = 0, n_store = 0;
  bool fill = false;
  call_counts(cap, &n_load, &n_store, &fill);
  std::vector<PlannedCall> plan;
  if (auto e = plan_calls(g, cap, n_load, n_store, fill, &plan)) return e;
  if (plan.empty()) return "not one call fits in " + std::to_string(cap) + " gas (raise --tx-gas or --block-gas)";
  uint64_t exec = 0;
  bool first_load = true, first_store = true;
  for (size_t n = 0; n < plan.size(); ++n) {
    const PlannedCall& p = plan[n];
    bool& first = p.approve ? first_store : first_load;
    exec += call_gas(g, p.approve, p.slot, first, n == 0, false);
    first = false;
    if (p.approve) write(token_, p.slot.slot, p.slot.base, p.slot.value);
    else read(token_, p.slot.slot, p.slot.base);
  }
  k_ += plan.size();
  *exec_gas = exec;
  info->calls = plan.size();
  return std::nullopt;
}

Address Generator::sender_for(uint64_t tx, uint64_t* index) {
  const uint64_t eoas = src_.spec().accounts - src_.spec().contracts;
  *index = src_.spec().contracts + mix(o_.seed * 0x100000001b3ull ^ tx) % eoas;
  const Address a = src_.address(*index);
  eoa_index_[a] = *index;
  return a;
}

void Generator::settle_fees(const Address& sender, uint64_t sender_index, uint64_t gas_used, state::BalIndex idx) {
  (void)idx;
  const auto [n0, b0] = account_block_pre(sender, sender_index);
  const uint64_t nonce_now = b_.nonce_now(sender).value_or(n0);
  const U256 bal_now = b_.balance_now(sender).value_or(b0);
  b_.set_nonce(sender, n0, nonce_now + 1);
  b_.set_balance(sender, b0, sub_mul_saturating(bal_now, gas_used, kGasPriceWei));
  const auto [cn, cb] = account_block_pre(coinbase_, std::nullopt);
  (void)cn;
  b_.set_balance(coinbase_, cb, add_mul(b_.balance_now(coinbase_).value_or(cb), gas_used, kGasPriceWei));
}

uint64_t Generator::zipf_contract(uint64_t r) {
  const uint64_t c = src_.spec().contracts;
  if (zipf_cdf_.empty()) {
    zipf_cdf_.resize(c);
    double acc = 0;
    for (uint64_t i = 0; i < c; ++i) zipf_cdf_[i] = acc += 1.0 / std::pow(double(i + 1), o_.zipf);
    zipf_step_ = 1 + mix(o_.seed ^ 0x5a5a) % c;
    while (std::gcd(zipf_step_, c) != 1) zipf_step_ = zipf_step_ % c + 1;
    zipf_offset_ = mix(o_.seed ^ 0xa5a5) % c;
  }
  const double u = double(r >> 11) * 0x1.0p-53 * zipf_cdf_.back();
  const uint64_t rank = uint64_t(std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
  return (std::min(rank, c - 1) * zipf_step_ + zipf_offset_) % c;
}

// One mainnet-like transaction: a call into a Zipf-drawn contract with ~4.1 slot reads and
// ~2.9 slot writes.
std::optional<std::string> Generator::mainnet_tx(TxGas& g, uint64_t tx, uint64_t* exec_gas, state::TxInfo* info) {
  uint64_t r = mix(o_.seed ^ (tx * kSplitmix64Gamma));
  auto next = [&]() { return r = mix(r); };
  const uint64_t c = zipf_contract(next());
  const Address ca = src_.address(c);
  const uint64_t size = src_.storage_size(c);
  uint64_t exec = g.account(ca, false);
  b_.touch(ca);
  auto fresh_slot = [&](uint64_t i) {
    uint8_t m[24];
    for (int b = 0; b < 8; ++b) m[b] = uint8_t(o_.seed >> (8 * b)), m[8 + b] = uint8_t(tx >> (8 * b)), m[16 + b] = uint8_t(i >> (8 * b));
    return keccak(m, sizeof m);
  };
  auto random_value = [&]() {
    U256 v{};
    for (int b = 16; b < 32; ++b) v[size_t(b)] = uint8_t(next());
    v[31] |= 1;
    return v;
  };
  const uint64_t reads = 4 + (next() % 10 == 0);
  const uint64_t writes = 2 + (next() % 10 < 9);
  uint64_t accesses = 0;
  for (uint64_t i = 0; i < reads; ++i, ++accesses) {
    Hash32 slot;
    U256 base{};
    if (next() % 100 < 88 || size == 0) {
      slot = fresh_slot(accesses);
    } else {
      const uint64_t j = next() % size;
      slot = src_.slot_key(c, j)->slot.value();
      base = src_.slot_value(c, j).value();
    }
    exec += o_.evm_work_balance_of + g.sload(ca, slot, false);
    read(ca, slot, base);
  }
  for (uint64_t i = 0; i < writes; ++i, ++accesses) {
    Hash32 slot;
    U256 base{}, value = random_value();
    const uint64_t kind = next() % 300;
    if (kind < 100 || size == 0) {
      slot = fresh_slot(accesses);
    } else {
      const uint64_t j = next() % size;
      slot = src_.slot_key(c, j)->slot.value();
      base = src_.slot_value(c, j).value();
      if (kind < 106) value = U256{};  // 6 of 300 = 2 % deletes
    }
    const auto orig = b_.slot_tx_start(ca, slot);
    const U256 cur = slot_value(ca, slot, base);
    exec += o_.evm_work_approve + g.sstore(ca, slot, orig.value_or(cur), cur, value, false);
    write(ca, slot, base, value);
  }
  *exec_gas = exec;
  info->calls = reads + writes;
  return std::nullopt;
}

// A block's next ERC20 transaction (after g.start): the other work of --other-slots priced
// first on a copy, the calls filling what it leaves, then the other work; block_full when
// the block has no room for it (without --txs).
std::variant<Generator::TxOutcome, std::string> Generator::erc20_block_tx(TxGas& g, const state::Block& blk, uint64_t t,
                                                                          uint64_t block_gas, uint64_t used, uint64_t* exec,
                                                                          uint64_t* intrinsic, state::TxInfo* info) {
  uint64_t cap = o_.txs ? o_.tx_gas : std::min(o_.tx_gas, block_gas - used);
  std::vector<OtherSlot> other;
  uint64_t other_gas = 0;
  if (t > 0 && o_.other_slots > 0) {
    if (auto e = draw_other(tx_counter_, &other)) return "block " + std::to_string(blk.header.number) + ": " + *e;
    TxGas dry = g;
    other_gas = other_work(dry, other, false);
  }
  if (!o_.txs) {  // stop when not even one call fits in what the block has left
    const uint64_t one = gas::intrinsic_gas(gas::attack_calldata(o_.start + k_, 1), 1, 0) +
                         gas::per_call_gas(gas::Call::balance_of, o_.tree, o_.evm_work_balance_of);
    if (block_gas - used < one + other_gas) return TxOutcome::block_full;
  }
  if (cap <= other_gas)
    return "block " + std::to_string(blk.header.number) + ": the other work of --other-slots " +
           std::to_string(o_.other_slots) + " needs " + std::to_string(other_gas) + " gas, more than the " +
           std::to_string(cap) + " the transaction has (raise --tx-gas)";
  cap -= other_gas;
  b_.touch(attack_);
  uint64_t first_k;
  if (auto e = erc20_tx(g, cap, exec, info, &first_k)) {
    if (!o_.txs && t > 0) return TxOutcome::block_full;
    return "block " + std::to_string(blk.header.number) + ": " + *e;
  }
  *exec += other_work(g, other, true);
  *intrinsic = gas::intrinsic_gas(gas::attack_calldata(o_.start + first_k, info->calls), 1, 0);
  return TxOutcome::done;
}

// The file's later blocks see this block's post-state.
void Generator::carry_post_state(const state::BlockAccessList& bal) {
  for (const state::AccountChanges& a : bal.accounts) {
    for (const state::SlotChanges& s : a.storage_changes) slots_[{a.address, s.slot}] = s.changes.back().value;
    if (!a.nonce_changes.empty() || !a.balance_changes.empty()) {
      const auto idx = eoa_index_.find(a.address);
      std::pair<uint64_t, U256> cur =
          account_block_pre(a.address, idx == eoa_index_.end() ? std::nullopt : std::optional<uint64_t>(idx->second));
      if (!a.nonce_changes.empty()) cur.first = a.nonce_changes.back().nonce;
      if (!a.balance_changes.empty()) cur.second = a.balance_changes.back().post_balance;
      accounts_[a.address] = cur;
    }
  }
}

std::variant<std::vector<state::Block>, std::string> Generator::run() {
  const state::SyntheticSpec& spec = src_.spec();
  if (spec.accounts <= spec.contracts) return std::string("the state has no EOAs to send transactions from");
  const bool mainnet = o_.kind == WorkloadKind::mainnet_like;
  if (mainnet && spec.contracts == 0) return std::string("mainnet_like needs a state with contracts");
  if (o_.other_slots > 0 && mainnet) return std::string("--other-slots applies to the ERC20 workloads only");
  if (o_.other_slots > 0 && spec.contracts < 2)
    return std::string("--other-slots needs a state with contracts besides the token (build --contracts 2 or more)");
  if (!mainnet) {
    if (o_.contract >= spec.contracts)
      return "--contract " + std::to_string(o_.contract) + ": the state has " + std::to_string(spec.contracts) +
             " contracts";
    token_ = src_.address(o_.contract);
  }
  const uint64_t block_gas = o_.block_gas.value_or(mainnet ? kMainnetGas : 100000000);
  const uint64_t ntx_mainnet =
      o_.txs.value_or(std::max<uint64_t>(1, uint64_t(std::llround(200.0 * double(block_gas) / double(kMainnetGas)))));
  std::vector<state::Block> blocks;
  for (uint64_t bi = 0; bi < o_.blocks; ++bi) {
    state::Block blk;
    blk.header.number = o_.first_block_number + bi;
    blk.header.tree = o_.tree == gas::Tree::mpt ? state::BalTree::mpt : state::BalTree::bintrie;
    if (bi == 0) blk.header.pre_state_root = o_.pre_state_root;
    uint64_t used = 0;
    for (uint64_t t = 0;; ++t) {
      if (o_.txs && t == *o_.txs) break;
      if (mainnet && t == ntx_mainnet) break;
      const state::BalIndex idx = state::BalIndex(t + 1);
      uint64_t sender_index;
      const Address sender = sender_for(tx_counter_, &sender_index);
      TxGas g(o_.tree, ks_);
      uint64_t exec = 0, intrinsic = 0;
      state::TxInfo info;
      b_.begin(idx);
      if (mainnet) {
        g.start(sender, sender);
        if (auto e = mainnet_tx(g, tx_counter_, &exec, &info)) return *e;
        intrinsic = gas::intrinsic_gas({}, 0, 0);
      } else {
        g.start(sender, attack_);
        auto r = erc20_block_tx(g, blk, t, block_gas, used, &exec, &intrinsic, &info);
        if (auto* e = std::get_if<std::string>(&r)) return *e;
        if (std::get<TxOutcome>(r) == TxOutcome::block_full) { b_.end(); break; }
      }
      info.gas_used = gas::apply_refund(intrinsic + exec, g.refund());
      settle_fees(sender, sender_index, info.gas_used, idx);
      b_.end();
      used += info.gas_used;
      blk.header.txs.push_back(info);
      ++tx_counter_;
      if (!o_.txs && !mainnet && used >= block_gas) break;
    }
    blk.header.tx_count = uint32_t(blk.header.txs.size());
    blk.bal = b_.finish();
    carry_post_state(blk.bal);
    blocks.push_back(std::move(blk));
  }
  return blocks;
}

}  // namespace

state::Hash32 erc20_balance_slot(const state::Address& holder) {
  uint8_t m[64] = {};
  std::memcpy(m + 12, holder.data(), 20);
  m[63] = 2;
  return keccak(m, 64);
}

state::Hash32 erc20_allowance_slot(const state::Address& owner, const state::Address& spender) {
  uint8_t m[64] = {};
  std::memcpy(m + 12, owner.data(), 20);
  m[63] = 3;
  const Hash32 inner = keccak(m, 64);
  std::memset(m, 0, 32);
  std::memcpy(m + 12, spender.data(), 20);
  std::memcpy(m + 32, inner.data(), 32);
  return keccak(m, 64);
}

state::Address integer_address(uint64_t n) {
  Address a{};
  for (int i = 19; i >= 12; --i, n >>= 8) a[size_t(i)] = uint8_t(n);
  return a;
}

state::Block next_synthetic_writes_block(state::SyntheticState* src, gas::Tree tree) {
  state::Block blk;
  blk.header.number = src->spec().blocks;
  blk.header.tree = tree == gas::Tree::mpt ? state::BalTree::mpt : state::BalTree::bintrie;
  std::vector<state::SyntheticBlockWrite> writes;
  src->next_block(nullptr, &writes);
  struct Changes {
    std::map<Hash32, std::vector<state::StorageChange>> slots;
    std::vector<state::BalanceChange> balance;
    std::vector<state::NonceChange> nonce;
  };
  std::map<Address, Changes> by_account;
  uint64_t transfers = 0;
  for (const state::SyntheticBlockWrite& w : writes) {
    const state::BalIndex index = state::BalIndex(w.transfer + 1);
    transfers = w.transfer + 1;
    if (w.has_sender) {  // once per transfer
      Changes& c = by_account[w.sender];
      c.nonce.push_back({index, w.sender_nonce});
      c.balance.push_back({index, w.sender_balance});
    }
    if (w.has_slot) {  // the transfer's last value of a slot is its change at this index
      std::vector<state::StorageChange>& ch = by_account[w.contract].slots[w.slot];
      if (!ch.empty() && ch.back().index == index) ch.back().value = w.value;
      else ch.push_back({index, w.value});
    }
  }
  blk.bal.accounts.reserve(by_account.size());
  for (auto& [address, c] : by_account) {
    state::AccountChanges& a = blk.bal.accounts.emplace_back();
    a.address = address;
    a.storage_changes.reserve(c.slots.size());
    for (auto& [slot, ch] : c.slots) a.storage_changes.push_back({slot, std::move(ch)});
    a.balance_changes = std::move(c.balance);
    a.nonce_changes = std::move(c.nonce);
  }
  blk.header.tx_count = uint32_t(transfers);
  return blk;
}

std::variant<std::vector<state::Block>, std::string> generate_workload(const state::SyntheticState& src,
                                                                        const WorkloadOptions& o) {
  if (o.kind == WorkloadKind::synthetic_writes) {
    if (o.other_slots > 0) return std::string("--other-slots applies to the ERC20 workloads only");
    state::SyntheticSpec spec = src.spec();
    if (o.writes < 1 || o.writes > (1u << 24)) return std::string("--writes must be in 1..16777216");
    if (spec.blocks > 0 && o.writes != spec.block_writes)
      return "the state's blocks have " + std::to_string(spec.block_writes) + " writes; --writes " +
             std::to_string(o.writes) + " would break its sequence";
    if (spec.blocks > 0 && o.seed != spec.block_seed)
      return "the state's blocks use seed " + std::to_string(spec.block_seed) + "; --seed " + std::to_string(o.seed) +
             " would break its sequence";
    spec.block_writes = o.writes;
    spec.block_seed = o.seed;
    state::SyntheticState s(spec);  // replays the blocks the state already has
    std::vector<state::Block> blocks;
    for (uint64_t b = 0; b < o.blocks; ++b) {
      blocks.push_back(next_synthetic_writes_block(&s, o.tree));
      if (b == 0) blocks.back().header.pre_state_root = o.pre_state_root;
    }
    return blocks;
  }
  Generator g(src, o);
  return g.run();
}

}  // namespace st::workloads
