// bintrie_batch_sort_test: the from-scratch root's sort (sort_partition) and its fused
// batch_root, tested against obvious oracles (partition_entries vs its definition:
// bintrie_batch_scratch_test.cpp): sort_bucket_entries vs std::stable_sort + "keep the
// last write" (whole sets and the buckets of a partition; duplicate keys, shared stems,
// equal 8-byte prefixes, long counter runs that take the std::sort fallback, sizes 0..9
// and odd), batch_root vs the recursive reference and vs the separate sort_entries +
// batch_root_sorted path, for 0/1/2/odd sizes and 1 and 2 threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/sort_partition.h"
#include "engine/bintrie/stem_bits.h"
#include "tests/engine/bintrie_test_util.h"
#include "tests/reference/bintrie_reference.h"

using namespace st::bintrie;
using st::load_be64;
using namespace bintrie_test;

namespace {

// Keys of several kinds: random; a few families sharing long prefixes (equal first 8
// bytes, diverging at a random later bit); dense stems (same stem, many sub indexes);
// repeats of earlier keys (the later write must win).
std::vector<Entry> mixed_writes(std::mt19937_64& rng, size_t n) {
  std::vector<Entry> out;
  std::vector<Hash32> bases(3);
  for (auto& b : bases)
    for (auto& x : b) x = uint8_t(rng());
  for (size_t i = 0; i < n; ++i) {
    Entry e;
    const unsigned mode = rng() % 8;
    if (mode == 0 && !out.empty()) {
      e.key = out[rng() % out.size()].key;
    } else if (mode <= 2) {
      e.key = bases[rng() % bases.size()];
      const unsigned flip = 64 + rng() % 184;  // same 8-byte prefix, diverge later
      e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
      e.key[31] = uint8_t(rng());
    } else if (mode == 3) {
      e.key = bases[rng() % bases.size()];
      e.key[31] = uint8_t(rng());
    } else {
      for (auto& x : e.key) x = uint8_t(rng());
    }
    for (auto& x : e.value) x = uint8_t(rng());
    out.push_back(e);
  }
  return out;
}

// Oracle: stable sort by key, keep the last of each run of equal keys; stem starts.
void oracle_sort(const std::vector<Entry>& in, const std::vector<uint32_t>& idx, std::vector<uint32_t>* kept,
                 std::vector<uint32_t>* stem_begin) {
  std::vector<uint32_t> order = idx;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return in[a].key < in[b].key; });
  kept->clear();
  stem_begin->clear();
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && in[order[i + 1]].key == in[order[i]].key) continue;
    if (kept->empty() || std::memcmp(in[kept->back()].key.data(), in[order[i]].key.data(), 31) != 0)
      stem_begin->push_back(uint32_t(kept->size()));
    kept->push_back(order[i]);
  }
  stem_begin->push_back(uint32_t(kept->size()));
}

// Sorts the entries `in` (one bucket, keys sharing their top shared_bits bits) with
// sort_bucket_entries and checks the records against the oracle.
void check_bucket(const std::vector<Entry>& in, unsigned shared_bits) {
  const size_t m = in.size();
  std::vector<uint32_t> idx(m);
  for (size_t i = 0; i < m; ++i) idx[i] = uint32_t(i);
  std::vector<uint32_t> kept, stems;
  oracle_sort(in, idx, &kept, &stems);
  SortedBucket b;
  sort_bucket_entries(in.data(), m, shared_bits, b);
  REQUIRE(b.entries == kept.size());
  REQUIRE(b.stems + 1 == stems.size());
  size_t bad = 0;
  for (size_t i = 0; i < kept.size(); ++i)
    bad += b.ref.data()[i].index != kept[i] || b.ref.data()[i].prefix != load_be64(in[kept[i]].key.data());
  for (size_t s = 0; s < stems.size(); ++s) bad += b.stem_begin.data()[s] != stems[s];
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("sort_partition: sort_bucket_entries equals stable sort + last write wins") {
  std::mt19937_64 rng(5);
  SUBCASE("small sizes 0..9 and odd, whole sets (shared_bits 0)") {
    for (size_t n : {0u, 1u, 2u, 3u, 7u, 8u, 9u, 31u, 257u, 1001u}) {
      for (int round = 0; round < 4; ++round) {
        const auto in = mixed_writes(rng, n);
        CAPTURE(n);
        check_bucket(in, 0);
      }
    }
  }
  SUBCASE("buckets of a partition (shared_bits = k)") {
    const auto in = mixed_writes(rng, 20000);
    for (unsigned bits : {1u, 6u, 9u}) {
      EntryPartition p;
      partition_entries(in, bits, 1, p);
      for (size_t b = 0; b < p.buckets(); ++b)
        check_bucket(std::vector<Entry>(p.ent.get() + p.begin[b], p.ent.get() + p.begin[b + 1]), bits);
    }
  }
  SUBCASE("keys equal in their first 8 bytes: one long counter run, std::sort fallback") {
    std::vector<Entry> in(3000);
    for (size_t i = 0; i < in.size(); ++i) {
      for (auto& x : in[i].key) x = 0xab;
      in[i].key[8 + rng() % 23] = uint8_t(rng());
      in[i].key[31] = uint8_t(rng() % 4);
      if (i % 5 == 0 && i) in[i].key = in[i - 1 - rng() % i].key;  // repeats
      in[i].value[0] = uint8_t(i);
    }
    check_bucket(in, 0);
    check_bucket(in, 64);  // no counter bits left
  }
}

TEST_CASE("batch_root (fused): equals the reference and the sort_entries path, threads 1 and 2") {
  std::mt19937_64 rng(9);
  const Hasher h = make_hasher(HashKind::sha256);
  SUBCASE("empty set: zero root") { CHECK(batch_root(h, std::vector<Entry>{}) == Hash32{}); }
  SUBCASE("sizes 1, 2, 3, odd: reference") {
    for (size_t n : {1u, 2u, 3u, 5u, 17u, 99u}) {
      for (int round = 0; round < 3; ++round) {
        const auto in = mixed_writes(rng, n);
        std::vector<std::pair<st::reference::RefBytes32, st::reference::RefBytes32>> w;
        for (const auto& e : in) w.push_back({e.key, e.value});
        const std::string ref = hex(st::reference::bintrie_reference_root(w, st::reference::ref_sha256_openssl));
        CAPTURE(n);
        CHECK(hex(batch_root(h, in)) == ref);
        for (unsigned bits : {0u, 2u, 7u}) {
          BatchRootOptions o;
          o.threads = 2;
          o.bucket_bits = bits;
          CHECK(hex(batch_root(h, in, o)) == ref);
        }
      }
    }
  }
  SUBCASE("large mixed set: fused == sort_entries + batch_root_sorted, same counts, any threads/bits") {
    const auto in = mixed_writes(rng, 70000);
    BatchRootStats want_stats;
    const Hash32 want = batch_root_sorted(h, sort_entries(in), {}, &want_stats);
    for (unsigned threads : {1u, 2u}) {
      for (unsigned bits : {0u, 3u, 10u}) {
        BatchRootOptions o;
        o.threads = threads;
        o.bucket_bits = bits;
        BatchRootStats s;
        CAPTURE(threads);
        CAPTURE(bits);
        CHECK(hex(batch_root(h, in, o, &s)) == hex(want));
        CHECK(s.entries == want_stats.entries);
        CHECK(s.stems == want_stats.stems);
        CHECK(s.hash32_messages == want_stats.hash32_messages);
        CHECK(s.hash64_messages == want_stats.hash64_messages);
        CHECK(s.internal_nodes == want_stats.internal_nodes);
      }
    }
  }
}
