// trie: mutable MPT (see trie.h). Insert/remove are recursive over the key's nibbles and
// return (new id, changed); only changed nodes are marked dirty, so an update that does not
// change the contents (same value, delete of an absent key) leaves every hash cached.
#include "engine/mpt/trie.h"

#include "kernels/hex_prefix.h"

#include <algorithm>
#include <bit>
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
  // local pointers: byte stores through (*out)[i] may alias the vector's own pointer, which
  // made the compiler reload it per byte (no vectorization)
  const uint8_t* k = key.data();
  uint8_t* o = out->data();
  for (size_t i = 0, n = key.size(); i < n; ++i) {
    o[2 * i] = k[i] >> 4;
    o[2 * i + 1] = k[i] & 15;
  }
}

// Branch encoding from a children block's dense slots (present children in nibble order;
// embedded bits by slot): a present child writes 0xa0 and its 32 bytes, an absent one 0x80.
// Without embedded refs (secure tries) no branch depends on the fill pattern (the lower
// levels' patterns are random: a mispredicted branch per slot cost more than the copies): a
// full branch is 16 straight copies; otherwise one step per present child, whose gap of
// absent nibbles before it is written as 16 bytes of 0x80 and then stepped over. The last
// 0x80 run may pass the encoding's end by up to 15 bytes but ends at most at out + 9 + 32c
// + 32 <= out + 521 (c <= 15 present children), inside kBranchMaxFixed = 538. The payload
// is written at out + 9 and the list header right in front of it; returns the first byte
// and sets *end one past the last. Same bytes as put_branch over the slots' refs; writes
// within out[0, kBranchMaxFixed + rlp_string_size(value)).
inline uint8_t* put_branch_slots(uint8_t* out, const uint8_t (*slots)[32], uint32_t present, uint32_t embedded,
                                 const uint8_t* value, size_t value_len, uint8_t** end) {
  static constexpr uint64_t kAbsent8 = 0x8080808080808080ull;
  uint8_t* const body = out + 9;
  uint8_t* p = body;
  if (embedded == 0 && present == 0xffff) {
    for (uint32_t s = 0; s < 16; ++s, p += 33) {
      *p = 0xa0;
      std::memcpy(p + 1, slots[s], 32);
    }
  } else if (embedded == 0) {
    unsigned next = 0;  // the first nibble not written yet
    for (uint32_t m = present, s = 0; m; m &= m - 1, ++s) {
      const unsigned i = unsigned(__builtin_ctz(m));
      std::memcpy(p, &kAbsent8, 8);  // nibbles next .. i - 1 (at most 15) are absent
      std::memcpy(p + 8, &kAbsent8, 8);
      p += i - next;
      *p = 0xa0;
      std::memcpy(p + 1, slots[s], 32);
      p += 33;
      next = i + 1;
    }
    std::memcpy(p, &kAbsent8, 8);
    std::memcpy(p + 8, &kAbsent8, 8);
    p += 16 - next;
  } else {
    uint32_t s = 0;  // the next dense slot
    for (uint32_t i = 0; i < 16; ++i) {
      if (!((present >> i) & 1)) {
        *p++ = 0x80;
        continue;
      }
      if ((embedded >> s) & 1) {
        const size_t len = slots[s][31];
        std::memcpy(p, slots[s], len);
        p += len;
      } else {
        *p = 0xa0;
        std::memcpy(p + 1, slots[s], 32);
        p += 33;
      }
      ++s;
    }
  }
  return finish_branch(body, p, value, value_len, end);
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
  x.epoch = epoch_;
  x.dirty_mask = 0;
  if (kind == NodeKind::branch) {
    uint32_t k;
    if (!free_kids_.empty()) { k = free_kids_.back(); free_kids_.pop_back(); }
    else { k = uint32_t(kids_.size()); kids_.emplace_back(); kids_embedded_.push_back(0); }
    kids_[k].id.fill(kNoNode);
    if (any_embedded_) kids_embedded_[k] = 0;
    x.dirty_mask = 0;
    x.kid_mask = 0;
    x.child = k;
  }
  return id;
}

