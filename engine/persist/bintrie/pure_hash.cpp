// bintrie/pure_hash: the new stems' and groups' hashing inputs re-hashed level by level
// through the batch kernels, planned before the clock, timed under the pure-hash protocol
// (see the header).
#include "engine/persist/bintrie/pure_hash.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/memory/scratch_pool.h"

namespace st::persist {
namespace {

using bintrie::Hash32;
using Plan = BintriePurePlan;

// A node of a sparse Merkle reduction while it is planned (the stems' 256-leaf subtrees, the
// groups' internal levels): its tree, its index at its depth, and where its hash comes from.
struct PNode {
  uint32_t tree;
  uint32_t index;
  const uint8_t* given;  // a non-zero hash known when planning (a group entry), or null
  uint32_t digest;       // else the digest a pass computes (its index), or kZero: the zero hash
};
bool before(const PNode& a, const PNode& b) { return a.tree != b.tree ? a.tree < b.tree : a.index < b.index; }
bool is_zero(const PNode& n) { return !n.given && n.digest == Plan::kZero; }

// Lays out the calls: each call's messages appended to plan.in, one digest each.
class Planner {
 public:
  explicit Planner(Plan& p) : p_(p) {}
  void begin(bool hash32) { p_.calls.push_back({hash32, p_.in.size(), 0, digests_}); }
  // A message of `bytes` (zeros for now) in the open call; *off: its offset in plan.in.
  uint32_t message(size_t bytes, size_t* off) {
    *off = p_.in.size();
    p_.in.resize(p_.in.size() + bytes, 0);
    ++p_.calls.back().n;
    p_.slot.push_back(Plan::kNoSlot);
    return digests_++;
  }
  void end() {
    if (p_.calls.back().n == 0) p_.calls.pop_back();
  }
  // n's hash into the slot at plan.in[off]: copied now (given), by the passes (a digest),
  // or left zero.
  void place(const PNode& n, size_t off) {
    if (n.given) std::memcpy(p_.in.data() + off, n.given, 32);
    else if (n.digest != Plan::kZero) p_.slot[n.digest] = off;
  }
  // The nodes at depth d, in (tree, index) order, paired with their siblings (a missing
  // sibling is zero) into one call of their parents' messages (a parent of zeros is zero,
  // not hashed); the parents merged into at[d - 1] (nodes given there: group entries).
  void reduce(std::vector<std::vector<PNode>>& at, unsigned d) {
    std::vector<PNode>& cur = at[d];
    parents_.clear();
    begin(false);
    for (size_t i = 0; i < cur.size();) {
      const PNode& a = cur[i];
      const bool pair = i + 1 < cur.size() && cur[i + 1].tree == a.tree && (cur[i + 1].index >> 1) == (a.index >> 1);
      const PNode* left = pair || !(a.index & 1) ? &a : nullptr;
      const PNode* right = pair ? &cur[i + 1] : (a.index & 1) ? &a : nullptr;
      PNode parent{a.tree, a.index >> 1, nullptr, Plan::kZero};
      if ((left && !is_zero(*left)) || (right && !is_zero(*right))) {
        size_t off = 0;
        parent.digest = message(64, &off);
        if (left) place(*left, off);
        if (right) place(*right, off + 32);
      }
      parents_.push_back(parent);
      i += pair ? 2 : 1;
    }
    end();
    std::vector<PNode>& up = at[d - 1];
    const size_t given = up.size();
    up.insert(up.end(), parents_.begin(), parents_.end());
    if (given) std::inplace_merge(up.begin(), up.begin() + ptrdiff_t(given), up.end(), before);
    cur.clear();
  }
  uint32_t digests() const { return digests_; }

