// mpt_scratch_test: the trie gives back the scratch of a bulk load (its dirty log, the
// commit's per-depth lists: > 2^17 nodes; the batch descent's cursor lists: > 2^16 writes)
// and keeps working from fresh buffers: small logged batches, a second bulk batch into the
// full trie (its descent has ~2^17 cursors) and deletes all equal the batch builder.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "engine/mpt/builder.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"

using namespace st::mpt;

TEST_CASE("mpt trie: bulk batches release their scratch; later batches still equal the builder") {
  const size_t n = 100000;  // ~140k nodes: past the kept-scratch limit of 2^17
  std::vector<uint8_t> keys(32 * n), values(4 * n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = uint8_t(uint64_t(i) >> (56 - 8 * b));
    st::kernels::keccak256(be, 8, keys.data() + 32 * i);
    std::memcpy(values.data() + 4 * i, be + 4, 4);
    values[4 * i] |= 1;  // non-empty
  }
  auto key = [&](size_t i) { return std::span<const uint8_t>(keys.data() + 32 * i, 32); };
  auto val = [&](size_t i) { return std::span<const uint8_t>(values.data() + 4 * i, 4); };
  std::vector<bool> present(n, false);
  auto builder = [&]() {
    std::vector<KeyValue> kv;
    for (size_t i = 0; i < n; ++i)
      if (present[i]) kv.push_back({keys.data() + 32 * i, 32, values.data() + 4 * i, 4});
    std::sort(kv.begin(), kv.end(), [](const KeyValue& a, const KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; });
    return build_root(kv);
  };
  Trie t;
  std::vector<Trie::Write> w;
  for (size_t i = 0; i < n; i += 2) { w.push_back({key(i), val(i)}); present[i] = true; }  // bulk 1: 50k
  t.apply(w);
  CommitStats cs;
  CHECK(t.root_hash(&cs) == builder());
  std::mt19937_64 rng(3);
  for (int round = 0; round < 3; ++round) {  // small batches: logged commits from fresh buffers
    w.clear();
    for (int j = 0; j < 500; ++j) {
      const size_t i = rng() % n;
      values[4 * i + 1] ^= 0x5a;
      w.push_back({key(i), val(i)});
      present[i] = true;
    }
    std::sort(w.begin(), w.end(), [](const Trie::Write& a, const Trie::Write& b) { return std::memcmp(a.key.data(), b.key.data(), 32) < 0; });
    w.erase(std::unique(w.begin(), w.end(), [](const Trie::Write& a, const Trie::Write& b) { return std::memcmp(a.key.data(), b.key.data(), 32) == 0; }), w.end());
    t.apply(w);
    CHECK(t.root_hash(&cs) == builder());
  }
  w.clear();  // bulk 2: the other half plus rewrites of the first, into the full trie
  for (size_t i = 0; i < n; ++i) {
    values[4 * i + 2] ^= 0x33;
    w.push_back({key(i), val(i)});
    present[i] = true;
  }
  t.apply(w);
  CHECK(t.live_nodes() > (size_t(1) << 17));
  CHECK(t.root_hash(&cs) == builder());
  w.clear();
  for (size_t i = 0; i < n; i += 3) { w.push_back({key(i), {}}); present[i] = false; }
  t.apply(w);
  CHECK(t.root_hash(&cs) == builder());
  CHECK(cs.from_batch_log >= 4);  // the small batches and the bulk loads took the log
}
