// mpt_test_util: shared set-up of the mutable-trie tests -- a std::map model of the trie's
// contents, its root built from scratch (the batch builder), and a batch of writes applied
// to both the trie (one batch, or put by put) and the model; the builder tests' random plain
// sets with prefix keys.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"

namespace st::mpt_test {

using Bytes = std::vector<uint8_t>;

// The root of the model's contents, built from scratch by the batch builder.
inline mpt::Hash32 scratch_root(const std::map<Bytes, Bytes>& m) {
  std::vector<mpt::KeyValue> v;
  for (const auto& [k, val] : m) v.push_back({k.data(), uint32_t(k.size()), val.data(), uint32_t(val.size())});
  return mpt::build_root(v);
}

// Applies ws (empty value = delete) to the model and to t: one apply() when batch, else a
// put() per write.
inline void apply_writes(mpt::Trie& t, std::map<Bytes, Bytes>& m, const std::vector<std::pair<Bytes, Bytes>>& ws,
                         bool batch) {
  std::vector<mpt::Trie::Write> w;
  for (const auto& [k, v] : ws) {
    w.push_back({k, v});
    if (v.empty()) m.erase(k);
    else m[k] = v;
  }
  if (batch) t.apply(w);
  else
    for (const auto& x : w) t.put(x.key, x.value);
}

// Up to 200 plain keys of 0-5 bytes over a tiny alphabet (shared prefixes, prefix keys,
// embedded nodes) with 1-3 byte values every third round, else 1-40 bytes.
inline std::map<Bytes, Bytes> random_plain_set(std::mt19937_64& rng, int round) {
  std::map<Bytes, Bytes> m;
  const size_t n = 1 + rng() % 200;
  const size_t alphabet = 1 + rng() % 4;  // tiny alphabets force shared prefixes
  for (size_t i = 0; i < n; ++i) {
    Bytes k(rng() % 6);
    for (auto& b : k) b = uint8_t(rng() % alphabet * 0x11 + (rng() % 2));
    Bytes v(1 + rng() % (round % 3 == 0 ? 3 : 40));
    for (auto& b : v) b = uint8_t(rng());
    m[k] = v;
  }
  return m;
}

}  // namespace st::mpt_test
