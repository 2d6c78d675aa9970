// trie: mutable MPT (see trie.h). Insert/remove are recursive over the key's nibbles and
// return (new id, changed); only changed nodes are marked dirty, so an update that does not
// change the contents (same value, delete of an absent key) leaves every hash cached.
#include "engine/mpt/trie.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "engine/mpt/node_codec.h"
#include "kernels/keccak256.h"

namespace st::mpt {

namespace {

size_t common_prefix(const uint8_t* a, size_t an, const uint8_t* b, size_t bn) {
  const size_t n = std::min(an, bn);
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

void to_nibbles(std::span<const uint8_t> key, std::vector<uint8_t>* out) {
  out->resize(key.size() * 2);
  for (size_t i = 0; i < key.size(); ++i) {
    (*out)[2 * i] = key[i] >> 4;
    (*out)[2 * i + 1] = key[i] & 15;
  }
}

bool same(const std::vector<uint8_t>& a, std::span<const uint8_t> b) {
  return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size()) == 0);
}

}  // namespace

NodeId Trie::alloc(NodeKind kind) {
  NodeId id;
  if (!free_nodes_.empty()) {
    id = free_nodes_.back();
    free_nodes_.pop_back();
    nodes_[id] = Node{};
  } else {
    id = NodeId(nodes_.size());
    nodes_.emplace_back();
  }
  Node& x = nodes_[id];
  x.kind = kind;
  x.dirty = true;
  if (kind == NodeKind::branch) {
    uint32_t k;
    if (!free_kids_.empty()) { k = free_kids_.back(); free_kids_.pop_back(); }
    else { k = uint32_t(kids_.size()); kids_.emplace_back(); }
    kids_[k].fill(kNoNode);
    x.child = k;
  }
  return id;
}

void Trie::release(NodeId id) {
  Node& x = nodes_[id];
  if (x.kind == NodeKind::branch) free_kids_.push_back(x.child);
  x.path = {};
  x.value = {};
  free_nodes_.push_back(id);
}

NodeId Trie::new_leaf(const uint8_t* nib, size_t n, std::span<const uint8_t> value) {
  const NodeId id = alloc(NodeKind::leaf);
  nodes_[id].path.assign(nib, nib + n);
  nodes_[id].value.assign(value.begin(), value.end());
  return id;
}

NodeId Trie::new_ext(const uint8_t* nib, size_t n, NodeId child) {
  const NodeId id = alloc(NodeKind::extension);
  nodes_[id].path.assign(nib, nib + n);
  nodes_[id].child = child;
  return id;
}

