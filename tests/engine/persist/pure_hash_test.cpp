// pure_hash_test: the pure-hash protocol of both trees (engine/persist/pure_hash_protocol.h):
// the timed passes allocate nothing, give the reference digests (keccak256 one message at a
// time; stem_blob_hash and reconstruct_group, the zero rule included), count one batch call
// per non-empty level, and a digest that differs from the commit's is an error.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/persist/bintrie/pure_hash.h"
#include "engine/persist/mpt/pure_hash.h"
#include "kernels/keccak256.h"
#include "tests/engine/heap_counter.h"

using st::persist::PureHashCount;

TEST_CASE("mpt pure hash: one keccak256_batch per non-empty level, the reference digests, no allocation in the passes") {
  std::mt19937_64 rng(11);
  // Levels 1, 2 and 4 (3 empty), records of 32..600 bytes (several Keccak blocks).
  const std::vector<uint32_t> counts = {0, 37, 9, 0, 1};
  size_t n = 0;
  for (uint32_t c : counts) n += c;
  std::vector<std::vector<uint8_t>> bodies(n);
  std::vector<std::array<uint8_t, 32>> digests(n);
  for (size_t i = 0; i < n; ++i) {
    bodies[i].resize(32 + rng() % 569);
    for (auto& x : bodies[i]) x = uint8_t(rng());
    st::kernels::keccak256(bodies[i].data(), bodies[i].size(), digests[i].data());
  }
  st::persist::KeccakLevels lv;
  lv.prepare(counts, n);
  CHECK(lv.level_end == std::vector<uint32_t>{0, 37, 46, 46, 47});
  for (size_t i = 0; i < n; ++i) lv.msgs[i] = bodies[i].data(), lv.lens[i] = bodies[i].size(), lv.expect[i] = digests[i].data();
  lv.gather_bytes();
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {  // back to back in message order, the same bytes
    CHECK(lv.msgs[i] == lv.bytes.data() + total);
    CHECK(std::equal(bodies[i].begin(), bodies[i].end(), lv.msgs[i]));
    total += bodies[i].size();
  }
  CHECK(lv.bytes.size() == total);
  PureHashCount c;
  const st::test::HeapCount h0 = st::test::heap_count_this_thread();
  const st::io::Status ok = st::persist::mpt_pure_hash(lv, &c);
  const st::test::HeapCount used = st::test::heap_count_this_thread() - h0;
  REQUIRE_MESSAGE(ok.ok(), ok.message());
  CHECK(used.calls == 0);
  CHECK(c.calls == 3);
  CHECK(c.nodes == n);
  CHECK(c.ns > 0);
  // The commit's digest of the level-2 record 40 is wrong: an error naming its level.
  digests[40][5] ^= 1;
  const st::io::Status bad = st::persist::mpt_pure_hash(lv, &c);
  CHECK(!bad.ok());
  CHECK(bad.message().find("level 2") != std::string::npos);
  digests[40][5] ^= 1;
  // Arrays of different sizes are refused, not read past.
  lv.expect.pop_back();
  CHECK(!st::persist::mpt_pure_hash(lv, &c).ok());
}

namespace {
// Stems of 0..40 values and one full stem; groups with entries at mixed depths, some given as
// zeros (the zero rule: a parent of zeros is zero, not hashed), one group of zeros alone.
void random_blobs(std::mt19937_64& rng, unsigned g, std::vector<st::bintrie::StemBlob>* stems,
                  std::vector<st::bintrie::GroupBlob>* groups) {
  stems->assign(25, {});
  for (size_t s = 0; s < stems->size(); ++s) {
    st::bintrie::StemBlob& b = (*stems)[s];
    for (auto& x : b.stem) x = uint8_t(rng());
    const unsigned n = s == 0 ? 256 : s == 1 ? 0 : unsigned(rng() % 40);
    std::set<unsigned> subs;
    while (subs.size() < n) subs.insert(unsigned(rng() % 256));
    for (unsigned i : subs) {
      b.bitmap[i / 8] |= uint8_t(0x80 >> (i % 8));
      st::bintrie::Hash32 v{};
      for (auto& x : v) x = uint8_t(rng());
      if (i % 5 == 0) v = {};  // a present zero value is hashed like any other
      b.values.push_back(v);
    }
  }
  groups->assign(20, {});
  for (size_t q = 0; q < groups->size(); ++q) {
    st::bintrie::GroupBlob& gb = (*groups)[q];
    gb.g = uint8_t(g);
    for (uint32_t pos = 0; pos < (1u << g); pos += 1u << (g - 2)) {  // a region per depth-2 prefix
      if (rng() % 3 == 0) continue;
      const unsigned depth = 2 + unsigned(rng() % (g - 1));
      st::bintrie::GroupEntry e;
      e.depth = uint8_t(depth);
      e.pos = uint16_t(pos | ((rng() % (1u << (depth - 2))) << (g - depth)));
      if (q % 4 != 1) for (auto& x : e.hash) x = uint8_t(rng());  // q % 4 == 1: entries of zeros
      gb.entries.push_back(e);
    }
  }
}

// The blobs as the pure hash takes them, with their reference digests (stem_blob_hash,
// reconstruct_group).
struct BlobInputs {
  std::vector<const st::bintrie::StemBlob*> stems;
  std::vector<st::bintrie::Hash32> stem_hashes;
  std::vector<const st::bintrie::GroupBlob*> groups;
  std::vector<st::bintrie::Hash32> group_hashes;
  BlobInputs(const st::bintrie::Hasher& h, const std::vector<st::bintrie::StemBlob>& s,
             const std::vector<st::bintrie::GroupBlob>& g) {
    for (const auto& b : s) stems.push_back(&b), stem_hashes.push_back(st::bintrie::stem_blob_hash(h, b));
    for (const auto& b : g) groups.push_back(&b), group_hashes.push_back(st::bintrie::reconstruct_group(h, b)[0]);
  }
};
}  // namespace

