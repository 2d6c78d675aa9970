// trie: mutable MPT (see trie.h); this file: point reads (get) and the NodeSource view of
// a node (view, encode, ref). The node store and the encoder are inline in
// trie_internal.h; edits, the sorted apply and the commit have their own files.
#include "engine/mpt/trie_internal.h"

#include "kernels/hex_prefix.h"

namespace st::mpt {

// The walk reads the key's nibbles in place (no copy: apply's slot lookups run it per write).
Trie::Found Trie::find(std::span<const uint8_t> key) const {
  const size_t key_nibbles = 2 * key.size();
  auto matches = [&](std::span<const uint8_t> path, size_t pos) {
    for (size_t j = 0; j < path.size(); ++j)
      if (path[j] != st::kernels::key_nibble(key.data(), pos + j)) return false;
    return true;
  };
  size_t pos = 0;
  NodeId n = root_;
  while (n != kNoNode) {
    const Node& x = nodes_[n];
    const size_t rl = key_nibbles - pos;
    switch (x.kind) {
      case NodeKind::leaf: {
        const auto p = x.bytes.path();
        if (p.size() == rl && matches(p, pos)) return {Found::value, n};
        return {};
      }
      case NodeKind::extension: {
        const auto p = x.bytes.path();
        if (rl < p.size() || !matches(p, pos)) return {};
        pos += p.size();
        n = x.child;
        break;
      }
      case NodeKind::branch:
        if (rl == 0) return x.has_value ? Found{Found::value, n} : Found{};
        n = kids(n).id[st::kernels::key_nibble(key.data(), pos++)];
        break;
      case NodeKind::stub:
        return {Found::stub, n};
    }
  }
  return {};
}

std::optional<std::vector<uint8_t>> Trie::get(std::span<const uint8_t> key) const {
  const Found f = find(key);
  ST_CHECK(f.what != Found::stub, "mpt trie: get reached an unread node (stub)");
  if (f.what == Found::absent) return std::nullopt;
  const auto v = nodes_[f.node].bytes.value();
  return std::vector<uint8_t>(v.begin(), v.end());
}

void Trie::clear() {
  nodes_.clear();
  kids_.clear();
  kids_embedded_.clear();
  any_embedded_ = false;
  free_nodes_.clear();
  free_kids_.clear();
  root_ = kNoNode;
  root_ref_ = NodeRef{};
  dirty_log_.clear();
  dirty_log_valid_ = false;
  locs_.clear();
  released_locs_.clear();
  tracks_locs_ = false;
  hashed_pending_ = false;
  enc_bytes_.clear();
  enc_at_.clear();
  bump_epoch();  // (nodes are made afresh: no old epoch is read)
}

NodeView Trie::view(NodeId id) const {
  const Node& x = nodes_[id];
  ST_CHECK(x.kind != NodeKind::stub, "mpt trie: view of an unread node (stub)");
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
  if (nodes_[id].kind == NodeKind::stub) {
    NodeRef r;
    r.len = 32;
    std::memcpy(r.bytes, stub(id).hash.data(), 32);
    return r;
  }
  std::vector<uint8_t> enc;
  encode(id, &enc);
  return make_ref(enc.data(), enc.size());
}

}  // namespace st::mpt
