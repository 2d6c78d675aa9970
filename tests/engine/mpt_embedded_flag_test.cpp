// mpt_embedded_flag_test: the trie skips its per-block embedded-slot bits until the first
// embedded ref (< 32 bytes) is stored (a secure trie never stores one). A trie that held
// only hashed refs for a while -- with children blocks freed and reused -- and then gets
// embedded refs (short keys and values), and back, must keep the root and every encoding
// equal to the reference after each batch.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"
#include "tests/reference/mpt_reference.h"

using namespace st;
using Bytes = std::vector<uint8_t>;

TEST_CASE("mpt trie: embedded refs appearing after a hashed-refs-only history equal the reference") {
  std::mt19937_64 rng(41);
  mpt::Trie t;
  std::map<Bytes, Bytes> m;
  auto check = [&]() {
    const mpt::Hash32 r = t.root_hash();
    CHECK(r == ref::mpt_root(m));
    if (t.root_id() != mpt::kNoNode) {  // the root's encoding hashes to the root
      std::vector<uint8_t> enc;
      t.encode(t.root_id(), &enc);
      mpt::Hash32 h;
      st::kernels::keccak256(enc.data(), enc.size(), h.data());
      CHECK(h == r);
    }
  };
  auto batch = [&](bool short_kv, size_t n, int delete_pct) {
    std::vector<std::pair<Bytes, Bytes>> kv;
    for (size_t i = 0; i < n; ++i) {
      Bytes k, v;
      if (short_kv) {  // 1-2 byte keys, 1-3 byte values: leaves and small branches embed
        k.resize(1 + rng() % 2);
        for (auto& b : k) b = uint8_t(rng() % 24);
        v.resize(1 + rng() % 3);
      } else {  // 32-byte keys, 32-byte values: every ref is a hash
        k.resize(32);
        for (auto& b : k) b = uint8_t(rng());
        v.resize(32);
      }
      for (auto& b : v) b = uint8_t(rng() | 1);
      if (int(rng() % 100) < delete_pct && !m.empty()) {  // delete an existing key
        auto it = m.begin();
        std::advance(it, long(rng() % m.size()));
        k = it->first;
        v.clear();
      }
      kv.emplace_back(k, v);
    }
    std::vector<mpt::Trie::Write> w;
    for (auto& [k, v] : kv) {
      w.push_back({k, v});
      if (v.empty()) m.erase(k);
      else m[k] = v;
    }
    t.apply(w);
    check();
  };
  for (int round = 0; round < 4; ++round) batch(false, 400, round ? 40 : 0);  // hashed refs only, blocks freed
  for (int round = 0; round < 6; ++round) batch(true, 60, 30);              // embedded refs appear
  for (int round = 0; round < 3; ++round) batch(false, 300, 50);            // hashed again, blocks reused
  for (const auto& [k, v] : m) CHECK(t.get(k) == std::optional<std::vector<uint8_t>>(v));
  std::vector<mpt::KeyValue> all;
  for (const auto& [k, v] : m) all.push_back({k.data(), uint32_t(k.size()), v.data(), uint32_t(v.size())});
  CHECK(t.root_hash() == mpt::build_root(all));
}
