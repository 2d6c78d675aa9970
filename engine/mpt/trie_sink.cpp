// trie_sink: a commit's new nodes handed to a store (root_hash_to; see trie.h, CommitSink),
// for a trie that started from a stub and so knows where each node it read is stored.
//
// After the dirty nodes are hashed (hash_pending, which keeps each one's encoding as it
// hashes it) and before they are marked clean, one post-order walk from the root over the
// dirty nodes: a clean child is kept (its locator: a stub's, or the record it was read from
// or last handed over under; the branch's dirty mask tells it apart without reading the
// child), unless it is embedded in its parent (no locator: it is in the parent's bytes); a
// dirty node is handed over with its kept encoding when it is hashed (the root, or 32
// bytes and more), its old record reported dead; a dirty node that became embedded hands
// nothing over (its old record, if any, is dead). Then the records of the nodes released
// since the last commit are dead.
//
// Invariants (a trie with tracks_locs_): every clean node has a locator unless its parent
// holds it embedded; a hashed node's children handed over are exactly its children held by
// hash (an embedded node holds no hash: it is shorter than 32 bytes).
#include "engine/mpt/trie_internal.h"

#include <algorithm>
#include <deque>

namespace st::mpt {

uint64_t Trie::root_locator() const {
  if (root_ == kNoNode || !tracks_locs_) return kNoLocator;
  return locs_[root_];
}

// Hands over node n's subtree (path: the nibbles from the root to n); returns 1 if a subtree
// was handed over (kept or new), 0 if n is embedded in its parent.
uint32_t Trie::sink_subtree(NodeId n, const NodeRef& ref, bool top, CommitSink& sink, std::vector<uint8_t>& path) {
  const Node& x = nodes_[n];
  if (!is_dirty(x)) {
    if (locs_[n] == kNoLocator) return 0;  // embedded in its parent
    sink.kept(locs_[n], path);
    return 1;
  }
  uint32_t children = 0;
  const size_t at = path.size();
  if (x.kind == NodeKind::extension) {
    const auto p = x.bytes.path();
    path.insert(path.end(), p.begin(), p.end());
    children += sink_subtree(x.child, ext_child_ref(x), false, sink, path);
  } else if (x.kind == NodeKind::branch) {
    // A clean child is kept by its locator without reading its node (the branch's dirty
    // mask says which are dirty); their locators, and the dirty ones' nodes and
    // encodings' places, are fetched first, all at once.
    const Kids& k = kids(n);
    const uint32_t dirty_kids_mask = dirty_kids(x);
    for (uint32_t m = x.kid_mask & ~dirty_kids_mask; m; m &= m - 1)
      __builtin_prefetch(&locs_[k.id[std::countr_zero(m)]]);
    for (uint32_t m = dirty_kids_mask; m; m &= m - 1) {
      const NodeId c = k.id[std::countr_zero(m)];
      __builtin_prefetch(&nodes_[c]);
      if (c < enc_at_.size()) __builtin_prefetch(&enc_at_[c]);
    }
    for (uint32_t m = x.kid_mask; m; m &= m - 1) {
      const unsigned i = unsigned(std::countr_zero(m));
      path.push_back(uint8_t(i));
      if (dirty_kids_mask >> i & 1) {
        children += sink_subtree(k.id[i], kid_ref(x, i), false, sink, path);
      } else if (const uint64_t l = locs_[k.id[i]]; l != kNoLocator) {  // (none: embedded)
        sink.kept(l, path);
        ++children;
      }
      path.resize(at);
    }
  } else {
    const auto p = x.bytes.path();
    path.insert(path.end(), p.begin(), p.end());
    children += sink.leaf(path, x.bytes.value());
  }
  path.resize(at);
  ST_CHECK(n < enc_at_.size(), "mpt trie: a dirty node that hash_pending did not hash");
  const EncAt e = enc_at_[n];  // (its encoding as hash_pending hashed it)
  const std::span<const uint8_t> rlp(e.bytes, e.len);
  if (locs_[n] != kNoLocator) sink.dead(locs_[n]);
  if (rlp.size() < 32 && !top) {
    ST_CHECK(children == 0, "mpt trie: an embedded node took hashed children");
    locs_[n] = kNoLocator;
    return 0;
  }
  locs_[n] = sink.node(x.kind, rlp, children, path, root_hash_of(ref));
  return 1;
}

void Trie::hash_pending(std::span<Trie* const> tries, CommitStats* stats) {
  for (Trie* t : tries) {
    ST_CHECK(t->tracks_locs_, "mpt trie: hash_pending on a trie that did not start from a stub");
    t->enc_bytes_.clear();
  }
  hash_dirty_many(tries, stats, nullptr);
  for (Trie* t : tries) t->hashed_pending_ = true;
}

Hash32 Trie::pending_root() const {
  ST_CHECK(hashed_pending_ || !dirty(), "mpt trie: pending_root before hash_pending");
  if (root_ == kNoNode) return kEmptyRoot;
  return root_hash_of(root_ref_);
}

// Appends node n's hashed dirty subtree to *out; returns n's level (0: clean or embedded).
uint32_t Trie::pending_below(NodeId n, const NodeRef& ref, bool top, std::vector<PendingEncoding>* out) const {
  const Node& x = nodes_[n];
  if (!is_dirty(x)) return 0;
  uint32_t below = 0;
  if (x.kind == NodeKind::extension) {
    below = pending_below(x.child, ext_child_ref(x), false, out);
  } else if (x.kind == NodeKind::branch) {
    const Kids& k = kids(n);
    for (uint32_t m = dirty_kids(x); m; m &= m - 1) {
      const unsigned i = unsigned(std::countr_zero(m));
      below = std::max(below, pending_below(k.id[i], kid_ref(x, i), false, out));
    }
  }
  ST_CHECK(n < enc_at_.size(), "mpt trie: a dirty node that hash_pending did not hash");
  const EncAt e = enc_at_[n];
  if (e.len < 32 && !top) return 0;  // embedded (so are its dirty children)
  out->push_back({e.bytes, e.len, below + 1, root_hash_of(ref)});
  return below + 1;
}

void Trie::pending_encodings(std::vector<PendingEncoding>* out) const {
  ST_CHECK(hashed_pending_ || !dirty(), "mpt trie: pending_encodings before hash_pending (or after an edit)");
  if (root_ != kNoNode) pending_below(root_, root_ref_, true, out);
}

uint32_t Trie::hand_to(CommitSink& sink) {
  ST_CHECK(hashed_pending_ || !dirty(), "mpt trie: hand_to before hash_pending (or after an edit)");
  uint32_t handed = 0;
  if (root_ != kNoNode) {
    // The walk's path, reused; one per nesting level (a sink may hand over another trie
    // from within this walk; a deque never moves the outer levels' paths).
    thread_local std::deque<std::vector<uint8_t>> paths;
    thread_local size_t nesting = 0;
    if (paths.size() <= nesting) paths.emplace_back();
    std::vector<uint8_t>& path = paths[nesting++];
    path.clear();
    handed = sink_subtree(root_, root_ref_, true, sink, path);
    --nesting;
    if (dirty()) bump_epoch();
  }
  for (uint64_t l : released_locs_) sink.dead(l);
  released_locs_.clear();
  hashed_pending_ = false;
  return handed;
}

Hash32 Trie::root_hash_to(CommitSink& sink, CommitStats* stats) {
  Trie* self = this;
  hash_pending(std::span<Trie* const>(&self, 1), stats);
  hand_to(sink);
  return root_ == kNoNode ? kEmptyRoot : root_hash_of(root_ref_);
}

void Trie::all_stubs(std::vector<NodeId>* out) const {
  if (root_ == kNoNode) return;
  std::vector<NodeId> todo{root_};
  while (!todo.empty()) {
    const NodeId n = todo.back();
    todo.pop_back();
    const Node& x = nodes_[n];
    if (x.kind == NodeKind::stub) out->push_back(n);
    else if (x.kind == NodeKind::extension) todo.push_back(x.child);
    else if (x.kind == NodeKind::branch)
      for (uint32_t m = x.kid_mask; m; m &= m - 1) todo.push_back(kids(n).id[std::countr_zero(m)]);
  }
}

}  // namespace st::mpt
