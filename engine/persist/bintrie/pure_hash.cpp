// bintrie/pure_hash: the new stems' and groups' hashing inputs laid out level by level for
// the batch kernels (BintrieLevelPlanner, also the commit's own hash), re-hashed under the
// pure-hash protocol (see the header).
#include "engine/persist/bintrie/pure_hash.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace st::persist {
namespace {

using bintrie::Hash32;
using Plan = BintriePurePlan;
using PNode = BintriePurePlan::Node;

bool before(const PNode& a, const PNode& b) { return a.tree != b.tree ? a.tree < b.tree : a.index < b.index; }
bool is_zero(const PNode& n) { return !n.given && n.digest == Plan::kZero; }
bool zero32(const uint8_t* p) {
  for (int i = 0; i < 32; ++i)
    if (p[i]) return false;
  return true;
}

}  // namespace

BintrieLevelPlanner::BintrieLevelPlanner(BintriePurePlan& plan) : p_(plan) {
  p_.calls.clear(), p_.in.clear(), p_.slot.clear(), p_.out.clear();
  if (p_.at.size() < 9) p_.at.resize(9);
  for (std::vector<PNode>& v : p_.at) v.clear();
}

void BintrieLevelPlanner::begin(bool hash32) { p_.calls.push_back({hash32, p_.in.size(), 0, digests_}); }

// A message of `bytes` (zeros for now) in the open call; *off: its offset in plan.in.
uint32_t BintrieLevelPlanner::message(size_t bytes, size_t* off) {
  *off = p_.in.size();
  p_.in.resize(p_.in.size() + bytes, 0);
  ++p_.calls.back().n;
  p_.slot.push_back(Plan::kNoSlot);
  return digests_++;
}

void BintrieLevelPlanner::end() {
  if (p_.calls.back().n == 0) p_.calls.pop_back();
}

// n's hash into the slot at plan.in[off]: copied now (given), by the passes (a digest), or
// left zero.
void BintrieLevelPlanner::place(const PNode& n, size_t off) {
  if (n.given) std::memcpy(p_.in.data() + off, n.given, 32);
  else if (n.digest != Plan::kZero) p_.slot[n.digest] = off;
}

// The nodes at depth d, in (tree, index) order, paired with their siblings (a missing sibling
// is zero) into one call of their parents' messages (a parent of zeros is zero, not hashed);
// the parents merged into at[d - 1] (nodes given there: group entries).
void BintrieLevelPlanner::reduce(unsigned d) {
  std::vector<PNode>& cur = p_.at[d];
  std::vector<PNode>& parents = p_.parents;
  parents.clear();
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
    parents.push_back(parent);
    i += pair ? 2 : 1;
  }
  end();
  std::vector<PNode>& up = p_.at[d - 1];
  const size_t given = up.size();
  up.insert(up.end(), parents.begin(), parents.end());
  if (given) std::inplace_merge(up.begin(), up.begin() + ptrdiff_t(given), up.end(), before);
  cur.clear();
}

// The stems: every present value (one hash32 call), the 8 levels of their subtrees, the stem
// nodes H(stem || 0x00 || subtree root) (one call).
io::Status BintrieLevelPlanner::stems(std::span<const bintrie::StemBlob* const> stems, std::vector<uint32_t>* digests) {
  digests->clear();
  if (stems.empty()) return {};
  std::vector<std::vector<PNode>>& at = p_.at;
  begin(true);
  for (size_t s = 0; s < stems.size(); ++s) {
    const bintrie::StemBlob& b = *stems[s];
    size_t j = 0;
    for (unsigned i = 0; i < 256; ++i)
      if ((b.bitmap[i / 8] >> (7 - i % 8)) & 1) {
        if (j >= b.values.size()) return {io::Errc::corrupt_page, "binary trie hash plan: a stem's bitmap exceeds its values"};
        size_t off = 0;
        const uint32_t d = message(32, &off);
        std::memcpy(p_.in.data() + off, b.values[j++].data(), 32);
        at[8].push_back({uint32_t(s), i, nullptr, d});
      }
  }
  end();
  for (unsigned d = 8; d >= 1; --d) reduce(d);
  const std::vector<PNode>& roots = at[0];  // one per stem with a value, by stem
  size_t r = 0;
  begin(false);
  for (size_t s = 0; s < stems.size(); ++s) {
    size_t off = 0;
    digests->push_back(message(64, &off));
    std::memcpy(p_.in.data() + off, stems[s]->stem.data(), 31);
    while (r < roots.size() && roots[r].tree < s) ++r;
    if (r < roots.size() && roots[r].tree == s) place(roots[r], off + 32);
  }
  end();
  at[0].clear();
  return {};
}

