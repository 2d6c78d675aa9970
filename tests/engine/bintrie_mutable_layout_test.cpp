// bintrie_mutable_layout_test: the mutable tree's storage layout invariants. Built in one
// batch or in many, the side arrays stay consistent (parents, child-hash lines, stems'
// parent_side, the root hash) and proofs verify; stems
// grow from 1 to 256 values across batches (slot capacity 1, 2, 4, ..., sub indices moving
// from the stem line to the side pool, the dense-stem cache) and stay equal to from
// scratch; a split of a root stem and of a stem at every depth takes the moved stem's hash
// from where it hung; several applies before one commit hash each written leaf once.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/bintrie/proof.h"
#include "engine/bintrie/stem_bits.h"
#include "tests/engine/bintrie_test_util.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {

// Checks the structural invariants of a committed tree: every reachable internal node's
// parent is the node above it, every child-hash line holds its children's hashes, the
// reachable internal nodes are internal_count(), and each stem hangs where the walk finds it.
void check_structure(const MutableTree& t) {
  size_t internal = 0;
  std::vector<std::pair<NodeRef, uint32_t>> todo;  // (ref, parent internal index)
  if (t.root_ref() != kEmptyRef) todo.push_back({t.root_ref(), kNoParent});
  while (!todo.empty()) {
    const auto [r, parent] = todo.back();
    todo.pop_back();
    if (!ref_is_internal(r)) continue;
    const uint32_t i = ref_index(r);
    ++internal;
    REQUIRE(t.parent(i) == parent);
    Hash32 x;
    hash_pair(t.hasher(), t.child_hashes(i).h[0].data(), t.child_hashes(i).h[1].data(), x.data());
    CHECK(x == t.ref_hash(r));
    for (unsigned s = 0; s < 2; ++s) {
      const NodeRef c = t.internal(i).child[s];
      CHECK(t.child_hashes(i).h[s] == t.ref_hash(c));
      if (c == kEmptyRef) CHECK(t.child_hashes(i).h[s] == Hash32{});
      todo.push_back({c, i});
    }
  }
  CHECK(internal == t.internal_count());
  if (t.root_ref() != kEmptyRef) CHECK(t.ref_hash(t.root_ref()) == t.root());
}

}  // namespace

TEST_CASE("bintrie mutable layout: one batch or many, the side arrays agree and proofs verify") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(41);
  std::vector<Entry> history = random_entries(0, 3000);
  // Near keys too: long single-child chains and stems with several values.
  for (int i = 0; i < 300; ++i) {
    Entry e = history[rng() % history.size()];
    if (i % 2) e.key[31] ^= uint8_t(1 + rng() % 255);
    else { const unsigned flip = 40 + unsigned(rng() % 200); e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8)); }
    for (auto& x : e.value) x = uint8_t(rng());
    history.push_back(e);
  }
  // Built in small batches, and in one.
  MutableTree one(h);
  one.apply(history);
  CHECK(one.commit() == batch_root(h, history));
  check_structure(one);
  MutableTree t(h);
  for (size_t i = 0; i < history.size(); i += 97) {
    t.apply(std::span<const Entry>(history.data() + i, std::min<size_t>(97, history.size() - i)));
    t.commit();
  }
  const Hash32 root = t.commit();
  CHECK(hex(root) == hex(batch_root(h, history)));
  check_structure(t);
  std::map<Hash32, Hash32> kv;
  for (const Entry& e : history) kv[e.key] = e.value;
  for (const auto& [k, v] : kv) {
    const auto got = t.get(k);
    REQUIRE(got.has_value());
    CHECK(*got == v);
  }
  for (size_t i = 0; i < history.size(); i += 37) {
    const KeyProof p = prove_key(t, history[i].key);
    CHECK(p.siblings == prove_key(one, history[i].key).siblings);
    const auto v = verify_key_proof(h, root, history[i].key, p);
    REQUIRE(std::holds_alternative<std::optional<Hash32>>(v));
    CHECK(std::get<std::optional<Hash32>>(v) == kv[history[i].key]);
  }
  // More writes (overwrites, new slots, splits) stay equal to from scratch.
  for (int round = 0; round < 5; ++round) {
    std::vector<Entry> batch;
    for (int i = 0; i < 200; ++i) {
      Entry e = random_entry(rng);
      if (i % 3 == 0) e.key = history[rng() % history.size()].key;
      batch.push_back(e);
    }
    t.apply(batch);
    history.insert(history.end(), batch.begin(), batch.end());
    CHECK(hex(t.commit()) == hex(batch_root(h, history)));
    check_structure(t);
  }
}

