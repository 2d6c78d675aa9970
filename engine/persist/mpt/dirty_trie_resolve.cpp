// mpt/dirty_trie_resolve: the resolve pass of a block commit (dirty_trie.h): the records on
// the block's dirty paths read level by level (one round of reads per depth) through the
// verified fetch (mpt/verified_fetch.h): a round's records all checked against their
// parents' hashes (one keccak256 batch) before any is decoded into nodes (hashed children
// as stubs); an error names the record or path key.
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
#include "engine/persist/mpt/verified_fetch.h"
#include "kernels/support/check.h"

namespace st::persist::mpt_commit_detail {

namespace {
constexpr std::string_view kWho = "mpt commit";  // the prefix of the commit's errors
}  // namespace

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
std::string DirtyTrie::fill_leaf(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie,
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
std::string DirtyTrie::fill_extension(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie) {
  n.kind = Node::ext;
  // Its child, a branch, must sit above the key's last nibble (and its path fit `at`).
  if (n.depth + dn.path_len >= 64) return "extension reaches the end of the key";
  if (dn.refs[0].kind == mpt::ChildRef::hash) {
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
std::string DirtyTrie::fill_branch(Node& n, const mpt::DecodedNode& dn, const RecordView* rv, bool stored, bool storage_trie) {
  n.kind = Node::branch;
  if (n.depth >= 64) return "branch below a full key";  // its children's paths would not fit `at`
  if (!dn.value.empty()) return "branch with a value in a secure trie";
  if (dn.hashed_refs() && !stored) return "embedded node with a hashed child";
  uint32_t h = 0;
  for (int i = 0; i < 16; ++i) {
    const mpt::ChildRef& r = dn.refs[i];
    const uint8_t x = uint8_t(i);
    if (r.kind == mpt::ChildRef::hash) {
      n.kids[i] = child_stub(n, rv, h, &x, 1, r.bytes, storage_trie);
      ++h;
    } else if (r.kind == mpt::ChildRef::embedded) {
      const int32_t c = embedded_child(n, &x, 1);
      if (std::string err = fill(c, {r.bytes, r.len}, nullptr, false, storage_trie); !err.empty()) return err;
      n.kids[i] = c;
    }
  }
  return {};
}

std::string DirtyTrie::fill(int32_t idx, std::span<const uint8_t> rlp, const RecordView* rv, bool stored, bool storage_trie) {
  mpt::DecodedNode dn;
  if (std::string err = mpt::decode_node(rlp, &dn); !err.empty()) return err;
  Node n = nodes_[idx];
  n.storage_trie = storage_trie;
  n.path_len = dn.path_len;
  std::copy(dn.path.begin(), dn.path.begin() + dn.path_len, n.path.begin());
  bool account_has_storage = false;
  std::string err;
  switch (dn.kind) {
    case mpt::DecodedNode::leaf: err = fill_leaf(n, dn, rv, stored, storage_trie, &account_has_storage); break;
    case mpt::DecodedNode::extension: err = fill_extension(n, dn, rv, stored, storage_trie); break;
    case mpt::DecodedNode::branch: err = fill_branch(n, dn, rv, stored, storage_trie); break;
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

// Reads the records of `stubs` in one round, checks them all against their parents' hashes
// (one keccak256 batch, check_round) and only then decodes them in place.
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
    if (io::Status s = mpt_read::fetch_records(frame_.reader(), locs, &rvs); !s.ok()) return s;
  }
  auto origin = [&](size_t i) {
    mpt_read::Origin o;
    if (keyed) o.path_key = &keys[i];
    else o.loc = locs[i];
    return o;
  };
  const long bad = mpt_read::check_round(
      stubs.size(), [&](size_t i) { return rvs[i].body; },
      [&](size_t i) -> const Hash32& { return refs_[size_t(stubs[i])].hash; }, msgs_, lens_, digests_);
  if (bad >= 0) return mpt_read::hash_mismatch(kWho, origin(size_t(bad)));
  for (size_t i = 0; i < stubs.size(); ++i) {
    const bool storage_trie = nodes_[stubs[i]].storage_trie;
    if (std::string err = fill(stubs[i], rvs[i].body, keyed ? nullptr : &rvs[i], true, storage_trie); !err.empty())
      return mpt_read::node_error(kWho, origin(i), err);
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
    // fill_branch refused any branch read at depth 64 (naming its record), and a walk is
    // at its node's depth: a branch here is above the key's last nibble.
    ST_CHECK(k.pos < 64, "mpt commit: a walk reached a branch below a full key");
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

}  // namespace st::persist::mpt_commit_detail
