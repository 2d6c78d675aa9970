// bintrie_batch_test: differential tests of the batch root builder against the recursive
// reference: random key sets (with shared prefixes, duplicate keys, dense stems), both
// hashes, serial and parallel with several bucket widths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/bintrie/batch_root.h"
#include "kernels/blake3.h"
#include "tests/engine/bintrie_test_util.h"
#include "tests/reference/bintrie_reference.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {

// Random writes with structure: a few stem families sharing long prefixes, some dense stems,
// repeated keys (last write wins) and present zero values.
std::vector<Entry> random_writes(std::mt19937_64& rng, size_t n) {
  std::vector<Entry> out;
  std::vector<Hash32> bases;
  for (int i = 0; i < 4; ++i) {
    Hash32 b;
    for (auto& x : b) x = uint8_t(rng());
    bases.push_back(b);
  }
  for (size_t i = 0; i < n; ++i) {
    Entry e;
    const unsigned mode = rng() % 6;
    if (mode == 0 && !out.empty()) {
      e.key = out[rng() % out.size()].key;  // overwrite
    } else if (mode <= 2) {
      e.key = bases[rng() % bases.size()];
      const unsigned flip = rng() % 248;  // diverge at a random bit
      e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
      e.key[31] = uint8_t(rng());
    } else if (mode == 3) {
      e.key = bases[rng() % bases.size()];  // dense stem
      e.key[31] = uint8_t(rng());
    } else {
      for (auto& x : e.key) x = uint8_t(rng());
    }
    if (rng() % 7 == 0) e.value = Hash32{};
    else for (auto& x : e.value) x = uint8_t(rng());
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("bintrie batch root == reference on random write sets") {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 40; ++round) {
    const size_t n = 1 + rng() % (round < 20 ? 20 : 400);
    const auto writes = random_writes(rng, n);
    std::vector<std::pair<st::reference::RefBytes32, st::reference::RefBytes32>> w;
    for (const auto& e : writes) w.push_back({e.key, e.value});
    for (HashKind kind : {HashKind::sha256, HashKind::blake3}) {
      const Hasher h = make_hasher(kind);
      const auto ref = st::reference::bintrie_reference_root(
          w, kind == HashKind::sha256 ? st::reference::ref_sha256_openssl : st::kernels::blake3);
      CAPTURE(round);
      CHECK(hex(batch_root(h, writes)) == hex(ref));
      for (unsigned bits : {1u, 4u, 9u}) {
        BatchRootOptions o;
        o.threads = 2;
        o.bucket_bits = bits;
        CHECK(hex(batch_root(h, writes, o)) == hex(ref));
      }
    }
  }
}

TEST_CASE("bintrie batch root: parallel path on a large set equals serial") {
  const auto entries = random_entries(0, 20000);
  const Hasher h = make_hasher(HashKind::sha256);
  BatchRootStats s1, s2;
  const Hash32 a = batch_root(h, entries, {}, &s1);
  BatchRootOptions o;
  o.threads = 2;
  const Hash32 b = batch_root(h, entries, o, &s2);
  CHECK(hex(a) == hex(b));
  CHECK(s1.hash32_messages == s2.hash32_messages);
  CHECK(s1.hash64_messages == s2.hash64_messages);
  CHECK(s1.hash32_messages == 20000);
  // 20000 single-value stems: 8 subtree levels + the stem node each, plus n-1 splitting
  // internal nodes and some single-child ones.
  CHECK(s1.hash64_messages >= 20000 * 9 + 19999);
}

TEST_CASE("bintrie sort_entries: index form equals materialized form (large set: bucket sort path)") {
  // > 32768 writes so the bucket sort runs; structured writes give equal 8-byte prefixes,
  // shared stems and repeated keys, the cases where the index form must read the input.
  std::mt19937_64 rng(7);
  const auto writes = random_writes(rng, 40000);
  for (unsigned threads : {1u, 2u}) {
    const SortedEntries m = sort_entries(writes, threads, true);
    const SortedEntries x = sort_entries(writes, threads, false);
    REQUIRE(x.src == writes.data());
    REQUIRE(m.size() == x.size());
    REQUIRE(m.stem_begin == x.stem_begin);
    for (size_t i = 0; i < m.size(); ++i) {
      CHECK(m.entry(i).key == x.entry(i).key);
      CHECK(m.entry(i).value == x.entry(i).value);
    }
    for (size_t s = 0; s < m.stems(); ++s) CHECK(m.stem_prefix(s) == x.stem_prefix(s));
    const Hasher h = make_hasher(HashKind::sha256);
    BatchRootOptions o;
    o.threads = threads;
    BatchRootStats sm, sx;
    CHECK(hex(batch_root_sorted(h, m, o, &sm)) == hex(batch_root(h, writes, o, &sx)));
    CHECK(sm.hash64_messages == sx.hash64_messages);
    CHECK(sm.entries == sx.entries);
  }
}

TEST_CASE("bintrie sort_entries: bucket path from 512 entries equals a stable sort keeping the last write") {
  // Incremental batches (512..32767 writes) take the bucket sort too; structured writes
  // repeat keys and share stems and 8-byte prefixes.
  std::mt19937_64 rng(11);
  for (size_t n : {511u, 512u, 4096u, 20000u}) {
    const auto writes = random_writes(rng, n);
    std::vector<size_t> order(writes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return writes[a].key < writes[b].key; });
    std::vector<Entry> expect;
    for (size_t i = 0; i < order.size(); ++i)
      if (i + 1 == order.size() || writes[order[i + 1]].key != writes[order[i]].key) expect.push_back(writes[order[i]]);
    std::vector<uint32_t> expect_stems;
    for (size_t i = 0; i < expect.size(); ++i)
      if (i == 0 || std::memcmp(expect[i].key.data(), expect[i - 1].key.data(), 31) != 0) expect_stems.push_back(uint32_t(i));
    expect_stems.push_back(uint32_t(expect.size()));
    const SortedEntries m = sort_entries(writes);
    REQUIRE(m.size() == expect.size());
    CHECK(m.stem_begin == expect_stems);
    size_t bad = 0;
    for (size_t i = 0; i < expect.size(); ++i) bad += m.entry(i).key != expect[i].key || m.entry(i).value != expect[i].value;
    CHECK(bad == 0);
  }
}
