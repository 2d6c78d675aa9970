// node_source: the node interface the rest of the engine (proofs now, the node stores of the
// storage issue later) sees, independent of where nodes live.
//
// Every node is addressed by a compact NodeId (32 bits; what an id means is up to the
// source: an arena slot here, a page/offset in a persistent store). view() resolves one
// node on demand, so a persistent source can load children lazily; ref()/encode() give the
// node's committed reference and exact RLP bytes. The in-memory Trie is one implementation.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/mpt/node_ref.h"

namespace st::mpt {

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;

// stub: a committed node not read yet (the Trie's unread children, trie.h); view() never
// returns one.
enum class NodeKind : uint8_t { leaf, extension, branch, stub };

struct NodeView {
  NodeKind kind = NodeKind::leaf;
  std::span<const uint8_t> path;   // unpacked nibbles (leaf, extension)
  std::span<const uint8_t> value;  // leaf value, or the branch value (empty = none)
  NodeId child = kNoNode;          // extension
  std::array<NodeId, 16> children{};  // branch (kNoNode = empty slot)
};

class NodeSource {
 public:
  virtual ~NodeSource() = default;
  virtual NodeId root_id() const = 0;  // kNoNode for the empty trie
  // True when every node's ref() and encode() reflect the current contents (no pending
  // writes); proofs require it.
  virtual bool committed() const = 0;
  virtual NodeView view(NodeId id) const = 0;
  // Committed nodes only (after the owner computed the root).
  virtual NodeRef ref(NodeId id) const = 0;
  virtual void encode(NodeId id, std::vector<uint8_t>* out) const = 0;
};

}  // namespace st::mpt