 private:
  Plan& p_;
  uint32_t digests_ = 0;
  std::vector<PNode> parents_;
};

// The stems: every present value (one hash32 call), the 8 levels of their subtrees, the stem
// nodes H(stem || 0x00 || subtree root) (one call each); plan.result gets the stem nodes.
io::Status plan_stems(std::span<const bintrie::StemBlob* const> stems, Planner& pl, Plan& plan) {
  std::vector<std::vector<PNode>> at(9);
  pl.begin(true);
  for (size_t s = 0; s < stems.size(); ++s) {
    const bintrie::StemBlob& b = *stems[s];
    size_t j = 0;
    for (unsigned i = 0; i < 256; ++i)
      if ((b.bitmap[i / 8] >> (7 - i % 8)) & 1) {
        if (j >= b.values.size()) return {io::Errc::corrupt_page, "binary trie pure hash: a stem's bitmap exceeds its values"};
        size_t off = 0;
        const uint32_t d = pl.message(32, &off);
        std::memcpy(plan.in.data() + off, b.values[j++].data(), 32);
        at[8].push_back({uint32_t(s), i, nullptr, d});
      }
  }
  pl.end();
  for (unsigned d = 8; d >= 1; --d) pl.reduce(at, d);
  const std::vector<PNode>& roots = at[0];  // one per stem with a value, by stem
  size_t r = 0;
  pl.begin(false);
  for (size_t s = 0; s < stems.size(); ++s) {
    size_t off = 0;
    plan.result.push_back(pl.message(64, &off));
    std::memcpy(plan.in.data() + off, stems[s]->stem.data(), 31);
    while (r < roots.size() && roots[r].tree < s) ++r;
    if (r < roots.size() && roots[r].tree == s) pl.place(roots[r], off + 32);
  }
  pl.end();
  return {};
}

// The groups: their entries at their depths, then g levels (one call each); plan.result gets
// the group roots.
io::Status plan_groups(std::span<const bintrie::GroupBlob* const> groups, Planner& pl, Plan& plan) {
  if (groups.empty()) return {};
  const unsigned g = groups[0]->g;
  for (const bintrie::GroupBlob* b : groups)
    if (b->g != g) return {io::Errc::bad_argument, "binary trie pure hash: groups of different depths"};
  std::vector<std::vector<PNode>> at(g + 1);
  for (size_t q = 0; q < groups.size(); ++q)
    for (const bintrie::GroupEntry& e : groups[q]->entries) {
      if (e.depth < 1 || e.depth > g) return {io::Errc::corrupt_page, "binary trie pure hash: a group entry's depth is outside 1..g"};
      const uint8_t* given = bintrie::is_zero32(e.hash.data()) ? nullptr : e.hash.data();
      at[e.depth].push_back({uint32_t(q), uint32_t(e.pos) >> (g - e.depth), given, Plan::kZero});
    }
  for (unsigned d = 1; d <= g; ++d) std::sort(at[d].begin(), at[d].end(), before);
  for (unsigned d = g; d >= 1; --d) pl.reduce(at, d);
  const std::vector<PNode>& roots = at[0];
  size_t r = 0;
  for (size_t q = 0; q < groups.size(); ++q) {
    while (r < roots.size() && roots[r].tree < q) ++r;
    plan.result.push_back(r < roots.size() && roots[r].tree == q ? roots[r].digest : Plan::kZero);
  }
  return {};
}

}  // namespace

io::Status plan_bintrie_pure_hash(std::span<const bintrie::StemBlob* const> stems, std::span<const Hash32> stem_hashes,
                                  std::span<const bintrie::GroupBlob* const> groups,
                                  std::span<const Hash32> group_hashes, BintriePurePlan* plan) {
  if (stems.size() != stem_hashes.size() || groups.size() != group_hashes.size())
    return {io::Errc::bad_argument, "binary trie pure hash: a hash per stem and per group"};
  Plan& p = *plan;
  p.calls.clear(), p.in.clear(), p.slot.clear(), p.result.clear(), p.expect.clear();
  p.stems = stems.size();
  Planner pl(p);
  if (io::Status s = plan_stems(stems, pl, p); !s.ok()) return s;
  if (io::Status s = plan_groups(groups, pl, p); !s.ok()) return s;
  p.expect.assign(stem_hashes.begin(), stem_hashes.end());
  p.expect.insert(p.expect.end(), group_hashes.begin(), group_hashes.end());
  p.out.assign(size_t(pl.digests()) * 32, 0);
  return {};
}

io::Status run_bintrie_pure_hash(const bintrie::Hasher& h, BintriePurePlan& p, PureHashCount* out) {
  *out = {};
  if (p.out.size() != p.slot.size() * 32 || p.result.size() != p.expect.size())
    return {io::Errc::bad_argument, "binary trie pure hash: the plan's arrays disagree in size"};
  uint8_t* in = p.in.data();
  uint8_t* dig = p.out.data();
  const uint64_t* slot = p.slot.data();
  out->ns = time_pure_passes([&] {
    for (const Plan::Call& c : p.calls) {
      uint8_t* o = dig + 32 * c.out_base;
      (c.hash32 ? h.hash32_batch : h.hash64_batch)(in + c.in_off, o, c.n);
      for (size_t j = 0; j < c.n; ++j)
        if (slot[c.out_base + j] != Plan::kNoSlot) std::memcpy(in + slot[c.out_base + j], o + 32 * j, 32);
    }
  });
  out->calls = p.calls.size();
  out->nodes = p.expect.size();
  for (size_t i = 0; i < p.expect.size(); ++i) {
    Hash32 got{};
    if (p.result[i] != Plan::kZero) std::memcpy(got.data(), dig + 32 * size_t(p.result[i]), 32);
    if (got == p.expect[i]) continue;
    const bool stem = i < p.stems;
    const size_t k = stem ? i : i - p.stems, of = stem ? p.stems : p.expect.size() - p.stems;
    return {io::Errc::corrupt_page, std::string("binary trie pure hash: new ") + (stem ? "stem " : "group ") +
                                        std::to_string(k) + " of " + std::to_string(of) +
                                        ": its pure hash differs from the committed hash"};
  }
  return {};
}

io::Status bintrie_pure_hash(const bintrie::Hasher& h, std::span<const bintrie::StemBlob* const> stems,
                             std::span<const Hash32> stem_hashes, std::span<const bintrie::GroupBlob* const> groups,
                             std::span<const Hash32> group_hashes, PureHashCount* out) {
  *out = {};
  // A plan leased, not made: its arrays stay mapped from block to block, whichever thread
  // runs the hash stage (memory/scratch_pool.h).
  const auto plan = memory::ScratchPool<BintriePurePlan>::take();
  if (io::Status s = plan_bintrie_pure_hash(stems, stem_hashes, groups, group_hashes, plan.get()); !s.ok()) return s;
  return run_bintrie_pure_hash(h, *plan, out);
}

}  // namespace st::persist
