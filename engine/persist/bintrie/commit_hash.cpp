// bintrie/commit_hash: the commit's hash phase (bintrie/commit_tree.h, Committer::hash_plan):
// the plan's new stems, then its new groups by height, hashed level by level with one
// batch kernel call per level (BintrieLevelHash, bintrie/level_hash.h); the listing the plan
// makes for it (note_group: each new child's slot in its parent's entry sources and the
// parent entry its digest goes to); and the pure hash of the same new nodes
// (bintrie/pure_hash.h), the reference the hash phase is timed against.
// Invariant: after hash_plan every new group's entries and the root's hash hold the digests
// stem_blob_hash / reconstruct_group give, bit for bit; other new Plans keep a zero hash.
#include <algorithm>
#include <cstring>
#include <span>

#include "engine/persist/bintrie/commit_tree.h"

namespace st::persist::bintrie_commit {

// A group's entries on their way into the cache (the next group's, while one is laid out).
void Committer::prefetch_entries(const bintrie::GroupBlob& b) {
  const char* at = reinterpret_cast<const char*>(b.entries.data());
  const size_t bytes = b.entries.size() * sizeof(bintrie::GroupEntry);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(at + off);
}

// The new stems and groups of the plan hashed level by level (BintrieLevelHash): every new
// stem, then the new groups by height (1: only placed or stem children), a new child's
// digest filling its parent's entry. Then every group entry of a new child is set from the
// digests, and the root's hash (the other new Plans keep a zero hash: pure_hash and the
// writes read the listed digests and the entries).
void Committer::hash_plan(BintrieHashScratch& x) {
  BintrieLevelHash& lh = x.levels;
  lh.reset(g_);
  for (size_t k = 0; k < x.stems.size(); ++k) {
    if (k + 2 < x.stems.size()) __builtin_prefetch(&x.stems[k + 2].plan->stem_blob);
    if (k + 1 < x.stems.size()) __builtin_prefetch(x.stems[k + 1].plan->stem_blob.values.data());
    Listed& l = x.stems[k];
    l.ref = lh.add_stem(l.plan->stem_blob);
    if (l.src_at != UINT32_MAX) x.entry_src[l.src_at] = l.ref;
  }
  for (std::vector<Listed>& level : x.by_height) {
    if (level.empty()) break;
    lh.next_height();
    for (size_t k = 0; k < level.size(); ++k) {
      if (k + 2 < level.size()) __builtin_prefetch(&level[k + 2].plan->group_blob);
      if (k + 1 < level.size()) prefetch_entries(level[k + 1].plan->group_blob);
      Listed& l = level[k];
      const bintrie::GroupBlob& b = l.plan->group_blob;
      l.ref = lh.add_group(b, std::span(x.entry_src).subspan(l.plan->src_seg, b.entries.size()));
      if (l.src_at != UINT32_MAX) x.entry_src[l.src_at] = l.ref;
    }
  }
  lh.run(h_);
  auto take = [&](const Listed& l) {
    Hash32* to = l.up ? l.up : &l.plan->hash;  // the parent's entry, or the root's hash
    if (const uint8_t* d = lh.digest(l.ref)) std::memcpy(to->data(), d, 32);
    else *to = Hash32{};
  };
  for (const Listed& l : x.stems) take(l);
  for (const std::vector<Listed>& level : x.by_height)  // children before parents
    for (const Listed& l : level) take(l);
}

// A listed node's hash after hash_plan.
Hash32 Committer::listed_hash(const Listed& l) const {
  Hash32 out{};
  if (const uint8_t* d = scratch_->levels.digest(l.ref)) std::memcpy(out.data(), d, 32);
  return out;
}

// A new group planned: its entry sources get their slots (zero), each new child's listing
// the slot its digest fills and the entry its hash goes to (while the children are still in
// cache, so hash_plan finds neither through the parent's kids); listed by height.
void Committer::note_group(Plan* p) {
  BintrieHashScratch& x = *scratch_;
  p->src_seg = uint32_t(x.entry_src.size());
  x.entry_src.resize(x.entry_src.size() + p->group_blob.entries.size(), DigestRef{});
  uint32_t below = 0;
  for (uint32_t i : p->new_kids) {
    const Plan& kid = *p->kids[i].plan;
    Listed& l = kid.kind == Plan::stem ? x.stems[kid.listed] : x.by_height[kid.height - 1][kid.listed];
    l.src_at = p->src_seg + i;
    l.up = &p->group_blob.entries[i].hash;
    below = std::max(below, kid.height);
  }
  p->height = below + 1;
  if (x.by_height.size() <= below) x.by_height.resize(below + 1);
  p->listed = uint32_t(x.by_height[below].size());
  x.by_height[below].emplace_back().plan = p;
}

// The group noted last is kept by locator after all: unlisted.
void Committer::unnote_group(const Plan& p) {
  BintrieHashScratch& x = *scratch_;
  x.by_height[p.height - 1].pop_back();
  x.entry_src.resize(p.src_seg);
}

io::Status Committer::pure_hash(PureHashCount* c) const {
  std::vector<const bintrie::StemBlob*> stems;
  std::vector<Hash32> stem_hashes;
  std::vector<const bintrie::GroupBlob*> groups;
  std::vector<Hash32> group_hashes;
  for (const Listed& l : scratch_->stems) stems.push_back(&l.plan->stem_blob), stem_hashes.push_back(listed_hash(l));
  for (const std::vector<Listed>& level : scratch_->by_height)  // children before parents
    for (const Listed& l : level) groups.push_back(&l.plan->group_blob), group_hashes.push_back(listed_hash(l));
  return bintrie_pure_hash(h_, stems, stem_hashes, groups, group_hashes, c);
}

}  // namespace st::persist::bintrie_commit
