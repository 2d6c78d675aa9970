// trie_sorted_apply: apply_sorted, the breadth-first batch descent over strictly ascending
// keys (see trie.h): cursors top down, then fixed up bottom up; while it changes no
// structure above its frontiers it logs the dirty nodes with their heights for the commit
// (log_subtree), else the log is invalid and the commit walks.
#include "engine/mpt/trie_internal.h"

namespace st::mpt {

using trie_detail::common_prefix;
using trie_detail::same;
using trie_detail::to_nibbles;

// One position of the batch descent: node n (kNoNode = an empty slot) with the writes
// [lo, hi) below it, pos nibbles of their keys consumed above it.
struct Trie::BatchCursor {
  NodeId n;
  uint32_t lo, hi;
  uint32_t pos;
  uint32_t parent;       // index of the parent cursor one depth up (root: ~0u)
  uint32_t parent_kids;  // the parent branch's children block (kNoNode: the parent is an extension)
  uint8_t nib;           // the parent branch's slot
  bool descended;        // n is a branch / extension whose children are cursors one depth down
  bool changed;          // result: something below (or n itself) changed
  bool child_gone;       // branch: a child slot became empty (collapse check)
  uint16_t dirty_bits;   // branch: children that are now dirty (set in the bottom-up pass)
  uint16_t gone_bits;    // branch: children that are now empty
  NodeId result;         // result: the id now at this position (kNoNode = empty)
  NodeId ext_child;      // extension: its child's new id
  uint32_t height;       // result's height (leaf 0, else 1 + its tallest dirty child)
  bool leaf_result;      // not descended: result is a leaf (logged without reading its line again)
  bool has_value_before = false;   // descended branch: its has_value (a descended branch's value does not change)
  uint16_t kid_mask_before = 0;    // descended branch: its kid_mask before this batch
  uint16_t dirty_mask_before = 0;  // descended branch: its dirty_mask before this batch
  uint16_t visited_bits = 0;       // descended branch: the children with a cursor below
  bool dirty_before = false;       // descended branch: its dirty flag before this batch
  bool branch = false;             // descended into a branch (else an extension)
  // Descended branch: the bottom-up pass must write its node (the optimistic marks of the
  // descent -- dirty, dirty_mask |= visited_bits -- are not the outcome).
  bool needs_fixup() const {  // (branch cursors)
    return !changed || dirty_bits != visited_bits || gone_bits != 0 || (dirty_bits & ~kid_mask_before) != 0;
  }
};

// apply_sorted's per-thread buffers: the cursors of each depth, one key's nibbles.
struct Trie::BatchScratch {
  std::vector<std::vector<BatchCursor>> levels;
  std::vector<uint8_t> nibbles;
  std::vector<BatchCursor>& level_at(size_t d) {
    if (levels.size() <= d) levels.resize(d + 1);
    return levels[d];
  }
};

namespace {

constexpr size_t kBatchAhead = 8;
constexpr size_t kKeepCursorWrites = size_t(1) << 16;  // cursor lists of batches up to this size are kept

}  // namespace

namespace {

inline size_t key_nibbles(std::span<const Trie::Write> writes, size_t w) { return 2 * writes[w].key.size(); }
inline uint8_t write_nibble(std::span<const Trie::Write> writes, size_t w, size_t pos) {
  return st::kernels::key_nibble(writes[w].key.data(), pos);
}

}  // namespace

// The descent's prefetches for cursor i: the node line of the cursor 2 * kBatchAhead on,
// and from the node line of the one kBatchAhead on, its children ids or its second line.
inline void Trie::batch_prefetch_descent(const std::vector<BatchCursor>& level, size_t i) const {
  if (i + 2 * kBatchAhead < level.size() && level[i + 2 * kBatchAhead].n != kNoNode)
    __builtin_prefetch(&nodes_[level[i + 2 * kBatchAhead].n]);
  if (i + kBatchAhead < level.size() && level[i + kBatchAhead].n != kNoNode) {
    const Node& f = nodes_[level[i + kBatchAhead].n];  // its line 0 was requested above
    if (f.kind == NodeKind::branch) __builtin_prefetch(&kids_[f.child].id);
    else __builtin_prefetch(reinterpret_cast<const char*>(&f) + 64);  // line 1: the rest of the path, the value
  }
}

// Extension x at cursor c (index ci): descends (one cursor for its child in `next`) when
// every write below c follows its path; returns whether it did.
inline bool Trie::batch_descend_extension(BatchCursor& c, uint32_t ci, const Node& x, std::span<const Write> writes,
                                          std::vector<BatchCursor>& next) {
  // Every key of [lo, hi) goes below when the first and the last do (sorted keys).
  const size_t pl = x.bytes.path_size();
  const uint8_t* path = x.bytes.path_data();
  auto follows = [&](size_t w) {
    if (key_nibbles(writes, w) < c.pos + pl) return false;
    for (size_t j = 0; j < pl; ++j)
      if (write_nibble(writes, w, c.pos + j) != path[j]) return false;
    return true;
  };
  if (!follows(c.lo) || !follows(c.hi - 1)) return false;
  c.descended = true;
  next.push_back({x.child, c.lo, c.hi, uint32_t(c.pos + pl), ci, kNoNode, 0, false, false, false, 0, 0, x.child, kNoNode, 0, false});
  return true;
}

// Branch x at cursor c (index ci), no write ending here: one cursor in `next` per child
// slot the writes go to; the branch keeps its flags before the batch in c and is marked.
inline void Trie::batch_descend_branch(BatchCursor& c, uint32_t ci, const Node& x, std::span<const Write> writes,
                                       std::vector<BatchCursor>& next) {
  c.descended = true;
  const Kids& k = kids_[x.child];
  c.kid_mask_before = x.kid_mask;
  c.dirty_mask_before = dirty_kids(x);
  c.dirty_before = is_dirty(x);
  c.has_value_before = x.has_value;
  c.ext_child = x.child;  // (a branch cursor's ext_child: its children block, for the log)
  c.branch = true;
  uint16_t visited = 0;
  for (uint32_t w = c.lo; w < c.hi;) {
    const uint8_t nb = write_nibble(writes, w, c.pos);
    uint32_t e = w + 1;
    while (e < c.hi && write_nibble(writes, e, c.pos) == nb) ++e;
    next.push_back({k.id[nb], w, e, c.pos + 1, ci, x.child, nb, false, false, false, 0, 0, k.id[nb], kNoNode, 0, false});
    visited = uint16_t(visited | (1u << nb));
    w = e;
  }
  c.visited_bits = visited;
  // Marked dirty now, while its line is in cache, as if every visited child changed
  // (the usual outcome); the bottom-up pass writes the node again only when the
  // outcome differs (needs_fixup), restoring the flags from the *_before fields.
  Node& xm = nodes_[c.n];
  xm.epoch = epoch_;
  xm.dirty_mask = uint16_t(c.dirty_mask_before | visited);
}

// Leaf, diverging extension, empty slot, or a key ending at this branch: the writes below
// cursor c are applied one by one from here.
inline void Trie::batch_apply_writes(BatchCursor& c, std::span<const Write> writes, std::vector<uint8_t>& nibbles) {
  Result r{c.n, false};
  for (uint32_t w = c.lo; w < c.hi; ++w) {
    to_nibbles(writes[w].key, &nibbles);
    const Result q = writes[w].value.empty() ? remove(r.id, nibbles.data(), nibbles.size(), c.pos)
                                             : insert(r.id, nibbles.data(), nibbles.size(), c.pos, writes[w].value);
    r.id = q.id;
    r.changed |= q.changed;
  }
  c.result = r.id;
  c.changed = r.changed;
  c.leaf_result = r.id != kNoNode && nodes_[r.id].kind == NodeKind::leaf;  // its line was just written
}

// 1. Top down, one depth at a time: each cursor descends into its branch or extension, or
//    applies its writes there. Returns the deepest depth holding cursors.
size_t Trie::batch_descent(std::span<const Write> writes, BatchScratch& sc) {
  static_assert(sizeof(BatchCursor) <= 56);
  sc.level_at(0).clear();
  sc.level_at(0).push_back({root_, 0, uint32_t(writes.size()), 0, ~0u, kNoNode, 0, false, false, false, 0, 0, root_, kNoNode, 0, false});
  for (size_t depth = 0;; ++depth) {
    auto& next = sc.level_at(depth + 1);
    next.clear();
    auto& level = sc.levels[depth];
    for (size_t i = 0; i < level.size(); ++i) {
      batch_prefetch_descent(level, i);
      BatchCursor& c = level[i];
      if (c.n != kNoNode) {
        const Node& x = nodes_[c.n];
        if (x.kind == NodeKind::extension) {
          if (batch_descend_extension(c, uint32_t(i), x, writes, next)) continue;
        } else if (x.kind == NodeKind::branch && key_nibbles(writes, c.lo) > c.pos) {  // (a key ending here sorts first)
          batch_descend_branch(c, uint32_t(i), x, writes, next);
          continue;
        }
      }
      batch_apply_writes(c, writes, sc.nibbles);
    }
    if (next.empty()) return depth;
  }
}

// A descended cursor's outcome: its node as marked in the descent, or rewritten (masks,
// collapse, extension relink); logs it while the batch log stays valid.
inline void Trie::batch_finish_descended(BatchCursor& c, uint32_t ref_at, bool& logging) {
  if (c.branch && !c.needs_fixup()) {
    c.result = c.n;  // marked in the descent: dirty, dirty_mask = before | dirty_bits, kid_mask unchanged
  } else if (!c.branch) {
    c.result = relink_extension(c.n, c.ext_child).id;
    logging &= c.result == c.n;  // a merge moves nodes up: collect again at commit
  } else {
    Node& x = nodes_[c.n];
    x.epoch = epoch_;
    x.dirty_mask = uint16_t((c.dirty_mask_before | c.dirty_bits) & ~c.gone_bits);
    remask(x, uint16_t((x.kid_mask | c.dirty_bits) & ~c.gone_bits));
    c.result = c.child_gone ? collapse_branch(c.n).id : c.n;
    // A collapse may reuse the branch's id for the node that replaces it (release, then
    // alloc takes it back): the log stays valid only if c.n is still this branch.
    logging &= c.result == c.n && nodes_[c.n].kind == NodeKind::branch;
  }
  if (logging && c.result != kNoNode) {
    if (c.branch && !c.needs_fixup())  // from the cursor: the node line is not touched again
      dirty_log_.push_back({c.n, c.parent_kids, ref_at, c.has_value_before ? kNoNode : c.ext_child, uint16_t(c.height),
                            c.has_value_before ? uint16_t(0) : c.kid_mask_before});
    else
      log_node(c.result, c.parent_kids, ref_at, c.height);
  }
}

// Hands changed cursor c's result to its parent p: height, the extension's new child, or
// the branch slot's id and its dirty / gone bit.
inline void Trie::batch_hand_to_parent(const BatchCursor& c, BatchCursor& p) {
  p.changed = true;
  if (c.result != kNoNode) p.height = std::max(p.height, c.height + 1);
  if (c.parent_kids == kNoNode) {
    p.ext_child = c.result;
    return;
  }
  const uint16_t bit = uint16_t(1u << c.nib);
  Kids& k = kids_[c.parent_kids];
  if (c.result == kNoNode) {
    k.id[c.nib] = kNoNode;
    p.gone_bits |= bit;
    p.child_gone = true;
  } else {
    assert(is_dirty(nodes_[c.result]));
    if (c.result != c.n) k.id[c.nib] = c.result;
    p.dirty_bits |= bit;
  }
}

// Finishes cursor c of depth d (its children are done): undoes the descent's marks when
// nothing below changed, else settles its node, logs it and hands it to its parent.
inline void Trie::batch_finish_cursor(BatchScratch& sc, size_t d, BatchCursor& c, bool& logging) {
  if (!c.changed) {
    if (c.descended && c.branch) {  // nothing below changed: undo the marks
      nodes_[c.n].epoch = c.dirty_before ? epoch_ : uint16_t(0);
      nodes_[c.n].dirty_mask = c.dirty_mask_before;
    }
    return;
  }
  // Where this position's ref goes (DirtyRecord::nib): the parent extension, the root, or
  // its slot in the parent branch, at its rank under the parent's final kid_mask. The
  // parent's children are processed in nibble order, so every child below this one has
  // already added its bit to the parent's dirty_bits / gone_bits (the bits below are final).
  uint32_t ref_at = d == 0 ? kNoNode : sc.levels[d - 1][c.parent].n;
  if (c.parent_kids != kNoNode) {
    const BatchCursor& p = sc.levels[d - 1][c.parent];
    ref_at = slot_rank((p.kid_mask_before | p.dirty_bits) & ~uint32_t(p.gone_bits), c.nib);
  }
  if (c.descended) {
    batch_finish_descended(c, ref_at, logging);
  } else if (logging && c.result != kNoNode) {
    if (c.leaf_result) dirty_log_.push_back({c.result, c.parent_kids, ref_at, kNoNode, 0, 0});  // height 0
    else c.height = log_subtree(c.result, c.parent_kids, ref_at);
  }
  if (d == 0) root_ = c.result;
  else batch_hand_to_parent(c, sc.levels[d - 1][c.parent]);
}

void Trie::apply_sorted(std::span<const Write> writes) {
  if (writes.empty()) return;
  hashed_pending_ = false;
  thread_local BatchScratch sc;
  // Log the dirty nodes only when the batch starts from a clean trie (then the dirty
  // nodes afterwards are exactly the ones this batch changed).
  bool logging = !dirty();
  dirty_log_.clear();
#ifndef NDEBUG
  for (size_t i = 1; i < writes.size(); ++i) {
    const auto& a = writes[i - 1].key;
    const auto& b = writes[i].key;
    assert(std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end()));
  }
#endif
  const size_t depth = batch_descent(writes, sc);
  // 2. Bottom up: finish the descended nodes of each depth, then hand every changed result
  //    to its parent (the parent's depth is finished next). A changed result is always a
  //    dirty node (or empty), so the parent needs only its dirty-child bit and, when the id
  //    moved, the new id: this pass writes the lines of the changed branches and the moved
  //    child ids, nothing else (each node line prefetched ahead, for writing).
  for (size_t d = depth + 1; d-- > 0;) {
    auto& level = sc.levels[d];
    for (size_t i = 0; i < level.size(); ++i) {
      if (i + kBatchAhead < level.size()) {  // (its children are done: needs_fixup() is final)
        const BatchCursor& f = level[i + kBatchAhead];
        if (f.descended && (!f.branch || f.needs_fixup())) __builtin_prefetch(&nodes_[f.n], 1);
      }
      batch_finish_cursor(sc, d, level[i], logging);
    }
  }
  dirty_log_valid_ = logging;
  if (writes.size() > kKeepCursorWrites) sc.levels = {};  // a bulk load's cursors are not kept
}

uint32_t Trie::log_subtree(NodeId n, uint32_t parent_kids, uint32_t slot) {
  const Node& x = nodes_[n];
  assert(is_dirty(x));
  uint32_t h = 0;
  if (x.kind == NodeKind::extension) {
    if (is_dirty(nodes_[x.child])) h = 1 + log_subtree(x.child, kNoNode, n);
  } else if (x.kind == NodeKind::branch) {
    for (uint32_t m = dirty_kids(x); m; m &= m - 1) {
      const uint32_t b = uint32_t(__builtin_ctz(m));
      h = std::max(h, 1 + log_subtree(kids_[x.child].id[b], x.child, slot_rank(x.kid_mask, b)));
    }
  }
  log_node(n, parent_kids, slot, h);
  return h;
}

}  // namespace st::mpt
