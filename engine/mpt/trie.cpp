// trie: mutable MPT (see trie.h). Insert/remove are recursive over the key's nibbles and
// return (new id, changed); only changed nodes are marked dirty, so an update that does not
// change the contents (same value, delete of an absent key) leaves every hash cached.
#include "engine/mpt/trie.h"

#include "kernels/hex_prefix.h"

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
  while (i + 8 <= n) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) break;
    i += 8;
  }
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

template <class A>
bool same(const A& a, std::span<const uint8_t> b) {
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
    Kids& kb = kids_[k];
    kb.id.fill(kNoNode);
    kb.dirty_mask = 0;
    for (NodeRef& r : kb.ref) r.len = 0;
    x.child = k;
  }
  return id;
}

void Trie::set_kid(NodeId branch, unsigned nib, NodeId child) {
  Kids& k = kids(branch);
  k.id[nib] = child;
  const uint32_t bit = 1u << nib;
  if (child == kNoNode) {
    k.ref[nib].len = 0;
    k.dirty_mask &= ~bit;
  } else if (nodes_[child].dirty) {
    k.dirty_mask |= bit;
  } else {
    k.ref[nib] = nodes_[child].ref;
    k.dirty_mask &= ~bit;
  }
}

void Trie::release(NodeId id) {
  Node& x = nodes_[id];
  if (x.kind == NodeKind::branch) free_kids_.push_back(x.child);
  x.path.reset();
  x.value.reset();
  free_nodes_.push_back(id);
}

NodeId Trie::new_leaf(const uint8_t* nib, size_t n, std::span<const uint8_t> value) {
  const NodeId id = alloc(NodeKind::leaf);
  nodes_[id].path.assign(nib, n);
  nodes_[id].value.assign(value);
  return id;
}

NodeId Trie::new_ext(const uint8_t* nib, size_t n, NodeId child) {
  const NodeId id = alloc(NodeKind::extension);
  nodes_[id].path.assign(nib, n);
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
        x.value.assign(value);
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
        leaf.path.erase_prefix(c + 1);
        leaf.dirty = true;
        set_kid(b, nib, n);
      }
      if (c == rl) nodes_[b].value.assign(value);
      else set_kid(b, rest[c], new_leaf(rest + c + 1, rl - c - 1, value));
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
        set_kid(b, nib, e.child);
        release(n);
      } else {
        e.path.erase_prefix(c + 1);
        e.dirty = true;
        set_kid(b, nib, n);
      }
      if (c == rl) nodes_[b].value.assign(value);
      else set_kid(b, rest[c], new_leaf(rest + c + 1, rl - c - 1, value));
      return {c ? new_ext(rest, c, b) : b, true};  // rest[0..c) == the old prefix
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (same(x.value, value)) return {n, false};
        x.value.assign(value);
        x.dirty = true;
        return {n, true};
      }
      const uint8_t nib = rest[0];
      const Result r = insert(kids(n).id[nib], key, klen, pos + 1, value);
      if (!r.changed) return {n, false};
      set_kid(n, nib, r.id);
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
      c.path.prepend(e.path.data(), e.path.size());  // merge short nodes
      c.dirty = true;
      release(n);
      return {r.id, true};
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (x.value.empty()) return {n, false};
        x.value.clear();
      } else {
        const Result r = remove(kids(n).id[rest[0]], key, klen, pos + 1);
        if (!r.changed) return {n, false};
        set_kid(n, rest[0], r.id);
      }
      Node& b = nodes_[n];
      b.dirty = true;
      int count = b.value.empty() ? 0 : 1, last = -1;
      for (int i = 0; i < 16; ++i)
        if (kids(n).id[i] != kNoNode) { ++count; last = i; }
      if (count >= 2) return {n, true};
      assert(count == 1);
      if (last < 0) {  // value only: a leaf with an empty path
        const NodeId l = alloc(NodeKind::leaf);
        nodes_[l].value = std::move(nodes_[n].value);
        release(n);
        return {l, true};
      }
      const NodeId c = kids(n).id[last];
      release(n);
      Node& cn = nodes_[c];
      const uint8_t nib = uint8_t(last);
      if (cn.kind == NodeKind::branch) return {new_ext(&nib, 1, c), true};
      cn.path.prepend(&nib, 1);
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
        if (x.path.size() == rl && std::equal(x.path.begin(), x.path.end(), nib.begin() + long(pos))) return x.value.to_vector();
        return std::nullopt;
      case NodeKind::extension:
        if (rl < x.path.size() || !std::equal(x.path.begin(), x.path.end(), nib.begin() + long(pos))) return std::nullopt;
        pos += x.path.size();
        n = x.child;
        break;
      case NodeKind::branch:
        if (rl == 0) return x.value.empty() ? std::nullopt : std::optional(x.value.to_vector());
        n = kids(n).id[nib[pos++]];
        break;
    }
  }
  return std::nullopt;
}

