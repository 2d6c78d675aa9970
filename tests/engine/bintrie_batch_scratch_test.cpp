// bintrie_batch_scratch_test: the from-scratch root's entry partition and its reusable
// scratch. partition_entries vs the definition (every entry copied into its top-bits bucket,
// input order inside a bucket, threads 1 and 2 byte-identical); batch_root with one
// BatchRootScratch reused across calls of different sizes (larger, then smaller, then
// larger again, different bucket widths and thread counts) equals a fresh call and the
// recursive reference: sizes 0..3, duplicates (last write wins), skewed keys (all in one
// bucket, long shared prefixes, dense stems).
#include <doctest/doctest.h>

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

std::string reference_root(const std::vector<Entry>& in) {
  std::vector<std::pair<st::reference::RefBytes32, st::reference::RefBytes32>> w;
  for (const auto& e : in) w.push_back({e.key, e.value});
  return hex(st::reference::bintrie_reference_root(w, st::reference::ref_sha256_openssl));
}

// Key families: 0 random; 1 every key in bucket 0 of any width <= 16 (top 16 bits zero);
// 2 one long shared prefix (first 20 bytes equal), diverging late; 3 dense stems (a few
// stems, many sub indexes); every family with ~1/6 repeats of earlier keys.
std::vector<Entry> family_writes(std::mt19937_64& rng, size_t n, int family) {
  std::vector<Entry> out;
  Hash32 base;
  for (auto& x : base) x = uint8_t(rng());
  for (size_t i = 0; i < n; ++i) {
    Entry e;
    for (auto& x : e.value) x = uint8_t(rng());
    if (!out.empty() && rng() % 6 == 0) {
      e.key = out[rng() % out.size()].key;
      out.push_back(e);
      continue;
    }
    for (auto& x : e.key) x = uint8_t(rng());
    if (family == 1) { e.key[0] = 0; e.key[1] = 0; }
    if (family == 2) std::memcpy(e.key.data(), base.data(), 20);
    if (family == 3) { std::memcpy(e.key.data(), base.data(), 31); e.key[30] = uint8_t(rng() % 3); }
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("sort_partition: partition_entries copies every entry into its bucket, input order kept, threads agree") {
  std::mt19937_64 rng(11);
  std::vector<Entry> in = family_writes(rng, 70000, 0);  // >= 65536: two threads take two slices
  for (size_t i = 0; i < in.size(); ++i) std::memcpy(in[i].value.data(), &i, sizeof(i));  // value names the input slot
  EntryPartition p1, p2;
  for (unsigned bits : {0u, 1u, 4u, 9u, 13u}) {
    partition_entries(in, bits, 1, p1);
    partition_entries(in, bits, 2, p2);
    REQUIRE(p1.buckets() == (size_t(1) << bits));
    REQUIRE(p1.begin == p2.begin);
    REQUIRE(p1.begin.back() == in.size());
    std::vector<uint8_t> seen(in.size(), 0);
    size_t bad = 0;
    for (size_t b = 0; b < p1.buckets(); ++b) {
      size_t prev = 0;
      for (size_t i = p1.begin[b]; i < p1.begin[b + 1]; ++i) {
        const Entry& e = p1.ent.get()[i];
        size_t slot;
        std::memcpy(&slot, e.value.data(), sizeof(slot));
        REQUIRE(slot < in.size());
        bad += std::memcmp(&e, &in[slot], sizeof(Entry)) != 0;
        bad += bits > 0 && (load_be64(e.key.data()) >> (64 - bits)) != b;
        bad += i > p1.begin[b] && slot <= prev;  // input order within the bucket
        bad += seen[slot]++ != 0;
        bad += std::memcmp(&e, &p2.ent.get()[i], sizeof(Entry)) != 0;
        prev = slot;
      }
    }
    CAPTURE(bits);
    CHECK(bad == 0);
  }
}

TEST_CASE("batch_root: a scratch reused across calls of different sizes equals fresh calls and the reference") {
  std::mt19937_64 rng(21);
  const Hasher h = make_hasher(HashKind::sha256);
  BatchRootScratch scratch;
  SUBCASE("sizes 0..3 and tiny sets, reference") {
    for (size_t n : {0u, 1u, 2u, 3u, 2u, 1u, 0u, 3u}) {
      for (int family = 0; family < 4; ++family) {
        const auto in = family_writes(rng, n, family);
        const std::string ref = n == 0 ? hex(Hash32{}) : reference_root(in);
        CAPTURE(n);
        CAPTURE(family);
        for (unsigned threads : {1u, 2u}) {
          BatchRootOptions o;
          o.threads = threads;
          CHECK(hex(batch_root(h, in, o, nullptr, scratch)) == ref);
        }
      }
    }
  }
  SUBCASE("larger, smaller, larger: same roots and counts as a fresh call") {
    const size_t sizes[] = {90000, 300, 5000, 1, 120000, 17, 90000};
    size_t round = 0;
    for (size_t n : sizes) {
      const int family = int(round % 4);
      const auto in = family_writes(rng, n, family);
      BatchRootStats fresh_stats;
      const Hash32 fresh = batch_root(h, in, {}, &fresh_stats);
      if (n <= 300) CHECK(hex(fresh) == reference_root(in));
      for (unsigned threads : {1u, 2u}) {
        for (unsigned bits : {0u, 3u, 11u}) {
          BatchRootOptions o;
          o.threads = threads;
          o.bucket_bits = bits;
          BatchRootStats s;
          CAPTURE(n);
          CAPTURE(family);
          CAPTURE(threads);
          CAPTURE(bits);
          CHECK(hex(batch_root(h, in, o, &s, scratch)) == hex(fresh));
          CHECK(s.entries == fresh_stats.entries);
          CHECK(s.stems == fresh_stats.stems);
          CHECK(s.hash32_messages == fresh_stats.hash32_messages);
          CHECK(s.hash64_messages == fresh_stats.hash64_messages);
          CHECK(s.internal_nodes == fresh_stats.internal_nodes);
        }
      }
      CHECK(scratch.bytes() >= n * sizeof(Entry));
      ++round;
    }
  }
  SUBCASE("skewed: every key in one bucket, reference") {
    auto in = family_writes(rng, 400, 1);
    const std::string ref = reference_root(in);
    for (unsigned bits : {0u, 4u, 16u}) {
      BatchRootOptions o;
      o.bucket_bits = bits;
      CAPTURE(bits);
      CHECK(hex(batch_root(h, in, o, nullptr, scratch)) == ref);
      o.threads = 2;
      CHECK(hex(batch_root(h, in, o, nullptr, scratch)) == ref);
    }
  }
  SUBCASE("random_N vectors family: scratch == fresh, 1 and 2 threads") {
    const auto in = random_entries(0, 20000);
    const Hash32 fresh = batch_root(h, in);
    for (unsigned threads : {1u, 2u}) {
      BatchRootOptions o;
      o.threads = threads;
      CHECK(hex(batch_root(h, in, o, nullptr, scratch)) == hex(fresh));
    }
  }
}
