// bintrie_proof_test: key proofs (present, present zero, absent slot in a present stem,
// absent stem ending at an empty child or at another stem) and stem proofs verify against
// the committed root, and fail when any part is tampered with.
#include <doctest/doctest.h>

#include <random>

#include "engine/bintrie/proof.h"
#include "tests/engine/bintrie_test_util.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {
bool valid(const Hasher& h, const Hash32& root, const Hash32& key, const KeyProof& p) {
  return std::holds_alternative<std::optional<Hash32>>(verify_key_proof(h, root, key, p));
}
}  // namespace

TEST_CASE("bintrie proofs: verify and fail when tampered") {
  for (HashKind kind : {HashKind::sha256, HashKind::blake3}) {
    const Hasher h = make_hasher(kind);
    MutableTree t(h);
    auto entries = random_entries(0, 1500);
    entries[3].value = Hash32{};  // present zero
    Entry dense = entries[10];
    dense.key[31] ^= 0x55;
    entries.push_back(dense);
    t.apply(entries);
    const Hash32 root = t.commit();
    std::mt19937_64 rng(5);
    size_t ends[3] = {0, 0, 0};
    for (int i = 0; i < 300; ++i) {
      Hash32 key;
      const unsigned mode = i % 3;
      if (mode == 0) key = entries[rng() % entries.size()].key;               // present
      else if (mode == 1) { key = entries[rng() % entries.size()].key; key[31] ^= 0x80; }  // absent slot
      else for (auto& x : key) x = uint8_t(rng());                          // absent stem
      const KeyProof p = prove_key(t, key);
      ends[size_t(p.end)]++;
      auto r = verify_key_proof(h, root, key, p);
      REQUIRE(std::holds_alternative<std::optional<Hash32>>(r));
      CHECK(std::get<std::optional<Hash32>>(r) == t.get(key));
      CHECK(serialize_key_proof(p).size() == proof_size_bytes(p));
      // Tampering.
      if (!p.siblings.empty()) {
        KeyProof q = p;
        q.siblings[rng() % q.siblings.size()][rng() % 32] ^= 1;
        CHECK_FALSE(valid(h, root, key, q));
        KeyProof s = p;
        s.siblings.pop_back();
        CHECK_FALSE(valid(h, root, key, s));
      }
      if (p.end == ProofEnd::key_stem) {
        KeyProof q = p;
        if (q.value) (*q.value)[0] ^= 1;
        else q.value = Hash32{};
        CHECK_FALSE(valid(h, root, key, q));
        KeyProof s = p;
        s.stem_siblings[rng() % 8][0] ^= 1;
        CHECK_FALSE(valid(h, root, key, s));
        Hash32 other = key;
        other[31] ^= 1;
        CHECK_FALSE((valid(h, root, other, p) && t.get(other) != p.value));
      }
      if (p.end == ProofEnd::other_stem) {
        KeyProof q = p;
        q.other_subtree_root[5] ^= 1;
        CHECK_FALSE(valid(h, root, key, q));
      }
      Hash32 wrong_root = root;
      wrong_root[0] ^= 1;
      CHECK_FALSE(valid(h, wrong_root, key, p));
    }
    CHECK(ends[size_t(ProofEnd::key_stem)] > 0);
    CHECK(ends[size_t(ProofEnd::other_stem)] > 0);
    // A present key can't be "proven" absent by a proof for a different key.
    const Hash32 present = entries[0].key;
    Hash32 absent{};
    absent.fill(0x77);
    const KeyProof pa = prove_key(t, absent);
    CHECK_FALSE(valid(h, root, present, pa));
    // Stem proofs.
    for (int i = 0; i < 50; ++i) {
      const auto& e = entries[rng() % entries.size()];
      auto sp = prove_stem(t, e.key.data());
      REQUIRE(sp.has_value());
      CHECK(verify_stem_proof(h, root, *sp) == "");
      auto q = *sp;
      q.values[0][3] ^= 1;
      CHECK(verify_stem_proof(h, root, q) != "");
      auto r = *sp;
      r.bitmap[31] ^= 0x01;
      CHECK(verify_stem_proof(h, root, r) != "");
      CHECK(proof_size_bytes(*sp) == 1 + 32 * sp->siblings.size() + 63 + 32 * sp->values.size());
    }
    Hash32 none{};
    none.fill(0x42);
    CHECK_FALSE(prove_stem(t, none.data()).has_value());
  }
}

TEST_CASE("bintrie proofs: empty tree and single-stem tree") {
  const Hasher h = make_hasher(HashKind::sha256);
  MutableTree t(h);
  const Hash32 r0 = t.commit();
  Hash32 k{};
  k.fill(3);
  const KeyProof p0 = prove_key(t, k);
  CHECK(p0.end == ProofEnd::empty);
  auto v0 = verify_key_proof(h, r0, k, p0);
  REQUIRE(std::holds_alternative<std::optional<Hash32>>(v0));
  CHECK_FALSE(std::get<std::optional<Hash32>>(v0).has_value());
  Entry e{k, k};
  t.apply(std::span<const Entry>(&e, 1));
  const Hash32 r1 = t.commit();
  const KeyProof p1 = prove_key(t, k);
  CHECK(p1.siblings.empty());
  CHECK(p1.end == ProofEnd::key_stem);
  CHECK(valid(h, r1, k, p1));
  CHECK(proof_size_bytes(p1) == 1 + 1 + 31 + 256 + 1 + 32);
}
