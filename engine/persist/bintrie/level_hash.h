// bintrie/level_hash: the binary trie commit's new stems and groups hashed level by level,
// ONE batch kernel call per level (Hasher::hash32_batch for the stems' values, hash64_batch
// for every other level), the levels the pure hash lays out (bintrie/pure_hash.h): the stems'
// values, their 8 subtree levels, the stem nodes H(stem || 0x00 || subtree root), then per
// height of new groups (children before parents) the g levels of their internal trees.
//
// Each level's messages are appended to their own array, node by node: a stem's or group's
// sparse subtree is reduced over per-depth bitmaps of its present nodes (no sort, no list),
// its messages appended to the arrays of their levels. A full group (all 2^g entries at depth
// g, none a zero hash) skips the bitmaps: its entries in consecutive pairs, then each level's
// messages pair the level below's. A node whose digest feeds a message of a later level (a subtree
// node, a stem, a new child group) names that message's slot; run() copies each digest there
// after its level's call. A digest is named by a DigestRef (its level and index).
//
// Use: reset(g); add_stem() for every new stem; then per height next_height() and
// add_group() for its groups, each entry either as its blob holds it or filled from an
// earlier DigestRef (a new child's); run(); digest(ref).
//
// Invariants: the digests equal bintrie::stem_blob_hash and reconstruct_group(...)[0] of
// the same blobs with each entry set to its source's digest, bit for bit (the trie's zero
// rule: a 64-byte message of two absent or zero children is not hashed, its node is zero;
// stem nodes are always hashed; a computed digest is taken as non-zero). Arrays keep their
// capacity across reset(); run() allocates only to grow an output array.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/hasher.h"

namespace st::persist {

// A digest of a level (kNone: the zero hash, nothing hashed).
struct DigestRef {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t level = kNone;
  uint32_t index = 0;
  bool zero() const { return level == kNone; }
};

class BintrieLevelHash {
 public:
  void reset(unsigned g);
  // Every stem before the first next_height().
  DigestRef add_stem(const bintrie::StemBlob& b);
  // The groups added next are one height above those added before (their new children).
  void next_height();
  // entry_src: one per entry of b; a zero ref takes the entry's hash from the blob.
  DigestRef add_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src);
  // Every level's call, in order; each digest copied into its slot.
  void run(const bintrie::Hasher& h);
  // 32 bytes after run(); nullptr for a zero ref.
  const uint8_t* digest(DigestRef r) const;
  size_t messages() const;

 private:
  // A node of a subtree being reduced: its hash's source (absent nodes are zero).
  struct Node {
    const uint8_t* given;  // a non-zero hash known now, or null
    DigestRef ref;         // else a digest
  };
  // One stem subtree or group being reduced: per depth 0..8 the present nodes (occ bit i:
  // at[d][i] holds node i); only present nodes are written, occ is cleared per tree.
  struct Tree {
    uint64_t occ[9][4];
    Node at[9][256];
  };
  struct Level {
    bool hash32 = false;
    uint32_t n = 0;
    size_t bytes = 0;             // of `in` in use
    std::vector<uint8_t> in;      // n messages (32 or 64 bytes), then spare room
    std::vector<uint64_t> slot;   // per message: where its digest goes (level << 32 | offset), or kNoSlot
    std::vector<uint8_t> out;     // n digests (then spare room)
  };
  static constexpr uint64_t kNoSlot = UINT64_MAX;
  Level& level(uint32_t l);
  static void reserve(Level& L, size_t count, size_t bytes);
  static void grow(Level& L, size_t count, size_t bytes);
  static DigestRef message(Level& L, uint32_t l, size_t bytes, size_t* off);
  void place(const Node* n, uint32_t l, uint8_t* msg, size_t off);
  void clear_tree(unsigned top);
  DigestRef one_value_root(uint32_t i, const uint8_t* value);
  DigestRef stem_node(const Node& root, const bintrie::StemBlob& b);
  const Node* reduce_tree(unsigned top, uint32_t base);
  bool full_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src) const;
  DigestRef add_full_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src);

  unsigned g_ = 0;
  uint32_t used_ = 0;        // levels in use
  uint32_t group_base_ = 0;  // the first level of the current height's groups
  uint32_t heights_ = 0;     // next_height() calls since reset()
  std::vector<Level> levels_;
  std::unique_ptr<Tree> tree_;
};

}  // namespace st::persist
