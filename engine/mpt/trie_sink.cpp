// trie_sink: a commit's new nodes handed to a store (root_hash_to; see trie.h, CommitSink),
// for a trie that started from a stub and so knows where each node it read is stored.
//
// After the dirty nodes are hashed (hash_dirty_many) and before they are marked clean, one
// post-order walk from the root over the dirty nodes: a clean child is kept (its locator:
// a stub's, or the record it was read from or last handed over under), unless it is
// embedded in its parent (no locator: it is in the parent's bytes); a dirty node is encoded
// again and handed over when it is hashed (the root, or 32 bytes and more), its old record
// reported dead; a dirty node that became embedded hands nothing over (its old record, if
// any, is dead). Then the records of the nodes released since the last commit are dead.
//
// Invariants (a trie with tracks_locs_): every clean node has a locator unless its parent
// holds it embedded; a hashed node's children handed over are exactly its children held by
// hash (an embedded node holds no hash: it is shorter than 32 bytes).
#include "engine/mpt/trie_internal.h"

namespace st::mpt {

uint64_t Trie::root_locator() const {
  if (root_ == kNoNode || !tracks_locs_) return kNoLocator;
  return locs_[root_];
}

// Hands over node n's subtree; returns 1 if a subtree was handed over (kept or new), 0 if n
// is embedded in its parent.
uint32_t Trie::sink_subtree(NodeId n, bool top, CommitSink& sink, std::vector<uint8_t>& buf) {
  const Node& x = nodes_[n];
  if (!is_dirty(x)) {
    if (locs_[n] == kNoLocator) return 0;  // embedded in its parent
    sink.kept(locs_[n]);
    return 1;
  }
  uint32_t children = 0;
  if (x.kind == NodeKind::extension) {
    children += sink_subtree(x.child, false, sink, buf);
  } else if (x.kind == NodeKind::branch) {
    for (uint32_t m = x.kid_mask; m; m &= m - 1) children += sink_subtree(kids(n).id[std::countr_zero(m)], false, sink, buf);
  }
  buf.resize(encoded_size(x));
  put_encoding(x, buf.data());
  if (locs_[n] != kNoLocator) sink.dead(locs_[n]);
  if (buf.size() < 32 && !top) {
    ST_CHECK(children == 0, "mpt trie: an embedded node took hashed children");
    locs_[n] = kNoLocator;
    return 0;
  }
  locs_[n] = sink.node(x.kind, buf, children);
  return 1;
}

Hash32 Trie::root_hash_to(CommitSink& sink, CommitStats* stats) {
  ST_CHECK(tracks_locs_, "mpt trie: root_hash_to on a trie that did not start from a stub");
  Trie* self = this;
  hash_dirty_many(std::span<Trie* const>(&self, 1), stats, nullptr);
  if (dirty()) {
    std::vector<uint8_t> buf;
    sink_subtree(root_, true, sink, buf);
    bump_epoch();
  }
  for (uint64_t l : released_locs_) sink.dead(l);
  released_locs_.clear();
  if (root_ == kNoNode) return kEmptyRoot;
  return root_hash_of(root_ref_);
}

}  // namespace st::mpt
