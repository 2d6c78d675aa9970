// bintrie/level_hash: BintrieLevelHash (see the header): per stem and per group a sparse
// reduction in local lists, messages appended to their level's array; run() = the calls.
#include "engine/persist/bintrie/level_hash.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>

namespace st::persist {
namespace {

constexpr uint32_t kStemLevels = 10;  // values, 8 subtree levels, stem nodes

}  // namespace

void BintrieLevelHash::reset(unsigned g) {
  g_ = g;
  used_ = 0;
  group_base_ = kStemLevels;
  heights_ = 0;
}

BintrieLevelHash::Level& BintrieLevelHash::level(uint32_t l) {
  if (l >= levels_.size()) levels_.resize(l + 1);
  for (; used_ <= l; ++used_) {
    Level& L = levels_[used_];
    L.hash32 = used_ == 0;
    L.n = 0;
    L.bytes = 0;
  }
  return levels_[l];
}

// Room for `count` more messages of `bytes` each at level L (grown, never shrunk: the arrays
// keep their capacity and stale bytes; every message writes all its bytes).
[[gnu::noinline]] void BintrieLevelHash::grow(Level& L, size_t count, size_t bytes) {
  if (L.in.size() < L.bytes + count * bytes) L.in.resize(std::max(2 * L.in.size(), L.bytes + count * bytes));
  if (L.slot.size() < L.n + count) L.slot.resize(std::max(2 * L.slot.size(), size_t(L.n) + count));
}
inline void BintrieLevelHash::reserve(Level& L, size_t count, size_t bytes) {
  if (L.in.size() < L.bytes + count * bytes || L.slot.size() < L.n + count) [[unlikely]] grow(L, count, bytes);
}

// A message of `bytes` appended to level L (room reserved; the caller writes every byte);
// *off: its offset in the level's array.
DigestRef BintrieLevelHash::message(Level& L, uint32_t l, size_t bytes, size_t* off) {
  *off = L.bytes;
  L.bytes += bytes;
  L.slot[L.n] = kNoSlot;
  return {l, L.n++};
}

// n's hash into the 32 bytes at msg (at `off` of level l): copied now (given), by run() (a
// digest), or zero (absent).
void BintrieLevelHash::place(const Node* n, uint32_t l, uint8_t* msg, size_t off) {
  if (!n) std::memset(msg, 0, 32);
  else if (n->given) std::memcpy(msg, n->given, 32);
  else levels_[n->ref.level].slot[n->ref.index] = uint64_t(l) << 32 | off;
}

// The tree in tree_ (its nodes at depths 1..top marked in occ, zero nodes absent) reduced to
// its root: the parents of depth d's nodes (a node with its sibling, an absent sibling zero)
// become messages of level base + (top - d), in index order; a parent of two absent nodes is
// absent. The root, or null when the tree is zero.
const BintrieLevelHash::Node* BintrieLevelHash::reduce_tree(unsigned top, uint32_t base) {
  Tree& t = *tree_;
  level(base + top - 1);
  for (unsigned d = top; d >= 1; --d) {
    const uint32_t l = base + top - d;
    Level& L = levels_[l];
    const unsigned words = d >= 6 ? 1u << (d - 6) : 1u;
    size_t count = 0;
    for (unsigned w = 0; w < words; ++w) count += size_t(__builtin_popcountll(t.occ[d][w]));
    reserve(L, count, 64);
    for (unsigned w = 0; w < words; ++w) {
      const uint64_t word = t.occ[d][w];
      uint64_t m = word;
      while (m) {
        const unsigned b = unsigned(__builtin_ctzll(m)) & ~1u;  // the left sibling's bit
        m &= ~(uint64_t(3) << b);
        const unsigned i = w * 64 + b;
        size_t off = 0;
        const DigestRef parent = message(L, l, 64, &off);
        uint8_t* msg = L.in.data() + off;
        place((word >> b) & 1 ? &t.at[d][i] : nullptr, l, msg, off);
        place((word >> (b + 1)) & 1 ? &t.at[d][i + 1] : nullptr, l, msg + 32, off + 32);
        const unsigned up = i >> 1;
        t.occ[d - 1][up >> 6] |= uint64_t(1) << (up & 63);
        t.at[d - 1][up] = {nullptr, parent};
      }
    }
  }
  return (t.occ[0][0] & 1) ? &t.at[0][0] : nullptr;
}

void BintrieLevelHash::clear_tree(unsigned top) {
  if (!tree_) tree_ = std::make_unique<Tree>();
  for (unsigned d = 0; d <= top; ++d)
    for (uint64_t& w : tree_->occ[d]) w = 0;
}

// A stem of one value at slot i: its subtree is a chain, one message per level (the value's
// side holds the node below, the other side zero), no bitmaps.
DigestRef BintrieLevelHash::one_value_root(uint32_t i, const uint8_t* value) {
  Level& leaves = levels_[0];
  reserve(leaves, 1, 32);
  size_t off = 0;
  Node below{nullptr, message(leaves, 0, 32, &off)};
  std::memcpy(leaves.in.data() + off, value, 32);
  for (uint32_t l = 1; l <= 8; ++l, i >>= 1) {
    Level& L = levels_[l];
    reserve(L, 1, 64);
    const DigestRef up = message(L, l, 64, &off);
    uint8_t* msg = L.in.data() + off;
    place(&below, l, msg + 32 * (i & 1), off + 32 * (i & 1));
    std::memset(msg + 32 * (~i & 1), 0, 32);
    below.ref = up;
  }
  return below.ref;
}

DigestRef BintrieLevelHash::add_stem(const bintrie::StemBlob& b) {
  level(kStemLevels - 1);
  if (b.values.size() == 1) {
    uint32_t i = 0;
    while (i < 256 && !((b.bitmap[i / 8] >> (7 - i % 8)) & 1)) ++i;
    if (i < 256) return stem_node(Node{nullptr, one_value_root(i, b.values[0].data())}, b);
  }
  clear_tree(8);
  Tree& t = *tree_;
  Level& leaves = levels_[0];
  reserve(leaves, b.values.size(), 32);
  size_t j = 0;
  for (uint32_t byte = 0; byte < 32; ++byte) {
    if (!b.bitmap[byte]) continue;
    for (uint32_t bit = 0; bit < 8; ++bit) {
      if (!((b.bitmap[byte] >> (7 - bit)) & 1) || j >= b.values.size()) continue;
      size_t off = 0;
      const uint32_t i = byte * 8 + bit;
      const DigestRef leaf = message(leaves, 0, 32, &off);
      std::memcpy(leaves.in.data() + off, b.values[j++].data(), 32);
      t.occ[8][i >> 6] |= uint64_t(1) << (i & 63);
      t.at[8][i] = {nullptr, leaf};
    }
  }
  const Node* root = reduce_tree(8, 1);
  return stem_node(root ? *root : Node{nullptr, {}}, b);
}

// The stem node's message H(stem || 0x00 || subtree root); a root of neither source is zero.
DigestRef BintrieLevelHash::stem_node(const Node& root, const bintrie::StemBlob& b) {
  Level& nodes = levels_[kStemLevels - 1];
  reserve(nodes, 1, 64);
  size_t off = 0;
  const DigestRef stem = message(nodes, kStemLevels - 1, 64, &off);
  uint8_t* msg = nodes.in.data() + off;
  std::memcpy(msg, b.stem.data(), 31);
  msg[31] = 0;
  place(root.given || !root.ref.zero() ? &root : nullptr, kStemLevels - 1, msg + 32, off + 32);
  return stem;
}

void BintrieLevelHash::next_height() { group_base_ = kStemLevels + g_ * heights_++; }

// A full group: all 2^g entries at depth g, in position order, none a zero given hash.
bool BintrieLevelHash::full_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src) const {
  if (b.entries.size() != (size_t(1) << g_) || entry_src.size() < b.entries.size()) return false;
  for (size_t k = 0; k < b.entries.size(); ++k) {
    const bintrie::GroupEntry& e = b.entries[k];
    if (e.depth != g_ || e.pos != k || (entry_src[k].zero() && bintrie::is_zero32(e.hash.data()))) return false;
  }
  return true;
}

