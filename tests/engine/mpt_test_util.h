// mpt_test_util: shared set-up of the mutable-trie tests -- a std::map model of the trie's
// contents, its root built from scratch (the batch builder), and a batch of writes applied
// to both the trie (one batch, or put by put) and the model.
#pragma once

#include <cstdint>
#include <map>
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

}  // namespace st::mpt_test