void Trie::prefetch_paths(std::span<const std::span<const uint8_t>> keys) const {
  assert(keys.size() <= kWarmGroup);
  struct Cursor {
    NodeId n;           // node to visit next, or (after a branch step) its parent's child block
    uint32_t pos;       // nibble index into the key
    uint32_t key;       // index into keys
    bool via_block;     // n is a child block; the child is its id[nibble pos - 1]
  };
  Cursor cur[kWarmGroup];
  size_t active = 0;
  if (root_ != kNoNode)
    for (size_t i = 0; i < keys.size(); ++i) cur[active++] = {root_, 0, uint32_t(i), false};
  while (active) {
    // 1. request every cursor's node lines
    for (size_t a = 0; a < active; ++a) {
      const char* p = reinterpret_cast<const char*>(&nodes_[cur[a].n]);
      for (size_t line = 0; line < sizeof(Node); line += 64) __builtin_prefetch(p + line);
    }
    // 2. read each node, step past it; for a branch request the child-id line
    size_t kept = 0;
    for (size_t a = 0; a < active; ++a) {
      Cursor c = cur[a];
      const std::span<const uint8_t> key = keys[c.key];
      const Node& x = nodes_[c.n];
      if (x.kind == NodeKind::leaf) continue;
      if (x.kind == NodeKind::extension) {
        c.pos += uint32_t(x.path.size());
        c.n = x.child;
      } else {
        if (c.pos >= 2 * key.size()) continue;
        __builtin_prefetch(&kids_[x.child].id[st::kernels::key_nibble(key.data(), c.pos)]);
        c.n = x.child;
        c.via_block = true;
        ++c.pos;
      }
      cur[kept++] = c;
    }
    // 3. resolve the branch steps (their id lines were requested in 2)
    active = 0;
    for (size_t a = 0; a < kept; ++a) {
      Cursor c = cur[a];
      if (c.via_block) {
        c.n = kids_[c.n].id[st::kernels::key_nibble(keys[c.key].data(), c.pos - 1)];
        c.via_block = false;
      }
      if (c.n != kNoNode && c.pos <= 2 * keys[c.key].size()) cur[active++] = c;
    }
  }
}

size_t Trie::encoded_bound(const Node& x) const {
  if (x.kind != NodeKind::branch) return encoded_size(x);
  return kBranchMaxFixed + (x.value.empty() ? 0 : st::kernels::rlp_string_size(x.value.data(), x.value.size()));
}

size_t Trie::encoded_size(const Node& x) const {
  switch (x.kind) {
    case NodeKind::leaf: return leaf_size(x.path.size(), x.value.data(), x.value.size());
    case NodeKind::extension: return extension_size(x.path.size(), nodes_[x.child].ref);
    case NodeKind::branch: {
      const Kids& k = kids_[x.child];
      assert(k.dirty_mask == 0);  // children committed first
      return branch_size(k.ref, x.value.data(), x.value.size());
    }
  }
  return 0;
}

