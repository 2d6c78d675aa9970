// mutable_tree_stubs: the mutable tree's unread subtrees (see mutable_tree.h, "Unread
// subtrees"): stubs, which ones a batch reaches (stubs_to_resolve) and their resolution
// from the group-depth disk layout's blobs (group_blob.h).
//
//   stub ref    11b<<30 | id; stubs_[id] = {hash, locator, parent_side, live, known_stem}
//
// Resolution granularity is the disk layout's: one group blob turns a stub into the g levels
// of internal nodes of its group (inner hashes recomputed from the entries, the entries at
// their bottom new stubs), one stem blob turns a stub into the stem with all its values.
// What a batch reads: nothing is ever removed from this tree, so apply() reads exactly the
// nodes on its stems' paths down to the slot each path ends at (empty, a stem written to,
// or a stem a new one splits: its stem bytes are needed for the split point, hence the
// whole stem blob), and nothing beside them.
//
// Invariants: a resolution changes the tree only after the blob passed its strict check
// and its recomputed hash equals the stub's (the hash in the parent's line is unchanged);
// every node it creates is clean; a stub's parent_side never changes while it is live
// (apply stops before it would move one: a split moves only a read stem).
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/bintrie/stem_bits.h"

namespace st::bintrie {

namespace {

std::string hex_prefix8(const Hash32& h) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) { s += d[h[i] >> 4]; s += d[h[i] & 15]; }
  return s + "..";
}

std::string hash_mismatch_text(const char* what, const Hash32& got, const Hash32& want) {
  return std::string("binary trie: the ") + what + " hashes to " + hex_prefix8(got) + ", its stub holds " +
         hex_prefix8(want);
}

// Relative depth of a heap position (0 = the group's root; children of i at 2i+1, 2i+2).
unsigned heap_depth(size_t at) { return unsigned(std::bit_width(at + 1)) - 1; }

}  // namespace

// A checked group blob as a heap over relative depths 0..g: each entry's hash at its
// position, the inner hashes recomputed (zero rule), which positions hold an entry or have
// one below (an internal node of the group: used, not an entry).
struct MutableTree::GroupShape {
  unsigned g = 0;
  unsigned deepest_entry = 0;  // largest relative depth of an entry
  std::vector<Hash32> node;
  std::vector<int32_t> entry;  // entry index at the position, or -1
  std::vector<uint8_t> used;

  // "" and the heap filled from a checked view, or why the blob cannot be a group of a tree.
  std::string fill(const Hasher& h, const GroupBlobView& v) {
    g = v.g;
    const GroupBlob b = group_blob_from_view(v);
    for (size_t i = 0; i < b.entries.size(); ++i) {
      const GroupEntry& e = b.entries[i];
      if (e.hash == Hash32{}) return "binary trie: group blob entry " + std::to_string(i) + " has a zero hash";
      deepest_entry = std::max<unsigned>(deepest_entry, e.depth);
    }
    group_heap(h, b, &node, &entry);
    used.assign(node.size(), 0);
    for (size_t i = node.size(); i-- > 0;)  // (an entry's positions below are empty: checked)
      used[i] = entry[i] >= 0 || (i < (size_t(1) << g) - 1 && (used[2 * i + 1] | used[2 * i + 2]));
    return {};
  }
};

const MutableTree::StubEntry& MutableTree::live_stub(StubId id) const {
  ST_CHECK(id < stubs_.size() && stubs_[id].live, "binary trie: not the id of an unresolved stub");
  return stubs_[id];
}

MutableTree::Stub MutableTree::stub(StubId id) const {
  const StubEntry& e = live_stub(id);
  return {e.hash, e.locator};
}

NodeRef MutableTree::new_stub(const Hash32& hash, uint64_t locator, uint32_t parent_side, bool known_stem) {
  StubId id;
  if (!free_stubs_.empty()) {
    id = free_stubs_.back();
    free_stubs_.pop_back();
  } else {
    id = StubId(stubs_.size());
    ST_CHECK(id < kRefIndexMask, "binary trie: stub index overflows a NodeRef");
    stubs_.emplace_back();
  }
  stubs_[id] = {hash, locator, parent_side, 1, uint8_t(known_stem ? 1 : 0)};
  return kRefTagStub | id;
}

void MutableTree::replace_stub(StubId id, NodeRef ref) {
  StubEntry& e = stubs_[id];
  if (e.parent_side == kNoParent) root_ = ref;
  else internal_[e.parent_side >> 1].child[e.parent_side & 1] = ref;
  e.live = 0;
  free_stubs_.push_back(id);
}

void MutableTree::reset_to_stub(const Hash32& root, uint64_t locator) {
  ST_CHECK(root_ == kEmptyRef && internal_.empty() && stems_.empty() && stub_count() == 0,
           "binary trie: reset_to_stub of a tree that holds nodes");
  root_hash_ = root;
  if (root == Hash32{}) return;  // the empty tree: nothing to read
  root_ = new_stub(root, locator, kNoParent, false);
}

