// stem_subtree: the 8-level subtree over a stem's 256 value slots, computed sparsely for
// many stems at once: level l holds only nodes with a present leaf below; a lone node is
// paired with a 32-zero sibling; two absent children are never hashed (zero rule). All
// stems' nodes of one level go through one hash64_batch.
//
// Layout of a batch of g stems (struct of arrays):
//   pos[i]    slot index (level 0: sub index 0..255; level l: sub >> l), ascending per stem
//   hash[i]   the node hash at that position
//   off[s]    stem s owns items [off[s], off[s+1]); off has g+1 entries
// After stem_subtree_roots, hash[s] is stem s's subtree root R (one item per stem).
//
// Invariants: every stem has at least one present leaf; results equal the dense 256-leaf
// computation with the zero rule.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/bintrie/hasher.h"

namespace st::bintrie {

// dst = src for 32 bytes, both halves loaded into registers before either is stored: the
// message-building loops copy between buffers the compiler cannot prove disjoint, and an
// interleaved load/store/load/store sequence (or a trip through a stack temporary) makes
// the loop wait on its stores (measured: the dominant stall of those loops). GCC/Clang
// vector extension, 16-byte lanes: plain SSE2 / NEON moves, no ISA flag needed.
typedef uint8_t U8x16 __attribute__((vector_size(16), aligned(1)));
inline void copy32(uint8_t* dst, const uint8_t* src) {
  U8x16 lo, hi;
  std::memcpy(&lo, src, 16);
  std::memcpy(&hi, src + 16, 16);
  std::memcpy(dst, &lo, 16);
  std::memcpy(dst + 16, &hi, 16);
}
inline void copy32(Hash32& dst, const Hash32& src) { copy32(dst.data(), src.data()); }

struct StemLevels {
  std::vector<uint8_t> pos, next_pos;
  std::vector<Hash32> hash, msgs;  // msgs: 2 Hash32 per message
  std::vector<uint32_t> off, next_off;
};

// Reduces the 8 levels in place; returns the number of 64-byte messages hashed.
size_t stem_subtree_roots(const Hasher& h, StemLevels& L);

// All 8 levels of one stem, dense (256 + 128 + ... + 1 nodes, zeros where empty), for
// proofs and blob reconstruction: level[0] = leaves, level[8][0] = R. leaf hashes in.
struct DenseStemTree {
  Hash32 node[511];  // heap order: level 8 (root) at 0, children of i at 2i+1, 2i+2
  const Hash32& root() const { return node[0]; }
  // Sibling path of leaf sub (8 hashes, leaf level first).
  void siblings(uint8_t sub, Hash32 out[8]) const;
};
void dense_stem_tree(const Hasher& h, const Hash32 leaf_hash[256], DenseStemTree* out);

}  // namespace st::bintrie