Trie::Result Trie::insert(NodeId n, const uint8_t* key, size_t klen, size_t pos, std::span<const uint8_t> value) {
  const uint8_t* rest = key + pos;
  const size_t rl = klen - pos;
  if (n == kNoNode) return {new_leaf(rest, rl, value), true};
  Node& x = nodes_[n];
  switch (x.kind) {
    case NodeKind::leaf: {
      const size_t c = common_prefix(x.path.data(), x.path.size(), rest, rl);
      if (c == x.path.size() && c == rl) {
        if (same(x.value, value)) return {n, false};
        x.value.assign(value.begin(), value.end());
        x.dirty = true;
        return {n, true};
      }
      const NodeId b = alloc(NodeKind::branch);
      Node& leaf = nodes_[n];
      if (c == leaf.path.size()) {
        nodes_[b].value = std::move(leaf.value);
        release(n);
      } else {
        const uint8_t nib = leaf.path[c];
        leaf.path.erase(leaf.path.begin(), leaf.path.begin() + long(c) + 1);
        leaf.dirty = true;
        kids(b)[nib] = n;
      }
      if (c == rl) nodes_[b].value.assign(value.begin(), value.end());
      else kids(b)[rest[c]] = new_leaf(rest + c + 1, rl - c - 1, value);
      return {c ? new_ext(rest, c, b) : b, true};
    }
    case NodeKind::extension: {
      const size_t c = common_prefix(x.path.data(), x.path.size(), rest, rl);
      if (c == x.path.size()) {
        const Result r = insert(x.child, key, klen, pos + c, value);
        if (!r.changed) return {n, false};
        Node& e = nodes_[n];
        e.child = r.id;
        e.dirty = true;
        return {n, true};
      }
      const NodeId b = alloc(NodeKind::branch);
      Node& e = nodes_[n];
      const uint8_t nib = e.path[c];
      if (c + 1 == e.path.size()) {
        kids(b)[nib] = e.child;
        release(n);
      } else {
        e.path.erase(e.path.begin(), e.path.begin() + long(c) + 1);
        e.dirty = true;
        kids(b)[nib] = n;
      }
      if (c == rl) nodes_[b].value.assign(value.begin(), value.end());
      else kids(b)[rest[c]] = new_leaf(rest + c + 1, rl - c - 1, value);
      return {c ? new_ext(rest, c, b) : b, true};  // rest[0..c) == the old prefix
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (same(x.value, value)) return {n, false};
        x.value.assign(value.begin(), value.end());
        x.dirty = true;
        return {n, true};
      }
      const uint8_t nib = rest[0];
      const Result r = insert(kids(n)[nib], key, klen, pos + 1, value);
      if (!r.changed) return {n, false};
      kids(n)[nib] = r.id;
      nodes_[n].dirty = true;
      return {n, true};
    }
  }
  return {n, false};
}

Trie::Result Trie::remove(NodeId n, const uint8_t* key, size_t klen, size_t pos) {
  if (n == kNoNode) return {n, false};
  const uint8_t* rest = key + pos;
  const size_t rl = klen - pos;
  Node& x = nodes_[n];
  switch (x.kind) {
    case NodeKind::leaf: {
      if (x.path.size() != rl || (rl && std::memcmp(x.path.data(), rest, rl) != 0)) return {n, false};
      release(n);
      return {kNoNode, true};
    }
    case NodeKind::extension: {
      const size_t pl = x.path.size();
      if (rl < pl || std::memcmp(x.path.data(), rest, pl) != 0) return {n, false};
      const Result r = remove(x.child, key, klen, pos + pl);
      if (!r.changed) return {n, false};
      assert(r.id != kNoNode);  // the child was a branch with >= 2 slots
      Node& e = nodes_[n];
      Node& c = nodes_[r.id];
      if (c.kind == NodeKind::branch) {
        e.child = r.id;
        e.dirty = true;
        return {n, true};
      }
      c.path.insert(c.path.begin(), e.path.begin(), e.path.end());  // merge short nodes
      c.dirty = true;
      release(n);
      return {r.id, true};
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (x.value.empty()) return {n, false};
        x.value.clear();
      } else {
        const Result r = remove(kids(n)[rest[0]], key, klen, pos + 1);
        if (!r.changed) return {n, false};
        kids(n)[rest[0]] = r.id;
      }
      Node& b = nodes_[n];
      b.dirty = true;
      int count = b.value.empty() ? 0 : 1, last = -1;
      for (int i = 0; i < 16; ++i)
        if (kids(n)[i] != kNoNode) { ++count; last = i; }
      if (count >= 2) return {n, true};
      assert(count == 1);
      if (last < 0) {  // value only: a leaf with an empty path
        const NodeId l = alloc(NodeKind::leaf);
        nodes_[l].value = std::move(nodes_[n].value);
        release(n);
        return {l, true};
      }
      const NodeId c = kids(n)[last];
      release(n);
      Node& cn = nodes_[c];
      const uint8_t nib = uint8_t(last);
      if (cn.kind == NodeKind::branch) return {new_ext(&nib, 1, c), true};
      cn.path.insert(cn.path.begin(), nib);
      cn.dirty = true;
      return {c, true};
    }
  }
  return {n, false};
}