void Trie::set_kid(NodeId branch, unsigned nib, NodeId child, const NodeRef& clean_ref) {
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

void Trie::remask(Node& b, uint16_t m) {
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

NodeRef Trie::kid_ref(const Node& branch, unsigned nib) const {
  NodeRef r;
  if (!(branch.kid_mask >> nib & 1)) return r;
  const unsigned s = slot_rank(branch.kid_mask, nib);
  const uint8_t* slot = kids_[branch.child].slot[s];
  r.len = (any_embedded_ && (kids_embedded_[branch.child] >> s & 1)) ? slot[31] : 32;
  std::memcpy(r.bytes, slot, r.len);
  return r;
}

void Trie::release(NodeId id) {
  Node& x = nodes_[id];
  if (x.kind == NodeKind::branch) free_kids_.push_back(x.child);
  x.bytes.reset();
  free_nodes_.push_back(id);
}

NodeId Trie::new_leaf(const uint8_t* nib, size_t n, std::span<const uint8_t> value) {
  const NodeId id = alloc(NodeKind::leaf);
  nodes_[id].bytes.set_path(nib, n);
  nodes_[id].bytes.set_value(value);
  return id;
}

NodeId Trie::new_ext(const uint8_t* nib, size_t n, NodeId child) {
  const NodeId id = alloc(NodeKind::extension);
  nodes_[id].bytes.set_path(nib, n);
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
      const size_t c = common_prefix(x.bytes.path_data(), x.bytes.path_size(), rest, rl);
      if (c == x.bytes.path_size() && c == rl) {
        if (same(x.bytes.value(), value)) return {n, false};
        x.bytes.set_value(value);
        mark_dirty(x);
        return {n, true};
      }
      const NodeId b = alloc(NodeKind::branch);
      Node& leaf = nodes_[n];
      if (c == leaf.bytes.path_size()) {
        set_branch_value(nodes_[b], leaf.bytes.value());
        release(n);
      } else {
        const uint8_t nib = leaf.bytes.path()[c];
        leaf.bytes.erase_path_prefix(c + 1);
        mark_dirty(leaf);
        set_kid(b, nib, n);
      }
      if (c == rl) set_branch_value(nodes_[b], value);
      else set_kid(b, rest[c], new_leaf(rest + c + 1, rl - c - 1, value));
      return {c ? new_ext(rest, c, b) : b, true};
    }
    case NodeKind::extension: {
      const size_t c = common_prefix(x.bytes.path_data(), x.bytes.path_size(), rest, rl);
      if (c == x.bytes.path_size()) {
        const Result r = insert(x.child, key, klen, pos + c, value);
        if (!r.changed) return {n, false};
        Node& e = nodes_[n];
        e.child = r.id;
        mark_dirty(e);
        return {n, true};
      }
      const NodeId b = alloc(NodeKind::branch);
      Node& e = nodes_[n];
      const uint8_t nib = e.bytes.path()[c];
      if (c + 1 == e.bytes.path_size()) {
        set_kid(b, nib, e.child, ext_child_ref(e));  // (the ref is used only when the child is clean)
        release(n);
      } else {
        e.bytes.erase_path_prefix(c + 1);
        mark_dirty(e);
        set_kid(b, nib, n);
      }
      if (c == rl) set_branch_value(nodes_[b], value);
      else set_kid(b, rest[c], new_leaf(rest + c + 1, rl - c - 1, value));
      return {c ? new_ext(rest, c, b) : b, true};  // rest[0..c) == the old prefix
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (same(x.bytes.value(), value)) return {n, false};
        set_branch_value(x, value);
        mark_dirty(x);
        return {n, true};
      }
      const uint8_t nib = rest[0];
      const Result r = insert(kids(n).id[nib], key, klen, pos + 1, value);
      if (!r.changed) return {n, false};
      set_kid(n, nib, r.id);
      mark_dirty(nodes_[n]);
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
      if (x.bytes.path_size() != rl || (rl && std::memcmp(x.bytes.path_data(), rest, rl) != 0)) return {n, false};
      release(n);
      return {kNoNode, true};
    }
    case NodeKind::extension: {
      const size_t pl = x.bytes.path_size();
      if (rl < pl || std::memcmp(x.bytes.path_data(), rest, pl) != 0) return {n, false};
      const Result r = remove(x.child, key, klen, pos + pl);
      if (!r.changed) return {n, false};
      assert(r.id != kNoNode);  // the child was a branch with >= 2 slots
      return relink_extension(n, r.id);
    }
    case NodeKind::branch: {
      if (rl == 0) {
        if (!x.has_value) return {n, false};
        set_branch_value(x, {});
      } else {
        const Result r = remove(kids(n).id[rest[0]], key, klen, pos + 1);
        if (!r.changed) return {n, false};
        set_kid(n, rest[0], r.id);
      }
      mark_dirty(nodes_[n]);
      return collapse_branch(n);
    }
  }
  return {n, false};
}

