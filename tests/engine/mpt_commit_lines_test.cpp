// mpt_commit_lines_test: the mutable trie's commit without node lines (trie.h): dirty flags
// are a per-node epoch compared with the trie's epoch (a commit cleans every node by one
// bump; a clean branch's dirty_mask is stale), and a batch log records what a value-less
// branch's encoding needs (children block, kid_mask), so the commit encodes it from its slot
// lines alone. Covered here: the epoch wrapping (2^16 commits) with nodes left untouched
// across it; clean branches with stale dirty masks gaining and losing children through put,
// erase and batches; random interleavings of put / erase / apply / root_hash (short keys:
// dense branches, branch values, embedded refs) against a from-scratch build.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"
#include "tests/engine/mpt_test_util.h"

using namespace st;
using Bytes = std::vector<uint8_t>;
using mpt_test::scratch_root;

namespace {

Bytes key32(uint64_t i) {
  Bytes k(32);
  uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x1234567;
  for (size_t j = 0; j < 32; ++j) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    k[j] = uint8_t(x >> 32);
  }
  return k;
}

Bytes val(uint64_t i, size_t len = 33) {
  Bytes v(len);
  for (size_t j = 0; j < len; ++j) v[j] = uint8_t(i * 131 + j * 7 + 1);
  if (v[0] == 0) v[0] = 1;
  return v;
}

}  // namespace

TEST_CASE("mpt commit lines: nodes untouched while the epoch wraps stay clean") {
  // Pairs of keys P_i, Q_i share a branch X_i of their own (children 0 and 1, two leaves).
  // Phase 1 updates P_i (one commit each: X_i's dirty mask is left {0}); then commits that
  // change only another key B; phase 3 updates Q_i, one per two commits, so the distances
  // between the two commits touching X_i cover [2^16 - 33, 2^16 + 31), around the 16-bit
  // epoch's wrap. A stale epoch read as dirty (with its stale mask {0}) would re-hash P_i's
  // leaf as well: every phase-3 commit must re-hash as many nodes as its phase-1 twin.
  constexpr uint64_t kPairs = 64;
  constexpr uint64_t kFirstDistance = (uint64_t(1) << 16) - 33;
  auto pair_key = [](uint64_t i, uint8_t side) {
    Bytes k(32, 0x33);
    k[0] = 0x5a;
    k[1] = uint8_t(i);
    k[2] = uint8_t(side << 4);
    return k;
  };
  std::map<Bytes, Bytes> m;
  std::vector<std::pair<Bytes, Bytes>> bulk;
  for (uint64_t i = 0; i < 300; ++i) bulk.push_back({key32(i), val(i)});
  for (uint64_t i = 0; i < kPairs; ++i) {
    bulk.push_back({pair_key(i, 0), val(500 + i)});
    bulk.push_back({pair_key(i, 1), val(600 + i)});
  }
  const Bytes b = key32(1000);
  mpt::Trie t;
  mpt_test::apply_writes(t, m, bulk, true);
  t.root_hash();

  uint64_t commits = 0;
  auto commit = [&]() {
    mpt::CommitStats s;
    t.root_hash(&s);
    ++commits;
    return s.nodes_rehashed;
  };
  auto touch_b = [&](uint64_t i) {
    const Bytes v = val(i, 1 + i % 40);  // short and long values (embedded leaf refs too)
    if (i % 3 == 0) {
      const mpt::Trie::Write w{b, v};
      t.apply(std::span(&w, 1));  // (a logged batch)
    } else {
      t.put(b, v);
    }
    m[b] = v;
    commit();
  };
  std::vector<uint64_t> phase1(kPairs);
  std::vector<uint64_t> at(kPairs);
  for (uint64_t i = 0; i < kPairs; ++i) {
    mpt_test::apply_writes(t, m, {{pair_key(i, 0), val(700 + i)}}, false);
    at[i] = commits;
    phase1[i] = commit();
  }
  REQUIRE(t.root_hash() == scratch_root(m));
  for (uint64_t i = 0; commits < at[0] + kFirstDistance; ++i) {
    touch_b(i);
    if (!t.committed()) FAIL("not clean after commit ", commits);
  }
  for (uint64_t i = 0; i < kPairs; ++i) {
    REQUIRE(commits - at[i] == kFirstDistance + i);
    mpt_test::apply_writes(t, m, {{pair_key(i, 1), val(800 + i)}}, false);
    INFO("pair ", i, ", ", commits - at[i], " commits after its first update");
    CHECK(commit() == phase1[i]);
    touch_b(i);
  }
  REQUIRE(t.root_hash() == scratch_root(m));
  for (const auto& [k, v] : m) REQUIRE(t.get(k) == std::optional<Bytes>(v));

  // a logged batch (updates, an insert, a delete) after the wrap, against a fresh trie
  mpt::Trie fresh;
  std::map<Bytes, Bytes> fm;
  std::vector<std::pair<Bytes, Bytes>> all(m.begin(), m.end());
  mpt_test::apply_writes(fresh, fm, all, true);
  fresh.root_hash();
  std::vector<std::pair<Bytes, Bytes>> w2 = {{key32(10), val(90)}, {key32(11), Bytes{}}, {key32(5000), val(91)}, {pair_key(3, 0), val(92)}};
  mpt_test::apply_writes(t, m, w2, true);
  mpt_test::apply_writes(fresh, fm, w2, true);
  mpt::CommitStats s2, f2;
  const auto r2 = t.root_hash(&s2);
  REQUIRE(r2 == fresh.root_hash(&f2));
  REQUIRE(r2 == scratch_root(m));
  CHECK(s2.nodes_rehashed == f2.nodes_rehashed);
  CHECK(s2.from_batch_log == 1);
  CHECK(t.committed());
}

