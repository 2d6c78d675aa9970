// mpt/dirty_trie: one block commit's partial trie (see the header): the block's account and
// slot ops and the buffers that travel between commits. The passes: resolve
// (dirty_trie_resolve.cpp), apply (dirty_trie_apply.cpp), encode, hash and write
// (dirty_trie_encode.cpp).
#include "engine/persist/mpt/dirty_trie.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>

#include "engine/mpt/account.h"
#include "engine/mpt/node_codec.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/dirty_trie_paths.h"
#include "engine/persist/mpt/node.h"
#include "kernels/keccak256.h"

namespace st::persist::mpt_commit_detail {

// One AccountOp per account the diff touches (by address, in first-seen order) with its
// field changes; its storage writes, in order, into writes[op]. A destroyed account drops
// what earlier diffs of this block gave it.
void DirtyTrie::collect_account_ops(const state::StateDiff& diff, std::vector<SlotWrites>& writes) {
  std::map<state::Address, size_t> by_addr;
  for (const state::AccountDiff& a : diff.accounts) {
    const bool any = a.destroyed || a.nonce || a.balance || a.code || !a.storage_writes.empty();
    if (!any) continue;
    auto [it, fresh] = by_addr.emplace(a.address, accts_.size());
    if (fresh) {
      accts_.emplace_back();
      writes.emplace_back();
      kernels::keccak256(a.address.data(), 20, accts_.back().key.data());
    }
    AccountOp& op = accts_[it->second];
    if (a.destroyed) {  // what earlier diffs of this block gave the account is gone too
      op = AccountOp{op.key, {}, {}, {}, {}, true};
      writes[it->second].clear();
    }
    if (a.nonce) op.nonce = a.nonce;
    if (a.balance) op.balance = a.balance;
    if (a.code) {
      Hash32 h = mpt::kEmptyCodeHash;
      if (!a.code->empty()) kernels::keccak256(a.code->data(), a.code->size(), h.data());
      op.code_hash = h;
    }
    auto& w = writes[it->second];
    w.insert(w.end(), a.storage_writes.begin(), a.storage_writes.end());
  }
}

// Each account's slot ops: the slot keys hashed (all in one keccak batch), the values
// RLP-encoded (empty: a delete), sorted by key with the last write of a key winning.
void DirtyTrie::hash_slot_ops(const std::vector<SlotWrites>& writes) {
  msgs_.clear();
  lens_.clear();
  for (auto& w : writes)
    for (auto& [slot, v] : w) msgs_.push_back(slot.data()), lens_.push_back(32);
  std::vector<uint8_t>& h = digests_;
  h.resize(32 * msgs_.size());
  if (!msgs_.empty()) kernels::keccak256_batch(msgs_.data(), lens_.data(), h.data(), msgs_.size());
  size_t k = 0;
  for (size_t a = 0; a < accts_.size(); ++a) {
    std::vector<Op>& ops = accts_[a].slots;
    for (auto& [slot, v] : writes[a]) {
      Op o;
      std::memcpy(o.key.data(), h.data() + 32 * k++, 32);
      o.val_len = uint8_t(mpt::put_storage_value_rlp(o.val, v));
      o.del = o.val_len == 0;
      ops.push_back(o);
    }
    std::stable_sort(ops.begin(), ops.end(), [](const Op& x, const Op& y) { return x.key < y.key; });
    size_t out = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i + 1 < ops.size() && ops[i + 1].key == ops[i].key) continue;
      ops[out++] = ops[i];
    }
    ops.resize(out);
  }
}

io::Status DirtyTrie::prepare(const state::StateDiff& diff) {
  std::vector<SlotWrites> writes;
  collect_account_ops(diff, writes);
  hash_slot_ops(writes);
  // The account trie's ops, sorted by key.
  std::sort(accts_.begin(), accts_.end(), [](const AccountOp& x, const AccountOp& y) { return x.key < y.key; });
  for (size_t a = 0; a < accts_.size(); ++a) {
    AccountOp& x = accts_[a];
    x.removed = x.destroyed && !x.nonce && !x.balance && !x.code_hash && x.slots.empty();
    Op o;
    o.key = x.key;
    o.acct = int32_t(a);
    o.del = x.removed;
    acct_ops_.push_back(o);
  }
  if (frame_.keyed()) {
    if (frame_.base().root_hash != mpt::kEmptyRoot) root_ = add_stub(kKeyedNode, frame_.base().root_hash.data(), false);
  } else if (frame_.base().root != kNoLocator) root_ = add_stub(frame_.base().root, frame_.base().root_hash.data(), false);
  else if (frame_.base().root_hash != mpt::kEmptyRoot)
    return {io::Errc::corrupt_page, "mpt commit: the manifest names a root but the commit record no root record"};
  return {};
}

void DirtyTrie::take_buffers(Buffers&& b) {
  nodes_ = std::move(b.nodes);
  refs_ = std::move(b.refs);
  pool_ = std::move(b.pool);
  pack_bytes_ = std::move(b.pack_bytes);
  enc_ = std::move(b.enc);
  pack_ops_ = std::move(b.pack_ops);
  pure_ = std::move(b.pure);
  pure_counts_ = std::move(b.pure_counts);
  take_scratch(std::move(b));
  nodes_.clear();
  refs_.clear();
  pool_.clear();
  pack_bytes_.clear();
  enc_.clear();
  pack_ops_.clear();
}

// The phases' scratch from a published commit's buffers, emptied (every phase clears or
// sizes what it uses before it reads it).
void DirtyTrie::take_scratch(Buffers&& b) {
  ready_ = std::move(b.ready), batch_ = std::move(b.batch);
  msgs_ = std::move(b.msgs), lens_ = std::move(b.lens), digests_ = std::move(b.digests);
  leaf_vals_ = std::move(b.leaf_vals), snap_puts_ = std::move(b.snap_puts);
  walks_ = std::move(b.walks), next_ = std::move(b.next), stubs_ = std::move(b.stubs);
  locs_ = std::move(b.locs), rvs_ = std::move(b.rvs);
  ready_.clear(), batch_.clear(), msgs_.clear(), lens_.clear(), digests_.clear(), leaf_vals_.clear();
  snap_puts_.clear(), walks_.clear(), next_.clear(), stubs_.clear(), locs_.clear(), rvs_.clear();
}

DirtyTrie::Buffers DirtyTrie::give_buffers() {
  Buffers b;
  b.nodes = std::move(nodes_), b.refs = std::move(refs_), b.pool = std::move(pool_);
  b.pack_bytes = std::move(pack_bytes_), b.enc = std::move(enc_), b.pack_ops = std::move(pack_ops_);
  b.pure = std::move(pure_), b.pure_counts = std::move(pure_counts_);
  b.ready = std::move(ready_), b.batch = std::move(batch_);
  b.msgs = std::move(msgs_), b.lens = std::move(lens_), b.digests = std::move(digests_);
  b.leaf_vals = std::move(leaf_vals_), b.snap_puts = std::move(snap_puts_);
  b.walks = std::move(walks_), b.next = std::move(next_), b.stubs = std::move(stubs_);
  b.locs = std::move(locs_), b.rvs = std::move(rvs_);
  return b;
}

}  // namespace st::persist::mpt_commit_detail