Trie::Result Trie::collapse_branch(NodeId n) {
  const Kids& k = kids(n);
  const uint32_t mask = nodes_[n].kid_mask;
  const int count = (nodes_[n].has_value ? 1 : 0) + popcount16(mask);
  const int last = mask ? 31 - std::countl_zero(mask) : -1;
  if (count >= 2) return {n, true};
  if (count == 0) {  // only a batch can empty a branch (every key below it deleted)
    release(n);
    return {kNoNode, true};
  }
  if (last < 0) {  // value only: a leaf with an empty path
    const NodeId l = alloc(NodeKind::leaf);
    nodes_[l].bytes.set_value(nodes_[n].bytes.value());
    release(n);
    return {l, true};
  }
  const NodeId c = k.id[last];
  const NodeRef c_ref = kid_ref(nodes_[n], unsigned(last));  // (meaningful only when c is clean)
  release(n);
  Node& cn = nodes_[c];
  const uint8_t nib = uint8_t(last);
  if (cn.kind == NodeKind::branch) {
    const NodeId e = new_ext(&nib, 1, c);
    if (!is_dirty(nodes_[c])) nodes_[e].bytes.set_value(c_ref.bytes, c_ref.len);  // an extension's value: its clean child's ref
    return {e, true};
  }
  cn.bytes.prepend_path(&nib, 1);
  mark_dirty(cn);
  return {c, true};
}

Trie::Result Trie::relink_extension(NodeId e, NodeId child) {
  if (child == kNoNode) {  // the branch below lost every key (batch deletes)
    release(e);
    return {kNoNode, true};
  }
  Node& x = nodes_[e];
  Node& c = nodes_[child];
  if (c.kind == NodeKind::branch) {
    x.child = child;
    mark_dirty(x);
    return {e, true};
  }
  c.bytes.prepend_path(x.bytes.path_data(), x.bytes.path_size());  // merge short nodes
  mark_dirty(c);
  release(e);
  return {child, true};
}

void Trie::put(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  assert(key.size() <= kMaxKeyBytes);
  if (value.empty()) return erase(key);
  dirty_log_valid_ = false;
  to_nibbles(key, &nib_scratch_);
  root_ = insert(root_, nib_scratch_.data(), nib_scratch_.size(), 0, value).id;
}

void Trie::erase(std::span<const uint8_t> key) {
  assert(key.size() <= kMaxKeyBytes);
  dirty_log_valid_ = false;
  to_nibbles(key, &nib_scratch_);
  root_ = remove(root_, nib_scratch_.data(), nib_scratch_.size(), 0).id;
}

namespace {

// A write's place in the batch order: (first 8 key bytes as a big-endian integer, zero
// padded; then the whole key; then the write's index). The padded prefix orders like the
// key bytes, and the index keeps the later of two writes to one key last.
struct WriteOrder {
  uint64_t prefix;
  uint32_t index;
};

struct WriteOrderLess {
  std::span<const Trie::Write> writes;
  bool operator()(const WriteOrder& a, const WriteOrder& b) const {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const auto& ka = writes[a.index].key;
    const auto& kb = writes[b.index].key;
    const size_t common = std::min(ka.size(), kb.size());
    const int c = common ? std::memcmp(ka.data(), kb.data(), common) : 0;
    if (c != 0) return c < 0;
    if (ka.size() != kb.size()) return ka.size() < kb.size();
    return a.index < b.index;
  }
};

// Large batches: a stable LSD radix sort by the prefix's top 32 bits (3 passes of
// 11/11/10 bits), then each run of equal top bits sorted by the full order (hashed keys:
// runs of one; any keys: still exact, the runs just get longer). tmp: the second buffer.
void radix_sort_writes(std::vector<WriteOrder>& order, std::vector<WriteOrder>& tmp, const WriteOrderLess& less) {
  tmp.resize(order.size());
  uint32_t count[2048];
  WriteOrder* src = order.data();
  WriteOrder* dst = tmp.data();
  for (const unsigned shift : {32u, 43u, 54u}) {
    const uint32_t digits = shift == 54u ? 1024u : 2048u;
    std::fill(count, count + digits, 0u);
    for (size_t i = 0; i < order.size(); ++i) ++count[uint32_t(src[i].prefix >> shift) & (digits - 1)];
    uint32_t sum = 0;
    for (uint32_t d = 0; d < digits; ++d) { const uint32_t c = count[d]; count[d] = sum; sum += c; }
    for (size_t i = 0; i < order.size(); ++i) dst[count[uint32_t(src[i].prefix >> shift) & (digits - 1)]++] = src[i];
    std::swap(src, dst);
  }
  // three passes: the result is in tmp
  order.swap(tmp);
  for (size_t i = 0; i < order.size();) {
    size_t e = i + 1;
    while (e < order.size() && (order[e].prefix >> 32) == (order[i].prefix >> 32)) ++e;
    if (e - i > 1) std::sort(order.begin() + long(i), order.begin() + long(e), less);
    i = e;
  }
}

}  // namespace

