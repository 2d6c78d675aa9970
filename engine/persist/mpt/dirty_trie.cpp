// mpt/dirty_trie: resolve (level-by-level reads of the dirty paths), apply (canonical
// form), encode (post-order into the SubtreePacker) of one block commit (see the header).
#include "engine/persist/mpt/dirty_trie.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>

#include "engine/mpt/account.h"
#include "engine/mpt/node_codec.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/node.h"
#include "kernels/keccak256.h"

namespace st::persist::mpt_commit_detail {

namespace {

constexpr size_t kPackAhead = 4096;  // encode_one's write prefetch distance in pack_bytes_

inline uint8_t nib(const uint8_t* key, uint32_t i) { return i % 2 == 0 ? key[i / 2] >> 4 : key[i / 2] & 0x0f; }
inline void set_nib(uint8_t* key, uint32_t i, uint8_t v) {
  key[i / 2] = i % 2 == 0 ? uint8_t((key[i / 2] & 0x0f) | (v << 4)) : uint8_t((key[i / 2] & 0xf0) | v);
}
// at[0..depth) followed by nibs[0..n) (the rest of `at` zero).
std::array<uint8_t, 32> extend(const std::array<uint8_t, 32>& at, uint32_t depth, const uint8_t* nibs, uint32_t n) {
  std::array<uint8_t, 32> out{};
  for (uint32_t i = 0; i < depth; ++i) set_nib(out.data(), i, nib(at.data(), i));
  for (uint32_t i = 0; i < n; ++i) set_nib(out.data(), depth + i, nibs[i]);
  return out;
}
std::string key_name(std::string_view key) { return "node at path key " + path_key_hex(key); }

std::string loc_name(Locator l) {
  return "record " + std::to_string(locator_page(l)) + ":" + std::to_string(locator_index(l));
}


}  // namespace

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

// Decodes `rlp` (a record body, or an embedded node when rv is null) into nodes_[idx];
// hashed children become stubs, embedded ones nodes of their own.
std::string DirtyTrie::key_of(const Node& n) const {
  return n.owner < 0 ? account_node_key(n.at.data(), n.depth)
                     : storage_node_key(owners_[size_t(n.owner)].data(), n.at.data(), n.depth);
}

// A hashed child of n: its locator (arena: record child h, when the record has it, else
// -1; RocksDB: named by its path) as a stub at its absolute path below n.
int32_t DirtyTrie::child_stub(const Node& n, const RecordView* rv, uint32_t h, const uint8_t* nibs, uint32_t len,
                              const uint8_t* hash, bool storage_trie) {
  const bool keyed = frame_.keyed();
  if (!keyed && !(rv && h < rv->child_count)) return -1;
  const int32_t c = add_stub(keyed ? kKeyedNode : rv->child(h), hash, storage_trie);
  nodes_[c].owner = n.owner;
  nodes_[c].depth = uint8_t(n.depth + len);
  nodes_[c].at = extend(n.at, n.depth, nibs, len);
  return c;
}

// An embedded child of n: a node of its own (not fresh) at its absolute path below n.
int32_t DirtyTrie::embedded_child(const Node& n, const uint8_t* nibs, uint32_t len) {
  const int32_t c = add(Node{});
  refs_.emplace_back();  // no locator: rewritten inside its parent, never kept on its own
  nodes_[c].fresh = false;
  nodes_[c].owner = n.owner;
  nodes_[c].depth = uint8_t(n.depth + len);
  nodes_[c].at = extend(n.at, n.depth, nibs, len);
  return c;
}

// A leaf: its value into the pool; an account leaf with storage (stored, its record
// holding the storage root's child) gets a stub for its storage trie's root.
std::string DirtyTrie::fill_leaf(Node& n, const DiskNode& dn, const RecordView* rv, bool stored, bool storage_trie,
                                 bool* account_has_storage) {
  n.kind = Node::leaf;
  n.val_off = uint32_t(pool_.size());
  n.val_len = uint32_t(dn.value.size());
  pool_.insert(pool_.end(), dn.value.begin(), dn.value.end());
  if (storage_trie) return {};
  mpt::AccountFields f;
  if (std::string err = mpt::decode_account_rlp(dn.value, &f); !err.empty()) return err;
  if (f.storage_root == mpt::kEmptyRoot) return {};
  if (!stored) return "embedded account leaf with storage";
  *account_has_storage = true;
  const bool keyed = frame_.keyed();
  if (keyed || rv->child_count == 1) {
    if (n.depth + dn.path_len != 64) return "account leaf not at the end of its key";
    Hash32 owner = extend(n.at, n.depth, dn.path.data(), dn.path_len);
    n.storage = add_stub(keyed ? kKeyedNode : rv->child(0), f.storage_root.data(), true);
    nodes_[n.storage].owner = int32_t(owners_.size());
    owners_.push_back(owner);
  }
  return {};
}

// An extension: its child a stub (hashed) or decoded from its bytes (embedded).
std::string DirtyTrie::fill_extension(Node& n, const DiskNode& dn, const RecordView* rv, bool stored, bool storage_trie) {
  n.kind = Node::ext;
  if (dn.refs[0].kind == MptChildRef::hash) {
    if (!stored) return "embedded node with a hashed child";
    n.kids[0] = child_stub(n, rv, 0, dn.path.data(), dn.path_len, dn.refs[0].bytes, storage_trie);
    return {};
  }
  const int32_t c = embedded_child(n, dn.path.data(), dn.path_len);
  if (std::string err = fill(c, {dn.refs[0].bytes, dn.refs[0].len}, nullptr, false, storage_trie); !err.empty())
    return err;
  n.kids[0] = c;
  return {};
}

// A branch: each hashed child a stub (record child h for the h-th hashed one), each
// embedded one decoded from its bytes.
std::string DirtyTrie::fill_branch(Node& n, const DiskNode& dn, const RecordView* rv, bool stored, bool storage_trie) {
  n.kind = Node::branch;
  if (!dn.value.empty()) return "branch with a value in a secure trie";
  if (dn.hashed_refs() && !stored) return "embedded node with a hashed child";
  uint32_t h = 0;
  for (int i = 0; i < 16; ++i) {
    const MptChildRef& r = dn.refs[i];
    const uint8_t x = uint8_t(i);
    if (r.kind == MptChildRef::hash) {
      n.kids[i] = child_stub(n, rv, h, &x, 1, r.bytes, storage_trie);
      ++h;
    } else if (r.kind == MptChildRef::embedded) {
      const int32_t c = embedded_child(n, &x, 1);
      if (std::string err = fill(c, {r.bytes, r.len}, nullptr, false, storage_trie); !err.empty()) return err;
      n.kids[i] = c;
    }
  }
  return {};
}

std::string DirtyTrie::fill(int32_t idx, std::span<const uint8_t> rlp, const RecordView* rv, bool stored, bool storage_trie) {
  DiskNode dn;
  if (std::string err = decode_disk_node(rlp, &dn); !err.empty()) return err;
  Node n = nodes_[idx];
  n.storage_trie = storage_trie;
  n.path_len = dn.path_len;
  std::copy(dn.path.begin(), dn.path.begin() + dn.path_len, n.path.begin());
  bool account_has_storage = false;
  std::string err;
  switch (dn.kind) {
    case DiskNode::leaf: err = fill_leaf(n, dn, rv, stored, storage_trie, &account_has_storage); break;
    case DiskNode::extension: err = fill_extension(n, dn, rv, stored, storage_trie); break;
    case DiskNode::branch: err = fill_branch(n, dn, rv, stored, storage_trie); break;
  }
  if (!err.empty()) return err;
  if (rv) {
    if (std::string e = check_mpt_record(rv->kind, rv->child_count, dn, storage_trie, account_has_storage); !e.empty())
      return e;
  }
  n.fresh = false;
  nodes_[idx] = n;
  return {};
}

// Reads the records of `stubs` in one round, checks them against their parents' hashes (one
// keccak batch) and decodes them in place.
io::Status DirtyTrie::expand(std::vector<int32_t>& stubs) {
  std::sort(stubs.begin(), stubs.end());
  stubs.erase(std::unique(stubs.begin(), stubs.end()), stubs.end());
  const bool keyed = frame_.keyed();
  std::vector<Locator>& locs = locs_;
  std::vector<std::string> keys, values;
  std::vector<RecordView>& rvs = rvs_;
  locs.clear();
  rvs.assign(stubs.size(), RecordView{});
  if (keyed) {
    for (int32_t s : stubs) keys.push_back(key_of(nodes_[s]));
    if (io::Status s = frame_.rocks().read(keys, &values, "mpt commit", key_name); !s.ok()) return s;
    for (size_t i = 0; i < stubs.size(); ++i)
      rvs[i].body = {reinterpret_cast<const uint8_t*>(values[i].data()), values[i].size()};
  } else {
    for (int32_t s : stubs) locs.push_back(nodes_[s].loc);
    if (io::Status s = frame_.reader().load(locs); !s.ok()) return s;
    for (size_t i = 0; i < stubs.size(); ++i)
      if (io::Status s = frame_.reader().record(locs[i], &rvs[i]); !s.ok()) return s;
  }
  auto name = [&](size_t i) { return keyed ? key_name(keys[i]) : loc_name(locs[i]); };
  msgs_.resize(stubs.size());
  lens_.resize(stubs.size());
  for (size_t i = 0; i < stubs.size(); ++i) {
    msgs_[i] = rvs[i].body.data();
    lens_[i] = rvs[i].body.size();
  }
  std::vector<uint8_t>& h = digests_;
  h.resize(32 * stubs.size());
  if (!stubs.empty()) kernels::keccak256_batch(msgs_.data(), lens_.data(), h.data(), stubs.size());
  for (size_t i = 0; i < stubs.size(); ++i) {
    if (std::memcmp(h.data() + 32 * i, refs_[size_t(stubs[i])].hash.data(), 32) != 0)
      return {io::Errc::corrupt_page, "mpt commit: " + name(i) + ": hash differs from its parent's reference"};
    const bool storage_trie = nodes_[stubs[i]].storage_trie;
    if (std::string err = fill(stubs[i], rvs[i].body, keyed ? nullptr : &rvs[i], true, storage_trie); !err.empty())
      return {io::Errc::corrupt_page, "mpt commit: " + name(i) + ": " + err};
    nodes_[stubs[i]].loc = keyed ? kKeyedNode : locs[i];
    nodes_[stubs[i]].body_len = uint32_t(rvs[i].body.size());
    refs_[size_t(stubs[i])].stub = false;
    ++records_read;
  }
  return {};
}

// One key's walk down through what is in memory: it stops at a stub (queued in `stubs`,
// the walk goes on in `next` once the stub is read), at the end of its path, or at the
// key's leaf. An existing account leaf with storage starts one walk per slot of the
// account's ops (appended to `walks`, this round).
io::Status DirtyTrie::resolve_walk(ResolveWalk k, std::vector<ResolveWalk>& walks, std::vector<ResolveWalk>& next,
                                   std::vector<int32_t>& stubs) {
  AccountOp& a = accts_[k.acct];
  const uint8_t* key = k.slot < 0 ? a.key.data() : a.slots[k.slot].key.data();
  for (;;) {
    if (k.node < 0) return {};
    const Node& n = nodes_[k.node];
    if (n.kind == Node::stub) {
      stubs.push_back(k.node);
      next.push_back(k);
      return {};
    }
    if (n.kind == Node::leaf) {
      bool match = k.pos + n.path_len == 64;
      for (uint32_t i = 0; match && i < n.path_len; ++i) match = n.path[i] == nib(key, k.pos + i);
      if (!match) return {};
      if (k.slot >= 0) {
        a.slots[k.slot].existed = true;
      } else {
        a.old_leaf = k.node;
        if (n.storage >= 0 && !a.destroyed)
          for (size_t s = 0; s < a.slots.size(); ++s) walks.push_back({n.storage, 0, k.acct, int32_t(s)});
      }
      return {};
    }
    if (n.kind == Node::ext) {
      bool match = k.pos + n.path_len <= 64;
      for (uint32_t i = 0; match && i < n.path_len; ++i) match = n.path[i] == nib(key, k.pos + i);
      if (!match) return {};
      k.pos += n.path_len;
      k.node = n.kids[0];
      continue;
    }
    if (k.pos >= 64) return {io::Errc::corrupt_page, "mpt commit: branch below a full key"};
    k.node = n.kids[nib(key, k.pos)];
    ++k.pos;
  }
}

// A destroyed account's whole old storage is read, level by level across accounts, so
// that its records are counted (node and key counts) and its pages can be released.
io::Status DirtyTrie::read_destroyed_storage() {
  std::vector<int32_t> stubs;
  for (;;) {
    stubs.clear();
    std::vector<int32_t> todo;
    for (AccountOp& a : accts_)
      if (a.destroyed && a.old_leaf >= 0 && nodes_[a.old_leaf].storage >= 0) todo.push_back(nodes_[a.old_leaf].storage);
    while (!todo.empty()) {
      const int32_t x = todo.back();
      todo.pop_back();
      const Node& n = nodes_[x];
      if (n.kind == Node::stub) stubs.push_back(x);
      else if (n.kind == Node::ext) todo.push_back(n.kids[0]);
      else if (n.kind != Node::leaf)
        for (int32_t k : n.kids)
          if (k >= 0) todo.push_back(k);
    }
    if (stubs.empty()) return {};
    if (io::Status s = expand(stubs); !s.ok()) return s;
  }
}

// Each destroyed account's old slots (the leaves of its old storage trie, read in full).
void DirtyTrie::count_destroyed_slots() {
  for (AccountOp& a : accts_) {
    if (!a.destroyed || a.old_leaf < 0 || nodes_[a.old_leaf].storage < 0) continue;
    std::vector<int32_t> todo{nodes_[a.old_leaf].storage};
    while (!todo.empty()) {
      const Node& n = nodes_[todo.back()];
      todo.pop_back();
      if (n.kind == Node::leaf) ++a.old_slots;
      else if (n.kind == Node::ext) todo.push_back(n.kids[0]);
      else if (n.kind == Node::branch)
        for (int32_t k : n.kids)
          if (k >= 0) todo.push_back(k);
    }
  }
}

// Level by level: every walk goes down through what is in memory; the stubs they stop at
// are read together in one round.
io::Status DirtyTrie::resolve() {
  std::vector<ResolveWalk>& walks = walks_;
  std::vector<ResolveWalk>& next = next_;
  std::vector<int32_t>& stubs = stubs_;
  walks.clear();
  for (size_t a = 0; a < accts_.size(); ++a) walks.push_back({root_, 0, int32_t(a), -1});
  while (!walks.empty()) {
    stubs.clear();
    next.clear();
    for (size_t w = 0; w < walks.size(); ++w)
      if (io::Status s = resolve_walk(walks[w], walks, next, stubs); !s.ok()) return s;
    if (!stubs.empty())
      if (io::Status s = expand(stubs); !s.ok()) return s;
    walks.swap(next);
  }
  if (io::Status s = read_destroyed_storage(); !s.ok()) return s;
  count_destroyed_slots();
  return {};
}

int32_t DirtyTrie::leaf_from(const Entry& e, uint32_t d, bool storage_trie) {
  Node n;
  if (e.keep >= 0) {
    if (nodes_[e.keep].path_len == 64 - d) return e.keep;
    n = nodes_[e.keep];
  } else {
    n.kind = Node::leaf;
    n.storage_trie = storage_trie;
    if (storage_trie) {
      n.val_off = uint32_t(pool_.size());
      n.val_len = e.op->val_len;
      pool_.insert(pool_.end(), e.op->val, e.op->val + e.op->val_len);
    } else {
      const AccountOp& a = accts_[e.op->acct];
      if (a.old_leaf >= 0 && !a.destroyed) n.val_off = nodes_[a.old_leaf].val_off, n.val_len = nodes_[a.old_leaf].val_len;
      n.acct = e.op->acct;
      n.storage = a.new_storage;
    }
  }
  n.path_len = uint8_t(64 - d);
  for (uint32_t i = d; i < 64; ++i) n.path[i - d] = nib(e.key, i);
  return add(n);
}

// A canonical subtree over sorted, distinct entries that share nibbles [0, d).
int32_t DirtyTrie::build(std::span<const Entry> es, uint32_t d, bool storage_trie) {
  if (es.empty()) return -1;
  if (es.size() == 1) return leaf_from(es[0], d, storage_trie);
  const uint8_t* lo = es.front().key;
  const uint8_t* hi = es.back().key;
  uint32_t c = d;
  while (c < 64 && nib(lo, c) == nib(hi, c)) ++c;
  Node b;
  b.kind = Node::branch;
  b.storage_trie = storage_trie;
  size_t i = 0;
  while (i < es.size()) {
    const uint8_t x = nib(es[i].key, c);
    size_t j = i;
    while (j < es.size() && nib(es[j].key, c) == x) ++j;
    b.kids[x] = build(es.subspan(i, j - i), c + 1, storage_trie);
    i = j;
  }
  const int32_t br = add(b);
  if (c == d) return br;
  Node e;
  e.kind = Node::ext;
  e.storage_trie = storage_trie;
  e.path_len = uint8_t(c - d);
  for (uint32_t k = d; k < c; ++k) e.path[k - d] = nib(lo, k);
  e.kids[0] = br;
  return add(e);
}

// prefix ++ child in canonical form: a short child (leaf, extension) absorbs the prefix, a
// branch gets an extension. A child never read (a stub) is queued for loading.
int32_t DirtyTrie::join(const uint8_t* prefix, uint32_t plen, int32_t child) {
  Node c = nodes_[child];
  if (c.kind == Node::leaf || c.kind == Node::ext) {
    Node n = c;
    n.path_len = uint8_t(plen + c.path_len);
    std::copy(prefix, prefix + plen, n.path.begin());
    std::copy(c.path.begin(), c.path.begin() + c.path_len, n.path.begin() + plen);
    return add(n);
  }
  if (c.kind == Node::stub) need_.push_back(child);  // the pass is redone once it is read
  Node e;
  e.kind = Node::ext;
  e.storage_trie = c.storage_trie;
  e.path_len = uint8_t(plen);
  std::copy(prefix, prefix + plen, e.path.begin());
  e.kids[0] = child;
  return add(e);
}

int32_t DirtyTrie::apply_branch(int32_t n, std::span<const Op> ops, uint32_t d) {
  std::array<int32_t, 16> kids = nodes_[n].kids;
  const bool storage_trie = nodes_[n].storage_trie;
  bool changed = false;
  size_t i = 0;
  while (i < ops.size()) {
    const uint8_t x = nib(ops[i].key.data(), d);
    size_t j = i;
    while (j < ops.size() && nib(ops[j].key.data(), d) == x) ++j;
    const int32_t k = apply(kids[x], ops.subspan(i, j - i), d + 1);
    if (k != kids[x]) changed = true, kids[x] = k;
    i = j;
  }
  if (!changed) return n;
  int count = 0, last = -1;
  for (int x = 0; x < 16; ++x)
    if (kids[x] >= 0) ++count, last = x;
  if (count == 0) return -1;
  if (count == 1) {
    const uint8_t x = uint8_t(last);
    return join(&x, 1, kids[last]);
  }
  Node b;
  b.kind = Node::branch;
  b.storage_trie = storage_trie;
  b.kids = kids;
  return add(b);
}

// The subtree at node n (nibble depth d) after the writes `ops` (sorted, distinct keys that
// share nibbles [0, d)); returns n itself when nothing changed, -1 when it became empty.
// The ops at leaf n (depth d): rebuilt from the leaf's entry (where its key sorts among
// the ops, dropped when an op writes its key) and the inserts; n itself when the ops are
// only deletes of absent keys.
int32_t DirtyTrie::apply_at_leaf(int32_t n, std::span<const Op> ops, uint32_t d, bool storage_trie) {
  const Node& node = nodes_[n];
  std::vector<Entry> es;
  uint8_t lkey[32];
  std::memcpy(lkey, ops[0].key.data(), 32);
  for (uint32_t i = 0; i < node.path_len; ++i) {
    const uint32_t p = d + i;
    lkey[p / 2] = p % 2 == 0 ? uint8_t((lkey[p / 2] & 0x0f) | (node.path[i] << 4))
                             : uint8_t((lkey[p / 2] & 0xf0) | node.path[i]);
  }
  bool leaf_placed = false, touched = false;
  for (const Op& o : ops) {
    const int c = std::memcmp(o.key.data(), lkey, 32);
    if (!leaf_placed && c >= 0) {
      leaf_placed = true;
      if (c == 0) {
        touched = true;
        if (!o.del) es.push_back({o.key.data(), -1, &o});
        continue;
      }
      es.push_back({nullptr, n, nullptr});
    }
    if (!o.del) es.push_back({o.key.data(), -1, &o});
  }
  if (!leaf_placed) es.push_back({nullptr, n, nullptr});
  if (!touched && es.size() == 1) return n;  // only deletes of absent keys
  for (Entry& e : es)
    if (e.keep >= 0) e.key = lkey;
  return build(es, d, storage_trie);
}

// The ops at extension n (depth d): all below its path (or deletes off it) go to its
// child, re-joined; an insert off its path splits it into a branch at its first nibble.
int32_t DirtyTrie::apply_at_extension(int32_t n, std::span<const Op> ops, uint32_t d, bool storage_trie) {
  const Node& node = nodes_[n];
  const uint32_t len = node.path_len;
  const std::array<uint8_t, 64> path = node.path;
  const int32_t child = node.kids[0];
  auto shares = [&](const Op& o) {
    for (uint32_t i = 0; i < len; ++i)
      if (nib(o.key.data(), d + i) != path[i]) return false;
    return true;
  };
  bool diverging_insert = false;
  std::vector<Op> shared;
  for (const Op& o : ops) {
    if (shares(o)) shared.push_back(o);
    else if (!o.del) diverging_insert = true;
  }
  if (!diverging_insert) {
    const int32_t c = apply(child, shared, d + len);
    if (c == child) return n;
    if (c < 0) return -1;
    return join(path.data(), len, c);
  }
  // Split: the extension becomes a one-slot branch at its first nibble (collapsed
  // again by apply_branch if the writes leave it with one slot).
  Node b;
  b.kind = Node::branch;
  b.storage_trie = storage_trie;
  if (len == 1) {
    b.kids[path[0]] = child;
  } else {
    Node e;
    e.kind = Node::ext;
    e.storage_trie = storage_trie;
    e.path_len = uint8_t(len - 1);
    std::copy(path.begin() + 1, path.begin() + len, e.path.begin());
    e.kids[0] = child;
    b.kids[path[0]] = add(e);
  }
  const int32_t bi = add(b);
  return apply_branch(bi, ops, d);
}

int32_t DirtyTrie::apply(int32_t n, std::span<const Op> ops, uint32_t d) {
  if (ops.empty()) return n;
  const bool storage_trie = ops[0].acct < 0;
  if (n < 0) {
    std::vector<Entry> es;
    for (const Op& o : ops)
      if (!o.del) es.push_back({o.key.data(), -1, &o});
    return build(es, d, storage_trie);
  }
  switch (nodes_[n].kind) {
    case Node::stub:
      need_.push_back(n);
      return n;
    case Node::leaf:
      return apply_at_leaf(n, ops, d, storage_trie);
    case Node::ext:
      return apply_at_extension(n, ops, d, storage_trie);
    case Node::branch:
      return apply_branch(n, ops, d);
  }
  return n;
}

io::Status DirtyTrie::apply_all() {
  const size_t node_base = nodes_.size(), pool_base = pool_.size();
  if (refs_.size() != node_base)
    return {io::Errc::corrupt_page, "mpt commit: internal: a node of the committed state without its reference"};
  for (;;) {
    ++passes;
    need_.clear();
    for (AccountOp& a : accts_) {
      const int32_t old = a.old_leaf >= 0 && !a.destroyed ? nodes_[a.old_leaf].storage : -1;
      a.new_storage = apply(old, a.slots, 0);
    }
    new_root_ = apply(root_, acct_ops_, 0);
    if (need_.empty()) return {};
    if (passes > 64) return {io::Errc::corrupt_page, "mpt commit: collapse reads do not converge"};
    std::vector<int32_t> stubs = need_;
    nodes_.resize(node_base);
    pool_.resize(pool_base);
    for (int32_t s : stubs)
      if (s >= int32_t(node_base) || nodes_[s].kind != Node::stub)
        return {io::Errc::corrupt_page, "mpt commit: internal: a collapse needs a node that is not a stub"};
    if (io::Status s = expand(stubs); !s.ok()) return s;
    return apply_all();  // nodes read: a new base
  }
}

void DirtyTrie::mark_reused(int32_t n) {
  if (n < 0) return;
  Node& node = nodes_[n];
  if (node.kind == Node::stub) return;
  if (node.loc != kNoLocator) node.reused = true;
  if (node.kind == Node::leaf) mark_reused(node.storage);
  else if (node.kind == Node::ext) mark_reused(node.kids[0]);
  else
    for (int32_t k : node.kids) mark_reused(k);
}

bool DirtyTrie::kept(int32_t n) const {
  if (size_t(n) >= refs_.size()) return false;  // a new node
  const CommittedRef& r = refs_[size_t(n)];
  return r.stub || r.loc != kNoLocator;
}

// The packed path key of cursor()[0, depth) followed by nibs[0, n) (the rest zero).
std::array<uint8_t, 32> DirtyTrie::cursor_key(uint32_t depth, const uint8_t* nibs, uint32_t n) {
  std::array<uint8_t, 32> out{};
  const uint8_t* at = cursor();
  for (uint32_t i = 0; i < depth; ++i) set_nib(out.data(), i, at[i]);
  for (uint32_t i = 0; i < n; ++i) set_nib(out.data(), depth + i, nibs[i]);
  return out;
}

// RocksDB: a kept node is still at cursor()[0, depth) of the trie being encoded (its key
// already holds it).
io::Status DirtyTrie::check_unmoved(int32_t n, uint32_t depth) {
  const Node& node = nodes_[n];
  const bool same_trie = node.owner < 0 ? owner_ == nullptr
                                        : owner_ && std::memcmp(owners_[size_t(node.owner)].data(), owner_, 32) == 0;
  bool same = same_trie && node.depth == depth;
  const uint8_t* at = cursor();
  for (uint32_t i = 0; same && i < depth; ++i) same = nib(node.at.data(), i) == at[i];
  if (!same) return {io::Errc::corrupt_page, "mpt commit: internal: a kept " + key_name(key_of(node)) + " moved"};
  return {};
}

// A kept node (a stub, or read from its own record): RocksDB, checked not to have moved;
// arena, placed as it is (its locator in the packer's order).
io::Status DirtyTrie::place_kept(int32_t n, uint32_t depth) {
  const CommittedRef& r = refs_[size_t(n)];
  if (keyed_) {
    if (io::Status s = check_unmoved(n, depth); !s.ok()) return s;
  } else {
    PackOp op;
    op.placed = r.loc;
    pack_ops_.push_back(op);
  }
  if (!r.stub) mark_reused(n);
  return {};
}

// A new leaf's storage trie (an account leaf's), encoded below it under its account's key;
// the leaf's flat-snapshot write queued (snapshot on).
io::Status DirtyTrie::encode_storage(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed) {
  const Node& node = nodes_[n];
  if (frame_.snapshot()) {
    SnapPut& p = snap_puts_.emplace_back();
    const std::array<uint8_t, 32> k = cursor_key(depth, node.path.data(), node.path_len);
    if (owner_) std::memcpy(p.key.data(), owner_, 32);
    std::memcpy(p.key.data() + (owner_ ? 32 : 0), k.data(), 32);
    p.key_len = owner_ ? 64 : 32;
    p.node = n;
  }
  if (node.storage_trie || node.storage < 0) return {};
  if (depth + node.path_len != 64) return {io::Errc::corrupt_page, "mpt commit: internal: account leaf above depth 64"};
  const std::array<uint8_t, 32> acct = cursor_key(depth, node.path.data(), node.path_len);
  owner_ = acct.data();
  io::Status s = encode_tree(node.storage, true, 0, below, kids_pushed);
  owner_ = nullptr;
  return s;
}

// A new node's children encoded in order, their path nibbles in cursor() from depth on
// (*below: their highest level; *kids_pushed: the subtrees they pushed); a branch's slots
// are written into *branch as its children are visited.
io::Status DirtyTrie::encode_children(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed,
                                      BranchBody* branch) {
  const Node& node = nodes_[n];
  if (node.kind == Node::leaf) return encode_storage(n, depth, below, kids_pushed);
  if (node.kind == Node::ext) {
    if (depth + node.path_len > 64) return {io::Errc::corrupt_page, "mpt commit: internal: extension below depth 64"};
    std::memcpy(cursor() + depth, node.path.data(), node.path_len);
    return encode_tree(node.kids[0], false, depth + node.path_len, below, kids_pushed);
  }
  if (node.kind != Node::branch) return {io::Errc::corrupt_page, "mpt commit: internal: a stub to encode"};
  if (depth >= 64) return {io::Errc::corrupt_page, "mpt commit: internal: branch below depth 64"};
  return encode_branch_kids(n, depth, below, kids_pushed, branch);
}

// What the visits read of a branch's children fetched together (a kept child's
// CommittedRef, a new child's first bytes): the misses overlap instead of one per visit.
void DirtyTrie::prefetch_kids(const Node& node) const {
  for (const int32_t k : node.kids)
    if (k >= 0) {
      const char* p = size_t(k) < refs_.size() ? reinterpret_cast<const char*>(&refs_[size_t(k)])
                                               : reinterpret_cast<const char*>(&nodes_[size_t(k)]);
      __builtin_prefetch(p);
      __builtin_prefetch(p + sizeof(CommittedRef) - 1);
    }
}

// The apply pass created the new nodes in post-order, children before parents and slot
// 0's subtree before slot 1's, so this walk meets them in nearly increasing index: from
// new node n, node n + kAheadNode is fetched and the children of node n + kAheadKids
// (fetched two visits ago) too, so that their misses overlap the visits in between. Only
// hints: an order that differs costs the misses it saves, never a result.
void DirtyTrie::prefetch_ahead(int32_t n) const {
  constexpr size_t kAheadNode = 4, kAheadKids = 2;
  const size_t node = size_t(n) + kAheadNode, kids = size_t(n) + kAheadKids;
  if (node < nodes_.size()) {
    const char* p = reinterpret_cast<const char*>(&nodes_[node]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + offsetof(Node, kids) + sizeof(Node::kids) - 1);
  }
  if (kids < nodes_.size()) prefetch_kids(nodes_[kids]);
}

// A new branch's children in slot order, each visited once: a kept child (most of them)
// placed and its slot (a0 || its hash) written from the one CommittedRef read; a new child
// encoded (recursively), then its slot: a0 || its digest, 32 zero bytes and a pending patch
// while the digest is still to come, or its embedded encoding.
io::Status DirtyTrie::encode_branch_kids(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed,
                                         BranchBody* b) {
  const Node& node = nodes_[n];
  prefetch_kids(node);
  uint8_t* const body = b->buf + 9;
  uint8_t* p = body;
  uint32_t l = 0, pushed = 0;
  for (int i = 0; i < 16; ++i) {
    const int32_t k = node.kids[i];
    if (k < 0) {
      *p++ = 0x80;
      continue;
    }
    cursor()[depth] = uint8_t(i);
    if (kept(k)) {  // most children: placed here, without a visit
      if (io::Status s = place_kept(k, depth + 1); !s.ok()) return s;
      ++*kids_pushed;
      *p = 0xa0;
      std::memcpy(p + 1, refs_[size_t(k)].hash.data(), 32);
      p += 33;
      continue;
    }
    if (io::Status s = encode_tree(k, false, depth + 1, &l, &pushed); !s.ok()) return s;
    *below = std::max(*below, l);
    *kids_pushed += pushed;
    const Enc& ce = enc_of(k);
    if (!ce.hashed) {
      std::memcpy(p, ce.ref.bytes, ce.ref.len);
      p += ce.ref.len;
      continue;
    }
    *p = 0xa0;
    if (ce.digested) {
      std::memcpy(p + 1, ce.ref.bytes, 32);
    } else {
      b->patch_kid[b->patches] = k;
      b->patch_at[b->patches++] = uint32_t(p + 1 - body);
      std::memset(p + 1, 0, 32);
    }
    p += 33;
  }
  b->end = p;
  return {};
}

// A new hashed node's record: listed for its level's batch and appended to the packer's
// order (RocksDB: under its path key).
void DirtyTrie::push_record(int32_t n, uint32_t depth, uint32_t kids_pushed) {
  const uint32_t ei = uint32_t(nodes_[n].enc);
  const Enc& e = enc_[ei];
  PackOp op;
  op.enc = ei;
  op.kids = kids_pushed;
  if (frame_.keyed()) {
    const std::array<uint8_t, 32> at = cursor_key(depth, nullptr, 0);
    pack_keys_.push_back(owner_ ? storage_node_key(owner_, at.data(), depth) : account_node_key(at.data(), depth));
  }
  pack_ops_.push_back(op);
  ++records_written;
  bytes_written += e.body_len;
  if (e.waiting == 0) ready_.push_back(ei);
  if (ready_.size() >= kReadyBatch) hash_ready(false);
}

io::Status DirtyTrie::encode_tree(int32_t n, bool top, uint32_t depth, uint32_t* level, uint32_t* pushed) {
  *level = 0;
  *pushed = 0;
  if (kept(n)) {
    *pushed = 1;
    return place_kept(n, depth);
  }
  if (size_t(n) >= refs_.size()) prefetch_ahead(n);
  uint32_t below = 0, kids_pushed = 0;
  BranchBody branch;  // a branch's slots, written during its children's visits
  if (io::Status s = encode_children(n, depth, &below, &kids_pushed, &branch); !s.ok()) return s;
  nodes_[n].enc = int32_t(enc_.size());
  Enc& e = enc_.emplace_back();
  e.level = below + 1;
  e.top = top;
  *level = e.level;
  if (io::Status s = encode_one(n, &branch); !s.ok()) return s;
  if (!enc_of(n).hashed) {
    if (kids_pushed) return {io::Errc::corrupt_page, "mpt commit: internal: embedded node with hashed children"};
    return {};
  }
  push_record(n, depth, kids_pushed);
  *pushed = 1;
  return {};
}

mpt::NodeRef DirtyTrie::child_ref(int32_t n) const {
  if (kept(n) || !enc_of(n).hashed || enc_of(n).digested) return ref_of(n);
  mpt::NodeRef r;
  r.len = 32;
  std::memset(r.bytes, 0, 32);
  return r;
}

bool DirtyTrie::awaits(int32_t n, int32_t k, uint32_t patch_off) {
  if (kept(k)) return false;
  Enc& c = enc_of(k);
  if (!c.hashed || c.digested) return false;
  c.patch_off = patch_off;
  c.parent = uint32_t(nodes_[n].enc);
  ++enc_of(n).waiting;
  return true;
}

mpt::NodeRef DirtyTrie::ref_of(int32_t n) const {
  if (!kept(n)) return enc_of(n).ref;
  mpt::NodeRef r;
  r.len = 32;
  std::memcpy(r.bytes, refs_[size_t(n)].hash.data(), 32);
  return r;
}

// A new leaf's encoding into buf (*end: past it); an account leaf's value is recomputed, its
// storage root a new hashed child (patched when its digest is still to come) or a kept one.
io::Status DirtyTrie::encode_leaf(int32_t n, uint8_t* buf, uint8_t** end) {
  const Node& node = nodes_[n];
  Enc& e = enc_of(n);
  const uint8_t* value = pool_.data() + node.val_off;
  size_t value_len = node.val_len;
  uint8_t acct_rlp[160];
  int32_t hashed_kid = -1;  // a new storage trie not hashed yet: its digest goes to the value's
                            // bytes [len-65, len-33)
  if (!node.storage_trie && node.acct >= 0) {
    const AccountOp& a = accts_[node.acct];
    mpt::AccountFields f;
    if (value_len)
      if (std::string err = mpt::decode_account_rlp({value, value_len}, &f); !err.empty())
        return {io::Errc::corrupt_page, "mpt commit: account leaf: " + err};
    if (a.nonce) f.nonce = *a.nonce;
    if (a.balance) f.balance = *a.balance;
    if (a.code_hash) f.code_hash = *a.code_hash;
    f.storage_root = mpt::kEmptyRoot;
    if (node.storage >= 0) std::memcpy(f.storage_root.data(), child_ref(node.storage).bytes, 32);
    if (mpt::account_rlp_size(f) > sizeof(acct_rlp))
      return {io::Errc::corrupt_page, "mpt commit: internal: account leaf value too long"};
    value = acct_rlp;
    value_len = size_t(mpt::put_account_rlp(acct_rlp, f) - acct_rlp);
    if (node.storage >= 0 && !kept(node.storage) && !enc_of(node.storage).digested)
      hashed_kid = node.storage;  // a top: hashed
  }
  if (frame_.snapshot()) {  // the flat snapshot takes the value once the digests are patched in
    e.leaf_val_off = uint32_t(leaf_vals_.size());
    e.leaf_val_len = uint32_t(value_len);
    leaf_vals_.insert(leaf_vals_.end(), value, value + value_len);
    if (hashed_kid >= 0) enc_of(hashed_kid).patch_val_off = uint32_t(leaf_vals_.size() - 65);
  }
  *end = mpt::put_leaf_nibbles(buf, node.path.data(), node.path_len, value, value_len);
  // The value is the encoding's last item: the storage root is its bytes [len-65, len-33).
  if (hashed_kid >= 0) awaits(n, hashed_kid, e.body_off + uint32_t(*end - buf) - 65);
  e.kind = uint8_t(node.storage_trie ? MptRecordKind::leaf : MptRecordKind::account_leaf);
  return {};
}

// A new branch's record from the slots its children's visits wrote (BranchBody): the
// value item and the list header right in front (*begin: the first byte); each pending
// patch settled: the digest copied in when a later sibling's batch hashed the child
// meanwhile, else the branch waits for it (awaits). The bytes of mpt::put_branch over the
// children's references.
uint8_t* DirtyTrie::encode_branch(int32_t n, BranchBody& b, uint8_t** begin) {
  uint8_t* const body = b.buf + 9;
  uint8_t* end = nullptr;
  *begin = mpt::finish_branch(body, b.end, nullptr, 0, &end);
  const uint32_t body_off = enc_of(n).body_off + uint32_t(body - *begin);
  for (int j = 0; j < b.patches; ++j) {
    const Enc& ce = enc_of(b.patch_kid[j]);
    if (ce.digested) std::memcpy(body + b.patch_at[j], ce.ref.bytes, 32);
    else awaits(n, b.patch_kid[j], body_off + b.patch_at[j]);
  }
  return end;
}

io::Status DirtyTrie::encode_one(int32_t n, BranchBody* branch) {
  const Node& node = nodes_[n];
  Enc& e = enc_of(n);
  e.body_off = uint32_t(pack_bytes_.size());
  uint8_t buf[1024];
  uint8_t* begin = buf;  // the encoding is [begin, end)
  uint8_t* end = buf;
  switch (node.kind) {
    case Node::leaf:
      if (io::Status s = encode_leaf(n, buf, &end); !s.ok()) return s;
      break;
    case Node::ext: {
      const int32_t k = node.kids[0];
      end = mpt::put_extension_nibbles(buf, node.path.data(), node.path_len, child_ref(k));
      awaits(n, k, e.body_off + uint32_t(end - buf) - 32);  // the child is the last item
      e.kind = uint8_t(MptRecordKind::extension);
      break;
    }
    case Node::branch:
      end = encode_branch(n, *branch, &begin);
      e.kind = uint8_t(MptRecordKind::branch);
      break;
    case Node::stub: return {io::Errc::corrupt_page, "mpt commit: internal: a stub to encode"};
  }
  const size_t len = size_t(end - begin);
  e.body_len = uint32_t(len);
  pack_bytes_.insert(pack_bytes_.end(), begin, end);
  // The next records' destination (last written a block ago, out of cache by now) fetched
  // for writing, as many bytes kPackAhead ahead as this one took: their copies then find
  // their lines. Within the capacity kept across commits only.
  if (pack_bytes_.size() + kPackAhead + len <= pack_bytes_.capacity()) {
    const uint8_t* ahead = pack_bytes_.data() + pack_bytes_.size() + kPackAhead;
    for (size_t off = 0; off < len; off += 64) __builtin_prefetch(ahead + off, 1);
  }
  e.hashed = len >= 32 || e.top;
  if (!e.hashed) {  // embedded: it holds no hashed child (a0 || digest is 33 bytes), so it is final
    e.ref.len = uint8_t(len);
    std::memcpy(e.ref.bytes, begin, len);
  }
  return {};
}

io::Status DirtyTrie::hash_all(Hash32* root_hash) {
  *root_hash = mpt::kEmptyRoot;
  pack_ops_.clear();
  pack_keys_.clear();
  pack_bytes_.clear();
  leaf_vals_.clear();
  snap_puts_.clear();
  if (new_root_ < 0) return {};
  // Only the nodes the new tree encodes get an Enc (a dense array, not one per node read);
  // a node is packed at most once, so pack_ops_ <= nodes_ (one allocation, with room to
  // spare: a block that reads a few more nodes than the last does not move it to fresh pages).
  enc_.clear();
  ready_.clear();
  if (pack_ops_.capacity() < nodes_.size()) pack_ops_.reserve(nodes_.size() + nodes_.size() / 4);
  keyed_ = frame_.keyed();
  owner_ = nullptr;
  uint32_t top_level = 0, pushed = 0;
  if (io::Status s = encode_tree(new_root_, true, 0, &top_level, &pushed); !s.ok()) return s;
  hash_ready(true);
  if (!enc_of(new_root_).digested) return {io::Errc::corrupt_page, "mpt commit: internal: the root was not hashed"};
  if (SnapshotDelta* snap = frame_.snapshot())  // every new leaf, its value final now
    for (const SnapPut& p : snap_puts_) {
      const Enc& le = enc_of(p.node);
      snap->put({p.key.data(), p.key_len}, {leaf_vals_.data() + le.leaf_val_off, le.leaf_val_len});
    }
  std::memcpy(root_hash->data(), ref_of(new_root_).bytes, 32);
  return {};
}

namespace {
// One keccak256_batch over n encoding bodies in `bytes` (enc_at(j): the j-th encoding, with
// body_off / body_len), their digests into out (32 bytes each): one batch of the hash
// phase's ready records; msgs, lens and out are the caller's, reused per batch.
template <class EncAt>
void hash_bodies(const uint8_t* bytes, size_t n, EncAt enc_at, std::vector<const uint8_t*>& msgs,
                 std::vector<size_t>& lens, std::vector<uint8_t>& out) {
  msgs.resize(n);
  lens.resize(n);
  out.resize(n * 32);
  for (size_t j = 0; j < n; ++j) {
    const auto& e = enc_at(j);
    msgs[j] = bytes + e.body_off;
    lens[j] = e.body_len;
  }
  kernels::keccak256_batch(msgs.data(), lens.data(), out.data(), n);
}
}  // namespace

// The ready records hashed, kReadyBatch at a time (all: until none is left), one
// keccak256_batch each; each digest goes into its parent's encoding (and an account's
// snapshot value) when the parent waits for it, and a parent whose last digest arrived is
// ready in turn.
void DirtyTrie::hash_ready(bool all) {
  while (!ready_.empty() && (all || ready_.size() >= kReadyBatch)) {
    batch_.swap(ready_);
    ready_.clear();
    hash_bodies(pack_bytes_.data(), batch_.size(), [&](size_t j) -> const Enc& { return enc_[batch_[j]]; }, msgs_,
                lens_, digests_);
    for (size_t j = 0; j < batch_.size(); ++j) {
      Enc& e = enc_[batch_[j]];
      const uint8_t* digest = digests_.data() + 32 * j;
      e.ref.len = 32;
      std::memcpy(e.ref.bytes, digest, 32);
      e.digested = true;
      if (e.parent == kNoParent) continue;  // its parent, encoded later, reads ref
      std::memcpy(pack_bytes_.data() + e.patch_off, digest, 32);
      if (e.patch_val_off != kNoPatch) std::memcpy(leaf_vals_.data() + e.patch_val_off, digest, 32);
      if (--enc_[e.parent].waiting == 0) ready_.push_back(e.parent);
    }
  }
}

io::Status DirtyTrie::pure_hash(PureHashCount* out) {
  // Before the clock: the records hash_all() hashed (every new pack op), counted and then
  // listed by level (1 = no hashed child), each with the digest it was given, their bytes
  // copied out level by level.
  pure_counts_.assign(1, 0);
  size_t n = 0;
  for (const PackOp& op : pack_ops_) {
    if (op.placed != kNoLocator) continue;
    const uint32_t l = enc_[op.enc].level;
    if (l >= pure_counts_.size()) pure_counts_.resize(l + 1, 0);
    ++pure_counts_[l], ++n;
  }
  if (pure_counts_[0] != 0) return {io::Errc::corrupt_page, "mpt commit: internal: a new record at level 0"};
  pure_.prepare(pure_counts_, n);
  for (size_t l = 1; l < pure_counts_.size(); ++l) pure_counts_[l] = pure_.level_end[l - 1];  // next slot per level
  for (const PackOp& op : pack_ops_) {
    if (op.placed != kNoLocator) continue;
    const Enc& e = enc_[op.enc];
    const uint32_t i = pure_counts_[e.level]++;
    pure_.msgs[i] = pack_bytes_.data() + e.body_off;
    pure_.lens[i] = e.body_len;
    pure_.expect[i] = e.ref.bytes;
  }
  pure_.gather_bytes();
  return mpt_pure_hash(pure_, out);
}

io::Status DirtyTrie::write_all(Locator* root_loc) {
  *root_loc = kNoLocator;
  if (new_root_ < 0) return {};
  const bool keyed = frame_.keyed();
  if (keyed && pack_keys_.size() != pack_ops_.size())
    return {io::Errc::corrupt_page, "mpt commit: internal: a RocksDB node without its key"};
  for (size_t i = 0; i < pack_ops_.size(); ++i) {
    const PackOp& op = pack_ops_[i];
    if (op.placed != kNoLocator) {
      if (keyed) continue;
      if (io::Status s = frame_.place_kept(op.placed); !s.ok()) return s;
      continue;
    }
    const Enc& e = enc_[op.enc];
    const uint8_t* body = pack_bytes_.data() + e.body_off;
    if (keyed) {
      frame_.rocks().put(std::move(pack_keys_[i]), std::string(reinterpret_cast<const char*>(body), e.body_len));
    } else if (io::Status s = frame_.packer().push(e.kind, {body, e.body_len}, op.kids); !s.ok()) {
      return s;
    }
  }
  if (keyed) return {};
  std::vector<Locator> roots;
  if (io::Status s = frame_.packer().finish(&roots); !s.ok()) return s;
  if (roots.size() != 1) return {io::Errc::corrupt_page, "mpt commit: internal: " + std::to_string(roots.size()) + " roots"};
  *root_loc = roots[0];
  return {};
}


}  // namespace st::persist::mpt_commit_detail
