// merkle_bench_test: the protocol of `statetree merkle` (engine/experiments/merkle_bench.h)
// with baselines that compute the reference root (tests/reference/merkle_reference, OpenSSL):
// one sample per rep and phase, every baseline timed every rep in order, the engine's root
// equal to the reference's, agreement false when a baseline's root differs, the proof
// verified against the root, and the compression count of the tree's shape.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/experiments/merkle_bench.h"
#include "tests/reference/merkle_reference.h"

namespace {

using namespace st;

// The reference's root over the records it was given; `flip` spoils it (a baseline gone wrong).
class ReferenceLoop : public experiments::MerkleBaselineLoop {
 public:
  explicit ReferenceLoop(size_t n, bool flip = false) : n_(n), flip_(flip) {}
  void add(const uint8_t* data, size_t leaf_size, bool) override {
    leaves_.clear();
    for (size_t i = 0; i < n_; ++i) leaves_.emplace_back(data + i * leaf_size, data + (i + 1) * leaf_size);
    ++adds;
  }
  void compute(bool twice) override {
    root_ = reference::merkle_root(leaves_, twice);
    if (flip_) root_[0] ^= 1;
    ++computes;
  }
  std::array<uint8_t, 32> root() const override { return root_; }
  int adds = 0, computes = 0;

 private:
  size_t n_;
  bool flip_;
  std::vector<std::vector<uint8_t>> leaves_;
  std::array<uint8_t, 32> root_{};
};

std::vector<uint8_t> records(size_t n, size_t size) {
  std::vector<uint8_t> v(n * size);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 131 + 7);
  return v;
}

}  // namespace

TEST_CASE("merkle bench: reps alternate engine and baselines; roots agree with the reference; proof verifies") {
  for (const bool twice : {false, true}) {
    for (const size_t n : {size_t(1), size_t(5), size_t(1000)}) {
      const std::vector<uint8_t> in = records(n, 40);
      ReferenceLoop a(n), b(n);
      experiments::MerkleBenchOptions o;
      o.input = in.data();
      o.leaf_count = n;
      o.record_bytes = 40;
      o.twice = twice;
      o.reps = 3;
      o.proof_index = n - 1;
      o.baselines = {&a, &b};
      uint64_t last = 0;
      o.progress = [&](uint64_t done) { CHECK(done == last + 1); last = done; };
      experiments::MerkleBenchResult r;
      REQUIRE(experiments::run_merkle_bench(o, &r) == "");
      CHECK(last == 3);
      CHECK(r.engine.total_ns.size() == 3);
      CHECK(r.engine.add_ns.size() == 3);
      REQUIRE(r.baselines.size() == 2);
      CHECK(r.baselines[1].compute_ns.size() == 3);
      CHECK(a.adds == 3);
      CHECK(b.computes == 3);
      std::vector<std::vector<uint8_t>> leaves;
      for (size_t i = 0; i < n; ++i) leaves.emplace_back(in.begin() + i * 40, in.begin() + (i + 1) * 40);
      CHECK(r.result.root == reference::merkle_root(leaves, twice));
      CHECK(r.baselines_agree);
      CHECK(r.baseline_roots[0] == r.result.root);
      CHECK(r.proof_ok);
      CHECK(r.proof_leaf_hash == (twice ? reference::sha256_openssl(reference::sha256_openssl(leaves[n - 1].data(), 40).data(), 32)
                                        : reference::sha256_openssl(leaves[n - 1].data(), 40)));
      CHECK(r.compressions >= n);  // at least one per leaf (a 40-byte leaf is one block)
      CHECK(r.efficiency > 0);
    }
  }
}

TEST_CASE("merkle bench: a baseline with another root is reported; given leaf hashes are proved as given") {
  const size_t n = 64;
  const std::vector<uint8_t> in = records(n, 32);
  ReferenceLoop good(n), bad(n, true);
  experiments::MerkleBenchOptions o;
  o.input = in.data();
  o.leaf_count = n;
  o.reps = 2;
  o.baselines = {&good, &bad};
  experiments::MerkleBenchResult r;
  REQUIRE(experiments::run_merkle_bench(o, &r) == "");
  CHECK_FALSE(r.baselines_agree);
  CHECK(r.baseline_roots[0] == r.result.root);

  experiments::MerkleBenchOptions g;
  g.input = in.data();
  g.leaf_count = n;
  g.given_hashes = true;
  g.proof_index = 17;
  experiments::MerkleBenchResult h;
  REQUIRE(experiments::run_merkle_bench(g, &h) == "");
  std::vector<reference::Digest32> level(n);
  for (size_t i = 0; i < n; ++i) std::memcpy(level[i].data(), in.data() + 32 * i, 32);
  CHECK(h.result.root == reference::merkle_root_from_hashes(level, false));
  CHECK(h.proof_leaf_hash == level[17]);
  CHECK(h.proof_ok);
  CHECK(h.compressions == 2 * (n - 1));  // no leaf hashing; 63 parents of two compressions
  CHECK(h.limit_ns_per_leaf == doctest::Approx(merkle::merkle_limit_ns(h.cost, 0, n - 1, 0, 1) / double(n)));

  // Given hashes with double SHA-256: no leaf hash and no leaf re-hash in the limit, one
  // re-hash per parent.
  g.twice = true;
  REQUIRE(experiments::run_merkle_bench(g, &h) == "");
  CHECK(h.compressions == 3 * (n - 1));
  CHECK(h.limit_ns_per_leaf == doctest::Approx(merkle::merkle_limit_ns(h.cost, 0, n - 1, n - 1, 1) / double(n)));
  CHECK(h.efficiency < 1e6);
}
