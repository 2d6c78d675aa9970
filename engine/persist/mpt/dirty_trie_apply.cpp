// mpt/dirty_trie_apply: the apply pass of a block commit (dirty_trie.h): each trie's sorted
// ops applied in canonical form, new nodes built copy-on-write over the unchanged ones; a
// pass that meets an unread sibling is dropped and redone once the sibling is read.
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

}  // namespace st::persist::mpt_commit_detail
