// mpt_trie_test: the mutable trie. Every vector case replayed put/delete by put/delete must
// reach the case's root, and after every single write the incremental root equals the
// batch builder's root of the current set; random batches against the reference; delete
// collapses leave the canonical form (root of a sequence = root of its final set).
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"
#include "tests/engine/mpt_vectors.h"

using namespace st;
using st::ref::Bytes;

namespace {

std::string hex(const mpt::Hash32& h) { return ref::to_hex(h); }

std::string builder_root(const std::map<Bytes, Bytes>& m) {
  std::vector<mpt::KeyValue> v;
  for (const auto& [k, val] : m) v.push_back({k.data(), uint32_t(k.size()), val.data(), uint32_t(val.size())});
  return hex(mpt::build_root(v));
}

}  // namespace

TEST_CASE("mpt trie: every vector case replayed, incremental == from scratch after each write") {
  auto cases = test::load_all_trie_cases();
  REQUIRE(cases.size() == 505);
  size_t writes = 0;
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.name);
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    for (const auto& [k0, v] : c.ops) {
      const Bytes k = c.secure ? ref::keccak(k0) : k0;
      if (v) { t.put(k, *v); m[k] = *v; }
      else { t.erase(k); m.erase(k); }
      ++writes;
      CHECK(hex(t.root_hash()) == builder_root(m));
    }
    CHECK(hex(t.root_hash()) == ref::to_hex(c.root));
    for (const auto& [k, v] : m) CHECK(t.get(k) == std::optional<std::vector<uint8_t>>(v));
  }
  CHECK(writes > 1000);
}

TEST_CASE("mpt trie: random put/delete batches against the reference, nodes are reclaimed") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 12; ++round) {
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    const size_t keyspace = 20 + rng() % 300;
    const bool plain_short = round % 3 == 0;  // short plain keys: prefixes and branch values
    for (int batch = 0; batch < 8; ++batch) {
      std::vector<std::pair<Bytes, Bytes>> writes;
      const size_t nw = 1 + rng() % 60;
      for (size_t i = 0; i < nw; ++i) {
        const uint64_t id = rng() % keyspace;
        Bytes k;
        if (plain_short) { k.resize(id % 4); for (size_t j = 0; j < k.size(); ++j) k[j] = uint8_t((id >> (2 * j)) % 3); }
        else { Bytes be(8); for (int b = 0; b < 8; ++b) be[b] = uint8_t(id >> (8 * b)); k = ref::keccak(be); }
        Bytes v;
        if (rng() % 3) { v.resize(1 + rng() % 40); for (auto& b : v) b = uint8_t(rng()); }
        writes.emplace_back(k, v);
      }
      std::vector<mpt::Trie::Write> w;
      for (auto& [k, v] : writes) {
        w.push_back({k, v});
        if (v.empty()) m.erase(k); else m[k] = v;
      }
      t.apply(w);
      CAPTURE(round); CAPTURE(batch);
      CHECK(hex(t.root_hash()) == ref::to_hex(ref::mpt_root(m)));
    }
    // delete everything: back to the empty root with no live nodes
    std::vector<Bytes> keys;
    for (auto& [k, v] : m) keys.push_back(k);
    std::shuffle(keys.begin(), keys.end(), rng);
    for (auto& k : keys) t.erase(k);
    CHECK(hex(t.root_hash()) == "56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
    CHECK(t.live_nodes() == 0);
  }
}

TEST_CASE("mpt trie: unchanged writes keep the cache, changed ones rehash only their path") {
  mpt::Trie t;
  std::vector<Bytes> keys;
  for (int i = 0; i < 2000; ++i) {
    Bytes k = ref::keccak(Bytes{uint8_t(i), uint8_t(i >> 8)});
    keys.push_back(k);
    t.put(k, Bytes{1, 2, 3});
  }
  const auto r0 = t.root_hash();
  t.put(keys[5], Bytes{1, 2, 3});  // same value
  t.erase(ref::keccak(Bytes{9, 9, 9}));  // absent key
  CHECK_FALSE(t.dirty());
  mpt::CommitStats st;
  CHECK(t.root_hash(&st) == r0);
  CHECK(st.nodes_rehashed == 0);
  t.put(keys[7], Bytes{4});
  st = {};
  t.root_hash(&st);
  CHECK(st.nodes_rehashed >= 2);
  CHECK(st.nodes_rehashed <= 6);  // leaf + its ancestors only (depth ~3-4 for 2000 keys)
}

