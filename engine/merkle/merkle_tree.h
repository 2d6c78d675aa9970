// merkle_tree: the Bitcoin-style SHA-256 Merkle tree engine (spec: docs/specs/merkle.md).
//
// Usage: construct for a leaf capacity (the arena is allocated once, never resized), call
// add_fixed / add_variable with a whole batch of leaves (addData: hashes every leaf into
// level 0), then compute() (reduces level by level to the root) and proof(i).
//
// Invariants: leaf_hash = H(data); parent = H(left || right); an odd level duplicates its
// last node; one leaf: root = its leaf hash; no leaves is an error. H is SHA-256, or
// SHA-256(SHA-256(.)) with double_sha256 (Bitcoin's own tree). `mutated` reports the
// CVE-2012-2459 condition: at some level two real siblings are equal, so another leaf
// list has the same root. All hashing goes through the active SHA-256 kernel's batch and
// word-sliced entry points; the work of a level is split over threads by cache-sized
// chunks (see merkle_tree.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/merkle/merkle_arena.h"

namespace st::merkle {

struct MerkleOptions {
  bool double_sha256 = false;
};

struct MerkleResult {
  Hash32 root{};
  bool mutated = false;
};

class MerkleTree {
 public:
  MerkleTree(size_t leaf_capacity, MerkleOptions options = {});

  // addData for a batch of n fixed-size records (contiguous, leaf_size bytes each).
  // Returns an error when n == 0 or n > capacity.
  std::optional<std::string> add_fixed(const uint8_t* data, size_t n, size_t leaf_size);
  // Level 0 given directly: n records of 32 bytes that are already leaf hashes (Bitcoin's
  // tree over txids). No leaf hashing happens.
  std::optional<std::string> set_leaf_hashes(const uint8_t* hashes, size_t n);
  // addData for n leaves of arbitrary lengths.
  std::optional<std::string> add_variable(const uint8_t* const* leaves, const size_t* lens, size_t n);

  // Reduces the added leaves to the root (precondition: leaves added).
  MerkleResult compute();

  // Sibling path of leaf `index`, bottom-up (precondition: compute() ran, index < leaves).
  std::vector<Hash32> proof(size_t index) const;

  size_t leaf_count() const { return leaf_count_; }
  const MerkleArena& arena() const { return arena_; }
  // SHA-256 compressions of the last add + compute (real nodes only).
  uint64_t leaf_compressions() const { return leaf_compressions_; }
  uint64_t parent_compressions() const;
  uint64_t parent_count() const;
  // Level sizes, level 0 = leaf count, last = 1.
  const std::vector<size_t>& level_counts() const { return level_counts_; }

  // The hash of one leaf, and proof verification (independent of any tree instance).
  static Hash32 leaf_hash(const uint8_t* data, size_t len, MerkleOptions options = {});
  // A proof verifies only for index < leaf_count, a path of exactly the tree's depth, and
  // a "sibling equal to itself" only where the spec duplicates (the last node of an odd
  // level): the same path claimed for a position that does not exist is rejected.
  static bool verify(const Hash32& leaf_hash, size_t index, size_t leaf_count, const std::vector<Hash32>& path,
                     const Hash32& root, MerkleOptions options = {});

 private:
  void compute_chunk(size_t chunk, unsigned top_level, bool* mutated);
  void compute_level(unsigned level, bool* mutated);
  void duplicate_last_if_odd(unsigned level);

  MerkleArena arena_;
  MerkleOptions options_;
  size_t leaf_count_ = 0;
  uint64_t leaf_compressions_ = 0;
  std::vector<size_t> level_counts_;
};

}  // namespace st::merkle
