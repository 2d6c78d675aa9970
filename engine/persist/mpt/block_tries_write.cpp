// mpt/block_tries_write: a block commit's new tree out of memory (block_tries.h): its new
// records hashed again alone, level by level (pure_hash); then the account trie handed to
// this file's sink (each new account leaf taking its storage trie, handed over just before
// it, as its child; every new leaf put into the flat snapshot) as the pack list, which goes
// into the frame's packer (arena, a kept subtree by its locator) or WriteBatch (RocksDB,
// under path keys), and every stored node the new tree no longer holds superseded (write).
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

}  // namespace

io::Status BlockTries::pure_hash(PureHashCount* out) {
  // Before the clock: the nodes the commit hashed, each with its digest and level, the
  // storage tries' first (hashed together), then the account trie's above them (its leaves
  // took the storage roots); counted and listed by level, their bytes copied out level by
  // level.
  std::vector<mpt::Trie::PendingEncoding>& encs = b_.encodings;
  encs.clear();
  for (const mpt::Trie* t : b_.storages) t->pending_encodings(&encs);
  uint32_t storage_levels = 0;
  for (const auto& e : encs) storage_levels = std::max(storage_levels, e.level);
  const size_t storage_end = encs.size();
  acct_->pending_encodings(&encs);
  for (size_t i = storage_end; i < encs.size(); ++i) encs[i].level += storage_levels;
  b_.pure_counts.assign(1, 0);
  for (const auto& e : encs) {
    if (e.level >= b_.pure_counts.size()) b_.pure_counts.resize(e.level + 1, 0);
    ++b_.pure_counts[e.level];
  }
  b_.pure.prepare(b_.pure_counts, encs.size());
  for (size_t l = 1; l < b_.pure_counts.size(); ++l) b_.pure_counts[l] = b_.pure.level_end[l - 1];  // next slot per level
  for (const auto& e : encs) {
    const uint32_t i = b_.pure_counts[e.level]++;
    b_.pure.msgs[i] = e.bytes;
    b_.pure.lens[i] = e.len;
    b_.pure.expect[i] = e.hash.data();
  }
  b_.pure.gather_bytes();
  return mpt_pure_hash(b_.pure, out);
}

// The new tree as the pack list (kept subtrees and new records in the packer's post-order),
// the tries' dead reports, the flat snapshot's puts.
io::Status BlockTries::hand_over() {
  b_.pack_ops.clear();
  b_.pack_keys.clear();
  b_.dead.clear();
  owner_ = nullptr;
  acct_->hand_to(*this);
  if (!sink_error_.empty()) return {io::Errc::corrupt_page, sink_error_};
  if (SnapshotDelta* snap = frame_.snapshot())  // a recreated account whose leaf did not change
    for (const AccountOp& a : accts_)
      if (a.destroyed && !a.removed && !a.snapshot_put) snap->put(a.key, {a.value.data(), a.value_len});
  return {};
}

io::Status BlockTries::write(Locator* root_loc) {
  *root_loc = kNoLocator;
  if (io::Status s = hand_over(); !s.ok()) return s;
  const bool keyed = frame_.keyed();
  size_t r = 0;  // the new records' order
  for (const PackOp& op : b_.pack_ops) {
    if (!op.body) {
      if (keyed) continue;
      if (io::Status s = frame_.place_kept(b_.stored[op.len_or_kept].loc); !s.ok()) return s;
      continue;
    }
    if (keyed) {
      frame_.rocks().put(std::move(b_.pack_keys[r++]), std::string(reinterpret_cast<const char*>(op.body), op.len_or_kept));
    } else if (io::Status s = frame_.packer().push(op.kind, {op.body, op.len_or_kept}, op.kids); !s.ok()) {
      return s;
    }
  }
  // The stored nodes the new tree no longer holds: the tries' reports, and every node read
  // of a destroyed account's old storage.
  auto supersede = [&](const Stored& s) {
    ST_CHECK(s.read, "mpt commit: a node reported dead that was never read");
    if (keyed) frame_.supersede_key(key_of(s), s.body_len);
    else frame_.supersede({&s.loc, 1}, s.body_len);
  };
  for (uint32_t d : b_.dead) supersede(b_.stored[d]);
  for (const Stored& s : b_.stored)
    if (s.doomed && s.read) supersede(s);
  if (keyed || b_.pack_ops.empty()) return {};
  std::vector<Locator> roots;
  if (io::Status s = frame_.packer().finish(&roots); !s.ok()) return s;
  if (roots.size() != 1) return {io::Errc::corrupt_page, "mpt commit: internal: " + std::to_string(roots.size()) + " roots"};
  *root_loc = roots[0];
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
  PackOp op;
  op.len_or_kept = uint32_t(locator);
  b_.pack_ops.push_back(op);
  if (!frame_.keyed()) return;
  // RocksDB: its key still holds it (the node is in the same trie at the same path).
  const Stored& s = b_.stored[locator];
  bool same = (s.owner < 0) == (owner_ == nullptr) && s.depth == path.size();
  if (same && owner_) same = owners_[size_t(s.owner)] == *owner_;
  for (size_t i = 0; same && i < path.size(); ++i)
    same = kernels::key_nibble(s.at.data(), i) == path[i];
  if (!same && sink_error_.empty()) sink_error_ = "mpt commit: internal: a kept " + name_of(uint32_t(locator)) + " moved";
}

uint64_t BlockTries::node(mpt::NodeKind kind, std::span<const uint8_t> rlp, uint32_t children,
                          std::span<const uint8_t> path, const Hash32&) {
  PackOp op;
  switch (kind) {
    case mpt::NodeKind::leaf:
      op.kind = uint8_t(owner_ ? MptRecordKind::leaf : MptRecordKind::account_leaf);
      break;
    case mpt::NodeKind::extension: op.kind = uint8_t(MptRecordKind::extension); break;
    default: op.kind = uint8_t(MptRecordKind::branch); break;
  }
  op.kids = uint8_t(children);  // (at most 16, or 1 below an extension or account leaf)
  op.body = rlp.data();  // (valid until the trie's next hash: after write())
  op.len_or_kept = uint32_t(rlp.size());
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