TEST_CASE("mpt trie: batch apply == key by key (big batches, whole subtrees deleted, logged and unlogged commits)") {
  // apply() sorts, deduplicates and runs the breadth-first batch descent; its commit comes
  // from the batch's dirty log when the batch started clean and changed no structure above
  // its frontiers, else from the collect pass. Both must equal key-by-key puts and the
  // reference after every batch, whatever the mix.
  std::mt19937_64 rng(23);
  mpt::CommitStats cs;
  size_t commits = 0;
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    const bool plain_short = variant == 2;  // prefix keys and branch values
    mpt::Trie batch, single;
    std::map<Bytes, Bytes> m;
    auto make_key = [&](uint64_t id) {
      Bytes k;
      if (plain_short) { k.resize(id % 5); for (size_t j = 0; j < k.size(); ++j) k[j] = uint8_t((id >> (2 * j)) % 4); }
      else { Bytes be(8); for (int b = 0; b < 8; ++b) be[b] = uint8_t(id >> (8 * b)); k = ref::keccak(be); }
      return k;
    };
    const uint64_t keyspace = plain_short ? 600 : 4000;
    for (int round = 0; round < 10; ++round) {
      CAPTURE(round);
      std::vector<std::pair<Bytes, Bytes>> writes;
      const size_t nw = round == 0 ? 2500 : 1 + rng() % 1500;
      const int drop_nibble = round % 3 == 1 ? int(rng() % 16) : -1;  // delete a whole root subtree
      for (size_t i = 0; i < nw; ++i) {
        const Bytes k = make_key(rng() % keyspace);
        Bytes v;
        if (round == 0 || rng() % 4) { v.resize(1 + rng() % (variant == 1 ? 3 : 40)); for (auto& b : v) b = uint8_t(rng()); }
        writes.emplace_back(k, v);
      }
      if (drop_nibble >= 0)
        for (const auto& [k, v] : m)
          if (!k.empty() && (k[0] >> 4) == drop_nibble) writes.emplace_back(k, Bytes{});
      std::vector<mpt::Trie::Write> w;
      for (auto& [k, v] : writes) {
        w.push_back({k, v});
        if (v.empty()) { single.erase(k); m.erase(k); }
        else { single.put(k, v); m[k] = v; }
      }
      if (round % 4 == 3) {  // two batches before one commit (the second starts dirty: no log)
        const size_t half = w.size() / 2;
        batch.apply(std::span(w).first(half));
        batch.apply(std::span(w).subspan(half));
      } else {
        batch.apply(w);
      }
      if (round % 5 == 4 && !m.empty()) {  // a single put after the batch voids its log
        const auto& [k, v] = *m.begin();
        batch.put(k, v);
      }
      const std::string want = ref::to_hex(ref::mpt_root(m));
      CHECK(hex(batch.root_hash(&cs)) == want);
      CHECK(hex(single.root_hash()) == want);
      ++commits;
    }
    for (const auto& [k, v] : m) CHECK(batch.get(k) == std::optional<std::vector<uint8_t>>(v));
    // one batch deletes everything
    std::vector<mpt::Trie::Write> all;
    for (const auto& [k, v] : m) all.push_back({k, {}});
    batch.apply(all);
    CHECK(hex(batch.root_hash()) == "56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
    CHECK(batch.live_nodes() == 0);
  }
  CHECK(cs.from_batch_log > 0);           // both commit paths were taken
  CHECK(cs.from_batch_log < commits);
}