void Trie::apply(std::span<const Write> writes) {
  thread_local std::vector<WriteOrder> order;  // per-thread buffers, reused across batches
  thread_local std::vector<Write> sorted;
  thread_local std::vector<WriteOrder> tmp;  // radix sort's second buffer
  constexpr size_t kKeepScratchWrites = size_t(1) << 16;  // buffers kept for batches up to this size
  order.resize(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    uint8_t be[8] = {};
    if (!writes[i].key.empty()) std::memcpy(be, writes[i].key.data(), std::min<size_t>(8, writes[i].key.size()));
    uint64_t p = 0;
    for (uint8_t b : be) p = (p << 8) | b;
    order[i] = {p, uint32_t(i)};
  }
  const WriteOrderLess less{writes};
  if (order.size() < 256) std::sort(order.begin(), order.end(), less);
  else radix_sort_writes(order, tmp, less);
  sorted.clear();
  for (size_t i = 0; i < order.size(); ++i) {
    const Write& w = writes[order[i].index];
    if (i + 1 < order.size() && order[i + 1].prefix == order[i].prefix) {  // (equal keys: equal prefixes)
      const Write& nx = writes[order[i + 1].index];  // a later write to the same key follows: skip this one
      if (nx.key.size() == w.key.size() && (w.key.empty() || std::memcmp(nx.key.data(), w.key.data(), w.key.size()) == 0)) continue;
    }
    sorted.push_back(w);
  }
  apply_sorted(sorted);
  if (writes.size() > kKeepScratchWrites) {  // a bulk load: don't keep its buffers
    order = {};
    sorted = {};
    tmp = {};
  }
}

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

std::optional<std::vector<uint8_t>> Trie::get(std::span<const uint8_t> key) const {
  std::vector<uint8_t> nib;
  to_nibbles(key, &nib);
  size_t pos = 0;
  NodeId n = root_;
  while (n != kNoNode) {
    const Node& x = nodes_[n];
    const size_t rl = nib.size() - pos;
    switch (x.kind) {
      case NodeKind::leaf: {
        const auto p = x.bytes.path();
        if (p.size() == rl && std::equal(p.begin(), p.end(), nib.begin() + long(pos)))
          return std::vector<uint8_t>(x.bytes.value().begin(), x.bytes.value().end());
        return std::nullopt;
      }
      case NodeKind::extension: {
        const auto p = x.bytes.path();
        if (rl < p.size() || !std::equal(p.begin(), p.end(), nib.begin() + long(pos))) return std::nullopt;
        pos += p.size();
        n = x.child;
        break;
      }
      case NodeKind::branch:
        if (rl == 0)
          return !x.has_value ? std::nullopt : std::optional(std::vector<uint8_t>(x.bytes.value().begin(), x.bytes.value().end()));
        n = kids(n).id[nib[pos++]];
        break;
    }
  }
  return std::nullopt;
}

size_t Trie::encoded_bound(const Node& x) const {
  if (x.kind != NodeKind::branch) return encoded_size(x);
  assert(x.has_value == (x.bytes.value_size() != 0));
  return kBranchMaxFixed + (!x.has_value ? 0 : st::kernels::rlp_string_size(x.bytes.value_data(), x.bytes.value_size()));
}

