// trie_internal: what the trie's source files share (trie.cpp, trie_edits.cpp,
// trie_sorted_apply.cpp, trie_commit.cpp): nibble helpers, and the node store and node
// encoding as inline members, so the hot paths of every file (edits, the sorted apply's
// descent, the commit's encoder) inline them as when they were one file. Included only by
// those files. Invariants: those of trie.h (kid_mask <-> dense slots; dirty by epoch).
#pragma once

#include "engine/mpt/trie.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

#include "engine/mpt/node_codec.h"
#include "kernels/hex_prefix.h"
#include "kernels/support/check.h"

namespace st::mpt {

namespace trie_detail {

inline size_t common_prefix(const uint8_t* a, size_t an, const uint8_t* b, size_t bn) {
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

inline void to_nibbles(std::span<const uint8_t> key, std::vector<uint8_t>* out) {
  out->resize(key.size() * 2);
  // local pointers: byte stores through (*out)[i] may alias the vector's own pointer, which
  // made the compiler reload it per byte (no vectorization)
  const uint8_t* k = key.data();
  uint8_t* o = out->data();
  for (size_t i = 0, n = key.size(); i < n; ++i) {
    o[2 * i] = k[i] >> 4;
    o[2 * i + 1] = k[i] & 15;
  }
}

template <class A>
inline bool same(const A& a, std::span<const uint8_t> b) {
  return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size()) == 0);
}

}  // namespace trie_detail

inline NodeId Trie::alloc(NodeKind kind) {
  NodeId id;
  if (!free_nodes_.empty()) {
    id = free_nodes_.back();
    free_nodes_.pop_back();
    nodes_[id] = Node{};
  } else {
    id = NodeId(nodes_.size());
    nodes_.emplace_back();
  }
  if (tracks_locs_) track_alloc(id);
  Node& x = nodes_[id];
  x.kind = kind;
  x.epoch = epoch_;
  x.dirty_mask = 0;
  if (kind == NodeKind::branch) {
    x.dirty_mask = 0;
    x.kid_mask = 0;
    x.child = alloc_kids();
  }
  return id;
}

// A children block, every id empty (kNoNode), no embedded slot.
inline uint32_t Trie::alloc_kids() {
  uint32_t k;
  if (!free_kids_.empty()) { k = free_kids_.back(); free_kids_.pop_back(); }
  else { k = uint32_t(kids_.size()); kids_.emplace_back(); kids_embedded_.push_back(0); }
  kids_[k].id.fill(kNoNode);
  if (any_embedded_) kids_embedded_[k] = 0;
  return k;
}

inline void Trie::set_kid(NodeId branch, unsigned nib, NodeId child, const NodeRef& clean_ref) {
  Node& b = nodes_[branch];
  mark_dirty(b);  // (every caller marks the branch dirty; first, so its dirty_mask is not stale)
  Kids& k = kids_[b.child];
  k.id[nib] = child;
  const uint16_t bit = uint16_t(1u << nib);
  if (child == kNoNode) {
    b.dirty_mask &= uint16_t(~bit);
    remask(b, uint16_t(b.kid_mask & ~bit));
    return;
  }
  if (is_dirty(nodes_[child])) {
    b.dirty_mask |= bit;
    remask(b, uint16_t(b.kid_mask | bit));
  } else {
    assert(!clean_ref.empty());
    b.dirty_mask &= uint16_t(~bit);
    remask(b, uint16_t(b.kid_mask | bit));
    store_kid_ref(b.child, slot_rank(b.kid_mask, nib), clean_ref);
  }
}

