// bintrie/commit_plan: the commit's plan (bintrie/commit_tree.h, Committer::plan): per
// touched group, its entries re-derived from the unchanged entries (kept by locator, no Plan
// each), the touched child groups (planned recursively) and the stems (a loaded stem with
// its writes applied, and every new stem in its region), split as the builder would place
// them (walk). A stem whose values do not change and a group whose entries and children all
// stay become `placed` (kept by locator, not superseded). Every new stem and group is listed
// for the hash phase as it is made (note_group, commit_hash.cpp).
// Invariant: only nodes the resolve checked are planned from.
#include <algorithm>
#include <cstring>

#include "engine/persist/bintrie/commit_tree.h"

namespace st::persist::bintrie_commit {

// The plan of the new tree; then the writes.
io::Status Committer::plan(BintrieHashScratch& x, std::unique_ptr<Plan>* out) {
  scratch_ = &x;
  x.stems.clear();
  for (std::vector<Listed>& v : x.by_height) v.clear();
  x.entry_src.clear();
  std::vector<Item> items;
  if (root_ < 0) {
    for (uint32_t w = 0; w < writes_.size(); ++w) add_new_stem(w, &items);
    if (items.empty()) { *out = nullptr; return {}; }
    return place(items, 0, out);
  }
  Node& n = nodes_[root_];
  std::vector<uint32_t> all(writes_.size());
  for (uint32_t w = 0; w < writes_.size(); ++w) all[w] = w;
  if (!n.group) {
    // A lone stem as the root: it and the new stems are placed from depth 0.
    collect_stem(root_, all, &items);
    return place(items, 0, out);
  }
  return plan_group(root_, 0, all, out);
}

void Committer::add_new_stem(uint32_t w, std::vector<Item>* items) {
  Item it;
  it.kind = Item::stem;
  std::memcpy(it.blob.stem.data(), writes_[w].stem.data(), 31);
  it.changed = apply(w, &it.blob);
  if (it.blob.values.empty()) return;  // nothing written (cannot happen: every write is a leaf)
  items->push_back(std::move(it));
}

// A loaded stem and the writes that reach its region: the stem (changed or not) and new stems.
void Committer::collect_stem(int id, const std::vector<uint32_t>& dirty, std::vector<Item>* items) {
  Node& n = nodes_[id];
  Item it;
  it.kind = Item::stem;
  it.node = id;
  it.loc = n.loc;
  it.blob = n.stem;
  for (uint32_t w : dirty) {
    if (std::memcmp(writes_[w].stem.data(), n.stem.stem.data(), 31) == 0) it.changed |= apply(w, &it.blob);
    else add_new_stem(w, items);
  }
  items->push_back(std::move(it));
}

io::Status Committer::plan_group(int id, unsigned d, const std::vector<uint32_t>& dirty, std::unique_ptr<Plan>* out) {
  Node& n = nodes_[id];
  std::vector<std::vector<uint32_t>> per_entry(n.blob.entries.size());
  std::vector<Item> items;
  for (uint32_t w : dirty) {
    const auto e = bd::find_entry(n.blob, bd::key_bits(writes_[w].stem.data(), d, g_));
    if (e) per_entry[*e].push_back(w);
    else add_new_stem(w, &items);
  }
  for (uint32_t e = 0; e < n.blob.entries.size(); ++e) {
    const bintrie::GroupEntry& ge = n.blob.entries[e];
    if (per_entry[e].empty()) {
      Item it;
      it.kind = Item::keep;
      it.pos = ge.pos;
      it.depth = ge.depth;
      it.hash = ge.hash;
      it.loc = n.children[e];
      items.push_back(std::move(it));
      continue;
    }
    const int c = n.child_node[e];
    if (c < 0) return err(n.loc, "internal: a dirty child was not loaded");
    if (nodes_[c].group) {
      if (ge.depth != g_) return err(n.children[e], "a group where the parent's entry ends early");
      Item it;
      it.kind = Item::sub;
      it.pos = ge.pos;
      it.depth = ge.depth;
      it.node = c;
      it.dirty = per_entry[e];
      items.push_back(std::move(it));
    } else {
      collect_stem(c, per_entry[e], &items);
    }
  }
  std::unique_ptr<Plan> p;
  if (io::Status s = place(items, d, &p); !s.ok()) return s;
  // Unchanged group: the same entries and every child kept.
  bool same = p->kind == Plan::group && p->group_blob.entries.size() == n.blob.entries.size();
  for (size_t e = 0; same && e < n.blob.entries.size(); ++e) {
    const bintrie::GroupEntry& a = p->group_blob.entries[e];
    const bintrie::GroupEntry& b = n.blob.entries[e];
    same = a.pos == b.pos && a.depth == b.depth && a.hash == b.hash && kept_as(p->kids[e], n.children[e]);
  }
  if (same) {
    unnote_group(*p);
    n.reused = true;
    p = std::make_unique<Plan>();
    p->kind = Plan::placed;
    p->node = id;
    p->loc = n.loc;
    p->hash = n.hash;
  }
  *out = std::move(p);
  return {};
}

io::Status Committer::stem_plan(Item& it, std::unique_ptr<Plan>* out) {
  auto p = std::make_unique<Plan>();
  if (!it.changed && it.node >= 0) {
    nodes_[it.node].reused = true;
    p->kind = Plan::placed;
    p->node = it.node;
    p->loc = it.loc;
    p->hash = nodes_[it.node].hash;
  } else {
    p->kind = Plan::stem;
    p->stem_blob = std::move(it.blob);  // hashed by hash_plan
    p->listed = uint32_t(scratch_->stems.size());
    scratch_->stems.emplace_back().plan = p.get();
  }
  *out = std::move(p);
  return {};
}

// A group at depth d over `items` (or, for one stem item at the top, that stem).
io::Status Committer::place(std::vector<Item>& items, unsigned d, std::unique_ptr<Plan>* out) {
  if (d > 248) return {io::Errc::corrupt_page, "binary trie commit: two stems share 248 bits"};
  if (d == 0 && items.size() == 1 && items[0].kind == Item::stem) return stem_plan(items[0], out);
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    const uint32_t pa = rel_pos(a, d), pb = rel_pos(b, d);
    if (pa != pb) return pa < pb;
    if (a.kind == Item::stem && b.kind == Item::stem) return key_of(a) < key_of(b);
    return a.kind < b.kind;
  });
  auto p = std::make_unique<Plan>();
  p->kind = Plan::group;
  p->group_blob.g = uint8_t(g_);
  if (io::Status s = walk(items, 0, items.size(), d, 0, 0, p.get()); !s.ok()) return s;
  note_group(p.get());
  *out = std::move(p);  // hashed by hash_plan
  return {};
}

