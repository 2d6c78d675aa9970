// bintrie_mutable_test: the mutable tree against the batch builder and the reference:
// random write batches (new stems splitting old ones, overwrites, present zeros), committed
// after every batch, incremental root == from-scratch root of everything written so far.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/mutable_tree.h"
#include "kernels/blake3.h"
#include "tests/engine/bintrie_test_util.h"
#include "tests/reference/bintrie_reference.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {

std::vector<Entry> random_batch(std::mt19937_64& rng, const std::vector<Entry>& history, size_t n) {
  std::vector<Entry> out;
  for (size_t i = 0; i < n; ++i) {
    Entry e;
    const unsigned mode = rng() % 5;
    if (mode == 0 && !history.empty()) {
      e.key = history[rng() % history.size()].key;  // overwrite an existing key
    } else if (mode == 1 && !history.empty()) {
      e.key = history[rng() % history.size()].key;  // same stem, maybe new slot
      e.key[31] = uint8_t(rng());
    } else if (mode == 2 && !history.empty()) {
      e.key = history[rng() % history.size()].key;  // split near an existing stem
      const unsigned flip = 200 + rng() % 48;
      e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
    } else {
      for (auto& x : e.key) x = uint8_t(rng());
    }
    if (rng() % 5 == 0) e.value = Hash32{};  // a deleted slot: present zero
    else for (auto& x : e.value) x = uint8_t(rng());
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("bintrie mutable tree: incremental == from scratch == reference, both hashes") {
  for (HashKind kind : {HashKind::sha256, HashKind::blake3}) {
    const Hasher h = make_hasher(kind);
    std::mt19937_64 rng(kind == HashKind::sha256 ? 7 : 8);
    MutableTree tree(h);
    CHECK(hex(tree.commit()) == hex(Hash32{}));
    std::vector<Entry> history;
    std::map<st::reference::RefBytes32, st::reference::RefBytes32> kv;
    for (int round = 0; round < 30; ++round) {
      CAPTURE(round);
      const auto batch = random_batch(rng, history, 1 + rng() % 60);
      tree.apply(batch);
      const Hash32 inc = tree.commit();
      history.insert(history.end(), batch.begin(), batch.end());
      for (const auto& e : batch) kv[e.key] = e.value;
      CHECK(hex(inc) == hex(batch_root(h, history)));
      if (round % 5 == 0)
        CHECK(hex(inc) == hex(st::reference::bintrie_reference_root(
                              kv, kind == HashKind::sha256 ? st::reference::ref_sha256_openssl : st::kernels::blake3)));
      CHECK(tree.value_count() == kv.size());
    }
    for (const auto& [k, v] : kv) {
      const auto got = tree.get(k);
      REQUIRE(got.has_value());
      CHECK(*got == v);
    }
    Hash32 absent{};
    absent.fill(0xee);
    CHECK_FALSE(tree.get(absent).has_value());
  }
}

TEST_CASE("bintrie mutable tree: vector tree cases in one batch and one write at a time") {
  const Hasher h = make_hasher(HashKind::sha256);
  for (const auto& c : vectors()["tree_cases"]) {
    if (!c.contains("entries")) continue;
    CAPTURE(c["name"].get<std::string>());
    std::vector<Entry> entries;
    for (const auto& e : c["entries"]) entries.push_back({b32(e["key"]), b32(e["value"])});
    MutableTree one(h), many(h);
    one.apply(entries);
    CHECK(hex(one.commit()) == c["root"]["sha256"].get<std::string>());
    for (const auto& e : entries) {
      many.apply(std::span<const Entry>(&e, 1));
      if (entries.size() < 10) many.commit();
    }
    CHECK(hex(many.commit()) == c["root"]["sha256"].get<std::string>());
  }
}

TEST_CASE("bintrie mutable tree: rehash counts of an update are the dirty path only") {
  const Hasher h = make_hasher(HashKind::sha256);
  const auto entries = random_entries(0, 5000);
  MutableTree tree(h);
  tree.apply(entries);
  tree.commit();
  Entry e = entries[1234];
  e.value[0] ^= 1;
  tree.apply(std::span<const Entry>(&e, 1));
  CommitStats cs;
  const Hash32 root = tree.commit(&cs);
  CHECK(cs.dirty_stems == 1);
  CHECK(cs.leaf_hashes == 1);
  CHECK(cs.subtree_hashes == 8);  // one value in the stem: one node per level
  CHECK(cs.stem_hashes == 1);
  CHECK(cs.internal_hashes >= 8);
  CHECK(cs.internal_hashes <= 40);
  std::vector<Entry> all = entries;
  all.push_back(e);
  CHECK(hex(root) == hex(batch_root(h, all)));
}

TEST_CASE("bintrie mutable tree: dense stems (inner-node cache) stay equal to from scratch") {
  for (HashKind kind : {HashKind::sha256, HashKind::blake3}) {
    const Hasher h = make_hasher(kind);
    std::mt19937_64 rng(kind == HashKind::sha256 ? 11 : 12);
    MutableTree tree(h);
    std::vector<Entry> history = random_entries(0, 40);
    // Grow a few stems from sparse to dense across commits, write into them, add zeros.
    tree.apply(history);
    tree.commit();
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      std::vector<Entry> batch;
      const size_t n = 10 + rng() % 120;
      for (size_t i = 0; i < n; ++i) {
        Entry e = history[rng() % 8];  // stems 0..7 become dense
        e.key[31] = uint8_t(rng() % (round < 6 ? 64 : 256));
        if (rng() % 6 == 0) e.value = Hash32{};
        else for (auto& x : e.value) x = uint8_t(rng());
        batch.push_back(e);
      }
      tree.apply(batch);
      CommitStats cs;
      const Hash32 inc = tree.commit(&cs);
      history.insert(history.end(), batch.begin(), batch.end());
      CHECK(hex(inc) == hex(batch_root(h, history)));
      if (round >= 6) CHECK(cs.dense_dirty_stems > 0);
    }
    // A single write into a full dense stem: 1 leaf + 8 subtree nodes.
    Entry e = history[0];
    e.value[5] ^= 0x5a;
    tree.apply(std::span<const Entry>(&e, 1));
    CommitStats cs;
    const Hash32 r = tree.commit(&cs);
    CHECK(cs.leaf_hashes == 1);
    CHECK(cs.subtree_hashes == 8);
    history.push_back(e);
    CHECK(hex(r) == hex(batch_root(h, history)));
  }
}