TEST_CASE("binary trie pure hash: planned before the clock, the passes allocate nothing and give the reference digests") {
  std::mt19937_64 rng(17);
  for (st::bintrie::HashKind kind : {st::bintrie::HashKind::sha256, st::bintrie::HashKind::blake3}) {
    const st::bintrie::Hasher h = st::bintrie::make_hasher(kind);
    const unsigned g = 5;
    std::vector<st::bintrie::StemBlob> stems;
    std::vector<st::bintrie::GroupBlob> groups;
    random_blobs(rng, g, &stems, &groups);
    const BlobInputs in(h, stems, groups);
    CHECK(in.group_hashes[1] == st::bintrie::Hash32{});  // a group of zero entries hashes to zero
    st::persist::BintriePurePlan plan;
    REQUIRE(st::persist::plan_bintrie_pure_hash(in.stems, in.stem_hashes, in.groups, in.group_hashes, &plan).ok());
    PureHashCount c;
    for (int run = 0; run < 2; ++run) {  // the same plan run again: the same digests
      const st::test::HeapCount h0 = st::test::heap_count_this_thread();
      const st::io::Status ok = st::persist::run_bintrie_pure_hash(h, plan, &c);
      const st::test::HeapCount used = st::test::heap_count_this_thread() - h0;
      REQUIRE_MESSAGE(ok.ok(), ok.message());
      CHECK(used.calls == 0);
    }
    CHECK(c.nodes == stems.size() + groups.size());
    CHECK(c.calls == 1 + 8 + 1 + g);  // leaves, 8 stem levels, stem nodes, g group levels
    // A wrong committed hash of a stem, then of a group: an error naming it.
    plan.expect[3][0] ^= 1;
    st::io::Status bad = st::persist::run_bintrie_pure_hash(h, plan, &c);
    CHECK(bad.message().find("new stem 3 of 25") != std::string::npos);
    plan.expect[3][0] ^= 1;
    plan.expect[stems.size() + 2][31] ^= 1;
    bad = st::persist::run_bintrie_pure_hash(h, plan, &c);
    CHECK(bad.message().find("new group 2 of 20") != std::string::npos);
  }
}

TEST_CASE("binary trie pure hash: bintrie_pure_hash (plan, then run) gives stem_blob_hash and reconstruct_group; a wrong digest is an error") {
  std::mt19937_64 rng(5);
  for (st::bintrie::HashKind kind : {st::bintrie::HashKind::sha256, st::bintrie::HashKind::blake3}) {
    const st::bintrie::Hasher h = st::bintrie::make_hasher(kind);
    const unsigned g = 4;
    std::vector<st::bintrie::StemBlob> stems;
    std::vector<st::bintrie::GroupBlob> groups;
    random_blobs(rng, g, &stems, &groups);
    BlobInputs in(h, stems, groups);
    PureHashCount c;
    const st::io::Status ok = st::persist::bintrie_pure_hash(h, in.stems, in.stem_hashes, in.groups, in.group_hashes, &c);
    CHECK_MESSAGE(ok.ok(), ok.message());
    CHECK(c.nodes == stems.size() + groups.size());
    CHECK(c.calls == 1 + 8 + 1 + g);  // leaves, 8 stem levels, stem nodes, g group levels
    in.stem_hashes[7][3] ^= 1;
    CHECK(!st::persist::bintrie_pure_hash(h, in.stems, in.stem_hashes, in.groups, in.group_hashes, &c).ok());
    in.stem_hashes[7][3] ^= 1;
    in.group_hashes[3][0] ^= 0x80;
    CHECK(!st::persist::bintrie_pure_hash(h, in.stems, in.stem_hashes, in.groups, in.group_hashes, &c).ok());
  }
}
