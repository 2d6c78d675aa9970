// trie_stubs: the trie's unread children (see trie.h, "Unread children"): stubs, which ones
// a batch needs (stubs_to_resolve) and their resolution from a node's RLP (resolve_stub).
//
//   stub node:  kind stub, clean (epoch 0), bytes = no path, value = hash (32) || locator (8 LE)
//
// Which stubs a batch reads. apply_sorted reads every node on its keys' paths, and a
// branch's one remaining child when the branch is left with a single entry (collapse_branch
// reads that child's kind). The walk below mirrors how apply_sorted reaches each branch:
// - batch mode (reached by the batch descent, no key ending at it): the branch collapses
//   only as it is at the end of the batch. A child with a put below it is there at the end;
//   a child with only deletes below it may be gone; an untouched child is there. When
//   deletes are present and at most one entry is sure to stay, every child that is sure to
//   stay is listed (only an untouched one can still be a stub: the others are on paths).
// - one by one (below a leaf, a diverging extension or a key ending at a branch: insert /
//   remove per key in key order): a branch may collapse after any delete, on its way to
//   the end. Before each nibble group with a delete, the entries that may be left beside
//   that group's child are the children after it (untouched so far), the untouched ones
//   before it and those before it with a put (a put's key stays: keys are distinct); when
//   at most one may be left, those are listed. Counting a group with only deletes as gone
//   and the others as there is a lower bound of what the branch holds at each moment, so
//   every collapse it can make is covered.
// A stub and a node read from a record keep its locator in locs_ (trie_sink.cpp), the
// node's embedded children none.
//
// Invariant: the stubs listed are a superset of those apply_sorted reads for these writes
// on this trie (a missed one stops the process in the edit that reaches it).
#include "engine/mpt/trie_internal.h"

#include <algorithm>

#include "kernels/hex_prefix.h"

