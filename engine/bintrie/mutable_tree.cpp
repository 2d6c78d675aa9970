// mutable_tree: batched writes, dirty marking and level-by-level re-hash (see mutable_tree.h).
#include "engine/bintrie/mutable_tree.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/bintrie/stem_bits.h"
#include "kernels/support/check.h"

namespace st::bintrie {

MutableTree::MutableTree(Hasher h, bool huge_pages)
    : h_(h),
      internal_(TreeArrayAllocator<InternalNode>(huge_pages)),
      parent_(TreeArrayAllocator<uint32_t>(huge_pages)),
      pairs_(TreeArrayAllocator<ChildHashes>(huge_pages)),
      stems_(TreeArrayAllocator<StemNode>(huge_pages)),
      slots_(TreeArrayAllocator<SlotData>(huge_pages)),
      slot_sub_(TreeArrayAllocator<uint8_t>(huge_pages)),
      inner_(TreeArrayAllocator<StemInnerCache>(huge_pages)),
      dirty_by_depth_(kStemBits + 1) {}

uint32_t MutableTree::new_internal(uint32_t parent) {
  internal_.emplace_back();
  parent_.push_back(parent);
  pairs_.emplace_back();
  ST_CHECK(internal_.size() < kRefIndexMask, "binary trie: internal node index overflows a NodeRef");
  return uint32_t(internal_.size() - 1);
}

uint32_t MutableTree::new_stem(const uint8_t* stem31, uint32_t parent, unsigned side) {
  StemNode s;
  std::memcpy(s.stem.data(), stem31, 31);
  s.parent_side = parent == kNoParent ? kNoParent : parent << 1 | side;
  s.slot_begin = uint32_t(slots_.size());
  stems_.push_back(s);
  ST_CHECK(stems_.size() < kRefIndexMask, "binary trie: stem index overflows a NodeRef");
  return uint32_t(stems_.size() - 1);
}

const Hash32& MutableTree::ref_hash(NodeRef r) const {
  static const Hash32 kZero{};
  uint32_t parent_side;
  if (ref_is_internal(r)) {
    const uint32_t p = parent_[ref_index(r)];
    parent_side = p == kNoParent ? kNoParent : p << 1 | (internal_[p].child[1] == r ? 1u : 0u);
  } else if (ref_is_stem(r)) {
    parent_side = stems_[ref_index(r)].parent_side;
  } else if (ref_is_stub(r)) {
    return live_stub(ref_index(r)).hash;
  } else {
    return kZero;
  }
  return parent_side == kNoParent ? root_hash_ : pairs_[parent_side >> 1].h[parent_side & 1];
}

uint32_t MutableTree::find_slot(const StemNode& s, uint8_t sub) const {
  const uint32_t pos = sub_position(s, sub);
  assert(pos < s.slot_count && subs_of(s)[pos] == sub);
  return s.slot_begin + pos;
}

void MutableTree::write_stem_values(uint32_t si, std::span<const Entry> group) {
  StemNode* s = &stems_[si];
  if (!s->dirty) { s->dirty = 1; dirty_stems_.push_back(si); }
  for (const Entry& e : group) {
    const uint8_t sub = e.key[31];
    uint8_t* subs = subs_of(*s);
    const uint32_t pos = sub_position(*s, sub);
    dirty_leaves_.push_back({si, sub});
    if (pos != s->slot_count && subs[pos] == sub) {
      slots_[s->slot_begin + pos].value = e.value;
      continue;
    }
    // Insert: grow by relocating the stem's slots to the end of the pool when full (capacity
    // 1, 2, 4, ..., 256; the subs move from the stem's line to slot_sub_ past kInlineSubs).
    if (s->slot_count == s->slot_cap) {
      const uint32_t new_cap = std::min<uint32_t>(256, std::max<uint32_t>(1, 2u * s->slot_cap));
      const size_t new_begin = slots_.size();
      slots_.resize(new_begin + new_cap);
      std::copy(slots_.begin() + s->slot_begin, slots_.begin() + s->slot_begin + s->slot_count, slots_.begin() + new_begin);
      if (new_cap > kInlineSubs) {
        // The resize may move slot_sub_: re-derive the source (pool or stem line) after it.
        slot_sub_.resize(slots_.size());
        const uint8_t* src = s->slot_cap > kInlineSubs ? slot_sub_.data() + s->slot_begin : s->sub_inline;
        std::copy(src, src + s->slot_count, slot_sub_.begin() + new_begin);
      }
      s->slot_begin = uint32_t(new_begin);
      s->slot_cap = uint16_t(new_cap);
      subs = subs_of(*s);
    }
    SlotData* d = slots_.data() + s->slot_begin;
    std::move_backward(d + pos, d + s->slot_count, d + s->slot_count + 1);
    std::move_backward(subs + pos, subs + s->slot_count, subs + s->slot_count + 1);
    subs[pos] = sub;
    d[pos].value = e.value;
    ++s->slot_count;
    ++values_;
  }
}

namespace {
constexpr size_t kCommitChunk = 32;
constexpr size_t kCommitWindow = 8;
}  // namespace

void MutableTree::apply(std::span<const Entry> writes) {
  if (writes.empty()) return;
  if (!dirty_leaves_.empty()) dirty_leaves_may_repeat_ = true;
  // Dirty internal nodes are listed once each. The walk below meets each node once per
  // apply, and phase 2 descends only through nodes this apply created (listed when created),
  // so the first apply since a commit needs no dirty marks; a later one marks what the
  // earlier ones listed in the dirty bitset and its walk checks it.
  const bool walk_checks_dirty = applied_since_commit_;
  if (walk_checks_dirty) {
    dirty_bits_.resize((internal_.size() + 63) / 64);
    for (const auto& list : dirty_by_depth_)
      for (const DirtyNode& dn : list) dirty_bits_[dn.node >> 6] |= uint64_t(1) << (dn.node & 63);
    dirty_bits_set_ = true;
  }
  applied_since_commit_ = true;
  const SortedEntries sorted = sort_entries(writes);
  const size_t groups = sorted.stems();
  // Phase 1, read-only and level-synchronous, over the distinct dirty nodes: a frontier
  // item is one internal node with the range of (sorted) stem groups whose paths cross it,
  // so the shared top of the paths is walked once, not once per group. Each round marks
  // its nodes dirty, splits each range by the stem bit of its depth (groups are sorted, so
  // the bit is monotone within a range) and prefetches the internal children it descends
  // into; they are read in the next round, so the cache misses of the whole round overlap.
  // A group's walk ends at the slot (parent, side) holding a stem or nothing.
  struct Cursor {
    uint32_t parent;  // UINT32_MAX: the root slot
    uint8_t side;
    uint16_t depth;
  };
  struct Frontier {
    uint32_t node;
    uint32_t parent_side;  // kNoParent: the root
    uint32_t lo, hi;       // stem groups [lo, hi)
  };
  std::vector<Cursor> cur(groups, Cursor{UINT32_MAX, 0, 0});
  std::vector<uint64_t> prefix(groups);
  for (size_t g = 0; g < groups; ++g) prefix[g] = load_be64(sorted.stem(g));
  auto bit_of = [&](size_t g, unsigned d) {
    return d < 64 ? unsigned(prefix[g] >> (63 - d)) & 1u : stem_bit(sorted.stem(g), d);
  };
  std::vector<Frontier> front, next_front;
  if (ref_is_internal(root_)) front.push_back({ref_index(root_), kNoParent, 0, uint32_t(groups)});
  for (unsigned depth = 0; !front.empty(); ++depth) {
    next_front.clear();
    for (const Frontier& f : front) {
      if (walk_checks_dirty) mark_internal_dirty_ps(f.node, depth, f.parent_side);
      else dirty_by_depth_[depth].push_back({f.node, f.parent_side});
      const InternalNode& nd = internal_[f.node];
      if (f.hi - f.lo == 1) {
        // One group (most nodes below the shared top): no split search, and the side is an
        // index, not a branch (a branch on a random key bit mispredicts half the time).
        const unsigned side = bit_of(f.lo, depth);
        const NodeRef child = nd.child[side];
        if (ref_is_internal(child)) {
          __builtin_prefetch(&internal_[ref_index(child)]);
          next_front.push_back({ref_index(child), f.node << 1 | side, f.lo, f.hi});
        } else {
          if (ref_is_stem(child)) __builtin_prefetch(&stems_[ref_index(child)]);
          cur[f.lo] = {f.node, uint8_t(side), uint16_t(depth + 1)};
        }
        continue;
      }
      // First group of the range that takes side 1 at this depth.
      uint32_t mid = f.lo;
      if (f.hi - f.lo <= 8) {
        while (mid < f.hi && bit_of(mid, depth) == 0) ++mid;
      } else {
        uint32_t lo = f.lo, hi = f.hi;
        while (lo < hi) {
          const uint32_t m = lo + (hi - lo) / 2;
          if (bit_of(m, depth) == 0) lo = m + 1; else hi = m;
        }
        mid = lo;
      }
      for (unsigned side = 0; side < 2; ++side) {
        const uint32_t lo = side ? mid : f.lo, hi = side ? f.hi : mid;
        if (lo == hi) continue;
        const NodeRef child = nd.child[side];
        if (ref_is_internal(child)) {
          __builtin_prefetch(&internal_[ref_index(child)]);
          next_front.push_back({ref_index(child), f.node << 1 | side, lo, hi});
          continue;
        }
        if (ref_is_stem(child)) __builtin_prefetch(&stems_[ref_index(child)]);
        for (uint32_t g = lo; g < hi; ++g) cur[g] = {f.node, uint8_t(side), uint16_t(depth + 1)};
      }
    }
    front.swap(next_front);
  }
  auto slot_ref = [&](const Cursor& c) { return c.parent == UINT32_MAX ? root_ : internal_[c.parent].child[c.side]; };
  for (size_t g = 0; g < groups; ++g) {
    const NodeRef r = slot_ref(cur[g]);
    if (!ref_is_stem(r)) continue;
    const StemNode& s = stems_[ref_index(r)];
    // A group that splits the stem reads the stem's committed hash from its parent's line
    // (phase 2 is one dependent chain per group: a line it misses costs the full latency).
    if (cur[g].parent != UINT32_MAX && std::memcmp(s.stem.data(), sorted.stem(g), 31) != 0) __builtin_prefetch(&pairs_[cur[g].parent]);
    else __builtin_prefetch(&slots_[s.slot_begin]);
  }
  [[maybe_unused]] const size_t first_new_internal = internal_.size();
  // Phase 2, in key order: resume each group at its cursor (an earlier group may have
  // replaced the slot's content by a split, so re-read it and keep descending) and mutate.
  for (size_t g = 0; g < groups; ++g) {
    // The cursor slots' lines (read by the walk, maybe evicted since) and their stems ahead
    // of use: each group's mutation is a dependent chain that would pay a full miss latency.
    if (g + 16 < groups && cur[g + 16].parent != UINT32_MAX) __builtin_prefetch(&internal_[cur[g + 16].parent]);
    if (g + 8 < groups) {
      const NodeRef r8 = slot_ref(cur[g + 8]);
      if (ref_is_stem(r8)) __builtin_prefetch(&stems_[ref_index(r8)]);
    }
    const uint8_t* stem = sorted.stem(g);
    std::span<const Entry> group(sorted.entries.data() + sorted.stem_begin[g], sorted.stem_begin[g + 1] - sorted.stem_begin[g]);
    uint32_t parent = cur[g].parent;
    unsigned side = cur[g].side, depth = cur[g].depth;
    NodeRef ref = slot_ref(cur[g]);
    auto set_slot = [&](NodeRef r) {
      if (parent == UINT32_MAX) root_ = r;
      else internal_[parent].child[side] = r;
    };
    for (;;) {
      if (ref == kEmptyRef) {
        const uint32_t si = new_stem(stem, parent, side);
        set_slot(kRefTagStem | si);
        write_stem_values(si, group);
        break;
      }
      if (ref_is_internal(ref)) {
        const uint32_t ii = ref_index(ref);  // created by this apply: already listed
        assert(ii >= first_new_internal);
        parent = ii;
        side = stem_bit(stem, depth);
        ref = internal_[ii].child[side];
        ++depth;
        continue;
      }
      const uint32_t existing = stem_index_of(ref);
      const unsigned lcp = stem_lcp(stems_[existing].stem.data(), stem);
      if (lcp == kStemBits) {
        write_stem_values(existing, group);
        break;
      }
      // Split: single-child internal nodes at depths depth..lcp-1, the splitting node at lcp.
      // The existing stem moves under the splitting node: its (committed) hash moves into
      // that node's child-hash line; every node of the chain and the new stem are dirty.
      for (unsigned d = depth; d <= lcp; ++d) {
        const uint32_t ni = new_internal(parent);
        set_slot(kRefTagInternal | ni);
        dirty_by_depth_[d].push_back({ni, parent == kNoParent ? kNoParent : parent << 1 | side});
        parent = ni;
        side = stem_bit(stem, d);
      }
      const uint32_t si = new_stem(stem, parent, side);
      InternalNode& split = internal_[parent];
      split.child[side] = kRefTagStem | si;
      split.child[side ^ 1] = kRefTagStem | existing;
      // The existing stem's committed hash, from where it hung (before its move).
      const uint32_t old_ps = stems_[existing].parent_side;
      pairs_[parent].h[side ^ 1] = old_ps == kNoParent ? root_hash_ : pairs_[old_ps >> 1].h[old_ps & 1];
      stems_[existing].parent_side = parent << 1 | (side ^ 1);
      write_stem_values(si, group);
      break;
    }
  }
}

void MutableTree::hash_dirty_stems(CommitStats& cs) {
  if (dirty_stems_.empty()) return;
  cs.dirty_stems += dirty_stems_.size();
  std::vector<uint32_t> dense_stems, sparse_stems;
  for (uint32_t si : dirty_stems_) {
    const StemNode& s = stems_[si];
    (s.inner != UINT32_MAX || s.slot_count >= kDenseStemValues ? dense_stems : sparse_stems).push_back(si);
  }
  hash_written_leaves(cs);
  cs.dense_dirty_stems += dense_stems.size();
  hash_dense_subtrees(fill_dense_caches(dense_stems), cs);
  hash_stem_nodes(sparse_stems, dense_stems, cs);
  dirty_stems_.clear();
}

// 1. Dirty leaves: one hash32_batch; each written slot's leaf hash set.
void MutableTree::hash_written_leaves(CommitStats& cs) {
  // Several applies since the last commit may have written a leaf more than once.
  if (dirty_leaves_may_repeat_) {
    std::sort(dirty_leaves_.begin(), dirty_leaves_.end());
    dirty_leaves_.erase(std::unique(dirty_leaves_.begin(), dirty_leaves_.end()), dirty_leaves_.end());
    dirty_leaves_may_repeat_ = false;
  }
  // Each written slot is found once (slots do not move during commit).
  const size_t nl = dirty_leaves_.size();
  leaf_slots_.resize(nl);
  scratch_a_.resize(nl);
  // Prefetched in two stages, kCommitWindow leaves apart: the stem line, then (from the
  // stem's slot_begin) the slot line.
  constexpr size_t W = kCommitWindow;
  for (size_t i = 0; i < std::min(nl, 2 * W); ++i) __builtin_prefetch(&stems_[dirty_leaves_[i].first]);
  for (size_t i = 0; i < std::min(nl, W); ++i) __builtin_prefetch(&slots_[stems_[dirty_leaves_[i].first].slot_begin]);
  for (size_t i = 0; i < nl; ++i) {
    if (i + 2 * W < nl) __builtin_prefetch(&stems_[dirty_leaves_[i + 2 * W].first]);
    if (i + W < nl) __builtin_prefetch(&slots_[stems_[dirty_leaves_[i + W].first].slot_begin]);
    const uint32_t k = find_slot(stems_[dirty_leaves_[i].first], dirty_leaves_[i].second);
    leaf_slots_[i] = k;
    copy32(scratch_a_[i], slots_[k].value);
  }
  if (nl) h_.hash32_batch(scratch_a_[0].data(), scratch_a_[0].data(), nl);
  cs.leaf_hashes += nl;
  for (size_t i = 0; i < nl; ++i) copy32(slots_[leaf_slots_[i]].leaf_hash, scratch_a_[i]);
}

// Dense stems' caches: a new cache is filled from every present leaf, an existing one takes
// the written leaves. Returns the leaves set: (cache index << 9) | heap index. Ends the
// dirty leaves' list.
std::vector<uint32_t> MutableTree::fill_dense_caches(std::span<const uint32_t> dense_stems) {
  std::vector<uint32_t> dense_cur;
  for (uint32_t si : dense_stems) {
    StemNode& s = stems_[si];
    if (s.inner != UINT32_MAX) continue;
    ST_CHECK(inner_.size() < (1u << 23), "binary trie: dense stem index overflows 23 bits");
    s.inner = uint32_t(inner_.size());
    inner_.emplace_back();
    std::fill(std::begin(inner_.back().node), std::end(inner_.back().node), Hash32{});
    const uint8_t* subs = subs_of(s);
    for (uint32_t k = 0; k < s.slot_count; ++k) {
      inner_[s.inner].node[255 + subs[k]] = slots_[s.slot_begin + k].leaf_hash;
      dense_cur.push_back(s.inner << 9 | (255u + subs[k]));
    }
    s.dirty = 2;  // filled in full: its written leaves are already in dense_cur
  }
  for (size_t i = 0; i < dirty_leaves_.size(); ++i) {
    const auto [si, sub] = dirty_leaves_[i];
    StemNode& s = stems_[si];
    if (s.inner == UINT32_MAX || s.dirty == 2) continue;
    inner_[s.inner].node[255 + sub] = slots_[leaf_slots_[i]].leaf_hash;
    dense_cur.push_back(s.inner << 9 | (255u + sub));
  }
  dirty_leaves_.clear();
  return dense_cur;
}

// 2a. Dense stems: the ancestors of the written leaves rehashed level by level, all dense
// stems in one hash64_batch per level (both children zero: zero, no hash).
void MutableTree::hash_dense_subtrees(std::vector<uint32_t> dense_cur, CommitStats& cs) {
  if (dense_cur.empty()) return;
  std::vector<uint32_t> next, hashed;
  for (int level = 0; level < 8; ++level) {
    std::sort(dense_cur.begin(), dense_cur.end());
    next.clear();
    for (uint32_t c : dense_cur) {
      const uint32_t p = (c & ~511u) | (((c & 511u) - 1) / 2);
      if (next.empty() || next.back() != p) next.push_back(p);
    }
    scratch_a_.resize(2 * next.size());
    hashed.clear();
    for (uint32_t p : next) {
      StemInnerCache& t = inner_[p >> 9];
      const uint32_t i = p & 511u;
      if (is_zero64(t.node[2 * i + 1].data())) {
        // Both children 32 zero bytes (node[2i+1] and node[2i+2] are adjacent).
        t.node[i] = Hash32{};
        continue;
      }
      scratch_a_[2 * hashed.size()] = t.node[2 * i + 1];
      scratch_a_[2 * hashed.size() + 1] = t.node[2 * i + 2];
      hashed.push_back(p);
    }
    scratch_b_.resize(hashed.size());
    if (!hashed.empty()) h_.hash64_batch(scratch_a_[0].data(), scratch_b_[0].data(), hashed.size());
    for (size_t q = 0; q < hashed.size(); ++q) inner_[hashed[q] >> 9].node[hashed[q] & 511u] = scratch_b_[q];
    cs.subtree_hashes += hashed.size();
    dense_cur.swap(next);
  }
}

// 2b. Sparse stems: the subtree over the present leaves (batched per level). 3. Stem nodes
// H(stem || 0x00 || R), sparse then dense, in chunks of kCommitChunk: a chunk's stem lines
// are prefetched, its messages built, its parents' lines prefetched, then it is hashed and
// the hashes written (the chunk's lines and their address translations are still cached
// when they are written).
void MutableTree::hash_stem_nodes(std::span<const uint32_t> sparse_stems, std::span<const uint32_t> dense_stems,
                                  CommitStats& cs) {
  StemLevels& L = levels_;
  L.pos.clear();
  L.hash.clear();
  L.off.clear();
  for (uint32_t si : sparse_stems) {
    const StemNode& s = stems_[si];
    L.off.push_back(uint32_t(L.pos.size()));
    const uint8_t* subs = subs_of(s);
    for (uint32_t k = 0; k < s.slot_count; ++k) {
      L.pos.push_back(subs[k]);
      L.hash.push_back(slots_[s.slot_begin + k].leaf_hash);
    }
  }
  L.off.push_back(uint32_t(L.pos.size()));
  cs.subtree_hashes += stem_subtree_roots(h_, L);
  const size_t ns = sparse_stems.size(), n = ns + dense_stems.size();
  auto stem_at = [&](size_t i) { return i < ns ? sparse_stems[i] : dense_stems[i - ns]; };
  constexpr size_t C = kCommitChunk;
  scratch_a_.resize(2 * std::min(n, C));
  scratch_b_.resize(std::min(n, C));
  for (size_t c0 = 0; c0 < n; c0 += C) {
    const size_t m = std::min(C, n - c0);
    for (size_t i = c0; i < c0 + m; ++i) __builtin_prefetch(&stems_[stem_at(i)]);
    for (size_t i = c0; i < c0 + m; ++i) {
      const StemNode& s = stems_[stem_at(i)];
      uint8_t* msg = scratch_a_[2 * (i - c0)].data();
      std::memcpy(msg, s.stem.data(), 31);
      msg[31] = 0;
      std::memcpy(msg + 32, (i < ns ? L.hash[i] : inner_[s.inner].node[0]).data(), 32);
      if (s.parent_side != kNoParent) __builtin_prefetch(&pairs_[s.parent_side >> 1], 1);
    }
    h_.hash64_batch(scratch_a_[0].data(), scratch_b_[0].data(), m);
    for (size_t i = c0; i < c0 + m; ++i) {
      StemNode& s = stems_[stem_at(i)];
      s.dirty = 0;
      if (s.parent_side != kNoParent) copy32(pairs_[s.parent_side >> 1].h[s.parent_side & 1], scratch_b_[i - c0]);
      else root_hash_ = scratch_b_[i - c0];  // the stem is the root
    }
  }
  cs.stem_hashes += n;
}

Hash32 MutableTree::commit(CommitStats* stats) {
  CommitStats cs;
  hash_dirty_stems(cs);
  // 4. Dirty internal nodes, deepest first. A node's message is its child-hash line; its
  // hash goes into its parent's line (read at the next depth) or is the root hash.
  bool root_done = false;
  applied_since_commit_ = false;
  for (int d = int(kStemBits); d >= 0; --d) {
    std::vector<DirtyNode>& list = dirty_by_depth_[size_t(d)];
    if (list.empty()) continue;
    const size_t n = list.size();
    constexpr size_t C = kCommitChunk;
    scratch_a_.resize(2 * std::min(n, C));
    scratch_b_.resize(std::min(n, C));
    for (size_t i = 0; i < std::min(C, n); ++i) __builtin_prefetch(&pairs_[list[i].node]);
    for (size_t c0 = 0; c0 < n; c0 += C) {
      const size_t m = std::min(C, n - c0);
      const DirtyNode* chunk = list.data() + c0;
      for (size_t i = 0; i < m; ++i) {
        const ChildHashes& c = pairs_[chunk[i].node];
        copy32(scratch_a_[2 * i], c.h[0]);
        copy32(scratch_a_[2 * i + 1], c.h[1]);
      }
      // The next chunk's messages and this chunk's parents arrive while this chunk hashes.
      for (size_t i = c0 + m; i < std::min(n, c0 + m + C); ++i) __builtin_prefetch(&pairs_[list[i].node]);
      for (size_t i = 0; i < m; ++i)
        if (chunk[i].parent_side != kNoParent) __builtin_prefetch(&pairs_[chunk[i].parent_side >> 1], 1);
      h_.hash64_batch(scratch_a_[0].data(), scratch_b_[0].data(), m);
      for (size_t i = 0; i < m; ++i) {
        const DirtyNode& dn = chunk[i];
        if (dn.parent_side == kNoParent) {
          root_hash_ = scratch_b_[i];
          root_done = true;
        } else {
          copy32(pairs_[dn.parent_side >> 1].h[dn.parent_side & 1], scratch_b_[i]);
        }
      }
    }
    cs.internal_hashes += n;
    list.clear();
  }
  if (dirty_bits_set_) std::fill(dirty_bits_.begin(), dirty_bits_.end(), 0);  // (~180 KB at 1M keys)
  dirty_bits_set_ = false;
  // Without a dirty internal node, the root hash is as the stems phase left it (a stem
  // root) or unchanged; an empty tree's root is zero.
  if (!root_done && root_ == kEmptyRef) root_hash_ = Hash32{};
  if (stats) *stats = cs;
  return root_hash_;
}

std::optional<uint32_t> MutableTree::find_stem(const uint8_t* stem31) const {
  NodeRef ref = root_;
  unsigned depth = 0;
  while (ref_is_internal(ref)) {
    ref = internal_[ref_index(ref)].child[stem_bit(stem31, depth)];
    ++depth;
  }
  ST_CHECK(!ref_is_stub(ref), "binary trie: a lookup reached an unread subtree (resolve what stubs_to_resolve lists first)");
  if (ref_is_stem(ref) && std::memcmp(stems_[ref_index(ref)].stem.data(), stem31, 31) == 0) return ref_index(ref);
  return std::nullopt;
}

std::optional<Hash32> MutableTree::get(const Hash32& key) const {
  const auto si = find_stem(key.data());
  if (!si) return std::nullopt;
  const StemNode& s = stems_[*si];
  const uint32_t pos = sub_position(s, key[31]);
  if (pos == s.slot_count || subs_of(s)[pos] != key[31]) return std::nullopt;
  return slots_[s.slot_begin + pos].value;
}

void MutableTree::stem_leaf_hashes(uint32_t stem_index, Hash32 out[256]) const {
  for (int i = 0; i < 256; ++i) out[i] = Hash32{};
  for (const StemSlot& s : slots(stem_index)) out[s.sub] = s.leaf_hash;
}

size_t MutableTree::memory_bytes() const {
  return internal_.capacity() * sizeof(InternalNode) + parent_.capacity() * sizeof(uint32_t) +
         pairs_.capacity() * sizeof(ChildHashes) +
         dirty_bits_.capacity() * sizeof(uint64_t) +
         stems_.capacity() * sizeof(StemNode) +
         slots_.capacity() * sizeof(SlotData) + slot_sub_.capacity() + inner_.capacity() * sizeof(StemInnerCache) +
         stubs_.capacity() * sizeof(StubEntry) + free_stubs_.capacity() * sizeof(StubId);
}

}  // namespace st::bintrie