inline void Trie::remask(Node& b, uint16_t m) {
  const uint16_t old = b.kid_mask;
  if (m == old) return;
  assert(is_dirty(b));  // (its dirty_mask is current)
  b.kid_mask = m;
  Kids& k = kids_[b.child];
  const uint32_t keep = old & m & ~uint32_t(b.dirty_mask);
  const uint32_t emb_old = any_embedded_ ? kids_embedded_[b.child] : 0;
  uint32_t emb_new = 0;
  // Kept children keep their order, so each moves by the same amount as the number of
  // children added / removed below it: moving up goes from the top down, moving down from
  // the bottom up (memmove-safe in place).
  unsigned moves_from[16], moves_to[16], n = 0;
  for (uint32_t x = keep; x; x &= x - 1) {
    const unsigned nib = unsigned(std::countr_zero(x));
    moves_from[n] = slot_rank(old, nib);
    moves_to[n] = slot_rank(m, nib);
    if (emb_old >> moves_from[n] & 1) emb_new |= 1u << moves_to[n];
    ++n;
  }
  for (unsigned i = 0; i < n; ++i)  // down-moves, bottom up
    if (moves_to[i] < moves_from[i]) std::memcpy(k.slot[moves_to[i]], k.slot[moves_from[i]], 32);
  for (unsigned i = n; i-- > 0;)  // up-moves, top down
    if (moves_to[i] > moves_from[i]) std::memcpy(k.slot[moves_to[i]], k.slot[moves_from[i]], 32);
  if (any_embedded_) kids_embedded_[b.child] = uint16_t(emb_new);
}

inline NodeRef Trie::kid_ref(const Node& branch, unsigned nib) const {
  NodeRef r;
  if (!(branch.kid_mask >> nib & 1)) return r;
  const unsigned s = slot_rank(branch.kid_mask, nib);
  const uint8_t* slot = kids_[branch.child].slot[s];
  r.len = (any_embedded_ && (kids_embedded_[branch.child] >> s & 1)) ? slot[31] : 32;
  std::memcpy(r.bytes, slot, r.len);
  return r;
}

inline void Trie::release(NodeId id) {
  if (tracks_locs_ && locs_[id] != kNoLocator) released_locs_.push_back(locs_[id]);
  Node& x = nodes_[id];
  if (x.kind == NodeKind::branch) free_kids_.push_back(x.child);
  x.bytes.reset();
  free_nodes_.push_back(id);
}

inline NodeId Trie::new_leaf(const uint8_t* nib, size_t n, std::span<const uint8_t> value) {
  const NodeId id = alloc(NodeKind::leaf);
  nodes_[id].bytes.set_path(nib, n);
  nodes_[id].bytes.set_value(value);
  return id;
}

inline NodeId Trie::new_ext(const uint8_t* nib, size_t n, NodeId child) {
  const NodeId id = alloc(NodeKind::extension);
  nodes_[id].bytes.set_path(nib, n);
  nodes_[id].child = child;
  return id;
}

inline size_t Trie::encoded_bound(const Node& x) const {
  if (x.kind != NodeKind::branch) return encoded_size(x);
  assert(x.has_value == (x.bytes.value_size() != 0));
  return kBranchMaxFixed + (!x.has_value ? 0 : st::kernels::rlp_string_size(x.bytes.value_data(), x.bytes.value_size()));
}

inline size_t Trie::encoded_size(const Node& x) const {
  switch (x.kind) {
    case NodeKind::leaf: return leaf_size(x.bytes.path_size(), x.bytes.value_data(), x.bytes.value_size());
    case NodeKind::extension: return extension_size(x.bytes.path_size(), ext_child_ref(x));
    case NodeKind::branch: {
      assert(dirty_kids(x) == 0);  // children committed first
      NodeRef refs[16];
      for (unsigned i = 0; i < 16; ++i) refs[i] = kid_ref(x, i);
      return branch_size(refs, x.bytes.value_data(), x.bytes.value_size());
    }
    case NodeKind::stub: break;
  }
  ST_CHECK(false, "mpt trie: an unread node (stub) was encoded");
  return 0;
}

inline uint8_t* Trie::put_encoding(const Node& x, uint8_t* out) const {
  switch (x.kind) {
    case NodeKind::leaf:
      return put_leaf_nibbles(out, x.bytes.path_data(), x.bytes.path_size(), x.bytes.value_data(), x.bytes.value_size());
    case NodeKind::extension: return put_extension_nibbles(out, x.bytes.path_data(), x.bytes.path_size(), ext_child_ref(x));
    case NodeKind::branch: {
      NodeRef refs[16];
      for (unsigned i = 0; i < 16; ++i) refs[i] = kid_ref(x, i);
      return put_branch(out, refs, x.bytes.value_data(), x.bytes.value_size());
    }
    case NodeKind::stub: break;
  }
  ST_CHECK(false, "mpt trie: an unread node (stub) was encoded");
  return out;
}

}  // namespace st::mpt
