// mpt_layout_test: the two-line node layout of the mutable trie (trie.h, node_bytes.h).
// Nodes cache no ref: a committed node's ref lives only in its parent's children slot, in
// its parent extension's value bytes, or in the trie's root ref; a node's path and value
// share one inline area with a heap fallback. Covered here: NodeBytes against a plain
// model across the inline / heap boundary; a branch growing from 2 to 16 children and
// shrinking back (put and batch, hash and embedded refs); the places where a clean child's
// ref has to move because its holder goes away (an extension split at its last nibble, a
// branch collapsing into an extension over a clean branch); and proofs (NodeSource::ref
// re-encodes) on random tries. Every root is compared with a from-scratch build.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "engine/mpt/node_bytes.h"
#include "engine/mpt/proof.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"

using namespace st;
using Bytes = std::vector<uint8_t>;
using mpt_test::scratch_root;

namespace {

Bytes value_of(uint64_t seed, size_t len) {
  Bytes v(len);
  for (size_t i = 0; i < len; ++i) v[i] = uint8_t((seed * 0x9e3779b97f4a7c15ull) >> (8 * (i % 8)) ^ i ^ 0x5a);
  if (v[0] == 0) v[0] = 1;
  return v;
}

// One write through put/erase (recursive) or apply (batch descent), then the root and every
// value checked against the model.
void write_and_check(mpt::Trie& t, std::map<Bytes, Bytes>& m, const std::vector<std::pair<Bytes, Bytes>>& ws, bool batch) {
  mpt_test::apply_writes(t, m, ws, batch);
  REQUIRE(t.root_hash() == scratch_root(m));
  for (const auto& [k, v] : m) REQUIRE(t.get(k) == std::optional<Bytes>(v));
}

}  // namespace

TEST_CASE("mpt layout: NodeBytes path and value across the inline / heap boundary") {
  std::mt19937_64 rng(11);
  mpt::NodeBytes b;
  Bytes path, value;
  auto check = [&] {
    REQUIRE(b.path_size() == path.size());
    REQUIRE(b.value_size() == value.size());
    REQUIRE(Bytes(b.path().begin(), b.path().end()) == path);
    REQUIRE(Bytes(b.value().begin(), b.value().end()) == value);
  };
  auto rnd = [&](size_t n) {
    Bytes x(n);
    for (auto& c : x) c = uint8_t(rng());
    return x;
  };
  // sizes around kInline (110) for path + value, both directions
  for (int step = 0; step < 3000; ++step) {
    CAPTURE(step);
    const size_t n = rng() % 8 == 0 ? rng() % 300 : 40 + rng() % 80;
    switch (rng() % 5) {
      case 0: value = rnd(n % 130); b.set_value(value.data(), value.size()); break;
      case 1: path = rnd(n); b.set_path(path.data(), path.size()); break;
      case 2: if (!path.empty()) { const size_t k = rng() % (path.size() + 1); b.erase_path_prefix(k); path.erase(path.begin(), path.begin() + long(k)); } break;
      case 3: { const Bytes p = rnd(rng() % 40); b.prepend_path(p.data(), p.size()); path.insert(path.begin(), p.begin(), p.end()); } break;
      case 4: {  // the value set from this object's own path bytes (aliasing source)
        const size_t k = std::min<size_t>(path.size(), rng() % 50);
        value.assign(path.begin(), path.begin() + long(k));
        b.set_value(b.path_data(), k);
        break;
      }
    }
    check();
    if (step % 97 == 0) {  // moves keep the bytes, the source ends empty
      mpt::NodeBytes moved(std::move(b));
      CHECK(b.path_size() == 0);
      CHECK(b.value_size() == 0);
      b = std::move(moved);
      check();
    }
  }
  b.reset();
  CHECK(b.path_size() + b.value_size() == 0);
}

