// mpt/trie_writer: builds one secure MPT (32-byte keys) over keys sorted ascending by a
// recursive range split and hands its nodes to a sink in POST-ORDER, as the subtree packer
// (and the path-keyed RocksDB writer) want them:
//
//   range [lo, hi) at nibble depth d (all its keys share nibbles [0, d)):
//     one key                      -> leaf  [HP(key[d..64), leaf), value]
//     keys share nibbles [d, c), c > d -> extension [HP(key[d..c)), ref(branch at c)]
//     otherwise                    -> branch over the sub-ranges of nibble d
//
// Only nodes that a parent references by hash (RLP >= 32 bytes) and the trie's top node
// reach the sink; a node is sunk after all its hashed children, which are exactly the
// `hashed_children` most recently sunk nodes not yet claimed by a parent, in nibble order.
// Leaves get their value (and optionally one record child) from a LeafHook called in key
// order: the account trie's hook builds the account's storage trie first (its top node is
// then the account leaf's one child).
//
// Invariants: keys strictly ascending (checked: a duplicate is a bad_argument error);
// recursion depth <= 64; the result's root equals mpt::build_root of the same pairs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/mpt/node_ref.h"
#include "engine/persist/mpt/db.h"
#include "io/status.h"

namespace st::persist {

class MptNodeSink {
 public:
  virtual ~MptNodeSink() = default;
  // key32: a key of the node's range; depth: the node's nibble depth (its path is
  // key32[0..depth) nibbles).
  virtual io::Status node(MptRecordKind kind, std::span<const uint8_t> rlp, uint32_t hashed_children,
                          const uint8_t* key32, uint32_t depth) = 0;
};

class MptLeafHook {
 public:
  virtual ~MptLeafHook() = default;
  // The value of leaf i (into *value) and how many record children it has (0 or 1; a
  // child must have been sunk by this call, last).
  virtual io::Status leaf(size_t i, std::vector<uint8_t>* value, uint32_t* record_children) = 0;
  // True when leaf() is cheap, side-effect free and yields no record children (storage
  // tries): the writer then encodes every leaf up front and hashes them in one keccak batch.
  virtual bool values_known() const { return false; }
};

struct MptTrieCounts {
  uint64_t leaves = 0, extensions = 0, branches = 0;
  uint64_t sunk = 0, sunk_bytes = 0;
};

// Builds the trie over n keys (key i at keys + i * stride, 32 bytes). leaf_kind is
// MptRecordKind::leaf or ::account_leaf. *root = the root hash (kEmptyRoot for n == 0).
io::Status write_mpt_trie(const uint8_t* keys, size_t stride, size_t n, MptRecordKind leaf_kind, MptLeafHook& hook,
                          MptNodeSink& sink, mpt::Hash32* root, MptTrieCounts* counts);

}  // namespace st::persist