TEST_CASE("bintrie mutable layout: stems grow from 1 to 256 values across batches") {
  for (HashKind kind : {HashKind::sha256, HashKind::blake3}) {
    const Hasher h = make_hasher(kind);
    std::mt19937_64 rng(kind == HashKind::sha256 ? 42 : 43);
    std::vector<Entry> history = random_entries(0, 200);
    MutableTree t(h);
    t.apply(history);
    t.commit();
    // Three stems fill up in different sub orders: one value per batch, two per batch (one
    // of them an overwrite), and a batch of 50 at a time.
    Hash32 stems[3];
    for (auto& s : stems) s = history[rng() % history.size()].key;
    std::vector<uint8_t> order[3];
    for (auto& o : order) {
      for (int i = 0; i < 256; ++i) o.push_back(uint8_t(i));
      std::shuffle(o.begin(), o.end(), rng);
    }
    size_t next[3] = {0, 0, 0};
    for (int round = 0; next[0] < 256 || next[1] < 256 || next[2] < 256; ++round) {
      CAPTURE(round);
      std::vector<Entry> batch;
      for (int s = 0; s < 3; ++s) {
        const size_t take = s == 0 ? 1 : s == 1 ? 2 : 50;
        for (size_t k = 0; k < take && next[s] < 256; ++k) {
          Entry e;
          e.key = stems[s];
          e.key[31] = order[s][next[s]++];
          for (auto& x : e.value) x = uint8_t(rng());
          batch.push_back(e);
          if (s == 1) {  // and an overwrite of an earlier value of this stem
            e.key[31] = order[s][rng() % next[s]];
            for (auto& x : e.value) x = uint8_t(rng());
            batch.push_back(e);
          }
        }
      }
      t.apply(batch);
      history.insert(history.end(), batch.begin(), batch.end());
      const Hash32 root = t.commit();
      if (round % 8 == 0 || next[0] == 256) CHECK(hex(root) == hex(batch_root(h, history)));
      for (int s = 0; s < 3; ++s) {
        const auto si = t.find_stem(stems[s].data());
        REQUIRE(si.has_value());
        const auto range = t.slots(*si);
        std::vector<uint8_t> subs;
        for (const StemSlot& sl : range) subs.push_back(sl.sub);
        CHECK(std::is_sorted(subs.begin(), subs.end()));
        CHECK(std::adjacent_find(subs.begin(), subs.end()) == subs.end());
      }
    }
    CHECK(hex(t.commit()) == hex(batch_root(h, history)));
    std::map<Hash32, Hash32> kv;
    for (const Entry& e : history) kv[e.key] = e.value;
    CHECK(t.value_count() == kv.size());
    for (const auto& [k, v] : kv) {
      const auto got = t.get(k);
      REQUIRE(got.has_value());
      CHECK(*got == v);
    }
    for (int s = 0; s < 3; ++s) CHECK(t.slots(*t.find_stem(stems[s].data())).size() == 256);
    check_structure(t);
  }
}

TEST_CASE("bintrie mutable layout: a root stem and stems at every depth split, committed hashes move") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(44);
  const Entry base = random_entry(rng);
  for (unsigned d = 0; d < kStemBits; d += 7) {
    CAPTURE(d);
    // A committed root stem, split by a key sharing d bits: the root stem's hash (the old
    // root hash) moves into the splitting node's line.
    MutableTree t(h);
    t.apply(std::span<const Entry>(&base, 1));
    CHECK(t.commit() == t.ref_hash(t.root_ref()));
    Entry e = base;
    e.key[d / 8] ^= uint8_t(0x80 >> (d % 8));
    t.apply(std::span<const Entry>(&e, 1));
    const std::vector<Entry> two{base, e};
    CommitStats cs;
    CHECK(hex(t.commit(&cs)) == hex(batch_root(h, two)));
    CHECK(cs.dirty_stems == 1);  // the moved stem is not rehashed
    CHECK(cs.internal_hashes == d + 1);
    check_structure(t);
    // Then a third key splitting the (non-root) base stem deeper, where it can.
    if (d + 1 < kStemBits) {
      Entry f = base;
      const unsigned d2 = d + 1 + unsigned(rng() % (kStemBits - d - 1));
      f.key[d2 / 8] ^= uint8_t(0x80 >> (d2 % 8));
      t.apply(std::span<const Entry>(&f, 1));
      const std::vector<Entry> three{base, e, f};
      CHECK(hex(t.commit()) == hex(batch_root(h, three)));
      check_structure(t);
    }
  }
}

TEST_CASE("bintrie mutable layout: several applies before a commit hash each written leaf once") {
  const Hasher h = make_hasher(HashKind::sha256);
  std::mt19937_64 rng(45);
  std::vector<Entry> history = random_entries(0, 1000);
  MutableTree t(h);
  t.apply(history);
  t.commit();
  std::set<Hash32> written;
  for (int a = 0; a < 4; ++a) {
    std::vector<Entry> batch;
    for (int i = 0; i < 100; ++i) {
      Entry e = history[rng() % 300];  // overlapping keys across the applies
      for (auto& x : e.value) x = uint8_t(rng());
      batch.push_back(e);
      written.insert(e.key);
    }
    t.apply(batch);
    history.insert(history.end(), batch.begin(), batch.end());
  }
  // Overwrites only: the dirty internal nodes are those on the written stems' paths, once.
  std::set<uint32_t> on_paths;
  for (const Hash32& k : written) {
    NodeRef r = t.root_ref();
    unsigned depth = 0;
    while (ref_is_internal(r)) {
      on_paths.insert(ref_index(r));
      r = t.internal(ref_index(r)).child[stem_bit(k.data(), depth++)];
    }
  }
  CommitStats cs;
  CHECK(hex(t.commit(&cs)) == hex(batch_root(h, history)));
  CHECK(cs.leaf_hashes == written.size());
  CHECK(cs.internal_hashes == on_paths.size());
  check_structure(t);
  // Then applies with splits (later ones walk through nodes the earlier ones created).
  for (int a = 0; a < 3; ++a) {
    std::vector<Entry> batch;
    for (int i = 0; i < 150; ++i) {
      Entry e = history[rng() % history.size()];
      const unsigned flip = 8 + unsigned(rng() % 60);
      if (i % 2) e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
      for (auto& x : e.value) x = uint8_t(rng());
      batch.push_back(e);
    }
    t.apply(batch);
    history.insert(history.end(), batch.begin(), batch.end());
  }
  CHECK(hex(t.commit()) == hex(batch_root(h, history)));
  check_structure(t);
}