void Trie::put(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  assert(key.size() <= kMaxKeyBytes);
  if (value.empty()) return erase(key);
  to_nibbles(key, &nib_scratch_);
  root_ = insert(root_, nib_scratch_.data(), nib_scratch_.size(), 0, value).id;
}

void Trie::erase(std::span<const uint8_t> key) {
  assert(key.size() <= kMaxKeyBytes);
  to_nibbles(key, &nib_scratch_);
  root_ = remove(root_, nib_scratch_.data(), nib_scratch_.size(), 0).id;
}

void Trie::apply(std::span<const Write> writes) {
  for (const Write& w : writes) put(w.key, w.value);
}

std::optional<std::vector<uint8_t>> Trie::get(std::span<const uint8_t> key) const {
  std::vector<uint8_t> nib;
  to_nibbles(key, &nib);
  size_t pos = 0;
  NodeId n = root_;
  while (n != kNoNode) {
    const Node& x = nodes_[n];
    const size_t rl = nib.size() - pos;
    switch (x.kind) {
      case NodeKind::leaf:
        if (x.path.size() == rl && std::equal(x.path.begin(), x.path.end(), nib.begin() + long(pos))) return x.value;
        return std::nullopt;
      case NodeKind::extension:
        if (rl < x.path.size() || !std::equal(x.path.begin(), x.path.end(), nib.begin() + long(pos))) return std::nullopt;
        pos += x.path.size();
        n = x.child;
        break;
      case NodeKind::branch:
        if (rl == 0) return x.value.empty() ? std::nullopt : std::optional(x.value);
        n = kids(n)[nib[pos++]];
        break;
    }
  }
  return std::nullopt;
}

void Trie::gather_refs(const Node& x, NodeRef* refs) const {
  const auto& k = kids_[x.child];
  for (int i = 0; i < 16; ++i) refs[i] = k[i] == kNoNode ? NodeRef{} : nodes_[k[i]].ref;
}

size_t Trie::encoded_size(const Node& x) const {
  switch (x.kind) {
    case NodeKind::leaf: return leaf_size(x.path.size(), x.value.data(), x.value.size());
    case NodeKind::extension: return extension_size(x.path.size(), nodes_[x.child].ref);
    case NodeKind::branch: {
      NodeRef refs[16];
      gather_refs(x, refs);
      return branch_size(refs, x.value.data(), x.value.size());
    }
  }
  return 0;
}

uint8_t* Trie::put_encoding(const Node& x, uint8_t* out) const {
  switch (x.kind) {
    case NodeKind::leaf: return put_leaf_nibbles(out, x.path.data(), x.path.size(), x.value.data(), x.value.size());
    case NodeKind::extension: return put_extension_nibbles(out, x.path.data(), x.path.size(), nodes_[x.child].ref);
    case NodeKind::branch: {
      NodeRef refs[16];
      gather_refs(x, refs);
      return put_branch(out, refs, x.value.data(), x.value.size());
    }
  }
  return out;
}

NodeView Trie::view(NodeId id) const {
  const Node& x = nodes_[id];
  NodeView v;
  v.kind = x.kind;
  v.path = x.path;
  v.value = x.value;
  if (x.kind == NodeKind::extension) v.child = x.child;
  if (x.kind == NodeKind::branch) v.children = kids_[x.child];
  else v.children.fill(kNoNode);
  return v;
}

void Trie::encode(NodeId id, std::vector<uint8_t>* out) const {
  const Node& x = nodes_[id];
  out->resize(encoded_size(x));
  put_encoding(x, out->data());
}

