// bintrie/pure_hash: the new stems' and groups' hashing inputs re-hashed level by level
// through the batch kernels (see the header).
#include "engine/persist/bintrie/pure_hash.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/support/clock.h"

namespace st::persist {
namespace {

using bintrie::Hash32;

// Sparse Merkle reduction over many small binary trees at once (the stems' 256-leaf
// subtrees, the groups' internal levels): nodes (tree, index at their depth, hash) bucketed
// by depth; each depth from the deepest up pairs siblings (a missing sibling is zero),
// hashes every non-zero pair of ALL trees in one hash64 batch, and adds the parents one depth
// up (merged with nodes given there: group entries ending above the bottom). A 64-byte
// input of zeros is the zero hash, unhashed (the trie's zero rule), as in hash_pair().
struct Node {
  uint32_t tree;
  uint32_t index;
  Hash32 hash;
};
bool before(const Node& a, const Node& b) { return a.tree != b.tree ? a.tree < b.tree : a.index < b.index; }

struct SparseReducer {
  std::vector<std::vector<Node>> at;  // by depth
  std::vector<uint8_t> in, out;
  std::vector<Node> parents;
  std::vector<size_t> hashed;  // parents whose input is not all zeros

  void reduce(const bintrie::Hasher& h, unsigned depth_max, PureHashCount* c) {
    for (unsigned d = depth_max; d >= 1; --d) {
      std::vector<Node>& cur = at[d];
      in.clear();
      parents.clear();
      hashed.clear();
      for (size_t i = 0; i < cur.size();) {
        const Node& a = cur[i];
        const bool pair = i + 1 < cur.size() && cur[i + 1].tree == a.tree && (cur[i + 1].index >> 1) == (a.index >> 1);
        uint8_t msg[64] = {};
        if (pair) {
          std::memcpy(msg, a.hash.data(), 32), std::memcpy(msg + 32, cur[i + 1].hash.data(), 32);
        } else if (a.index & 1) {
          std::memcpy(msg + 32, a.hash.data(), 32);
        } else {
          std::memcpy(msg, a.hash.data(), 32);
        }
        Node p{a.tree, a.index >> 1, Hash32{}};
        if (!bintrie::is_zero64(msg)) {
          in.insert(in.end(), msg, msg + 64);
          hashed.push_back(parents.size());
        }
        parents.push_back(p);
        i += pair ? 2 : 1;
      }
      const size_t n = in.size() / 64;
      if (n) {
        out.resize(n * 32);
        h.hash64_batch(in.data(), out.data(), n);
        ++c->calls;
        for (size_t j = 0; j < n; ++j) std::memcpy(parents[hashed[j]].hash.data(), out.data() + 32 * j, 32);
      }
      std::vector<Node>& up = at[d - 1];
      const size_t given = up.size();
      up.insert(up.end(), parents.begin(), parents.end());
      if (given) std::inplace_merge(up.begin(), up.begin() + ptrdiff_t(given), up.end(), before);
      cur.clear();
    }
  }
};

}  // namespace

io::Status bintrie_pure_hash(const bintrie::Hasher& h, std::span<const bintrie::StemBlob* const> stems,
                             std::span<const Hash32> stem_hashes, std::span<const bintrie::GroupBlob* const> groups,
                             std::span<const Hash32> group_hashes, PureHashCount* out) {
  *out = {};
  const size_t S = stems.size();
  const unsigned g = groups.empty() ? 0 : groups[0]->g;
  for (const bintrie::GroupBlob* b : groups)
    if (b->g != g) return {io::Errc::bad_argument, "binary trie pure hash: groups of different depths"};
  size_t values = 0;
  for (const bintrie::StemBlob* b : stems) values += b->values.size();
  SparseReducer stem_tree, group_tree;
  stem_tree.at.resize(9);
  group_tree.at.resize(g + 1);
  std::vector<uint8_t> in(values * 32), res(values * 32);
  std::vector<Hash32> stem_out(S);

  const uint64_t t0 = st::monotonic_ns();
  // Leaf level: every present value of every new stem, one hash32 batch.
  std::vector<Node>& leaves = stem_tree.at[8];
  leaves.reserve(values);
  size_t k = 0;
  for (size_t s = 0; s < S; ++s) {
    const bintrie::StemBlob& b = *stems[s];
    size_t j = 0;
    for (unsigned i = 0; i < 256; ++i)
      if ((b.bitmap[i / 8] >> (7 - i % 8)) & 1) {
        if (j >= b.values.size()) return {io::Errc::corrupt_page, "binary trie pure hash: a stem's bitmap exceeds its values"};
        std::memcpy(in.data() + 32 * k++, b.values[j++].data(), 32);
        leaves.push_back({uint32_t(s), i, Hash32{}});
      }
  }
  if (k) {
    h.hash32_batch(in.data(), res.data(), k);
    ++out->calls;
    for (size_t j = 0; j < k; ++j) std::memcpy(leaves[j].hash.data(), res.data() + 32 * j, 32);
  }
  // The stems' subtrees, 8 levels, each one batch over all stems.
  stem_tree.reduce(h, 8, out);
  // The stem nodes: H(stem || 0x00 || subtree root), one batch.
  if (S) {
    std::vector<Hash32> root(S, Hash32{});
    for (const Node& n : stem_tree.at[0]) root[n.tree] = n.hash;
    in.assign(S * 64, 0);
    for (size_t s = 0; s < S; ++s) {
      std::memcpy(in.data() + 64 * s, stems[s]->stem.data(), 31);
      std::memcpy(in.data() + 64 * s + 32, root[s].data(), 32);
    }
    res.resize(S * 32);
    h.hash64_batch(in.data(), res.data(), S);
    ++out->calls;
    for (size_t s = 0; s < S; ++s) std::memcpy(stem_out[s].data(), res.data() + 32 * s, 32);
  }
  // The groups: their entries at their depths, then g levels, each one batch over all groups.
  for (size_t q = 0; q < groups.size(); ++q)
    for (const bintrie::GroupEntry& e : groups[q]->entries) {
      if (e.depth < 1 || e.depth > g) return {io::Errc::corrupt_page, "binary trie pure hash: a group entry's depth is outside 1..g"};
      group_tree.at[e.depth].push_back({uint32_t(q), uint32_t(e.pos) >> (g - e.depth), e.hash});
    }
  for (unsigned d = 1; d <= g; ++d) std::sort(group_tree.at[d].begin(), group_tree.at[d].end(), before);
  if (g) group_tree.reduce(h, g, out);
  out->ns = st::monotonic_ns() - t0;
  out->nodes = S + groups.size();

  for (size_t s = 0; s < S; ++s)
    if (stem_out[s] != stem_hashes[s])
      return {io::Errc::corrupt_page, "binary trie pure hash: new stem " + std::to_string(s) + " of " + std::to_string(S) +
                                          ": its pure hash differs from the committed hash"};
  std::vector<Hash32> group_root(groups.size(), Hash32{});
  if (g)
    for (const Node& n : group_tree.at[0]) group_root[n.tree] = n.hash;
  for (size_t q = 0; q < groups.size(); ++q)
    if (group_root[q] != group_hashes[q])
      return {io::Errc::corrupt_page, "binary trie pure hash: new group " + std::to_string(q) + " of " +
                                          std::to_string(groups.size()) + ": its pure hash differs from the committed hash"};
  return {};
}

}  // namespace st::persist