TEST_CASE("mpt commit lines: clean branches with stale dirty masks gain and lose children") {
  // Root branch with children at nibbles 1, 3, 5, 7, 9; a logged batch dirties 3 and 5 (the
  // root's dirty mask stays {3, 5} after the commit); then children are added below and
  // between them (slots move up), removed (slots move down), by put and by batch.
  std::map<Bytes, Bytes> m;
  mpt::Trie t;
  auto key = [](uint8_t first, uint8_t second) { return Bytes{first, second, 0x42}; };
  std::vector<std::pair<Bytes, Bytes>> init;
  for (uint8_t n : {0x10, 0x30, 0x50, 0x70, 0x90})
    for (uint8_t s : {0x01, 0x82}) init.push_back({key(n, s), val(n + s)});
  mpt_test::apply_writes(t, m, init, true);
  REQUIRE(t.root_hash() == scratch_root(m));

  const std::vector<std::vector<std::pair<Bytes, Bytes>>> steps = {
      {{key(0x30, 0x01), val(1)}, {key(0x50, 0x82), val(2)}},  // logged: root mask {3, 5}
      {{key(0x00, 0x01), val(3)}},                              // put: child 0 added, every slot moves up
      {{key(0x30, 0x01), val(4)}},                              // logged
      {{key(0x00, 0x01), Bytes{}}},                             // erase: child 0 gone, slots move down
      {{key(0x50, 0x01), val(5)}, {key(0x60, 0x01), val(6)}},   // batch: child 6 added between clean ones
      {{key(0x70, 0x01), val(7)}},                              // logged
      {{key(0x30, 0x01), Bytes{}}, {key(0x30, 0x82), Bytes{}}}, // batch: child 3 gone
      {{key(0x20, 0x05), val(8)}},                              // put: child 2 added
      {{key(0x10, 0x01), val(9)}, {key(0x90, 0x82), val(10)}},  // logged
      {{key(0xf0, 0x01), val(11)}, {key(0x10, 0x01), Bytes{}}}, // batch: child 15 added, under 1 a leaf collapses up
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const bool batch = steps[i].size() > 1 || i == 0 || i == 2 || i == 5;
    mpt_test::apply_writes(t, m, steps[i], batch);
    INFO("step ", i);
    REQUIRE(t.root_hash() == scratch_root(m));
    for (const auto& [k, v] : m) REQUIRE(t.get(k) == std::optional<Bytes>(v));
  }
}

