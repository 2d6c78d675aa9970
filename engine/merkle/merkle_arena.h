// merkle_arena: the flat, preallocated, word-sliced node store of a Merkle tree.
//
// Sized once for leaf_capacity leaves: pow2 = next power of two >= leaf_capacity (at
// least 16), slots = 2 * pow2 - 1, rounded up to whole 16-slot blocks = 2 * pow2 slots of
// 32 bytes. It never grows or moves; compute writes every level in place.
//
// Levels are stored one after another (level 0 = leaf hashes, capacity pow2; level k has
// capacity pow2 >> k and starts at slot 2*pow2 - 2*(pow2 >> k)). Slot s lives in block
// s / 16, lane s % 16, in the word-sliced format of kernels/sha256.h:
//
//   block b (512 bytes, 64-byte aligned)
//   +-------------------------------+-----+-------------------------------+
//   | word0 lane0 .. word0 lane15   | ... | word7 lane0 .. word7 lane15   |
//   +-------------------------------+-----+-------------------------------+
//
// Words are SHA-256 state words (big-endian reading of the digest bytes), so a parent level
// is computed from its children with no byte swapping. Every level with capacity >= 16
// starts on a block boundary.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "engine/memory/large_buffer.h"
#include "kernels/support/hash32.h"

namespace st::merkle {

using st::Hash32;

class MerkleArena {
 public:
  explicit MerkleArena(size_t leaf_capacity);
  MerkleArena(const MerkleArena&) = delete;
  MerkleArena& operator=(const MerkleArena&) = delete;

  size_t leaf_capacity() const { return leaf_capacity_; }
  size_t pow2() const { return pow2_; }
  size_t slot_count() const { return 2 * pow2_; }
  size_t bytes() const { return slot_count() * 32; }
  // The bytes an arena for leaf_capacity leaves takes (before allocating it).
  static uint64_t bytes_for(size_t leaf_capacity);

  // First slot of level k (0 = leaves).
  size_t level_offset(unsigned level) const { return 2 * pow2_ - 2 * (pow2_ >> level); }
  size_t level_capacity(unsigned level) const { return pow2_ >> level; }

  uint32_t* block(size_t block_index) { return words_ + block_index * 128; }
  const uint32_t* block(size_t block_index) const { return words_ + block_index * 128; }

  Hash32 get(size_t slot) const;
  void set(size_t slot, const Hash32& d);
  void copy_slot(size_t from, size_t to);
  bool equal_slots(size_t a, size_t b) const;

 private:
  size_t leaf_capacity_;
  size_t pow2_;
  memory::LargeBuffer buffer_;
  uint32_t* words_;
};

}  // namespace st::merkle
