// trie_edits: single-key edits and the unsorted batch. Insert/remove are recursive over
// the key's nibbles and return (new id, changed); only changed nodes are marked dirty, so
// an update that does not change the contents (same value, delete of an absent key) leaves
// every hash cached; deletes keep the canonical form (collapse, relink). apply() sorts a
// batch by key (radix sort for large ones), keeps the last write per key, and hands it to
// apply_sorted.
#include "engine/mpt/trie_internal.h"

namespace st::mpt {

using trie_detail::common_prefix;
using trie_detail::same;
using trie_detail::to_nibbles;

namespace {
constexpr const char* kEditReachedStub = "mpt trie: an edit reached an unread node (stub) that stubs_to_resolve did not list";
[[noreturn]] void edit_reached_stub() { ::st::check_failed(__FILE__, __LINE__, "kind != stub", kEditReachedStub); }
}  // namespace

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
        nodes_[n].child = r.id;
        mark_dirty(nodes_[n]);
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
    case NodeKind::stub: edit_reached_stub();
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
    case NodeKind::stub: edit_reached_stub();
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
  ST_CHECK(cn.kind != NodeKind::stub, kEditReachedStub);
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
  ST_CHECK(c.kind != NodeKind::stub, kEditReachedStub);
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
  hashed_pending_ = false;
  to_nibbles(key, &nib_scratch_);
  root_ = insert(root_, nib_scratch_.data(), nib_scratch_.size(), 0, value).id;
}

void Trie::erase(std::span<const uint8_t> key) {
  assert(key.size() <= kMaxKeyBytes);
  dirty_log_valid_ = false;
  hashed_pending_ = false;
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

}  // namespace st::mpt