unsigned MutableTree::slot_path(uint32_t parent_side, uint8_t path[32]) const {
  uint8_t sides[kStemBits + 1];
  unsigned n = 0;
  while (parent_side != kNoParent) {
    ST_CHECK(n < kStemBits, "binary trie: a path deeper than 248 bits");
    sides[n++] = uint8_t(parent_side & 1);
    const uint32_t node = parent_side >> 1, up = parent_[node];
    parent_side = up == kNoParent ? kNoParent : up << 1 | (internal_[up].child[1] == (kRefTagInternal | node) ? 1u : 0u);
  }
  std::memset(path, 0, 32);
  for (unsigned d = 0; d < n; ++d)
    if (sides[n - 1 - d]) path[d / 8] |= uint8_t(0x80 >> (d % 8));
  return n;
}

unsigned MutableTree::stub_path(StubId id, uint8_t path[32]) const { return slot_path(live_stub(id).parent_side, path); }

void MutableTree::stubs_to_resolve(std::span<const Entry> writes, std::vector<StubId>* out) const {
  if (writes.empty() || stub_count() == 0) return;
  std::vector<Stem> stems(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) std::memcpy(stems[i].data(), writes[i].key.data(), 31);
  std::sort(stems.begin(), stems.end());
  stems.erase(std::unique(stems.begin(), stems.end()), stems.end());
  stubs_on_paths(root_, 0, stems, out);
}

// The stubs at the ends of the (sorted, distinct) stems' paths below ref at depth `depth`:
// the shared path is walked once, each range split by the stem bit of its depth.
void MutableTree::stubs_on_paths(NodeRef ref, unsigned depth, std::span<const Stem> stems, std::vector<StubId>* out) const {
  if (ref_is_stub(ref)) { out->push_back(ref_index(ref)); return; }
  if (!ref_is_internal(ref) || stems.empty()) return;
  const InternalNode& n = internal_[ref_index(ref)];
  const auto mid = std::partition_point(stems.begin(), stems.end(), [&](const Stem& s) { return stem_bit(s.data(), depth) == 0; });
  const size_t m = size_t(mid - stems.begin());
  if (m > 0) stubs_on_paths(n.child[0], depth + 1, stems.first(m), out);
  if (m < stems.size()) stubs_on_paths(n.child[1], depth + 1, stems.subspan(m), out);
}

// The group's internal nodes below heap position `at` (its hash already in the line the
// caller reads it from), preorder; entries become stubs with their locators.
NodeRef MutableTree::build_group(const GroupShape& sh, size_t at, uint32_t parent_side,
                                 std::span<const uint64_t> entry_locators) {
  if (!sh.used[at]) return kEmptyRef;
  if (sh.entry[at] >= 0)
    return new_stub(sh.node[at], entry_locators[size_t(sh.entry[at])], parent_side, heap_depth(at) < sh.g);
  const uint32_t ni = new_internal(parent_side == kNoParent ? kNoParent : parent_side >> 1);
  for (unsigned side = 0; side < 2; ++side) {
    const size_t c = 2 * at + 1 + side;
    const NodeRef r = build_group(sh, c, ni << 1 | side, entry_locators);
    internal_[ni].child[side] = r;  // (indexed after the call: the arrays may have grown)
    pairs_[ni].h[side] = sh.node[c];
  }
  return kRefTagInternal | ni;
}

void MutableTree::clear() {
  internal_.clear();
  parent_.clear();
  pairs_.clear();
  dirty_bits_.clear();
  dirty_bits_set_ = false;
  stems_.clear();
  slots_.clear();
  slot_sub_.clear();
  inner_.clear();
  stubs_.clear();
  free_stubs_.clear();
  values_ = 0;
  for (std::vector<DirtyNode>& list : dirty_by_depth_) list.clear();
  dirty_stems_.clear();
  dirty_leaves_.clear();
  dirty_leaves_may_repeat_ = false;
  applied_since_commit_ = false;
  root_ = kEmptyRef;
  root_hash_ = Hash32{};
}

std::string MutableTree::resolve_group_stub(StubId id, unsigned g, std::span<const uint8_t> blob,
                                            std::span<const uint64_t> entry_locators) {
  live_stub(id);
  GroupBlobView v;
  if (std::string err = check_group_blob(blob, g, &v); !err.empty()) return err;
  return resolve_group_stub(id, v, entry_locators, nullptr);
}

