// mpt/block_tries_read: a block commit's ops and reads (block_tries.h): the diff as account
// and slot ops (prepare), then the stored nodes every trie's writes need, round by round
// across the account trie and the storage tries (resolve): each round lists the stubs the
// writes would reach (Trie::stubs_to_resolve; all of a destroyed account's old storage
// trie), reads them in one submission (arena) or one MultiGet (RocksDB) through the
// verified fetch (mpt/verified_fetch.h), checks them all against their parents' hashes (one
// keccak256 batch) and only then decodes them into their tries; an error names the record
// or path key. An account's storage trie starts once its leaf (or its absence) is read.
#include <algorithm>
#include <cstring>
#include <map>

#include "engine/mpt/account.h"
#include "engine/mpt/node_codec.h"
#include "engine/persist/mpt/block_tries.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/mpt/verified_fetch.h"
#include "kernels/keccak256.h"
#include "kernels/support/check.h"

namespace st::persist::mpt_commit_detail {

namespace {

constexpr std::string_view kWho = "mpt commit";  // the prefix of the commit's errors
constexpr uint8_t kPlaceholder[1] = {1};          // an account put's value while resolving

inline void set_nib(uint8_t* key, uint32_t i, uint8_t v) {
  key[i / 2] = i % 2 == 0 ? uint8_t((key[i / 2] & 0x0f) | (v << 4)) : uint8_t((key[i / 2] & 0xf0) | v);
}

using SlotWrites = std::vector<std::pair<state::Hash32, state::Hash32>>;

// One AccountOp per account the diff touches (by address, in first-seen order) with its
// field changes; its storage writes, in order, into writes[op]. A destroyed account drops
// what earlier diffs of this block gave it.
void collect_account_ops(const state::StateDiff& diff, std::vector<AccountOp>& accts, std::vector<SlotWrites>& writes) {
  std::map<state::Address, size_t> by_addr;
  for (const state::AccountDiff& a : diff.accounts) {
    const bool any = a.destroyed || a.nonce || a.balance || a.code || !a.storage_writes.empty();
    if (!any) continue;
    auto [it, fresh] = by_addr.emplace(a.address, accts.size());
    if (fresh) {
      accts.emplace_back();
      writes.emplace_back();
      kernels::keccak256(a.address.data(), 20, accts.back().key.data());
    }
    AccountOp& op = accts[it->second];
    if (a.destroyed) {  // what earlier diffs of this block gave the account is gone too
      const Hash32 key = op.key;
      op = AccountOp{};
      op.key = key;
      op.destroyed = true;
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
void hash_slot_ops(std::vector<AccountOp>& accts, const std::vector<SlotWrites>& writes,
                   std::vector<const uint8_t*>& msgs, std::vector<size_t>& lens, std::vector<uint8_t>& h) {
  msgs.clear();
  lens.clear();
  for (auto& w : writes)
    for (auto& [slot, v] : w) msgs.push_back(slot.data()), lens.push_back(32);
  h.resize(32 * msgs.size());
  if (!msgs.empty()) kernels::keccak256_batch(msgs.data(), lens.data(), h.data(), msgs.size());
  size_t k = 0;
  for (size_t a = 0; a < accts.size(); ++a) {
    std::vector<Op>& ops = accts[a].slots;
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

}  // namespace

io::Status BlockTries::prepare(const state::StateDiff& diff) {
  std::vector<SlotWrites> writes;
  collect_account_ops(diff, accts_, writes);
  hash_slot_ops(accts_, writes, b_.msgs, b_.lens, b_.digests);
  std::sort(accts_.begin(), accts_.end(), [](const AccountOp& x, const AccountOp& y) { return x.key < y.key; });
  for (AccountOp& a : accts_) {
    a.removed = a.destroyed && !a.nonce && !a.balance && !a.code_hash && a.slots.empty();
    acct_writes_.push_back({a.key, a.removed ? std::span<const uint8_t>() : std::span<const uint8_t>(kPlaceholder)});
    for (const Op& o : a.slots) a.slot_writes.push_back({o.key, {o.val, o.del ? 0u : o.val_len}});
  }
  started_.assign(accts_.size(), false);
  const CommitBase& base = frame_.base();
  if (!frame_.keyed() && base.root == kNoLocator && base.root_hash != mpt::kEmptyRoot)
    return {io::Errc::corrupt_page, "mpt commit: the manifest names a root but the commit record no root record"};
  Stored root;
  root.loc = base.root;
  b_.stored.push_back(root);
  acct_->reset_to_stub(base.root_hash, 0);
  return {};
}

void BlockTries::take_buffers(Buffers&& b) {
  b_ = std::move(b);
  acct_ = b_.acct.get();
  acct_->clear();
  b_.stored.clear();
}

BlockTries::Buffers BlockTries::give_buffers() {
  for (size_t i = 0; i < tries_used_; ++i) b_.tries[i]->clear();
  tries_used_ = 0;
  acct_->clear();
  b_.stored.clear();
  b_.dead.clear();
  return std::move(b_);
}

// A storage trie for this commit, empty (one used by an earlier commit, cleared, if any).
mpt::Trie* BlockTries::new_trie() {
  if (tries_used_ == b_.tries.size()) b_.tries.push_back(commit_trie());
  return b_.tries[tries_used_++].get();
}

std::string BlockTries::key_of(const Stored& s) const {
  return s.owner < 0 ? account_node_key(s.at.data(), s.depth)
                     : storage_node_key(owners_[size_t(s.owner)].data(), s.at.data(), s.depth);
}

// A stored child of `parent` below it by nibbles nibs[0, n): a new Stored; its index.
uint32_t BlockTries::add_stored(const Stored& parent, const uint8_t* nibs, uint32_t n, Locator loc) {
  Stored s;
  s.loc = loc;
  s.owner = parent.owner;
  s.doomed = parent.doomed;
  s.depth = uint8_t(parent.depth + n);
  s.at = parent.at;  // (its nibbles past parent.depth are zero)
  for (uint32_t i = 0; i < n; ++i) set_nib(s.at.data(), parent.depth + i, nibs[i]);
  b_.stored.push_back(s);
  return uint32_t(b_.stored.size() - 1);
}

// Account a's leaf is read (or known absent): its old fields' storage root, and the tries
// its slots need: the storage trie from its stored root (or empty when destroyed), the old
// one read in full when destroyed.
void BlockTries::start_account(AccountOp& a, const mpt::Trie::Found& f) {
  if (f.what == mpt::Trie::Found::value) {
    a.existed = true;
    ST_CHECK(mpt::decode_account_rlp(acct_->view(f.node).value, &a.old).empty(), "mpt commit: a read account leaf");
    a.old_storage_root = a.old.storage_root;
    if (auto it = storage_of_.find(a.key); it != storage_of_.end()) a.old_storage = it->second;
  }
  const bool has_old = a.old_storage_root != mpt::kEmptyRoot;
  ST_CHECK(!has_old || a.old_storage != UINT32_MAX, "mpt commit: an account leaf with storage read without its root");
  if (a.destroyed && has_old) {
    b_.stored[a.old_storage].doomed = true;
    a.old_storage_trie = new_trie();
    a.old_storage_trie->reset_to_stub(a.old_storage_root, a.old_storage);
  }
  if (a.slots.empty()) return;
  a.storage = new_trie();
  if (a.destroyed || !has_old) a.storage->reset_to_stub(mpt::kEmptyRoot, mpt::Trie::kNoLocator);
  else a.storage->reset_to_stub(a.old_storage_root, a.old_storage);
}

// One trie's stubs this round: from its root the first time, then from where its last
// listing stopped (the stubs it stopped at are resolved by then). Every trie's walks of a
// round share one array (next_walks; walks: the last round's).
void BlockTries::list_trie(mpt::Trie* t, std::span<const mpt::Trie::Write> writes, bool* listed, uint32_t* walks_at,
                           uint32_t* walks_end, std::vector<Pending>* out) {
  std::vector<mpt::NodeId>& ids = b_.ids;
  std::vector<mpt::Trie::StubWalk>& next = b_.next_walks;
  ids.clear();
  const size_t at = next.size();
  if (!*listed) t->stubs_to_resolve(writes, &ids, &sibling_reads, &next);
  else t->stubs_to_resolve_from(writes, {b_.walks.data() + *walks_at, *walks_end - *walks_at}, &ids, &sibling_reads, &next);
  *listed = true;
  *walks_at = uint32_t(at);
  *walks_end = uint32_t(next.size());
  for (mpt::NodeId id : ids) out->push_back({t, id});
}

// The stubs this round reads: those on the account trie's write paths, each started storage
// trie's, all of each old storage trie's; accounts whose leaf is reached start.
void BlockTries::list_stubs(std::vector<Pending>* out) {
  b_.next_walks.clear();
  list_trie(acct_, acct_writes_, &acct_listed_, &acct_walks_at_, &acct_walks_end_, out);
  std::vector<mpt::NodeId>& ids = b_.ids;
  for (size_t i = 0; i < accts_.size(); ++i) {
    AccountOp& a = accts_[i];
    if (!started_[i]) {
      const mpt::Trie::Found f = acct_->find(a.key);
      if (f.what == mpt::Trie::Found::stub) continue;
      start_account(a, f);
      started_[i] = true;
    }
    if (a.storage) list_trie(a.storage, a.slot_writes, &a.listed, &a.walks_at, &a.walks_end, out);
    ids.clear();
    if (a.old_storage_trie) a.old_storage_trie->all_stubs(&ids);
    for (mpt::NodeId id : ids) out->push_back({a.old_storage_trie, id});
  }
  b_.walks.swap(b_.next_walks);
}

std::string BlockTries::name_of(uint32_t idx) const {
  const Stored& s = b_.stored[idx];
  if (frame_.keyed()) return "node at path key " + path_key_hex(key_of(s));
  return mpt_read::loc_name(s.loc);
}

// One stored node decoded into its trie: its hashed children new Stored (arena: the
// record's children; RocksDB: named by their paths); an account leaf with storage names its
// storage trie's root. The checks the old layout guarantees: depths within the key.
io::Status BlockTries::resolve_one(const Pending& p, std::span<const uint8_t> body, const RecordView* rv, uint32_t at) {
  const bool keyed = frame_.keyed();
  mpt_read::Origin o;
  std::string key;
  if (keyed) key = key_of(b_.stored[at]), o.path_key = &key;
  else o.loc = b_.stored[at].loc;
  mpt::DecodedNode dn;
  if (io::Status s = mpt_read::decode_fetched(kWho, o, body, &dn); !s.ok()) return s;
  const bool storage_trie = p.trie != acct_;
  const uint32_t depth = b_.stored[at].depth;
  std::array<uint64_t, 16> kids;  // the hashed children's locators (a node has <= 16)
  uint32_t h = 0;
  auto child = [&](const uint8_t* nibs, uint32_t n) {
    const Locator l = keyed ? Locator(0) : (rv && h < rv->child_count ? rv->child(h) : kNoLocator);
    kids[h] = add_stored(b_.stored[at], nibs, n, l);
    ++h;
  };
  bool account_has_storage = false;
  if (dn.kind == mpt::DecodedNode::extension) {
    if (depth + dn.path_len >= 64) return mpt_read::node_error(kWho, o, "extension reaches the end of the key");
    if (dn.refs[0].kind == mpt::ChildRef::hash) child(dn.path.data(), dn.path_len);
  } else if (dn.kind == mpt::DecodedNode::branch) {
    if (depth >= 64) return mpt_read::node_error(kWho, o, "branch below a full key");
    if (!dn.value.empty()) return mpt_read::node_error(kWho, o, "branch with a value in a secure trie");
    for (uint8_t i = 0; i < 16; ++i)
      if (dn.refs[i].kind == mpt::ChildRef::hash) child(&i, 1);
  } else if (!storage_trie) {
    mpt::AccountFields f;
    if (std::string err = mpt::decode_account_rlp(dn.value, &f); !err.empty()) return mpt_read::node_error(kWho, o, err);
    if (f.storage_root != mpt::kEmptyRoot) {
      account_has_storage = true;
      if (depth + dn.path_len != 64) return mpt_read::node_error(kWho, o, "account leaf not at the end of its key");
      Hash32 acct;  // the account's key: the leaf's place (its nibbles past depth are zero), then its path
      std::memcpy(acct.data(), b_.stored[at].at.data(), 32);
      for (uint32_t i = 0; i < dn.path_len; ++i) set_nib(acct.data(), depth + i, dn.path[i]);
      Stored root;
      root.loc = keyed ? Locator(0) : (rv && rv->child_count == 1 ? rv->child(0) : kNoLocator);
      root.owner = int32_t(owners_.size());
      owners_.push_back(acct);
      b_.stored.push_back(root);
      storage_of_[acct] = uint32_t(b_.stored.size() - 1);
    }
  }
  if (rv)
    if (io::Status s = mpt_read::check_record(kWho, o, *rv, dn, storage_trie, account_has_storage); !s.ok()) return s;
  if (std::string err = p.trie->resolve_decoded(p.id, dn, {kids.data(), h}); !err.empty()) return mpt_read::node_error(kWho, o, err);
  b_.stored[at].read = true;
  b_.stored[at].body_len = uint32_t(body.size());
  ++records_read;
  return {};
}

// One round: the nodes of `work` read together, all checked against their parents' hashes
// before any is decoded.
io::Status BlockTries::read_round(std::span<const Pending> work) {
  const bool keyed = frame_.keyed();
  std::vector<uint32_t>& at = b_.at;
  std::vector<Hash32>& want = b_.want;
  at.resize(work.size());
  want.resize(work.size());
  for (size_t i = 0; i < work.size(); ++i) {
    const mpt::Trie::Stub s = work[i].trie->stub(work[i].id);
    at[i] = uint32_t(s.locator);
    want[i] = s.hash;
  }
  std::vector<std::string> keys, values;
  std::vector<RecordView>& rvs = b_.rvs;
  rvs.assign(work.size(), RecordView{});
  if (keyed) {
    for (uint32_t a : at) keys.push_back(key_of(b_.stored[a]));
    if (io::Status s = frame_.rocks().read(keys, &values, "mpt commit",
                                           [](std::string_view k) { return "node at path key " + path_key_hex(k); });
        !s.ok())
      return s;
    for (size_t i = 0; i < work.size(); ++i)
      rvs[i].body = {reinterpret_cast<const uint8_t*>(values[i].data()), values[i].size()};
  } else {
    std::vector<Locator>& locs = b_.locs;
    locs.clear();
    for (uint32_t a : at) locs.push_back(b_.stored[a].loc);
    for (size_t i = 0; i < locs.size(); ++i)
      if (locs[i] == kNoLocator)
        return {io::Errc::corrupt_page, "mpt commit: a record names fewer children than its node references"};
    if (io::Status s = mpt_read::fetch_records(frame_.reader(), locs, &rvs); !s.ok()) return s;
  }
  const long bad = mpt_read::check_round(
      work.size(), [&](size_t i) { return rvs[i].body; }, [&](size_t i) -> const Hash32& { return want[i]; }, b_.msgs,
      b_.lens, b_.digests);
  if (bad >= 0) {
    mpt_read::Origin o;
    std::string key;
    if (keyed) key = keys[size_t(bad)], o.path_key = &key;
    else o.loc = b_.stored[at[size_t(bad)]].loc;
    return mpt_read::hash_mismatch(kWho, o);
  }
  for (size_t i = 0; i < work.size(); ++i)
    if (io::Status s = resolve_one(work[i], rvs[i].body, keyed ? nullptr : &rvs[i], at[i]); !s.ok()) return s;
  ++rounds;
  return {};
}

io::Status BlockTries::resolve() {
  std::vector<Pending>& work = b_.work;
  for (;;) {
    work.clear();
    list_stubs(&work);
    if (work.empty()) return {};
    if (io::Status s = read_round(work); !s.ok()) return s;
  }
}

}  // namespace st::persist::mpt_commit_detail
