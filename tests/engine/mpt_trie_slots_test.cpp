// mpt_trie_slots_test: the children-block layout of the mutable trie (32-byte ref slots, the
// branch's kid_mask, per-block embedded-ref flags, has_value). Random put/delete batches
// over key sets that make embedded refs (short keys and values: child encodings < 32
// bytes), hash refs, branch values, collapses and whole emptied subtrees; after every batch
// the incremental root must equal the batch builder's root of the current contents, and
// re-encoding the root through NodeSource::encode (refs rebuilt from the slots) must hash
// to that root.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"

using namespace st;
using Bytes = std::vector<uint8_t>;
using mpt_test::scratch_root;

namespace {

// keccak256(encode(root)) must be the root (a short root is hashed by root_hash() too).
void check_root_encoding(const mpt::Trie& t, const mpt::Hash32& root) {
  if (t.root_id() == mpt::kNoNode) return;
  std::vector<uint8_t> enc;
  t.encode(t.root_id(), &enc);
  mpt::Hash32 h;
  st::kernels::keccak256(enc.data(), enc.size(), h.data());
  CHECK(h == root);
}

}  // namespace

TEST_CASE("mpt trie slots: random batches with embedded refs, collapses and branch values == from scratch") {
  std::mt19937_64 rng(7);
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    // 0: 1..3-byte keys over a 4-letter alphabet with 1..3-byte values (mostly embedded
    //    refs, keys that are prefixes of others: branch values);
    // 1: 32-byte keys with 1-byte values (hash refs, short leaves near the bottom);
    // 2: a mix of both, values of 1..40 bytes.
    auto make_key = [&](uint64_t id) {
      Bytes k;
      const bool short_key = variant == 0 || (variant == 2 && id % 2 == 0);
      if (short_key) {
        k.resize(1 + id % 3);
        for (size_t j = 0; j < k.size(); ++j) k[j] = uint8_t((id >> (2 * j + 2)) % 4);
      } else {
        k.resize(32);
        for (size_t j = 0; j < 32; ++j) k[j] = uint8_t((id * 0x9e3779b97f4a7c15ull) >> (8 * (j % 8)) ^ j);
      }
      return k;
    };
    const uint64_t keyspace = variant == 1 ? 600 : 300;
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    for (int round = 0; round < 40; ++round) {
      CAPTURE(round);
      std::vector<Bytes> keys, values;
      const size_t nw = 1 + rng() % (round % 5 == 0 ? 400 : 60);
      const bool delete_heavy = round % 4 == 3;
      for (size_t i = 0; i < nw; ++i) {
        keys.push_back(make_key(rng() % keyspace));
        Bytes v;
        if (!delete_heavy || rng() % 4 == 0) {
          v.resize(1 + rng() % (variant == 2 ? 40 : 3));
          for (auto& b : v) b = uint8_t(rng());
        }
        values.push_back(v);
      }
      std::vector<mpt::Trie::Write> w;
      for (size_t i = 0; i < nw; ++i) {
        w.push_back({keys[i], values[i]});
        if (values[i].empty()) m.erase(keys[i]);
        else m[keys[i]] = values[i];
      }
      if (round % 3 == 2) {
        for (const auto& x : w) t.put(x.key, x.value);  // one by one (recursive insert/remove)
      } else {
        t.apply(w);  // batch descent
      }
      const mpt::Hash32 root = t.root_hash();
      REQUIRE(root == scratch_root(m));
      check_root_encoding(t, root);
      CHECK_FALSE(t.dirty());
    }
    // Delete everything: every branch collapses, the trie ends empty.
    std::vector<Bytes> all;
    for (const auto& [k, v] : m) all.push_back(k);
    std::vector<mpt::Trie::Write> w;
    for (size_t i = 0; i < all.size(); i += 2) w.push_back({all[i], {}});
    t.apply(w);
    for (size_t i = 0; i < all.size(); i += 2) m.erase(all[i]);
    CHECK(t.root_hash() == scratch_root(m));
    for (const auto& [k, v] : std::map<Bytes, Bytes>(m)) t.erase(k);
    CHECK(t.root_hash() == mpt::kEmptyRoot);
    CHECK(t.live_nodes() == 0);
  }
}