// A full group's tree without bitmaps: level base's messages are the entries in consecutive
// pairs, each level above pairs the previous level's messages (every node present).
DigestRef BintrieLevelHash::add_full_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src) {
  const uint32_t base = group_base_;
  level(base + g_ - 1);
  Level& L0 = levels_[base];
  const size_t pairs = b.entries.size() / 2;
  reserve(L0, pairs, 64);
  uint32_t first = L0.n;  // the previous level's first message of this group
  for (size_t m = 0; m < pairs; ++m) {
    size_t off = 0;
    message(L0, base, 64, &off);
    for (size_t side = 0; side < 2; ++side) {
      const DigestRef src = entry_src[2 * m + side];
      const Node n{src.zero() ? b.entries[2 * m + side].hash.data() : nullptr, src};
      place(&n, base, L0.in.data() + off + 32 * side, off + 32 * side);
    }
  }
  DigestRef top{base, first};
  for (uint32_t l = base + 1; l < base + g_; ++l) {
    Level& L = levels_[l];
    const size_t count = size_t(1) << (base + g_ - 1 - l);
    reserve(L, count, 64);
    const uint32_t below = first;
    first = L.n;
    for (size_t m = 0; m < count; ++m) {
      size_t off = 0;
      message(L, l, 64, &off);
      levels_[l - 1].slot[below + 2 * m] = uint64_t(l) << 32 | off;
      levels_[l - 1].slot[below + 2 * m + 1] = uint64_t(l) << 32 | (off + 32);
    }
    top = {l, first};
  }
  return top;
}

