// mpt/block_tries_apply: a block commit's writes and new root (block_tries.h): the slot
// writes applied to the storage tries (apply); the storage tries hashed together (shared
// keccak batches), the accounts' new values (their fields over the old ones, their new
// storage roots) applied to the account trie and hashed (hash). The account trie's apply
// is in the hash phase: its values need the storage tries' roots.
#include "engine/mpt/account.h"
#include "engine/persist/mpt/block_tries.h"

namespace st::persist::mpt_commit_detail {

namespace {

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
// applied to the account trie and hashed.
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
  return {};
}

}  // namespace st::persist::mpt_commit_detail
