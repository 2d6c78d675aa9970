// mpt/block_tries_apply: a block commit's writes and new tree (block_tries.h): the slot
// writes applied to the storage tries (apply); the storage tries hashed together (shared
// keccak batches), the accounts' new values (their fields over the old ones, their new
// storage roots) applied to the account trie and hashed, then the account trie handed to
// this sink, each new account leaf taking its storage trie as its child (the storage trie
// handed over just before it), every new leaf put into the flat snapshot (hash). The
// account trie's apply is in the hash phase: its values need the storage tries' roots.
#include <algorithm>
#include <cstring>

#include "engine/mpt/account.h"
#include "engine/persist/mpt/block_tries.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/snapshot/update.h"
#include "kernels/hex_prefix.h"
#include "kernels/support/check.h"

namespace st::persist::mpt_commit_detail {

namespace {

// A nibble path (at most 64 nibbles) packed high nibble first into 32 bytes.
std::array<uint8_t, 32> packed(std::span<const uint8_t> nibs) {
  std::array<uint8_t, 32> out{};
  for (size_t i = 0; i < nibs.size() && i < 64; ++i) out[i / 2] |= uint8_t(i % 2 == 0 ? nibs[i] << 4 : nibs[i]);
  return out;
}

// The values a trie holds (every node read: a destroyed account's whole old storage).
uint64_t count_values(const mpt::Trie& t) {
  uint64_t n = 0;
  std::vector<mpt::NodeId> todo;
  if (t.root_id() != mpt::kNoNode) todo.push_back(t.root_id());
  while (!todo.empty()) {
    const mpt::NodeView v = t.view(todo.back());
    todo.pop_back();
    if (v.kind == mpt::NodeKind::leaf || !v.value.empty()) ++n;
    if (v.kind == mpt::NodeKind::extension) todo.push_back(v.child);
    if (v.kind == mpt::NodeKind::branch)
      for (mpt::NodeId c : v.children)
        if (c != mpt::kNoNode) todo.push_back(c);
  }
  return n;
}

}  // namespace

io::Status BlockTries::apply() {
  for (AccountOp& a : accts_) {
    if (a.old_storage_trie) a.old_slots = count_values(*a.old_storage_trie);
    if (!a.storage) continue;
    if (!a.destroyed)
      for (Op& o : a.slots) o.existed = a.storage->find(o.key).what == mpt::Trie::Found::value;
    a.storage->apply_sorted(a.slot_writes);
  }
  return {};
}

// The accounts' new values over their old fields, with their storage tries' new roots.
io::Status BlockTries::account_values() {
  for (size_t i = 0; i < accts_.size(); ++i) {
    AccountOp& a = accts_[i];
    if (a.removed) continue;  // (its write deletes the leaf)
    mpt::AccountFields f;
    if (a.existed && !a.destroyed) f = a.old;
    if (a.nonce) f.nonce = *a.nonce;
    if (a.balance) f.balance = *a.balance;
    if (a.code_hash) f.code_hash = *a.code_hash;
    f.storage_root = a.storage ? a.storage->pending_root() : a.destroyed ? mpt::kEmptyRoot : a.old_storage_root;
    if (mpt::account_rlp_size(f) > a.value.size())
      return {io::Errc::corrupt_page, "mpt commit: internal: account leaf value too long"};
    a.value_len = uint32_t(mpt::put_account_rlp(a.value.data(), f) - a.value.data());
    acct_writes_[i].value = {a.value.data(), a.value_len};
  }
  return {};
}

// The storage tries hashed together, then the accounts' values (their new storage roots)
// applied to the account trie and hashed; then the new tree handed to this sink.
io::Status BlockTries::hash(Hash32* root_hash) {
  std::vector<mpt::Trie*>& storages = b_.storages;
  storages.clear();
  for (AccountOp& a : accts_)
    if (a.storage) storages.push_back(a.storage);
  mpt::Trie::hash_pending(storages);
  if (io::Status s = account_values(); !s.ok()) return s;
  acct_->apply_sorted(acct_writes_);
  mpt::Trie* t = acct_;
  mpt::Trie::hash_pending({&t, 1});
  *root_hash = acct_->pending_root();
  b_.pack_ops.clear();
  b_.pack_bytes.clear();
  b_.pack_hashes.clear();
  b_.pack_keys.clear();
  b_.levels.clear();
  b_.dead.clear();
  owner_ = nullptr;
  acct_->hand_to(*this);
  if (!sink_error_.empty()) return {io::Errc::corrupt_page, sink_error_};
  if (SnapshotDelta* snap = frame_.snapshot())  // a recreated account whose leaf did not change
    for (const AccountOp& a : accts_)
      if (a.destroyed && !a.removed && !a.snapshot_put) snap->put(a.key, {a.value.data(), a.value_len});
  return {};
}

// An account's storage trie below its new leaf: the new one handed over, or the stored
// root kept; 0 when its storage is empty.
uint32_t BlockTries::storage_subtree(const Hash32& account) {
  auto it = std::lower_bound(accts_.begin(), accts_.end(), account,
                             [](const AccountOp& a, const Hash32& k) { return a.key < k; });
  AccountOp* a = it != accts_.end() && it->key == account ? &*it : nullptr;
  if (a) a->snapshot_put = true;
  uint32_t handed = 0;
  owner_ = &account;
  if (a && a->storage) {
    handed = a->storage->hand_to(*this);
  } else if (!(a && a->destroyed)) {
    if (auto s = storage_of_.find(account); s != storage_of_.end()) {
      kept(s->second, {});
      handed = 1;
    }
  }
  owner_ = nullptr;
  return handed;
}

uint32_t BlockTries::leaf(std::span<const uint8_t> key_nibbles, std::span<const uint8_t> value) {
  if (key_nibbles.size() != 64) {
    if (sink_error_.empty()) sink_error_ = "mpt commit: internal: a leaf whose key is not 32 bytes";
    return 0;
  }
  const std::array<uint8_t, 32> key = packed(key_nibbles);
  if (SnapshotDelta* snap = frame_.snapshot()) {
    uint8_t k[64];
    size_t n = 0;
    if (owner_) std::memcpy(k, owner_->data(), 32), n = 32;
    std::memcpy(k + n, key.data(), 32);
    snap->put({k, n + 32}, value);
  }
  if (owner_) return 0;
  Hash32 account;
  std::memcpy(account.data(), key.data(), 32);
  const uint32_t handed = storage_subtree(account);
  mpt::AccountFields f;
  if (std::string err = mpt::decode_account_rlp(value, &f); !err.empty() || (f.storage_root != mpt::kEmptyRoot) != (handed == 1))
    if (sink_error_.empty()) sink_error_ = "mpt commit: internal: an account leaf without its storage trie";
  return handed;
}

void BlockTries::kept(uint64_t locator, std::span<const uint8_t> path) {
  const Stored& s = b_.stored[locator];
  PackOp op;
  op.placed = frame_.keyed() ? Locator(0) : s.loc;
  b_.pack_ops.push_back(op);
  b_.levels.push_back(0);
  if (!frame_.keyed()) return;
  // RocksDB: its key still holds it (the node is in the same trie at the same path).
  bool same = (s.owner < 0) == (owner_ == nullptr) && s.depth == path.size();
  if (same && owner_) same = owners_[size_t(s.owner)] == *owner_;
  for (size_t i = 0; same && i < path.size(); ++i)
    same = kernels::key_nibble(s.at.data(), i) == path[i];
  if (!same && sink_error_.empty()) sink_error_ = "mpt commit: internal: a kept " + name_of(uint32_t(locator)) + " moved";
}

uint64_t BlockTries::node(mpt::NodeKind kind, std::span<const uint8_t> rlp, uint32_t children,
                          std::span<const uint8_t> path, const Hash32& hash) {
  PackOp op;
  switch (kind) {
    case mpt::NodeKind::leaf:
      op.kind = uint8_t(owner_ ? MptRecordKind::leaf : MptRecordKind::account_leaf);
      break;
    case mpt::NodeKind::extension: op.kind = uint8_t(MptRecordKind::extension); break;
    default: op.kind = uint8_t(MptRecordKind::branch); break;
  }
  op.kids = children;
  uint32_t below = 0;
  for (uint32_t i = 0; i < children; ++i) below = std::max(below, b_.levels[b_.levels.size() - 1 - i]);
  b_.levels.resize(b_.levels.size() - children);
  op.level = below + 1;
  b_.levels.push_back(op.level);
  op.body_off = uint32_t(b_.pack_bytes.size());
  op.body_len = uint32_t(rlp.size());
  b_.pack_hashes.push_back(hash);
  b_.pack_bytes.insert(b_.pack_bytes.end(), rlp.begin(), rlp.end());
  if (frame_.keyed()) {
    const std::array<uint8_t, 32> at = packed(path);
    b_.pack_keys.push_back(owner_ ? storage_node_key(owner_->data(), at.data(), path.size())
                                : account_node_key(at.data(), path.size()));
  }
  b_.pack_ops.push_back(op);
  ++records_written;
  bytes_written += rlp.size();
  return mpt::Trie::kNoLocator;  // (a block's tries are not kept past the commit)
}

void BlockTries::dead(uint64_t locator) { b_.dead.push_back(uint32_t(locator)); }

}  // namespace st::persist::mpt_commit_detail