namespace st::mpt {

namespace {

inline size_t key_nibbles(std::span<const Trie::Write> w, size_t i) { return 2 * w[i].key.size(); }
inline uint8_t write_nibble(std::span<const Trie::Write> w, size_t i, size_t pos) {
  return st::kernels::key_nibble(w[i].key.data(), pos);
}

}  // namespace

NodeId Trie::new_stub(const uint8_t* hash32, uint64_t locator) {
  const NodeId id = alloc(NodeKind::stub);
  Node& x = nodes_[id];
  x.epoch = 0;  // clean
  uint8_t v[40];
  std::memcpy(v, hash32, 32);
  for (int i = 0; i < 8; ++i) v[32 + i] = uint8_t(locator >> (8 * i));
  x.bytes.set_value(v, 40);
  locs_[id] = locator;  // (alloc sized locs_: a trie with stubs tracks locators)
  return id;
}

Trie::Stub Trie::stub(NodeId id) const {
  const Node& x = nodes_[id];
  ST_CHECK(x.kind == NodeKind::stub, "mpt trie: stub() of a node that is read");
  Stub s;
  const uint8_t* v = x.bytes.value_data();
  std::memcpy(s.hash.data(), v, 32);
  s.locator = 0;
  for (int i = 0; i < 8; ++i) s.locator |= uint64_t(v[32 + i]) << (8 * i);
  return s;
}

void Trie::reset_to_stub(const Hash32& root, uint64_t locator) {
  ST_CHECK(root_ == kNoNode && live_nodes() == 0, "mpt trie: reset_to_stub of a trie that holds nodes");
  tracks_locs_ = true;
  if (root == kEmptyRoot) return;  // the empty trie: nothing to read
  root_ = new_stub(root.data(), locator);
  root_ref_.len = 32;
  std::memcpy(root_ref_.bytes, root.data(), 32);
  dirty_log_valid_ = false;
}

// A child of a node being resolved: a new stub (hashed; the next locator) or the embedded
// node decoded into a new clean node.
NodeId Trie::resolved_child(const ChildRef& r, std::span<const uint64_t> locs, size_t* next_loc) {
  if (r.kind == ChildRef::hash) return new_stub(r.bytes, locs[(*next_loc)++]);
  DecodedNode dn;
  const std::string err = decode_node({r.bytes, r.len}, &dn);
  ST_CHECK(err.empty(), "mpt trie: an embedded child that decoded once does not decode again");
  const NodeId c = alloc(NodeKind::leaf);
  fill_decoded(c, dn, locs, next_loc);
  return c;
}

// Node id (a stub, or a fresh node) becomes the clean node dn, its children linked.
void Trie::fill_decoded(NodeId id, const DecodedNode& dn, std::span<const uint64_t> locs, size_t* next_loc) {
  Node& x = nodes_[id];  // (the chunked arena never moves a node)
  x.bytes.reset();
  x.has_value = false;
  x.dirty_mask = 0;
  x.kid_mask = 0;
  x.child = kNoNode;
  switch (dn.kind) {
    case DecodedNode::leaf:
      x.kind = NodeKind::leaf;
      x.bytes.set_path(dn.path.data(), dn.path_len);
      x.bytes.set_value(dn.value);
      break;
    case DecodedNode::extension: {
      x.kind = NodeKind::extension;
      x.bytes.set_path(dn.path.data(), dn.path_len);
      x.child = resolved_child(dn.refs[0], locs, next_loc);
      x.bytes.set_value(dn.refs[0].bytes, dn.refs[0].len);  // its child's ref (the child is clean)
      break;
    }
    case DecodedNode::branch: {
      x.kind = NodeKind::branch;
      const uint32_t k = alloc_kids();
      x.child = k;
      set_branch_value(x, dn.value);
      for (unsigned i = 0; i < 16; ++i) {
        if (dn.refs[i].kind == ChildRef::none) continue;
        kids_[k].id[i] = resolved_child(dn.refs[i], locs, next_loc);
        x.kid_mask = uint16_t(x.kid_mask | (1u << i));
      }
      for (unsigned i = 0; i < 16; ++i) {
        if (dn.refs[i].kind == ChildRef::none) continue;
        NodeRef r;
        r.len = uint8_t(dn.refs[i].len);
        std::memcpy(r.bytes, dn.refs[i].bytes, r.len);
        store_kid_ref(k, slot_rank(x.kid_mask, i), r);
      }
      break;
    }
  }
  x.epoch = 0;  // clean: its ref is where its parent reads it
}

std::string Trie::resolve_stub(NodeId id, std::span<const uint8_t> rlp, std::span<const uint64_t> child_locators) {
  DecodedNode dn;
  if (std::string err = decode_node(rlp, &dn); !err.empty()) return err;
  return resolve_decoded(id, dn, child_locators);
}

std::string Trie::resolve_decoded(NodeId id, const DecodedNode& dn, std::span<const uint64_t> child_locators) {
  ST_CHECK(nodes_[id].kind == NodeKind::stub, "mpt trie: resolve_stub of a node that is read");
  // Every embedded child must decode too (checked before the trie changes).
  std::vector<std::span<const uint8_t>> todo;
  for (const ChildRef& r : dn.refs)
    if (r.kind == ChildRef::embedded) todo.push_back({r.bytes, r.len});
  uint32_t hashed = dn.hashed_refs();
  while (!todo.empty()) {
    DecodedNode e;
    const std::span<const uint8_t> b = todo.back();
    todo.pop_back();
    if (std::string err = decode_node(b, &e); !err.empty()) return "embedded child: " + err;
    hashed += e.hashed_refs();
    for (const ChildRef& r : e.refs)
      if (r.kind == ChildRef::embedded) todo.push_back({r.bytes, r.len});
  }
  if (hashed != child_locators.size())
    return "mpt trie: " + std::to_string(child_locators.size()) + " child locators for " + std::to_string(hashed) +
           " hashed children";
  size_t next_loc = 0;
  fill_decoded(id, dn, child_locators, &next_loc);
  dirty_log_valid_ = false;
  return {};
}

void Trie::stubs_to_resolve(std::span<const Write> writes, std::vector<NodeId>* out, size_t* siblings,
                            std::vector<StubWalk>* stopped) const {
  if (writes.empty()) return;
  const StubWalk root{root_, 0, uint32_t(writes.size()), 0, true};
  list_stubs(writes, {&root, 1}, out, siblings, stopped);
}

void Trie::stubs_to_resolve_from(std::span<const Write> writes, std::span<const StubWalk> from,
                                 std::vector<NodeId>* out, size_t* siblings, std::vector<StubWalk>* stopped) const {
  for (const StubWalk& w : from) ST_CHECK(nodes_[w.node].kind != NodeKind::stub, "mpt trie: a walk resumed at a stub");
  list_stubs(writes, from, out, siblings, stopped);
}

// The walks `from` (each at a node with the writes [lo, hi) below it), their path stubs and
// those a collapse may leave merged into *out, sorted and unique.
void Trie::list_stubs(std::span<const Write> writes, std::span<const StubWalk> from, std::vector<NodeId>* out,
                      size_t* siblings, std::vector<StubWalk>* stopped) const {
  const size_t first = out->size();
  thread_local std::vector<NodeId> left;  // listed as what a collapse may leave (reused)
  left.clear();
  StubListing l{out, &left, stopped};
  for (const StubWalk& w : from) stubs_below(w.node, writes, w.lo, w.hi, w.pos, w.batch, l);
  std::sort(out->begin() + long(first), out->end());
  out->erase(std::unique(out->begin() + long(first), out->end()), out->end());
  std::sort(left.begin(), left.end());
  left.erase(std::unique(left.begin(), left.end()), left.end());
  size_t only_left = 0;
  for (NodeId c : left) only_left += !std::binary_search(out->begin() + long(first), out->end(), c);
  out->insert(out->end(), left.begin(), left.end());
  std::inplace_merge(out->begin() + long(first), out->end() - long(left.size()), out->end());
  out->erase(std::unique(out->begin() + long(first), out->end()), out->end());
  if (siblings) *siblings += only_left;
}

// The stubs writes [lo, hi) read at node n (pos nibbles of their keys above it); batch:
// whether apply_sorted's descent reaches n (else the writes are applied one by one there).
void Trie::stubs_below(NodeId n, std::span<const Write> writes, uint32_t lo, uint32_t hi, uint32_t pos, bool batch,
                       StubListing& out) const {
  if (n == kNoNode || lo == hi) return;
  const Node& x = nodes_[n];
  switch (x.kind) {
    case NodeKind::stub:
      out.paths->push_back(n);
      if (out.stopped) out.stopped->push_back({n, lo, hi, pos, batch});
      return;
    case NodeKind::leaf: return;  // split or replaced: no node below is read
    case NodeKind::extension: {
      // The writes that follow its path (a contiguous range of the sorted keys) go below;
      // if any does not, the extension is split and the writes applied one by one.
      const size_t pl = x.bytes.path_size();
      const uint8_t* path = x.bytes.path_data();
      auto follows = [&](uint32_t w) {
        if (key_nibbles(writes, w) < pos + pl) return false;
        for (size_t j = 0; j < pl; ++j)
          if (write_nibble(writes, w, pos + j) != path[j]) return false;
        return true;
      };
      uint32_t a = lo;
      while (a < hi && !follows(a)) ++a;
      uint32_t b = a;
      while (b < hi && follows(b)) ++b;
      stubs_below(x.child, writes, a, b, uint32_t(pos + pl), batch && a == lo && b == hi, out);
      return;
    }
    case NodeKind::branch: stubs_for_branch(x, writes, lo, hi, pos, batch, out); return;
  }
}

void Trie::stubs_for_branch(const Node& x, std::span<const Write> writes, uint32_t lo, uint32_t hi, uint32_t pos,
                            bool batch, StubListing& out) const {
  const Kids& k = kids_[x.child];
  const bool ends_here = key_nibbles(writes, lo) == pos;  // (a key ending here sorts first)
  const bool one_by_one = !batch || ends_here;
  // The nibble groups: [start, end) per nibble, and whether each has a put / a delete.
  uint16_t touched = 0, has_put = 0, has_del = 0;
  uint32_t start[16], end[16];
  for (uint32_t w = lo + (ends_here ? 1 : 0); w < hi;) {
    const uint8_t nb = write_nibble(writes, w, pos);
    uint32_t e = w;
    bool put = false, del = false;
    for (; e < hi && write_nibble(writes, e, pos) == nb; ++e) (writes[e].value.empty() ? del : put) = true;
    start[nb] = w;
    end[nb] = e;
    touched = uint16_t(touched | (1u << nb));
    if (put) has_put = uint16_t(has_put | (1u << nb));
    if (del) has_del = uint16_t(has_del | (1u << nb));
    w = e;
  }
  for (uint32_t m = touched; m; m &= m - 1) {
    const unsigned nb = unsigned(std::countr_zero(m));
    stubs_below(k.id[nb], writes, start[nb], end[nb], pos + 1, !one_by_one, out);
  }
  // The children that may be all that is left when the branch collapses: listed when at most one.
  auto list_if_single = [&](uint32_t may_stay, bool value) {
    if (popcount16(uint16_t(may_stay)) + (value ? 1 : 0) > 1) return;
    for (uint32_t m = may_stay; m; m &= m - 1) {
      const NodeId c = k.id[std::countr_zero(m)];
      if (c != kNoNode && nodes_[c].kind == NodeKind::stub) out.left->push_back(c);
    }
  };
  const uint32_t untouched = x.kid_mask & ~uint32_t(touched);
  if (!one_by_one) {
    if (has_del & ~has_put) list_if_single(untouched | has_put, x.has_value);
    return;
  }
  bool value = x.has_value;
  if (ends_here) {
    value = !writes[lo].value.empty();
    if (!value) list_if_single(x.kid_mask, false);
  }
  uint32_t before = 0;  // children before the current group that are sure to be there
  for (uint32_t m = touched; m; m &= m - 1) {
    const unsigned nb = unsigned(std::countr_zero(m));
    const uint32_t bit = 1u << nb;
    const uint32_t after = x.kid_mask & ~((bit << 1) - 1);
    if (has_del & bit) list_if_single(before | (untouched & (bit - 1)) | after, value);
    if (has_put & bit) before |= bit;
  }
}

}  // namespace st::mpt