uint8_t* Trie::put_encoding(const Node& x, uint8_t* out) const {
  switch (x.kind) {
    case NodeKind::leaf: return put_leaf_nibbles(out, x.path.data(), x.path.size(), x.value.data(), x.value.size());
    case NodeKind::extension: return put_extension_nibbles(out, x.path.data(), x.path.size(), nodes_[x.child].ref);
    case NodeKind::branch: return put_branch(out, kids_[x.child].ref, x.value.data(), x.value.size());
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
  if (x.kind == NodeKind::branch) v.children = kids_[x.child].id;
  else v.children.fill(kNoNode);
  return v;
}

void Trie::encode(NodeId id, std::vector<uint8_t>* out) const {
  const Node& x = nodes_[id];
  out->resize(encoded_size(x));
  put_encoding(x, out->data());
}

namespace {

struct CommitItem {
  void* t;  // Trie*
  NodeId id, parent;
  uint32_t nib;
};

// Per-thread buffers of commit_many, reused across calls (no page faults per block).
struct CommitScratch {
  std::vector<std::vector<CommitItem>> by_depth;
  std::vector<size_t> off;
  std::vector<uint8_t> buf;
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<NodeRef*> targets;
  std::vector<uint8_t> digests;
};

void capture_node(NodeCapture* capture, const uint8_t* p, size_t len) {
  if (!capture) return;
  if (capture->offsets.empty()) capture->offsets.push_back(0);
  capture->bytes.insert(capture->bytes.end(), p, p + len);
  capture->offsets.push_back(capture->bytes.size());
}

constexpr size_t kPrefetchAhead = 8;

}  // namespace

void Trie::commit_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture) {
  thread_local CommitScratch sc;
  // 1. Collect the dirty nodes of every trie, one depth at a time (breadth first, so the
  //    nodes of the next depth can be prefetched while this one is scanned).
  size_t depths = 0;
  auto level_at = [&](size_t d) -> std::vector<CommitItem>& {
    if (sc.by_depth.size() <= d) sc.by_depth.resize(d + 1);
    return sc.by_depth[d];
  };
  {
    auto& l0 = level_at(0);
    l0.clear();
    for (Trie* t : tries)
      if (t->dirty()) l0.push_back({t, t->root_, kNoNode, 0});
    depths = l0.empty() ? 0 : 1;
  }
  for (size_t d = 0; d < depths; ++d) {
    auto& next = level_at(d + 1);
    next.clear();
    const auto& level = sc.by_depth[d];
    for (size_t i = 0; i < level.size(); ++i) {
      if (i + 2 * kPrefetchAhead < level.size()) {
        const CommitItem& f = level[i + 2 * kPrefetchAhead];
        __builtin_prefetch(&static_cast<Trie*>(f.t)->nodes_[f.id]);
      }
      if (i + kPrefetchAhead < level.size()) {  // its node line was prefetched above
        const CommitItem& f = level[i + kPrefetchAhead];
        const Trie* ft = static_cast<const Trie*>(f.t);
        const Node& fx = ft->nodes_[f.id];
        if (fx.kind == NodeKind::branch) {
          const char* kb = reinterpret_cast<const char*>(&ft->kids_[fx.child]);
          for (size_t line = 0; line < sizeof(Kids); line += 64) __builtin_prefetch(kb + line);
        } else if (fx.kind == NodeKind::leaf) {
          __builtin_prefetch(fx.path.data());
          __builtin_prefetch(fx.value.data());
        }
      }
      const CommitItem& it = level[i];
      Trie* t = static_cast<Trie*>(it.t);
      const Node& x = t->nodes_[it.id];
      if (x.kind == NodeKind::extension) {
        if (t->nodes_[x.child].dirty) next.push_back({t, x.child, kNoNode, 0});
      } else if (x.kind == NodeKind::branch) {
        const Kids& k = t->kids_[x.child];
        for (uint32_t m = k.dirty_mask; m; m &= m - 1) {
          const uint32_t nib = uint32_t(__builtin_ctz(m));
          next.push_back({t, k.id[nib], it.id, nib});
        }
      }
    }
    if (!next.empty()) depths = d + 2;
  }
  // 2. Deepest depth first: size, encode into one buffer, one keccak batch per depth, then
  //    publish the refs into the parents' child blocks.
  CommitStats st;
  for (size_t d = depths; d-- > 0;) {
    const auto& level = sc.by_depth[d];
    sc.off.resize(level.size() + 1);
    sc.msgs.clear();
    sc.lens.clear();
    sc.targets.clear();
    size_t total = 0;
    for (size_t i = 0; i < level.size(); ++i) {
      // two stages, as in step 1: the node line 2*ahead, then (from that line) the child
      // block or the leaf's path and value 1*ahead (step 1's prefetches of a large block
      // are evicted by the time its depth is encoded)
      if (i + 2 * kPrefetchAhead < level.size()) {
        const CommitItem& f = level[i + 2 * kPrefetchAhead];
        __builtin_prefetch(&static_cast<const Trie*>(f.t)->nodes_[f.id]);
      }
      if (i + kPrefetchAhead < level.size()) {
        const CommitItem& f = level[i + kPrefetchAhead];
        const Trie* ft = static_cast<const Trie*>(f.t);
        const Node& fx = ft->nodes_[f.id];
        if (fx.kind == NodeKind::branch) {
          const uintptr_t refs_begin = reinterpret_cast<uintptr_t>(&ft->kids_[fx.child].ref[0]);
          for (uintptr_t line = refs_begin & ~uintptr_t(63); line < refs_begin + sizeof(NodeRef) * 16; line += 64)
            __builtin_prefetch(reinterpret_cast<const void*>(line));
        } else if (fx.kind == NodeKind::leaf) {
          __builtin_prefetch(fx.path.data());
          __builtin_prefetch(fx.value.data());
        }
      }
      Trie* t = static_cast<Trie*>(level[i].t);
      Node& x = t->nodes_[level[i].id];
      // one pass: bound, write, record (offsets, not pointers: the buffer may grow)
      const size_t need = total + t->encoded_bound(x);
      if (sc.buf.size() < need) sc.buf.resize(std::max(need, 2 * sc.buf.size()));
      uint8_t* out = sc.buf.data() + total;
      uint8_t* end;
      if (x.kind == NodeKind::branch) {  // one pass over the 16 refs; header written last, in front
        out = put_branch_tail(out, t->kids_[x.child].ref, x.value.data(), x.value.size(), &end);
      } else {
        end = t->put_encoding(x, out);
      }
      const size_t len = size_t(end - out);
      sc.off[i] = size_t(out - sc.buf.data());
      total = size_t(end - sc.buf.data());
      x.dirty = false;
      if (len < 32) {
        x.ref.len = uint8_t(len);
        std::memcpy(x.ref.bytes, out, len);
        if (d == 0) {  // a short root stays embedded in its ref; root_hash() hashes it
          ++st.keccak_calls;
          st.keccak_bytes += len;
          capture_node(capture, out, len);
        }
      } else {
        sc.lens.push_back(len);
        sc.targets.push_back(&x.ref);
        sc.msgs.push_back(reinterpret_cast<const uint8_t*>(sc.off[i]));  // offset for now
        capture_node(capture, out, len);
      }
    }
    sc.off[level.size()] = total;
    for (auto& m : sc.msgs) m = sc.buf.data() + reinterpret_cast<size_t>(m);
    st.nodes_rehashed += level.size();
    ++st.depths;
    if (!sc.msgs.empty()) {
      sc.digests.resize(32 * sc.msgs.size());
      st::kernels::keccak256_batch(sc.msgs.data(), sc.lens.data(), sc.digests.data(), sc.msgs.size());
      st.keccak_calls += sc.msgs.size();
      for (size_t i = 0; i < sc.msgs.size(); ++i) {
        sc.targets[i]->len = 32;
        std::memcpy(sc.targets[i]->bytes, sc.digests.data() + 32 * i, 32);
        st.keccak_bytes += sc.lens[i];
      }
    }
    for (const CommitItem& it : level) {
      if (it.parent == kNoNode) continue;
      Trie* t = static_cast<Trie*>(it.t);
      Kids& k = t->kids(it.parent);
      k.ref[it.nib] = t->nodes_[it.id].ref;
      k.dirty_mask &= ~(1u << it.nib);
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