// The groups: their entries at their depths, then g levels (one call each).
io::Status BintrieLevelPlanner::groups(std::span<const bintrie::GroupBlob* const> groups,
                                       std::span<const uint32_t> entry_digests, std::vector<uint32_t>* digests) {
  digests->clear();
  if (groups.empty()) return {};
  const unsigned g = groups[0]->g;
  if (g < 1 || g > 8) return {io::Errc::bad_argument, "binary trie hash plan: a group depth outside 1..8"};
  std::vector<std::vector<PNode>>& at = p_.at;
  size_t k = 0;  // the entry's index over all groups
  for (size_t q = 0; q < groups.size(); ++q) {
    if (groups[q]->g != g) return {io::Errc::bad_argument, "binary trie hash plan: groups of different depths"};
    for (const bintrie::GroupEntry& e : groups[q]->entries) {
      if (e.depth < 1 || e.depth > g) return {io::Errc::corrupt_page, "binary trie hash plan: a group entry's depth is outside 1..g"};
      const uint32_t from = entry_digests.empty() ? Plan::kZero : entry_digests[k];
      const uint8_t* given = from != Plan::kZero || zero32(e.hash.data()) ? nullptr : e.hash.data();
      at[e.depth].push_back({uint32_t(q), uint32_t(e.pos) >> (g - e.depth), given, from});
      ++k;
    }
  }
  if (!entry_digests.empty() && k != entry_digests.size())
    return {io::Errc::bad_argument, "binary trie hash plan: not one digest per group entry"};
  for (unsigned d = 1; d <= g; ++d) std::sort(at[d].begin(), at[d].end(), before);
  for (unsigned d = g; d >= 1; --d) reduce(d);
  const std::vector<PNode>& roots = at[0];
  size_t r = 0;
  for (size_t q = 0; q < groups.size(); ++q) {
    while (r < roots.size() && roots[r].tree < q) ++r;
    digests->push_back(r < roots.size() && roots[r].tree == q ? roots[r].digest : Plan::kZero);
  }
  at[0].clear();
  return {};
}

void BintrieLevelPlanner::finish() { p_.out.assign(size_t(digests_) * 32, 0); }

void run_bintrie_plan(const bintrie::Hasher& h, BintriePurePlan& p) {
  uint8_t* in = p.in.data();
  uint8_t* dig = p.out.data();
  const uint64_t* slot = p.slot.data();
  for (const Plan::Call& c : p.calls) {
    uint8_t* o = dig + 32 * c.out_base;
    (c.hash32 ? h.hash32_batch : h.hash64_batch)(in + c.in_off, o, c.n);
    for (size_t j = 0; j < c.n; ++j)
      if (slot[c.out_base + j] != Plan::kNoSlot) std::memcpy(in + slot[c.out_base + j], o + 32 * j, 32);
  }
}

io::Status plan_bintrie_pure_hash(std::span<const bintrie::StemBlob* const> stems, std::span<const Hash32> stem_hashes,
                                  std::span<const bintrie::GroupBlob* const> groups,
                                  std::span<const Hash32> group_hashes, BintriePurePlan* plan) {
  if (stems.size() != stem_hashes.size() || groups.size() != group_hashes.size())
    return {io::Errc::bad_argument, "binary trie pure hash: a hash per stem and per group"};
  Plan& p = *plan;
  p.result.clear(), p.expect.clear();
  p.stems = stems.size();
  BintrieLevelPlanner pl(p);
  std::vector<uint32_t> digests;
  if (io::Status s = pl.stems(stems, &digests); !s.ok()) return s;
  p.result = digests;
  if (io::Status s = pl.groups(groups, {}, &digests); !s.ok()) return s;
  p.result.insert(p.result.end(), digests.begin(), digests.end());
  p.expect.assign(stem_hashes.begin(), stem_hashes.end());
  p.expect.insert(p.expect.end(), group_hashes.begin(), group_hashes.end());
  pl.finish();
  return {};
}

io::Status run_bintrie_pure_hash(const bintrie::Hasher& h, BintriePurePlan& p, PureHashCount* out) {
  *out = {};
  if (p.out.size() != p.slot.size() * 32 || p.result.size() != p.expect.size())
    return {io::Errc::bad_argument, "binary trie pure hash: the plan's arrays disagree in size"};
  out->ns = time_pure_passes([&] { run_bintrie_plan(h, p); });
  out->calls = p.calls.size();
  out->nodes = p.expect.size();
  for (size_t i = 0; i < p.expect.size(); ++i) {
    Hash32 got{};
    if (p.result[i] != Plan::kZero) std::memcpy(got.data(), p.out.data() + 32 * size_t(p.result[i]), 32);
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
  BintriePurePlan plan;
  if (io::Status s = plan_bintrie_pure_hash(stems, stem_hashes, groups, group_hashes, &plan); !s.ok()) return s;
  return run_bintrie_pure_hash(h, plan, out);
}

}  // namespace st::persist
