// builder: the MPT of a sorted batch of (key, value) pairs, built from scratch: its root
// (build_root, in memory) or its nodes handed to a sink (write_trie, a database build).
//
// Shape of the computation (no per-node heap objects, no tree of pointers):
//   1. Split: a key range larger than chunk_keys whose keys share nibbles [0, D) becomes a
//      branch at depth D (+ an extension over [d0, D) when D > d0) whose children are the
//      sub-ranges of nibble D, found by binary search and built in parallel (TBB).
//   2. Chunk: a range of at most chunk_keys keys is built by one streaming stack pass over
//      the adjacent-key common prefixes (silkworm-HashBuilder style). A leaf is encoded the
//      moment it is attached, straight into the buffer the first keccak batch reads; a
//      closed branch is queued by height with the parent slot its handle goes to.
//   3. Hash: one keccak256_batch over the chunk's leaves, then one height at a time every
//      queued branch (and extension) is encoded from its children's handles (digest index
//      or embedded bytes) and all encodings of >= 32 bytes go through ONE keccak256_batch.
//   4. Sink (write_trie, a database build): serial; every node a parent references by hash,
//      and the top node, goes to a NodeSink in post-order: a chunk's nodes after its last
//      keccak batch, a split node after its sub-ranges. With a LeafHook, each leaf's value
//      comes from the hook in key order and the ranges split down to single keys, so
//      whatever the hook sinks (an account's storage trie) lands right before its leaf.
//
// Inputs: keys strictly ascending in byte order (= nibble order; a prefix sorts first),
// values non-empty. Plain keys may be prefixes of each other (branch value slot); secure
// keys (32-byte hashes) never are. Invariant: the result equals the root of the trie that
// holds exactly these pairs, whatever the chunking, thread count or sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/mpt/node_ref.h"
#include "engine/mpt/node_source.h"  // NodeKind
#include "io/status.h"

namespace st::mpt {

struct KeyValue {
  const uint8_t* key;
  uint32_t key_len;
  const uint8_t* value;
  uint32_t value_len;
};

// Every encoding the builder hashes, in one flat buffer (for the bare-Keccak baseline).
struct NodeCapture {
  std::vector<uint8_t> bytes;
  std::vector<size_t> offsets;  // node i = bytes[offsets[i] .. offsets[i+1])  (size+1 entries)
  size_t count() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

struct BuildOptions {
  unsigned threads = 1;         // 1 = serial on the calling thread; 0 = all hardware threads
  size_t chunk_keys = 4096;     // ranges up to this size are built by one serial stack pass
  NodeCapture* capture = nullptr;  // when set, the build runs serially and records encodings
};

struct BuildStats {
  uint64_t leaves = 0, branches = 0, extensions = 0;
  uint64_t keccak_calls = 0, keccak_bytes = 0;
  uint32_t threads_used = 0;  // distinct threads that built at least one chunk
  uint64_t sunk = 0, sunk_bytes = 0;  // write_trie: nodes handed to the sink, their RLP bytes
};

// Receives the nodes of write_trie in post-order. A node's hashed_children are exactly the
// most recently sunk nodes not yet claimed by a parent, in nibble order (for a leaf: the
// record children its LeafHook reported). key: a key of the node's range; depth: the
// node's nibble depth (its path is the first depth nibbles of key).
class NodeSink {
 public:
  virtual ~NodeSink() = default;
  virtual io::Status node(NodeKind kind, std::span<const uint8_t> rlp, uint32_t hashed_children, const uint8_t* key,
                          uint32_t depth) = 0;
};

// The value of leaf i (into *value) and how many record children it has (0 or 1; such a
// child must have been sunk by this call, last). Called in key order.
class LeafHook {
 public:
  virtual ~LeafHook() = default;
  virtual io::Status leaf(size_t i, std::vector<uint8_t>* value, uint32_t* record_children) = 0;
};

struct WriteOptions {
  size_t chunk_keys = 4096;  // as BuildOptions (unused with a hook: the ranges split to single keys)
  LeafHook* hook = nullptr;  // when set, the pairs' values are ignored (keys of one length)
};

// Root of the trie holding sorted_pairs (see the preconditions above). Empty -> kEmptyRoot.
Hash32 build_root(std::span<const KeyValue> sorted_pairs, const BuildOptions& options = {},
                  BuildStats* stats = nullptr);

// The trie of sorted_pairs built serially, its nodes handed to sink (see NodeSink);
// *root = its root (kEmptyRoot when empty). Keys not strictly ascending, an empty value
// (without a hook) or keys of different lengths (with one) are a bad_argument error.
io::Status write_trie(std::span<const KeyValue> sorted_pairs, NodeSink& sink, Hash32* root,
                      const WriteOptions& options = {}, BuildStats* stats = nullptr);

// True when keys are strictly ascending and every value is non-empty.
bool is_sorted_unique(std::span<const KeyValue> pairs);

// Secure trie: the path of each pair is keccak256(key). Hashes the keys (batched), sorts by
// hash and builds. Duplicate keys or empty values are a precondition violation.
Hash32 build_secure_root(std::span<const KeyValue> pairs, const BuildOptions& options = {},
                         BuildStats* stats = nullptr);

}  // namespace st::mpt