size_t Trie::encoded_size(const Node& x) const {
  switch (x.kind) {
    case NodeKind::leaf: return leaf_size(x.bytes.path_size(), x.bytes.value_data(), x.bytes.value_size());
    case NodeKind::extension: return extension_size(x.bytes.path_size(), ext_child_ref(x));
    case NodeKind::branch: {
      assert(dirty_kids(x) == 0);  // children committed first
      NodeRef refs[16];
      for (unsigned i = 0; i < 16; ++i) refs[i] = kid_ref(x, i);
      return branch_size(refs, x.bytes.value_data(), x.bytes.value_size());
    }
  }
  return 0;
}

uint8_t* Trie::put_encoding(const Node& x, uint8_t* out) const {
  switch (x.kind) {
    case NodeKind::leaf:
      return put_leaf_nibbles(out, x.bytes.path_data(), x.bytes.path_size(), x.bytes.value_data(), x.bytes.value_size());
    case NodeKind::extension: return put_extension_nibbles(out, x.bytes.path_data(), x.bytes.path_size(), ext_child_ref(x));
    case NodeKind::branch: {
      NodeRef refs[16];
      for (unsigned i = 0; i < 16; ++i) refs[i] = kid_ref(x, i);
      return put_branch(out, refs, x.bytes.value_data(), x.bytes.value_size());
    }
  }
  return out;
}