void Committer::add_kid(Plan* p, const bintrie::GroupEntry& ge, std::unique_ptr<Plan> kid) {
  if (kid->kind != Plan::placed) p->new_kids.push_back(uint32_t(p->kids.size()));
  p->group_blob.entries.push_back(ge);
  p->kids.push_back({std::move(kid), kNoLocator});
}

io::Status Committer::walk(std::vector<Item>& items, size_t a, size_t b, unsigned d, unsigned r, uint32_t q, Plan* p) {
  if (b - a == 1) {
    Item& it = items[a];
    std::unique_ptr<Plan> kid;
    bintrie::GroupEntry ge;
    if (it.kind == Item::keep) {
      // A kept stem is alone from its own depth on; a kept group (depth g) descends to g.
      if (it.depth < r || uint32_t(it.pos >> (g_ - r)) != q)
        return {io::Errc::corrupt_page, "binary trie commit: an entry's depth does not fit its region"};
      ge.pos = it.pos;
      ge.depth = it.depth;
      ge.hash = it.hash;
      p->group_blob.entries.push_back(ge);
      p->kids.push_back({nullptr, it.loc});  // no Plan: kept by locator
      return {};
    } else if (it.kind == Item::sub) {
      if (uint32_t(it.pos >> (g_ - r)) != q) return {io::Errc::corrupt_page, "binary trie commit: a group entry outside its region"};
      if (io::Status s = plan_group(it.node, d + g_, it.dirty, &kid); !s.ok()) return s;
      ge.pos = it.pos;
      ge.depth = uint8_t(g_);
    } else {
      if (io::Status s = stem_plan(it, &kid); !s.ok()) return s;
      ge.pos = uint16_t(q << (g_ - r));
      ge.depth = uint8_t(r);
    }
    ge.hash = kid->hash;
    add_kid(p, ge, std::move(kid));
    return {};
  }
  if (r == g_) {
    std::vector<Item> stems;
    for (size_t i = a; i < b; ++i) {
      if (items[i].kind != Item::stem)
        return {io::Errc::corrupt_page, "binary trie commit: stems inside a kept entry's region"};
      stems.push_back(std::move(items[i]));
    }
    std::unique_ptr<Plan> kid;
    if (io::Status s = place(stems, d + g_, &kid); !s.ok()) return s;
    bintrie::GroupEntry ge;
    ge.pos = uint16_t(q);
    ge.depth = uint8_t(g_);
    ge.hash = kid->hash;
    add_kid(p, ge, std::move(kid));
    return {};
  }
  const unsigned shift = g_ - 1 - r;
  size_t m = a;
  while (m < b && ((rel_pos(items[m], d) >> shift) & 1) == 0) ++m;
  if (m > a)
    if (io::Status s = walk(items, a, m, d, r + 1, q << 1, p); !s.ok()) return s;
  if (m < b)
    if (io::Status s = walk(items, m, b, d, r + 1, q << 1 | 1, p); !s.ok()) return s;
  return {};
}

}  // namespace st::persist::bintrie_commit