void Trie::commit_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture) {
  // 1. Collect the dirty nodes of every trie by depth (explicit stack, no recursion).
  struct Item { Trie* t; NodeId id; };
  std::vector<std::vector<Item>> by_depth;
  std::vector<std::pair<Item, uint32_t>> stack;
  for (Trie* t : tries)
    if (t->dirty()) stack.push_back({{t, t->root_}, 0});
  while (!stack.empty()) {
    auto [it, d] = stack.back();
    stack.pop_back();
    if (by_depth.size() <= d) by_depth.resize(d + 1);
    by_depth[d].push_back(it);
    const Node& x = it.t->nodes_[it.id];
    if (x.kind == NodeKind::extension) {
      if (it.t->nodes_[x.child].dirty) stack.push_back({{it.t, x.child}, d + 1});
    } else if (x.kind == NodeKind::branch) {
      for (NodeId c : it.t->kids_[x.child])
        if (c != kNoNode && it.t->nodes_[c].dirty) stack.push_back({{it.t, c}, d + 1});
    }
  }
  // 2. Deepest depth first: size, encode into one buffer, one keccak batch per depth.
  std::vector<size_t> off;
  std::vector<uint8_t> buf;
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<NodeRef*> targets;
  std::vector<uint8_t> digests;
  CommitStats st;
  for (size_t d = by_depth.size(); d-- > 0;) {
    const auto& level = by_depth[d];
    off.resize(level.size() + 1);
    size_t total = 0;
    for (size_t i = 0; i < level.size(); ++i) {
      off[i] = total;
      total += level[i].t->encoded_size(level[i].t->nodes_[level[i].id]);
    }
    off[level.size()] = total;
    buf.resize(total);
    msgs.clear();
    lens.clear();
    targets.clear();
    for (size_t i = 0; i < level.size(); ++i) {
      Node& x = level[i].t->nodes_[level[i].id];
      uint8_t* out = buf.data() + off[i];
      const size_t len = size_t(level[i].t->put_encoding(x, out) - out);
      assert(len == off[i + 1] - off[i]);
      x.dirty = false;
      const bool is_root = d == 0;  // the root is hashed even when short
      if (len < 32 && !is_root) {
        x.ref.len = uint8_t(len);
        std::memcpy(x.ref.bytes, out, len);
      } else if (len < 32) {
        // short root: keep the embedded ref (root_hash() hashes it), but count the call
        x.ref.len = uint8_t(len);
        std::memcpy(x.ref.bytes, out, len);
        ++st.keccak_calls;
        st.keccak_bytes += len;
        if (capture) {
          if (capture->offsets.empty()) capture->offsets.push_back(0);
          capture->bytes.insert(capture->bytes.end(), out, out + len);
          capture->offsets.push_back(capture->bytes.size());
        }
      } else {
        msgs.push_back(out);
        lens.push_back(len);
        targets.push_back(&x.ref);
        if (capture) {
          if (capture->offsets.empty()) capture->offsets.push_back(0);
          capture->bytes.insert(capture->bytes.end(), out, out + len);
          capture->offsets.push_back(capture->bytes.size());
        }
      }
    }
    st.nodes_rehashed += level.size();
    ++st.depths;
    if (msgs.empty()) continue;
    digests.resize(32 * msgs.size());
    st::kernels::keccak256_batch(msgs.data(), lens.data(), digests.data(), msgs.size());
    st.keccak_calls += msgs.size();
    for (size_t i = 0; i < msgs.size(); ++i) {
      targets[i]->len = 32;
      std::memcpy(targets[i]->bytes, digests.data() + 32 * i, 32);
      st.keccak_bytes += lens[i];
    }
  }
  if (stats) {
    stats->nodes_rehashed += st.nodes_rehashed;
    stats->keccak_calls += st.keccak_calls;
    stats->keccak_bytes += st.keccak_bytes;
    stats->depths = std::max(stats->depths, st.depths);
  }
}

Hash32 Trie::root_hash(CommitStats* stats, NodeCapture* capture) {
  Trie* self = this;
  commit_many(std::span<Trie* const>(&self, 1), stats, capture);
  if (root_ == kNoNode) return kEmptyRoot;
  return root_hash_of(nodes_[root_].ref);
}

}  // namespace st::mpt