TEST_CASE("mpt commit lines: random put / erase / apply / root_hash interleavings match a scratch build") {
  // Short keys of 1-3 bytes over a small alphabet: dense branches that gain and lose
  // children, keys ending at branches (branch values: logged without children block), short
  // values (embedded refs). Several writes may come between commits (then a batch starts
  // from a dirty trie and is not logged).
  std::mt19937_64 rng(20261130);
  for (int round = 0; round < 6; ++round) {
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    uint64_t logged = 0;
    for (int step = 0; step < 250; ++step) {
      auto random_key = [&] {
        Bytes k(1 + rng() % 3);
        for (auto& c : k) c = uint8_t((rng() % 6) * 0x11 + (rng() % 2) * 0x40);
        return k;
      };
      auto random_value = [&]() -> Bytes {
        if (rng() % 4 == 0) return {};
        return val(rng(), rng() % 3 == 0 ? 1 + rng() % 4 : 20 + rng() % 30);
      };
      const int kind = int(rng() % 4);
      std::vector<std::pair<Bytes, Bytes>> ws;
      const size_t n = kind == 0 ? 1 : 1 + rng() % 24;
      for (size_t i = 0; i < n; ++i) {
        if (kind == 3 && !m.empty()) {  // updates of existing keys only (the logged fast path)
          auto it = m.begin();
          std::advance(it, long(rng() % m.size()));
          ws.push_back({it->first, val(rng(), 33)});
        } else {
          ws.push_back({random_key(), random_value()});
        }
      }
      mpt_test::apply_writes(t, m, ws, kind != 0);
      if (rng() % 3 == 0) continue;  // no commit: the next write starts from a dirty trie
      mpt::CommitStats s;
      const auto r = t.root_hash(&s);
      logged += s.from_batch_log;
      INFO("round ", round, " step ", step);
      REQUIRE(r == scratch_root(m));
      REQUIRE(t.committed());
    }
    for (const auto& [k, v] : m) REQUIRE(t.get(k) == std::optional<Bytes>(v));
    CHECK(logged > 20);  // the record path was exercised
  }
}

// A branch left with one child that is itself a branch changed by the same batch collapses
// into an extension; release + alloc hand the extension the branch's id, so the batch log
// must not survive on "same id" alone (the child's record pointed at the freed children
// block, and the extension was encoded with an empty child ref).
TEST_CASE("mpt commit lines: a logged batch that collapses a branch over a dirty branch") {
  mpt::Trie t;
  std::map<Bytes, Bytes> m;
  mpt_test::apply_writes(t, m, {{{0x00, 0x00}, val(1, 40)}, {{0x11, 0x00}, val(2, 40)}, {{0x12, 0x00}, val(3, 40)}}, true);
  REQUIRE(t.root_hash() == scratch_root(m));
  mpt_test::apply_writes(t, m, {{{0x00, 0x00}, {}}, {{0x11, 0x00}, val(4, 40)}}, true);
  REQUIRE(t.root_hash() == scratch_root(m));
  // The extension must hold its child's ref now: splitting it at its last nibble moves it.
  mpt_test::apply_writes(t, m, {{{0x20, 0x00}, val(5, 40)}}, true);
  REQUIRE(t.root_hash() == scratch_root(m));
  mpt_test::apply_writes(t, m, {{{0x11, 0x00}, val(6, 40)}}, false);
  REQUIRE(t.root_hash() == scratch_root(m));
}

// Logged batches (apply on a clean trie) that delete existing keys, update others and add
// new ones, with short keys (embedded refs, values at branches) and long keys and values
// (node bytes on the heap); every root against a scratch build.
TEST_CASE("mpt commit lines: logged batches with deletes of existing keys, short and long keys") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 8; ++round) {
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    const bool long_keys = round % 2 == 1;
    auto random_key = [&] {
      Bytes k(long_keys ? 40 + rng() % 3 : 1 + rng() % 3);
      for (size_t i = 0; i < k.size(); ++i)
        k[i] = long_keys && i < 36 ? uint8_t(i) : uint8_t((rng() % 5) * 0x11 + (rng() % 2) * 0x40);
      return k;
    };
    auto random_value = [&] { return val(rng(), rng() % 4 == 0 ? 150 + rng() % 100 : 1 + rng() % 40); };
    uint64_t logged = 0;
    for (int step = 0; step < 150; ++step) {
      std::vector<std::pair<Bytes, Bytes>> ws;
      const size_t n = 1 + rng() % 12;
      for (size_t i = 0; i < n; ++i) {
        if (!m.empty() && rng() % 2 == 0) {
          auto it = m.begin();
          std::advance(it, long(rng() % m.size()));
          ws.push_back({it->first, rng() % 2 == 0 ? Bytes{} : random_value()});
        } else {
          ws.push_back({random_key(), random_value()});
        }
      }
      mpt_test::apply_writes(t, m, ws, true);
      mpt::CommitStats s;
      const auto r = t.root_hash(&s);
      logged += s.from_batch_log;
      INFO("round ", round, " step ", step);
      REQUIRE(r == scratch_root(m));
    }
    for (const auto& [k, v] : m) REQUIRE(t.get(k) == std::optional<Bytes>(v));
    CHECK(logged > 20);
  }
}
