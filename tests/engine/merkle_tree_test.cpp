// merkle_tree_test: the Merkle engine against the published vectors and the reference
// oracle, for every SHA-256 tier, one and two threads, fixed and variable-length leaves,
// single and double SHA-256; proofs; the CVE-2012-2459 mutation flag.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/merkle/merkle_tree.h"
#include "engine/pipeline/parallel.h"
#include "kernels/sha256.h"
#include "reference/merkle_reference.h"
#include "test_paths.h"

using namespace st;
using merkle::Hash32;

namespace {

std::string hex(const Hash32& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) { s += digits[b >> 4]; s += digits[b & 15]; }
  return s;
}

std::vector<uint8_t> flatten(const std::vector<std::vector<uint8_t>>& leaves) {
  std::vector<uint8_t> out;
  for (const auto& l : leaves) out.insert(out.end(), l.begin(), l.end());
  return out;
}

merkle::MerkleResult root_fixed(const std::vector<std::vector<uint8_t>>& leaves, bool twice) {
  merkle::MerkleTree tree(leaves.size(), {twice});
  const auto flat = flatten(leaves);
  REQUIRE_FALSE(tree.add_fixed(flat.data(), leaves.size(), leaves[0].size()).has_value());
  return tree.compute();
}

std::vector<kernels::Sha256Tier> tiers() {
  std::vector<kernels::Sha256Tier> out;
  for (auto t : {kernels::Sha256Tier::portable, kernels::Sha256Tier::shani, kernels::Sha256Tier::avx2,
                 kernels::Sha256Tier::avx512})
    if (kernels::sha256_tier_available(t)) out.push_back(t);
  return out;
}

struct TierGuard {
  ~TierGuard() { kernels::sha256_select("auto"); }
};

}  // namespace

TEST_CASE("merkle roots match tests/vectors/merkle for every tier and thread count") {
  std::ifstream in(std::string(STATETREE_VECTORS_DIR) + "/merkle/merkle_roots.json");
  REQUIRE(in.good());
  const auto vectors = nlohmann::json::parse(in);
  TierGuard guard;
  for (auto tier : tiers()) {
    REQUIRE_FALSE(kernels::sha256_select(kernels::sha256_tier_name(tier)).has_value());
    for (unsigned threads : {1u, 2u}) {
      pipeline::ThreadScope scope(threads);
      for (const auto& [n_str, root_hex] : vectors["roots"].items()) {
        const size_t n = std::stoul(n_str);
        CAPTURE(kernels::sha256_tier_name(tier));
        CAPTURE(threads);
        CAPTURE(n);
        CHECK(hex(root_fixed(reference::synthetic_leaves(n), false).root) == root_hex.get<std::string>());
      }
    }
  }
}

TEST_CASE("merkle engine equals the reference on random trees (chunk boundaries, double SHA, variable leaves)") {
  std::mt19937_64 rng(42);
  TierGuard guard;
  const size_t sizes[] = {1, 2, 15, 16, 17, 31, 33, 255, 1000, 8191, 8192, 8193, 16384 + 16 + 1, 3 * 8192 + 77};
  for (auto tier : tiers()) {
    REQUIRE_FALSE(kernels::sha256_select(kernels::sha256_tier_name(tier)).has_value());
    pipeline::ThreadScope scope(2);
    for (size_t n : sizes) {
      for (size_t leaf_size : {size_t(32), size_t(64), size_t(7)}) {
        if (n > 2000 && leaf_size != 32) continue;  // keep the suite fast
        std::vector<std::vector<uint8_t>> leaves(n, std::vector<uint8_t>(leaf_size));
        for (auto& l : leaves)
          for (auto& b : l) b = uint8_t(rng());
        for (bool twice : {false, true}) {
          CAPTURE(kernels::sha256_tier_name(tier));
          CAPTURE(n);
          CAPTURE(leaf_size);
          CAPTURE(twice);
          bool ref_mutated = true;
          const auto want = reference::merkle_root(leaves, twice, &ref_mutated);
          const auto got = root_fixed(leaves, twice);
          CHECK(hex(got.root) == hex(want));
          CHECK(got.mutated == ref_mutated);
        }
      }
    }
  }
  // Variable-length leaves (0..300 bytes).
  for (size_t n : {size_t(1), size_t(5), size_t(100), size_t(1234)}) {
    std::vector<std::vector<uint8_t>> leaves(n);
    std::vector<const uint8_t*> ptrs;
    std::vector<size_t> lens;
    for (auto& l : leaves) {
      l.resize(rng() % 301);
      for (auto& b : l) b = uint8_t(rng());
    }
    for (auto& l : leaves) { ptrs.push_back(l.data()); lens.push_back(l.size()); }
    merkle::MerkleTree tree(n);
    REQUIRE_FALSE(tree.add_variable(ptrs.data(), lens.data(), n).has_value());
    CHECK(hex(tree.compute().root) == hex(reference::merkle_root(leaves, false)));
  }
}

TEST_CASE("merkle proofs verify for every leaf and fail when tampered") {
  for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(16), size_t(33), size_t(100)}) {
    for (bool twice : {false, true}) {
      const auto leaves = reference::synthetic_leaves(n);
      merkle::MerkleTree tree(n, {twice});
      const auto flat = flatten(leaves);
      REQUIRE_FALSE(tree.add_fixed(flat.data(), n, 32).has_value());
      const auto root = tree.compute().root;
      for (size_t i = 0; i < n; ++i) {
        CAPTURE(n);
        CAPTURE(i);
        const Hash32 leaf = merkle::MerkleTree::leaf_hash(leaves[i].data(), 32, {twice});
        auto path = tree.proof(i);
        CHECK(merkle::MerkleTree::verify(leaf, i, n, path, root, {twice}));
        if (!path.empty()) {
          path[path.size() / 2][i % 32] ^= 1;
          CHECK_FALSE(merkle::MerkleTree::verify(leaf, i, n, path, root, {twice}));
          path[path.size() / 2][i % 32] ^= 1;
          if ((i ^ 1) < n) {  // the same path claimed for the neighbour's position
            const bool moved = merkle::MerkleTree::verify(leaf, i ^ 1, n, path, root, {twice});
            CHECK_FALSE(moved);
          }
        }
        Hash32 bad_leaf = leaf;
        bad_leaf[0] ^= 0x80;
        CHECK_FALSE(merkle::MerkleTree::verify(bad_leaf, i, n, path, root, {twice}));
      }
    }
  }
}