TEST_CASE("mpt layout: a branch grows from 2 to 16 children and shrinks back") {
  // Keys 0xab 0xcd (i << 4 | j): an extension (abcd) over a branch whose child count
  // goes 1 .. 16 and back; j adds a second key below some children (a branch below).
  // Children are added in ascending or descending nibble order (descending: every new
  // child's slot goes below the clean ones, which move up) and removed odd nibbles first
  // (the clean ones above move down).
  for (int variant = 0; variant < 8; ++variant) {
    CAPTURE(variant);
    const bool batch = variant & 1;
    const size_t vlen = (variant & 2) ? 1 : 40;  // 1: embedded refs (short leaves); 40: hash refs
    const bool descending = variant & 4;
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    for (uint8_t step = 0; step < 16; ++step) {
      const uint8_t i = descending ? uint8_t(15 - step) : step;
      std::vector<std::pair<Bytes, Bytes>> ws{{Bytes{0xab, 0xcd, uint8_t(i << 4)}, value_of(i, vlen)}};
      if (i % 3 == 0) ws.push_back({Bytes{0xab, 0xcd, uint8_t(i << 4 | 5)}, value_of(100 + i, vlen)});
      write_and_check(t, m, ws, batch);
    }
    write_and_check(t, m, {{Bytes{0xab, 0xcd}, value_of(7, vlen)}}, batch);  // a value on the branch
    write_and_check(t, m, {{Bytes{0xab, 0xcd, 0x35}, value_of(8, vlen)}}, batch);  // update below
    // shrink: odd children first, then the rest, then the branch value
    for (int pass = 0; pass < 2; ++pass)
      for (uint8_t i = uint8_t(pass == 0 ? 1 : 0); i < 16; i = uint8_t(i + 2)) {
        std::vector<std::pair<Bytes, Bytes>> ws{{Bytes{0xab, 0xcd, uint8_t(i << 4)}, {}}};
        if (i % 3 == 0) ws.push_back({Bytes{0xab, 0xcd, uint8_t(i << 4 | 5)}, {}});
        write_and_check(t, m, ws, batch);
      }
    write_and_check(t, m, {{Bytes{0xab, 0xcd}, {}}}, batch);
    CHECK(m.empty());
    CHECK(t.root_hash() == mpt::kEmptyRoot);
    CHECK(t.live_nodes() == 0);
  }
}

TEST_CASE("mpt layout: clean children keep their refs when an extension splits or a branch collapses") {
  for (int variant = 0; variant < 4; ++variant) {
    CAPTURE(variant);
    const bool batch = variant & 1;
    const size_t vlen = (variant & 2) ? 1 : 40;  // short: the branch under the extension is embedded
    {
      // Extension split at its last nibble: the extension goes, its (clean) branch child
      // moves into a new branch's slot with the ref the extension held.
      mpt::Trie t;
      std::map<Bytes, Bytes> m;
      write_and_check(t, m, {{Bytes{0x12, 0x34, 0x50}, value_of(1, vlen)}, {Bytes{0x12, 0x34, 0x60}, value_of(2, vlen)}}, batch);
      write_and_check(t, m, {{Bytes{0x12, 0x35, 0x00}, value_of(3, vlen)}}, batch);  // diverges at nibble 3 of 1234
      write_and_check(t, m, {{Bytes{0x12, 0x34, 0x50}, value_of(4, vlen)}}, batch);  // below the moved branch
      write_and_check(t, m, {{Bytes{0x13, 0x00, 0x00}, value_of(5, vlen)}}, batch);  // split the top extension (123 -> 1)
    }
    {
      // A branch collapses into an extension over a clean branch: the new extension takes
      // the ref from the collapsed branch's slot; then a write below it re-hashes through it.
      mpt::Trie t;
      std::map<Bytes, Bytes> m;
      write_and_check(t, m,
                      {{Bytes{0x01, 0x00}, value_of(1, vlen)},
                       {Bytes{0x21, 0x00}, value_of(2, vlen)},
                       {Bytes{0x22, 0x00}, value_of(3, vlen)}},
                      batch);
      write_and_check(t, m, {{Bytes{0x01, 0x00}, {}}}, batch);  // root branch -> extension "2" over the clean branch
      write_and_check(t, m, {{Bytes{0x23, 0x00}, value_of(4, vlen)}}, batch);
      write_and_check(t, m, {{Bytes{0x21, 0x00}, {}}, {Bytes{0x22, 0x00}, {}}}, batch);  // collapse to one leaf
      write_and_check(t, m, {{Bytes{0x23, 0x00}, {}}}, batch);
      CHECK(t.live_nodes() == 0);
    }
  }
}