DigestRef BintrieLevelHash::add_group(const bintrie::GroupBlob& b, std::span<const DigestRef> entry_src) {
  if (full_group(b, entry_src)) return add_full_group(b, entry_src);
  clear_tree(g_);
  Tree& t = *tree_;
  for (size_t k = 0; k < b.entries.size(); ++k) {
    const bintrie::GroupEntry& e = b.entries[k];
    const DigestRef src = k < entry_src.size() ? entry_src[k] : DigestRef{};
    if (src.zero() && bintrie::is_zero32(e.hash.data())) continue;  // a zero entry: absent
    const unsigned d = e.depth;
    const uint32_t i = uint32_t(e.pos) >> (g_ - d);
    t.occ[d][i >> 6] |= uint64_t(1) << (i & 63);
    t.at[d][i] = {src.zero() ? e.hash.data() : nullptr, src};
  }
  const Node* root = reduce_tree(g_, group_base_);
  return root ? root->ref : DigestRef{};
}

void BintrieLevelHash::run(const bintrie::Hasher& h) {
  for (uint32_t l = 0; l < used_; ++l) {
    Level& L = levels_[l];
    if (L.n == 0) continue;
    if (L.out.size() < size_t(L.n) * 32) L.out.resize(size_t(L.n) * 32);
    (L.hash32 ? h.hash32_batch : h.hash64_batch)(L.in.data(), L.out.data(), L.n);
    for (uint32_t j = 0; j < L.n; ++j)
      if (L.slot[j] != kNoSlot)
        std::memcpy(levels_[L.slot[j] >> 32].in.data() + (L.slot[j] & 0xffffffffu), L.out.data() + 32 * size_t(j), 32);
  }
}

const uint8_t* BintrieLevelHash::digest(DigestRef r) const {
  return r.zero() ? nullptr : levels_[r.level].out.data() + 32 * size_t(r.index);
}

size_t BintrieLevelHash::messages() const {
  size_t n = 0;
  for (uint32_t l = 0; l < used_; ++l) n += levels_[l].n;
  return n;
}

}  // namespace st::persist
