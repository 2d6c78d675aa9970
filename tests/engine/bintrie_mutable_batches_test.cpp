// bintrie_mutable_batches_test: the mutable tree's batch shapes against the batch builder:
// batches around the commit chunk size (32) and the bucket-sort threshold (512), stem
// splits at every depth, many writes to one stem in one batch, empty batches, several
// batches applied before one commit; and the rehash counts of a large overwrite batch
// equal the distinct internal nodes on the written paths (nothing dropped, nothing twice).
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/bintrie/stem_bits.h"
#include "tests/engine/bintrie_test_util.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {

// Overwrites, new slots in existing stems, near splits and fresh stems, mixed.
std::vector<Entry> mixed_batch(std::mt19937_64& rng, const std::vector<Entry>& history, size_t n) {
  std::vector<Entry> out;
  for (size_t i = 0; i < n; ++i) {
    Entry e = random_entry(rng);
    const unsigned mode = unsigned(rng() % 4);
    if (mode == 0) e.key = history[rng() % history.size()].key;
    if (mode == 1) { e.key = history[rng() % history.size()].key; e.key[31] = uint8_t(rng()); }
    if (mode == 2) {
      e.key = history[rng() % history.size()].key;
      const unsigned flip = unsigned(rng() % kStemBits);
      e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("bintrie mutable batches: sizes around the commit chunk and the bucket-sort threshold") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(31);
  std::vector<Entry> history = random_entries(0, 3000);
  MutableTree tree(h);
  tree.apply(history);
  CHECK(hex(tree.commit()) == hex(batch_root(h, history)));
  for (size_t n : {1u, 31u, 32u, 33u, 64u, 65u, 511u, 512u, 513u, 2000u}) {
    CAPTURE(n);
    const auto batch = mixed_batch(rng, history, n);
    tree.apply(batch);
    CommitStats cs;
    const Hash32 root = tree.commit(&cs);
    history.insert(history.end(), batch.begin(), batch.end());
    CHECK(hex(root) == hex(batch_root(h, history)));
    CHECK(cs.leaf_hashes <= n);
    CHECK(cs.leaf_hashes >= 1);
  }
}

TEST_CASE("bintrie mutable batches: stem splits at every depth, in one batch and one by one") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(32);
  const Entry base = random_entry(rng);
  // Key d shares exactly d stem bits with the base stem (bit d flipped).
  std::vector<Entry> splits;
  for (unsigned d = 0; d < kStemBits; ++d) {
    Entry e = base;
    e.key[d / 8] ^= uint8_t(0x80 >> (d % 8));
    e.key[31] = uint8_t(d);
    for (auto& x : e.value) x = uint8_t(rng());
    splits.push_back(e);
  }
  std::vector<Entry> all{base};
  all.insert(all.end(), splits.begin(), splits.end());
  const std::string want = hex(batch_root(h, all));
  {
    MutableTree t(h);  // everything in one batch
    t.apply(all);
    CHECK(hex(t.commit()) == want);
  }
  {
    MutableTree t(h);  // the base first, then all splits in one batch (deepest first)
    t.apply(std::span<const Entry>(&base, 1));
    t.commit();
    std::vector<Entry> rev(splits.rbegin(), splits.rend());
    t.apply(rev);
    CommitStats cs;
    CHECK(hex(t.commit(&cs)) == want);
    CHECK(cs.dirty_stems == kStemBits);
  }
  {
    MutableTree t(h);  // one split per commit, shallowest first, then an overwrite of each
    t.apply(std::span<const Entry>(&base, 1));
    t.commit();
    for (const Entry& e : splits) {
      t.apply(std::span<const Entry>(&e, 1));
      t.commit();
    }
    CHECK(hex(t.commit()) == want);
    std::vector<Entry> over = splits;
    for (auto& e : over) e.value[0] ^= 0xa5;
    t.apply(over);
    all.insert(all.end(), over.begin(), over.end());
    CHECK(hex(t.commit()) == hex(batch_root(h, all)));
  }
}

TEST_CASE("bintrie mutable batches: many writes to one stem in a batch, repeated keys") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(33);
  std::vector<Entry> history = random_entries(0, 500);
  MutableTree tree(h);
  tree.apply(history);
  tree.commit();
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    std::vector<Entry> batch;
    const Entry target = history[rng() % 500];
    for (int i = 0; i < 700; ++i) {  // > 512: the bucket sort; subs repeat, last write wins
      Entry e = target;
      e.key[31] = uint8_t(rng() % (round < 2 ? 40 : 256));
      for (auto& x : e.value) x = uint8_t(rng());
      batch.push_back(e);
    }
    tree.apply(batch);
    CommitStats cs;
    const Hash32 root = tree.commit(&cs);
    history.insert(history.end(), batch.begin(), batch.end());
    CHECK(hex(root) == hex(batch_root(h, history)));
    CHECK(cs.dirty_stems == 1);
  }
}

TEST_CASE("bintrie mutable batches: empty batches and several batches before one commit") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(34);
  std::vector<Entry> history = random_entries(0, 2000);
  MutableTree tree(h);
  tree.apply(std::span<const Entry>{});
  CHECK(hex(tree.commit()) == hex(Hash32{}));
  tree.apply(history);
  const Hash32 r0 = tree.commit();
  tree.apply(std::span<const Entry>{});
  CommitStats cs;
  CHECK(tree.commit(&cs) == r0);
  CHECK(cs.leaf_hashes == 0);
  CHECK(cs.hash64() == 0);
  for (int round = 0; round < 3; ++round) {
    for (size_t n : {40u, 600u, 7u}) {
      const auto batch = mixed_batch(rng, history, n);
      tree.apply(batch);
      history.insert(history.end(), batch.begin(), batch.end());
    }
    CHECK(hex(tree.commit()) == hex(batch_root(h, history)));
  }
}

TEST_CASE("bintrie mutable batches: an overwrite batch rehashes exactly its paths' internal nodes") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(35);
  const std::vector<Entry> entries = random_entries(0, 20000);
  MutableTree tree(h);
  tree.apply(entries);
  tree.commit();
  std::vector<Entry> batch;
  for (int i = 0; i < 1500; ++i) {
    Entry e = entries[rng() % entries.size()];
    e.value[3] ^= 0x3c;
    batch.push_back(e);
  }
  // The distinct internal nodes on the written stems' paths, walked independently.
  std::set<uint32_t> on_paths, stems;
  for (const Entry& e : batch) {
    NodeRef r = tree.root_ref();
    unsigned depth = 0;
    while (ref_is_internal(r)) {
      on_paths.insert(ref_index(r));
      r = tree.internal(ref_index(r)).child[stem_bit(e.key.data(), depth++)];
    }
    REQUIRE(ref_is_stem(r));
    stems.insert(ref_index(r));
  }
  tree.apply(batch);
  CommitStats cs;
  const Hash32 root = tree.commit(&cs);
  std::vector<Entry> all = entries;
  all.insert(all.end(), batch.begin(), batch.end());
  CHECK(hex(root) == hex(batch_root(h, all)));
  CHECK(cs.internal_hashes == on_paths.size());
  CHECK(cs.dirty_stems == stems.size());
  CHECK(cs.stem_hashes == stems.size());
  CHECK(cs.subtree_hashes == 8 * stems.size());  // one value per stem: one node per level
}