NodeView Trie::view(NodeId id) const {
  const Node& x = nodes_[id];
  NodeView v;
  v.kind = x.kind;
  if (x.kind != NodeKind::branch) v.path = x.bytes.path();
  if (x.kind != NodeKind::extension) v.value = x.bytes.value();  // (an extension's value bytes are its child's ref)
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

NodeRef Trie::ref(NodeId id) const {
  if (id == root_) return root_ref_;
  std::vector<uint8_t> enc;
  encode(id, &enc);
  return make_ref(enc.data(), enc.size());
}

// A dirty node to commit, with where its ref goes.
struct Trie::CommitItem {
  void* t;  // Trie*
  NodeId id;
  uint32_t parent_kids;  // the parent branch's children block (kNoNode: root or extension child)
  uint32_t nib;          // slot in that block; with parent_kids == kNoNode: the parent extension's id (kNoNode: the root)
  uint32_t kids = kNoNode;  // from a batch log, a branch without a value: its children block (its node line is not read)
  uint16_t kid_mask = 0;    // with kids: the branch's kid_mask
};

// Per-thread buffers of commit_many, reused across calls (no page faults per block).
struct Trie::CommitScratch {
  std::vector<std::vector<CommitItem>> by_depth;
  std::vector<CommitItem>& level_at(size_t d) {
    if (by_depth.size() <= d) by_depth.resize(d + 1);
    return by_depth[d];
  }
  struct ParentSlot {
    void* t;        // Trie*
    uint32_t kids;  // the parent branch's children block (kNoNode: see nib)
    uint32_t nib;   // its slot; with kids == kNoNode: the parent extension's id, or kNoNode for the root
  };
  std::vector<ParentSlot> parent_targets;  // per hashed node of the current pull call (<= kPullChunk): where its ref goes
  std::vector<uint8_t> digests;            // per hashed node of the current pull call: 32 bytes
  std::vector<uint8_t> lane_buf[st::kernels::kKeccak256PullLanes];  // pull-fed commit: one encoding per kernel lane
};

// The producer of the pull-fed commit (Trie::commit_feed_next): items [i, end) of one depth.
struct Trie::CommitFeed {
  const std::vector<CommitItem>* level;
  size_t i, end;
  CommitScratch* sc;
  CommitStats* st;
  NodeCapture* capture;
};

namespace {

void capture_node(NodeCapture* capture, const uint8_t* p, size_t len) {
  if (!capture) return;
  if (capture->offsets.empty()) capture->offsets.push_back(0);
  capture->bytes.insert(capture->bytes.end(), p, p + len);
  capture->offsets.push_back(capture->bytes.size());
}

constexpr size_t kPrefetchAhead = 8;
// Nodes per keccak256_batch_pull call of the commit: bounds its digest array (64 KiB) and
// parent list, and a bulk load's commit stays in the same small buffers.
constexpr size_t kPullChunk = 2048;
// Scratch (commit lists, dirty logs) of up to this many nodes is kept for the next block;
// a bulk load's (a 1M-slot trie: ~1.6M nodes, ~64 MB of lists) is released.
constexpr size_t kKeepScratchItems = size_t(1) << 17;

}  // namespace

// The commit feed's prefetches for item i, in two stages: the node line 2 * ahead, then
// (from that line) the children slot lines or the leaf's path and value 1 * ahead; they
// arrive while the kernel permutes.
inline void Trie::commit_prefetch(const std::vector<CommitItem>& level, size_t i) {
  if (i + 2 * kPrefetchAhead < level.size()) {
    const CommitItem& p = level[i + 2 * kPrefetchAhead];
    if (p.kids == kNoNode) __builtin_prefetch(&static_cast<const Trie*>(p.t)->nodes_[p.id]);
  }
  if (i + kPrefetchAhead < level.size()) {
    const CommitItem& p = level[i + kPrefetchAhead];
    const Trie* pt = static_cast<const Trie*>(p.t);
    const Node* px = p.kids == kNoNode ? &pt->nodes_[p.id] : nullptr;  // (its line was requested above)
    if (!px || px->kind == NodeKind::branch) {
      // the slot lines of the present children (dense: slots 0 .. c-1 in lines 1 .. ceil(c / 2)),
      // from the record for a logged branch
      const char* kb = reinterpret_cast<const char*>(&pt->kids_[px ? px->child : p.kids]);
      for (int j = 0, lines = (popcount16(px ? px->kid_mask : p.kid_mask) + 1) / 2; j < lines; ++j) __builtin_prefetch(kb + 64 + 64 * j);
    } else {  // line 1: the rest of the path, the value (a leaf's) or child ref (an extension's)
      __builtin_prefetch(reinterpret_cast<const char*>(px) + 64);
    }
  }
}

// Item it's encoding into buf (grown as needed): returns its first byte, *end one past its
// last. A branch is encoded from its children block's slot lines: a logged branch without a
// value from its record alone (its node line is not read), any other from its node. No
// node line is written (the epoch bump cleans every node).
inline uint8_t* Trie::encode_commit_item(const CommitItem& it, std::vector<uint8_t>& buf, uint8_t** end) const {
  const Node* x = it.kids == kNoNode ? &nodes_[it.id] : nullptr;
  if (x && x->kind != NodeKind::branch) {
    const size_t need = encoded_bound(*x);
    if (buf.size() < need) buf.resize(need);
    *end = put_encoding(*x, buf.data());
    return buf.data();
  }
  const uint32_t k = x ? x->child : it.kids;
  const uint16_t kid_mask = x ? x->kid_mask : it.kid_mask;
#ifndef NDEBUG
  if (!x) {
    const Node& dx = nodes_[it.id];
    assert(dx.kind == NodeKind::branch && !dx.has_value && dx.child == it.kids && dx.kid_mask == it.kid_mask);
  }
  for (unsigned b = 0; b < 16; ++b) assert(((kid_mask >> b) & 1) == (kids_[k].id[b] != kNoNode));
#endif
  const size_t need = x ? encoded_bound(*x) : kBranchMaxFixed;
  if (buf.size() < need) buf.resize(need);
  const uint32_t embedded = any_embedded_ ? kids_embedded_[k] & ((1u << popcount16(kid_mask)) - 1) : 0;
  const bool value = x && x->has_value;
  return put_branch_slots(buf.data(), kids_[k].slot, kid_mask, embedded, value ? x->bytes.value_data() : nullptr,
                          value ? x->bytes.value_size() : 0, end);
}

bool Trie::commit_feed_next(void* ctx, unsigned lane, st::kernels::Keccak256Message* m) {
  CommitFeed& f = *static_cast<CommitFeed*>(ctx);
  const std::vector<CommitItem>& level = *f.level;
  assert(lane < st::kernels::kKeccak256PullLanes);
  std::vector<uint8_t>& buf = f.sc->lane_buf[lane];
  for (; f.i < f.end; ++f.i) {
    const size_t i = f.i;
    commit_prefetch(level, i);
    const CommitItem& it = level[i];
    Trie* t = static_cast<Trie*>(it.t);
    uint8_t* end;
    uint8_t* out = t->encode_commit_item(it, buf, &end);
    const size_t len = size_t(end - out);
    // The ref goes where the parent reads it (its children slot, the parent extension's
    // value, or the trie's root ref): an embedded ref now, a 32-byte ref after the pull call
    // (the digest array, then store_ref).
    if (len < 32) {
      NodeRef r;
      r.len = uint8_t(len);
      std::memcpy(r.bytes, out, len);
      t->store_ref(it.parent_kids, it.nib, r);
      if (it.id == t->root_) {  // a short root stays embedded in its ref; root_hash() hashes it
        ++f.st->keccak_calls;
        f.st->keccak_bytes += len;
        capture_node(f.capture, out, len);
      }
      continue;
    }
    const size_t h = f.sc->parent_targets.size();
    f.sc->parent_targets.push_back({t, it.parent_kids, it.nib});
    *m = {out, len, f.sc->digests.data() + 32 * h};
    ++f.st->keccak_calls;
    f.st->keccak_bytes += len;
    capture_node(f.capture, out, len);
    ++f.i;
    return true;
  }
  return false;
}

// Whether every dirty trie of the commit has a valid batch log; *max_height: the tallest
// logged node's height.
bool Trie::commit_logs_valid(std::span<Trie* const> tries, uint32_t* max_height) {
  *max_height = 0;
  for (Trie* t : tries) {
    if (!t->dirty()) continue;
    if (!t->dirty_log_valid_) return false;
    for (const DirtyRecord& r : t->dirty_log_) *max_height = std::max(*max_height, uint32_t(r.height));
  }
  return true;
}

// The commit lists from the batch logs, by height (index max_height - height, so the hash
// pass still runs from the last index to 0 and children come first). Returns the depths.
size_t Trie::commit_lists_from_logs(std::span<Trie* const> tries, CommitScratch& sc, uint32_t max_height) {
  size_t depths = 0;
  for (size_t d = 0; d <= max_height; ++d) sc.level_at(d).clear();
  for (Trie* t : tries) {
    if (!t->dirty()) continue;
    for (const DirtyRecord& r : t->dirty_log_) sc.by_depth[max_height - r.height].push_back({t, r.id, r.parent_kids, r.nib, r.kids, r.kid_mask});
    depths = max_height + 1;
  }
  return depths;
}

// The batch logs are used up: cleared, and a bulk load's (millions of records) not kept for
// the blocks that follow.
void Trie::release_dirty_logs(std::span<Trie* const> tries) {
  for (Trie* t : tries) {
    if (t->dirty_log_.capacity() > kKeepScratchItems) std::vector<DirtyRecord>().swap(t->dirty_log_);
    else t->dirty_log_.clear();
    t->dirty_log_valid_ = false;
  }
}

// The dirty children of one depth's items into `next` (each node line and a branch's ids
// line prefetched a few items ahead).
void Trie::commit_collect_level(const std::vector<CommitItem>& level, std::vector<CommitItem>& next) {
  for (size_t i = 0; i < level.size(); ++i) {
    if (i + 2 * kPrefetchAhead < level.size()) {
      const CommitItem& f = level[i + 2 * kPrefetchAhead];
      __builtin_prefetch(&static_cast<Trie*>(f.t)->nodes_[f.id]);
    }
    if (i + kPrefetchAhead < level.size()) {  // its node line was prefetched above
      const CommitItem& f = level[i + kPrefetchAhead];
      const Trie* ft = static_cast<const Trie*>(f.t);
      const Node& fx = ft->nodes_[f.id];
      if (fx.kind == NodeKind::branch) __builtin_prefetch(&ft->kids_[fx.child].id);  // line 0: the ids
    }
    const CommitItem& it = level[i];
    Trie* t = static_cast<Trie*>(it.t);
    const Node& x = t->nodes_[it.id];
    if (x.kind == NodeKind::extension) {
      if (t->is_dirty(t->nodes_[x.child])) next.push_back({t, x.child, kNoNode, it.id});
    } else if (x.kind == NodeKind::branch && t->dirty_kids(x)) {
      const Kids& k = t->kids_[x.child];
      for (uint32_t m = t->dirty_kids(x); m; m &= m - 1) {
        const uint32_t nib = uint32_t(__builtin_ctz(m));
        next.push_back({t, k.id[nib], x.child, slot_rank(x.kid_mask, nib)});
      }
    }
  }
}

// The commit lists by walking down from the dirty roots, one depth at a time (breadth
// first, so the nodes of the next depth can be prefetched while this one is scanned).
// Returns the depths.
size_t Trie::commit_lists_by_walk(std::span<Trie* const> tries, CommitScratch& sc) {
  auto& l0 = sc.level_at(0);
  l0.clear();
  for (Trie* t : tries)
    if (t->dirty()) l0.push_back({t, t->root_, kNoNode, kNoNode});
  size_t depths = l0.empty() ? 0 : 1;
  for (size_t d = 0; d < depths; ++d) {
    auto& next = sc.level_at(d + 1);
    next.clear();
    commit_collect_level(sc.by_depth[d], next);
    if (!next.empty()) depths = d + 2;
  }
  return depths;
}

// 2. Deepest depth first, one keccak256_batch_pull per kPullChunk nodes of a depth: the
//    kernel asks for the next node whenever a lane is free, and commit_feed_next encodes
//    it into that lane's buffer from lines it prefetched a few nodes earlier, so the
//    misses of the clean siblings' ref lines are served while the kernel permutes.
//    Digests land in a small array and go to where each parent reads them after the call
//    (written from inside the kernel, a store to a cold line held up its own stores).
void Trie::commit_hash_lists(CommitScratch& sc, size_t depths, CommitStats& st, NodeCapture* capture) {
  sc.digests.resize(32 * kPullChunk);
  for (size_t d = depths; d-- > 0;) {
    CommitFeed feed{&sc.by_depth[d], 0, 0, &sc, &st, capture};
    while (feed.i < feed.level->size()) {
      feed.end = std::min(feed.level->size(), feed.i + kPullChunk);
      sc.parent_targets.clear();
      st::kernels::keccak256_batch_pull(&Trie::commit_feed_next, &feed);
      for (size_t h = 0; h < sc.parent_targets.size(); ++h) {
        const auto& ps = sc.parent_targets[h];
        NodeRef r;
        r.len = 32;
        std::memcpy(r.bytes, sc.digests.data() + 32 * h, 32);
        static_cast<Trie*>(ps.t)->store_ref(ps.kids, ps.nib, r);
      }
    }
    st.nodes_rehashed += sc.by_depth[d].size();
    ++st.depths;
  }
}

void Trie::commit_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture) {
  thread_local CommitScratch sc;
  // 1. Collect the dirty nodes of every trie, by depth: from the batch logs when every
  //    dirty trie has one, else by a walk from the roots.
  uint32_t max_height = 0;
  const bool logged = commit_logs_valid(tries, &max_height);
  size_t depths = logged ? commit_lists_from_logs(tries, sc, max_height) : 0;
  release_dirty_logs(tries);
  if (!logged) depths = commit_lists_by_walk(tries, sc);
  CommitStats st;
  commit_hash_lists(sc, depths, st, capture);
  // 3. Every node of the committed tries is clean now: one epoch bump each (a trie listed
  //    twice is bumped once: after its bump it is no longer dirty).
  for (Trie* t : tries)
    if (t->dirty()) t->bump_epoch();
  if (stats) {
    stats->nodes_rehashed += st.nodes_rehashed;
    stats->keccak_calls += st.keccak_calls;
    stats->keccak_bytes += st.keccak_bytes;
    stats->depths = std::max(stats->depths, st.depths);
    if (logged && depths) ++stats->from_batch_log;
  }
  if (st.nodes_rehashed > kKeepScratchItems) sc.by_depth = {};  // a bulk commit: give its per-depth lists back
}

void Trie::bump_epoch() {
  if (epoch_ == UINT16_MAX) {  // wrap: no node may keep an epoch that epoch_ will reach again
    for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].epoch = 0;
    epoch_ = 1;
  } else {
    ++epoch_;
  }
}

Hash32 Trie::root_hash(CommitStats* stats, NodeCapture* capture) {
  Trie* self = this;
  commit_many(std::span<Trie* const>(&self, 1), stats, capture);
  if (root_ == kNoNode) return kEmptyRoot;
  return root_hash_of(root_ref_);
}

}  // namespace st::mpt