TEST_CASE("CVE-2012-2459: duplicating the last leaf keeps the root and is flagged as mutated") {
  auto leaves = reference::synthetic_leaves(3);
  const auto a = root_fixed(leaves, false);
  leaves.push_back(leaves.back());
  const auto b = root_fixed(leaves, false);
  CHECK(hex(a.root) == hex(b.root));
  CHECK_FALSE(a.mutated);
  CHECK(b.mutated);
}

TEST_CASE("merkle rejects an empty batch and an over-capacity batch") {
  merkle::MerkleTree tree(4);
  uint8_t data[32 * 5] = {};
  CHECK(tree.add_fixed(data, 0, 32).has_value());
  CHECK(tree.add_fixed(data, 5, 32).has_value());
  CHECK_FALSE(tree.add_fixed(data, 4, 32).has_value());
}

TEST_CASE("a proof is rejected at a position that does not exist or with the wrong depth") {
  const auto leaves = reference::synthetic_leaves(3);
  merkle::MerkleTree tree(3);
  const auto flat = flatten(leaves);
  REQUIRE_FALSE(tree.add_fixed(flat.data(), 3, 32).has_value());
  const auto root = tree.compute().root;
  const Hash32 leaf2 = merkle::MerkleTree::leaf_hash(leaves[2].data(), 32);
  auto path = tree.proof(2);  // leaf 2 is duplicated: its level-0 sibling is itself
  CHECK(merkle::MerkleTree::verify(leaf2, 2, 3, path, root));
  CHECK_FALSE(merkle::MerkleTree::verify(leaf2, 3, 3, path, root));  // CVE-2012-2459 at proof level
  // (Claimed with leaf_count 4 it verifies: [l0, l1, l2, l2] is the mutated 4-leaf list with
  // this same root; the verifier must be given the real leaf count.)
  auto longer = path;
  longer.push_back(root);
  CHECK_FALSE(merkle::MerkleTree::verify(leaf2, 2, 3, longer, root));
  path.pop_back();
  CHECK_FALSE(merkle::MerkleTree::verify(leaf2, 2, 3, path, root));
}

TEST_CASE("planted equal siblings are flagged on every tier, at level 0 and deep in the tree") {
  TierGuard guard;
  std::mt19937_64 rng(9);
  for (auto tier : tiers()) {
    REQUIRE_FALSE(kernels::sha256_select(kernels::sha256_tier_name(tier)).has_value());
    for (size_t n : {size_t(37), size_t(9000), size_t(20000)}) {
      std::vector<std::vector<uint8_t>> leaves(n, std::vector<uint8_t>(32));
      for (auto& l : leaves)
        for (auto& b : l) b = uint8_t(rng());
      for (int plant : {0, 1, 2}) {
        auto planted = leaves;
        if (plant == 1) planted[n / 2 & ~size_t(1)] = planted[(n / 2 & ~size_t(1)) + 1];  // level 0 pair
        if (plant == 2 && n >= 2048)  // two equal 1024-leaf subtrees side by side: a level-10 pair
          for (size_t i = 0; i < 1024; ++i) planted[1024 + i] = planted[i];
        for (bool twice : {false, true}) {
          CAPTURE(kernels::sha256_tier_name(tier));
          CAPTURE(n);
          CAPTURE(plant);
          bool ref_mutated = false;
          const auto want = reference::merkle_root(planted, twice, &ref_mutated);
          const auto got = root_fixed(planted, twice);
          CHECK(hex(got.root) == hex(want));
          CHECK(got.mutated == ref_mutated);
          CHECK(got.mutated == (plant == 1 || (plant == 2 && n >= 2048)));
        }
      }
    }
  }
}

TEST_CASE("set_leaf_hashes builds Bitcoin's tree over given hashes; big trees use the parallel level path") {
  std::mt19937_64 rng(3);
  pipeline::ThreadScope scope(2);
  for (size_t n : {size_t(1), size_t(2), size_t(5), size_t(1000), size_t((1u << 19) + 3)}) {
    std::vector<reference::Digest32> hashes(n);
    for (auto& h : hashes)
      for (auto& b : h) b = uint8_t(rng());
    std::vector<uint8_t> flat;
    for (const auto& h : hashes) flat.insert(flat.end(), h.begin(), h.end());
    for (bool twice : {false, true}) {
      CAPTURE(n);
      CAPTURE(twice);
      merkle::MerkleTree tree(n, {twice});
      REQUIRE_FALSE(tree.set_leaf_hashes(flat.data(), n).has_value());
      const auto result = tree.compute();
      CHECK(hex(result.root) == hex(reference::merkle_root_from_hashes(hashes, twice)));
      const size_t i = n - 1;
      Hash32 leaf;
      std::copy(hashes[i].begin(), hashes[i].end(), leaf.begin());
      CHECK(merkle::MerkleTree::verify(leaf, i, n, tree.proof(i), result.root, {twice}));
      if (n > 100000) break;  // the big case once is enough
    }
  }
}