TEST_CASE("mpt layout: proofs from refs re-encoded on demand (random tries, embedded and hash refs)") {
  std::mt19937_64 rng(5);
  for (int variant = 0; variant < 2; ++variant) {
    CAPTURE(variant);
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    auto key = [&](uint64_t id) {
      if (variant == 0) return Bytes{uint8_t(id % 7), uint8_t(id / 7 % 5)};  // short: embedded refs
      Bytes k(32);
      st::kernels::keccak256(reinterpret_cast<const uint8_t*>(&id), sizeof id, k.data());
      return k;
    };
    for (int round = 0; round < 8; ++round) {
      std::vector<std::pair<Bytes, Bytes>> ws;
      for (int i = 0; i < 20; ++i) {
        const uint64_t id = rng() % 35;
        ws.push_back({key(id), rng() % 4 == 0 ? Bytes{} : value_of(rng(), 1 + rng() % 40)});
      }
      std::sort(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      ws.erase(std::unique(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), ws.end());
      write_and_check(t, m, ws, round % 2 == 0);
      const mpt::Hash32 root = t.root_hash();
      for (uint64_t id = 0; id < 35; ++id) {
        const Bytes k = key(id);
        const auto proof = mpt::prove(t, k);
        const auto r = mpt::verify_proof(root, k, proof);
        REQUIRE(r.ok());
        const auto it = m.find(k);
        CHECK(r.value == (it == m.end() ? std::nullopt : std::optional<Bytes>(it->second)));
      }
    }
  }
}

TEST_CASE("mpt layout: a batch marks only the branches whose children changed") {
  // The batch descent marks every branch it descends into as dirty (and its visited
  // children in dirty_mask) and undoes that in the bottom-up pass where nothing changed:
  // a batch of no-op writes (same values, absent keys) must leave the trie clean, and a
  // mixed batch must re-hash exactly the nodes that one-by-one puts re-hash.
  auto key = [](uint64_t id) {
    Bytes k(32);
    st::kernels::keccak256(reinterpret_cast<const uint8_t*>(&id), sizeof id, k.data());
    return k;
  };
  mpt::Trie a, b;
  std::vector<mpt::Trie::Write> init;
  std::vector<Bytes> keys, vals;
  for (uint64_t i = 0; i < 3000; ++i) {
    keys.push_back(key(i));
    vals.push_back(value_of(i, 33));
  }
  for (size_t i = 0; i < keys.size(); ++i) init.push_back({keys[i], vals[i]});
  a.apply(init);
  b.apply(init);
  const mpt::Hash32 root0 = a.root_hash();
  REQUIRE(b.root_hash() == root0);
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    // no-op: every 7th key rewritten with its value, plus deletes of absent keys
    std::vector<mpt::Trie::Write> noop;
    std::vector<Bytes> absent;
    for (uint64_t i = 0; i < 40; ++i) absent.push_back(key(100000 + 40 * uint64_t(round) + i));
    for (size_t i = size_t(round); i < keys.size(); i += 7) noop.push_back({keys[i], vals[i]});
    for (const auto& k : absent) noop.push_back({k, {}});
    a.apply(noop);
    CHECK_FALSE(a.dirty());
    mpt::CommitStats s0;
    CHECK(a.root_hash(&s0) == root0);
    CHECK(s0.nodes_rehashed == 0);
  }
  // mixed, applied on top of an uncommitted batch (the commit then collects by dirty_mask
  // instead of taking the batch log): the same nodes as one-by-one puts
  Bytes v1 = value_of(777, 33), v2 = value_of(778, 33);
  a.apply(std::vector<mpt::Trie::Write>{{keys[5], v1}});
  b.put(keys[5], v1);
  std::vector<mpt::Trie::Write> mixed;
  for (size_t i = 0; i < keys.size(); i += 5)
    if (i != 5) mixed.push_back({keys[i], i == 1000 ? v2 : vals[i]});  // (keys[5] keeps v1)
  a.apply(mixed);
  b.put(keys[1000], v2);
  mpt::CommitStats sa, sb;
  CHECK(a.root_hash(&sa) == b.root_hash(&sb));
  CHECK(sa.nodes_rehashed == sb.nodes_rehashed);
  CHECK(sa.nodes_rehashed >= 2);
}