std::string MutableTree::resolve_group_stub(StubId id, const GroupBlobView& v, std::span<const uint64_t> entry_locators,
                                            NodeRef* placed, bool* hash_mismatch) {
  if (hash_mismatch) *hash_mismatch = false;
  const StubEntry e = live_stub(id);  // (a copy: new stubs may move the table)
  if (e.known_stem) return "binary trie: a group blob for a stub that is a stem (an entry ending above its group's bottom)";
  if (entry_locators.size() != v.k)
    return "binary trie: " + std::to_string(entry_locators.size()) + " entry locators for a group of " +
           std::to_string(v.k) + " entries";
  GroupShape sh;
  if (std::string err = sh.fill(h_, v); !err.empty()) return err;
  if (sh.node[0] != e.hash) {
    if (hash_mismatch) *hash_mismatch = true;
    return hash_mismatch_text("group blob", sh.node[0], e.hash);
  }
  uint8_t path[32];
  const unsigned depth = slot_path(e.parent_side, path);
  if (depth + sh.deepest_entry > kStemBits)
    return "binary trie: a group at depth " + std::to_string(depth) + " with entries below the stems' 248 bits";
  const NodeRef top = build_group(sh, 0, e.parent_side, entry_locators);
  replace_stub(id, top);
  if (placed) *placed = top;
  return {};
}

// The stem a checked stem blob holds, placed in the slot parent_side names: its values and
// leaf hashes in slots of capacity the next power of two, the dense subtree if it is dense.
// Returns its stem index.
uint32_t MutableTree::place_stem(uint32_t parent_side, const StemBlobView& v, const Hash32* leaf_hashes,
                             const DenseStemTree& tree) {
  const uint32_t parent = parent_side == kNoParent ? kNoParent : parent_side >> 1;
  const uint32_t si = new_stem(v.stem, parent, parent_side & 1);
  const uint32_t cap = std::bit_ceil(v.count);
  slots_.resize(slots_.size() + cap);
  if (cap > kInlineSubs) slot_sub_.resize(slots_.size());
  StemNode& s = stems_[si];
  s.slot_count = uint16_t(v.count);
  s.slot_cap = uint16_t(cap);
  uint8_t* subs = subs_of(s);
  uint32_t k = 0;
  for (unsigned sub = 0; sub < 256; ++sub) {
    if (!((v.bitmap[sub / 8] >> (7 - sub % 8)) & 1)) continue;
    subs[k] = uint8_t(sub);
    SlotData& d = slots_[s.slot_begin + k];
    std::memcpy(d.value.data(), v.values + 32 * size_t(k), 32);
    d.leaf_hash = leaf_hashes[sub];
    ++k;
  }
  values_ += v.count;
  if (v.count >= kDenseStemValues) {
    ST_CHECK(inner_.size() < (1u << 23), "binary trie: dense stem index overflows 23 bits");
    s.inner = uint32_t(inner_.size());
    inner_.emplace_back();
    std::copy(std::begin(tree.node), std::end(tree.node), std::begin(inner_.back().node));
  }
  return si;
}

std::string MutableTree::resolve_stem_stub(StubId id, std::span<const uint8_t> blob) {
  live_stub(id);
  StemBlobView v;
  if (std::string err = check_stem_blob(blob, &v); !err.empty()) return err;
  return resolve_stem_stub(id, v, nullptr);
}

std::string MutableTree::resolve_stem_stub(StubId id, const StemBlobView& v, NodeRef* placed, bool* hash_mismatch) {
  if (hash_mismatch) *hash_mismatch = false;
  const StubEntry e = live_stub(id);
  if (v.count == 0) return "binary trie: a stem blob without values";
  std::vector<Hash32> values(v.count);
  for (uint32_t i = 0; i < v.count; ++i) std::memcpy(values[i].data(), v.values + 32 * size_t(i), 32);
  h_.hash32_batch(values[0].data(), values[0].data(), v.count);  // (count >= 1: checked)
  Hash32 leaves[256]{};
  for (unsigned sub = 0, k = 0; sub < 256; ++sub)
    if ((v.bitmap[sub / 8] >> (7 - sub % 8)) & 1) leaves[sub] = values[k++];
  auto tree = std::make_unique<DenseStemTree>();
  dense_stem_tree(h_, leaves, tree.get());
  Hash32 got;
  hash_stem_node(h_, v.stem, tree->root().data(), got.data());
  if (got != e.hash) {
    if (hash_mismatch) *hash_mismatch = true;
    return hash_mismatch_text("stem blob", got, e.hash);
  }
  uint8_t path[32];
  const unsigned depth = slot_path(e.parent_side, path);
  if (stem_lcp(path, v.stem) < depth)
    return "binary trie: the stem blob's stem does not lie under its position (depth " + std::to_string(depth) + ")";
  const NodeRef stem = kRefTagStem | place_stem(e.parent_side, v, leaves, *tree);
  replace_stub(id, stem);
  if (placed) *placed = stem;
  return {};
}

}  // namespace st::bintrie
