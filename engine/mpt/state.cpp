// state: account trie + storage tries + StateDiff batches (see state.h).
#include "engine/mpt/state.h"

#include <algorithm>
#include <cstring>

#include "kernels/keccak256.h"

namespace st::mpt {

using st::state::Address;
using st::state::Hash32;

namespace {
constexpr size_t kKeepScratchWrites = size_t(1) << 16;  // per-thread buffers kept up to this many writes
}  // namespace

MptState::Acc& MptState::touch(const Address& a) {
  auto [it, inserted] = accounts_.try_emplace(a);
  if (inserted) st::kernels::keccak256(a.data(), a.size(), it->second.key.data());
  pending_[a] = it->second.key;
  return it->second;
}

void MptState::load(const st::state::Allocation& alloc) {
  st::state::StateDiff diff;
  diff.accounts.reserve(alloc.accounts.size());
  for (const auto& [addr, acc] : alloc.accounts) {
    st::state::AccountDiff d;
    d.address = addr;
    d.nonce = acc.nonce;  // always set: every allocated account is committed
    d.balance = acc.balance;
    if (!acc.code.empty()) d.code = acc.code;
    d.storage_writes.assign(acc.storage.begin(), acc.storage.end());
    diff.accounts.push_back(std::move(d));
  }
  apply(diff);
}

void MptState::apply(const st::state::StateDiff& diff) {
  // All slot keys of the batch hashed in one call. Per-thread buffers, reused across
  // blocks (fresh large allocations cost a page fault per 4 KiB on every block).
  thread_local struct {
    std::vector<const uint8_t*> msgs;
    std::vector<uint8_t> slot_keys, values;
    std::vector<Trie::Write> writes;
  } sc;
  auto& msgs = sc.msgs;
  msgs.clear();
  for (const auto& d : diff.accounts)
    for (const auto& w : d.storage_writes) msgs.push_back(w.first.data());
  auto& slot_keys = sc.slot_keys;
  slot_keys.resize(32 * msgs.size());
  if (!msgs.empty()) st::kernels::keccak256_batch32(msgs.data(), slot_keys.data(), msgs.size());
  auto& values = sc.values;  // RLP of each trimmed value (empty = delete)
  values.resize(33 * msgs.size());
  auto& writes = sc.writes;
  size_t k = 0;  // index of this account's first slot key
  for (const auto& d : diff.accounts) {
    if (d.destroyed) {
      auto it = accounts_.find(d.address);
      if (it != accounts_.end()) {
        pending_[d.address] = it->second.key;
        accounts_.erase(it);
      }
    }
    const bool touches = d.nonce || d.balance || d.code || !d.storage_writes.empty();
    if (!touches) { k += d.storage_writes.size(); continue; }
    Acc& a = touch(d.address);
    if (d.nonce) a.fields.nonce = *d.nonce;
    if (d.balance) a.fields.balance = *d.balance;
    if (d.code) st::kernels::keccak256(d.code->data(), d.code->size(), a.fields.code_hash.data());
    // This account's writes as one trie batch (Trie::apply sorts them by hashed key, keeps
    // the last write to a slot, and applies them in one descent).
    writes.clear();
    bool any_value = false;
    for (size_t i = 0; i < d.storage_writes.size(); ++i) {
      uint8_t* v = values.data() + 33 * (k + i);
      const size_t vlen = put_storage_value_rlp(v, d.storage_writes[i].second);
      any_value |= vlen != 0;
      writes.push_back({{slot_keys.data() + 32 * (k + i), 32}, {v, vlen}});
    }
    k += d.storage_writes.size();
    if (writes.empty()) continue;
    if (!a.storage) {
      if (!any_value) continue;  // deletes only: nothing to delete
      a.storage = std::make_unique<Trie>();
    }
    a.storage->apply(writes);
  }
  if (msgs.size() > kKeepScratchWrites) sc = {};  // a bulk load: don't keep its buffers
}

Hash32 MptState::root(CommitStats* stats, NodeCapture* capture) {
  std::vector<Trie*> dirty;
  for (const auto& [addr, key] : pending_) {
    auto it = accounts_.find(addr);
    if (it != accounts_.end() && it->second.storage && it->second.storage->dirty()) dirty.push_back(it->second.storage.get());
  }
  Trie::commit_many(dirty, stats, capture);
  // Account leaves in key order (locality in the trie).
  std::vector<std::pair<Hash32, Address>> order;
  order.reserve(pending_.size());
  for (const auto& [addr, key] : pending_) order.emplace_back(key, addr);
  std::sort(order.begin(), order.end());
  for (const auto& [key, addr] : order) {
    auto it = accounts_.find(addr);
    if (it == accounts_.end()) { trie_.erase(key); continue; }
    Acc& a = it->second;
    a.fields.storage_root = a.storage ? a.storage->root_hash() : kEmptyRoot;
    trie_.put(key, account_rlp(a.fields));
  }
  pending_.clear();
  return trie_.root_hash(stats, capture);
}

std::optional<AccountFields> MptState::account(const Address& a) {
  root();
  auto it = accounts_.find(a);
  if (it == accounts_.end()) return std::nullopt;
  return it->second.fields;
}

AccountProof MptState::prove(const Address& a, std::span<const Hash32> slots) {
  root();
  AccountProof p;
  p.address = a;
  uint8_t key[32];
  st::kernels::keccak256(a.data(), a.size(), key);
  p.account_proof = mpt::prove(trie_, key);
  auto it = accounts_.find(a);
  const Trie* storage = nullptr;
  if (it != accounts_.end()) {
    p.exists = true;
    p.nonce = it->second.fields.nonce;
    p.balance = it->second.fields.balance;
    p.storage_root = it->second.fields.storage_root;
    p.code_hash = it->second.fields.code_hash;
    storage = it->second.storage.get();
  }
  for (const Hash32& slot : slots) {
    StorageProof sp;
    sp.slot = slot;
    if (storage) {
      uint8_t sk[32];
      st::kernels::keccak256(slot.data(), 32, sk);
      sp.proof = mpt::prove(*storage, sk);
      if (auto v = storage->get(std::span<const uint8_t>(sk, 32))) {
        // decode the trimmed big-endian value back into 32 bytes
        const std::vector<uint8_t>& enc = *v;
        size_t hdr = (enc.size() == 1 && enc[0] < 0x80) ? 0 : 1;
        const size_t n = enc.size() - hdr;
        std::copy(enc.begin() + long(hdr), enc.end(), sp.value.begin() + long(32 - n));
      }
    }
    p.storage_proofs.push_back(std::move(sp));
  }
  return p;
}

Hash32 allocation_root(const st::state::Allocation& alloc, const BuildOptions& options) {
  BuildOptions serial = options;
  serial.threads = 1;
  std::vector<std::vector<uint8_t>> leaves;
  leaves.reserve(alloc.accounts.size());
  std::vector<KeyValue> account_pairs;
  for (const auto& [addr, acc] : alloc.accounts) {
    AccountFields f;
    f.nonce = acc.nonce;
    f.balance = acc.balance;
    if (!acc.code.empty()) st::kernels::keccak256(acc.code.data(), acc.code.size(), f.code_hash.data());
    std::vector<std::vector<uint8_t>> values;
    std::vector<KeyValue> slots;
    for (const auto& [slot, value] : acc.storage) {
      values.push_back(storage_value_rlp(value));
      if (values.back().empty()) { values.pop_back(); continue; }
    }
    size_t vi = 0;
    for (const auto& [slot, value] : acc.storage) {
      if (is_zero(value)) continue;
      slots.push_back(KeyValue{slot.data(), 32, values[vi].data(), uint32_t(values[vi].size())});
      ++vi;
    }
    f.storage_root = build_secure_root(slots, serial);
    leaves.push_back(account_rlp(f));
    account_pairs.push_back(KeyValue{addr.data(), 20, leaves.back().data(), uint32_t(leaves.back().size())});
  }
  return build_secure_root(account_pairs, options);
}

}  // namespace st::mpt
