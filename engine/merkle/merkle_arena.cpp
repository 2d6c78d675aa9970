// merkle_arena: allocation and per-slot access of the word-sliced node store.
#include "engine/merkle/merkle_arena.h"


namespace st::merkle {

namespace {
size_t next_pow2_at_least_16(size_t n) {
  size_t p = 16;
  while (p < n) p <<= 1;
  return p;
}
inline size_t word_index(size_t slot, size_t w) { return (slot / 16) * 128 + w * 16 + slot % 16; }
}  // namespace

// The buffer is 64-byte (large: 2 MiB, huge-page) aligned: see memory/large_buffer.h.
MerkleArena::MerkleArena(size_t leaf_capacity)
    : leaf_capacity_(leaf_capacity), pow2_(next_pow2_at_least_16(leaf_capacity)), buffer_(2 * pow2_ * 32) {
  words_ = reinterpret_cast<uint32_t*>(buffer_.data());
}

uint64_t MerkleArena::bytes_for(size_t leaf_capacity) { return uint64_t(2) * next_pow2_at_least_16(leaf_capacity) * 32; }

Hash32 MerkleArena::get(size_t slot) const {
  Hash32 d;
  for (size_t w = 0; w < 8; ++w) {
    const uint32_t v = words_[word_index(slot, w)];
    d[4 * w] = uint8_t(v >> 24); d[4 * w + 1] = uint8_t(v >> 16);
    d[4 * w + 2] = uint8_t(v >> 8); d[4 * w + 3] = uint8_t(v);
  }
  return d;
}

void MerkleArena::set(size_t slot, const Hash32& d) {
  for (size_t w = 0; w < 8; ++w)
    words_[word_index(slot, w)] = (uint32_t(d[4 * w]) << 24) | (uint32_t(d[4 * w + 1]) << 16) |
                                  (uint32_t(d[4 * w + 2]) << 8) | d[4 * w + 3];
}

void MerkleArena::copy_slot(size_t from, size_t to) {
  for (size_t w = 0; w < 8; ++w) words_[word_index(to, w)] = words_[word_index(from, w)];
}

bool MerkleArena::equal_slots(size_t a, size_t b) const {
  for (size_t w = 0; w < 8; ++w)
    if (words_[word_index(a, w)] != words_[word_index(b, w)]) return false;
  return true;
}

}  // namespace st::merkle
