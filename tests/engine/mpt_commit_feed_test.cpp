// mpt_commit_feed_test: randomized differential test of the pull-fed commit (commit_many
// step 2: nodes encoded inside keccak256_batch_pull's callback into per-lane buffers, refs
// stored through store_ref). Several plain tries are changed and committed
// together by Trie::commit_many after every round, with short keys (1-3 bytes: embedded
// nodes, extensions, branches with values), long shared prefixes (extensions whose bytes
// move to the heap), values of every length 1..40 and long values (> NodeBytes::kInline:
// heap bytes), deletes and collapses, batches applied with apply()
// (logged commits) or put() (unlogged); every trie's root must equal a from-scratch build
// of its model after every round, and proofs of a few keys must verify. Every keccak tier
// the CPU has is exercised.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "engine/mpt/builder.h"
#include "engine/mpt/proof.h"
#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"

using namespace st;
using st::mpt_test::Bytes;

namespace {

Bytes random_key(std::mt19937_64& rng, int mode) {
  Bytes k;
  switch (mode) {
    case 0:  // 1-3 bytes from a small alphabet: embedded leaves, branches with values
      k.resize(1 + rng() % 3);
      for (auto& b : k) b = uint8_t(rng() % 3 == 0 ? 0x12 : (rng() % 4) * 0x11);
      break;
    case 1:  // a shared 2-byte prefix then 0-2 bytes: extensions over small branches
      k = {0xab, 0xcd};
      k.resize(2 + rng() % 3);
      for (size_t i = 2; i < k.size(); ++i) k[i] = uint8_t(rng() % 2 ? 0x10 + rng() % 3 : 0x20);
      break;
    case 3:  // a 38-45 byte prefix of 0x77 then 1 byte: extensions of 76+ nibbles whose value
             // (the child ref, embedded or 32 bytes) crosses NodeBytes' inline limit
      k.assign(38 + rng() % 8, 0x77);
      k.push_back(uint8_t((rng() % 3) * 0x11));
      break;
    default:  // 32 random bytes: hashed refs (kept few, so short-key structure dominates)
      k.resize(32);
      for (auto& b : k) b = uint8_t(rng());
      break;
  }
  return k;
}

Bytes random_value(std::mt19937_64& rng) {
  size_t len;
  const unsigned r = unsigned(rng() % 10);
  if (r < 7) len = 1 + rng() % 40;          // every short length (embedded and hashed nodes)
  else if (r < 9) len = 100 + rng() % 200;  // path + value > 110: heap NodeBytes
  else len = 1;
  Bytes v(len);
  for (auto& b : v) b = uint8_t(rng());
  if (len == 1 && rng() % 2) v[0] = uint8_t(rng() % 0x80);  // a single byte < 0x80 is its own RLP
  return v;
}

void run_rounds(uint64_t seed, size_t tries_n, size_t rounds) {
  std::mt19937_64 rng(seed);
  std::vector<mpt::Trie> tries(tries_n);
  std::vector<std::map<Bytes, Bytes>> models(tries_n);
  std::vector<mpt::Trie*> ptrs;
  for (auto& t : tries) ptrs.push_back(&t);
  for (size_t round = 0; round < rounds; ++round) {
    CAPTURE(seed);
    CAPTURE(round);
    for (size_t ti = 0; ti < tries_n; ++ti) {
      if (rng() % 4 == 0) continue;  // some tries stay clean this round
      auto& m = models[ti];
      std::vector<std::pair<Bytes, Bytes>> ws;
      const size_t n = 1 + rng() % (rng() % 3 == 0 ? 40 : 6);
      const unsigned modes[3] = {2, 3, 4};
      const unsigned mode_hi = modes[rng() % 3];
      const int del_pct = int(rng() % 70);
      for (size_t i = 0; i < n; ++i) {
        Bytes k = random_key(rng, mode_hi == 3 && rng() % 2 ? 3 : int(rng() % mode_hi));
        Bytes v = random_value(rng);
        if (int(rng() % 100) < del_pct && !m.empty()) {
          auto it = m.begin();
          std::advance(it, long(rng() % m.size()));
          k = it->first;
          v.clear();
        }
        ws.emplace_back(std::move(k), std::move(v));
      }
      if (rng() % 12 == 0) {  // delete all but 0-2 keys: collapses down to tiny (embedded) roots
        std::vector<Bytes> keys;
        for (const auto& kv : m) keys.push_back(kv.first);
        for (const auto& kv : ws) keys.push_back(kv.first);
        std::shuffle(keys.begin(), keys.end(), rng);
        for (size_t i = rng() % 3; i < keys.size(); ++i) ws.emplace_back(keys[i], Bytes{});
      }
      st::mpt_test::apply_writes(tries[ti], m, ws, rng() % 3 != 0);
    }
    // commit: all tries together (the MptState way), or one by one, or a subset together
    const unsigned how = unsigned(rng() % 4);
    mpt::NodeCapture cap;
    mpt::CommitStats stats;
    if (how == 0) {
      for (auto& t : tries) t.root_hash();
    } else if (how == 1) {
      std::vector<mpt::Trie*> sub;
      for (auto* p : ptrs)
        if (rng() % 2) sub.push_back(p);
      if (!sub.empty() && rng() % 3 == 0) sub.push_back(sub.front());  // a trie listed twice
      mpt::Trie::commit_many(sub, &stats, &cap);
    } else {
      mpt::Trie::commit_many(ptrs, &stats, &cap);
    }
    if (how != 0) {  // every hashed node was captured, and the hash counts match the captured bytes
      CHECK(cap.count() == stats.keccak_calls);
      CHECK(cap.bytes.size() == stats.keccak_bytes);
    }
    for (size_t ti = 0; ti < tries_n; ++ti) {
      CAPTURE(ti);
      const mpt::Hash32 r = tries[ti].root_hash();
      REQUIRE(r == st::mpt_test::scratch_root(models[ti]));
      if (tries[ti].root_id() != mpt::kNoNode) {  // the root's encoding hashes to the root
        std::vector<uint8_t> enc;
        tries[ti].encode(tries[ti].root_id(), &enc);
        mpt::Hash32 h;
        st::kernels::keccak256(enc.data(), enc.size(), h.data());
        CHECK(h == r);
      }
      if (round % 7 == 0 && !models[ti].empty()) {  // proofs of two present keys and an absent one
        for (int q = 0; q < 3; ++q) {
          Bytes k;
          if (q < 2) {
            auto it = models[ti].begin();
            std::advance(it, long(rng() % models[ti].size()));
            k = it->first;
          } else {
            k = random_key(rng, 0);
          }
          const auto proof = mpt::prove(tries[ti], k);
          const auto res = mpt::verify_proof(r, k, proof);
          CHECK(res.ok());
          auto it = models[ti].find(k);
          if (it == models[ti].end()) CHECK(!res.value.has_value());
          else CHECK((res.value.has_value() && *res.value == it->second));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("mpt commit feed: several short-key tries committed together equal a from-scratch build, every tier") {
  for (const char* name : {"portable", "avx512x8"}) {
    CAPTURE(name);
    if (auto err = st::kernels::keccak256_select(name)) {
      MESSAGE("keccak256 tier not available here: " << *err);
      CHECK(err->find("self-test") == std::string::npos);  // only a missing CPU feature or build option excuses it
      continue;
    }
    for (uint64_t seed = 1; seed <= 6; ++seed) run_rounds(seed * 977 + (name[0] == 'a'), 1 + seed % 6, 120);
  }
  CHECK_FALSE(st::kernels::keccak256_select("auto").has_value());
}

TEST_CASE("mpt commit feed: a depth of more than one pull chunk (2,048 nodes), embedded and hashed refs mixed") {
  // ~3,000 leaves under one depth of branches (2-byte keys, short values: embedded leaves
  // in 256 branches; 3-byte keys: hashed ones), so a depth spans several pull calls
  std::mt19937_64 rng(5);
  mpt::Trie a, b;
  std::map<Bytes, Bytes> ma, mb;
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    std::vector<std::pair<Bytes, Bytes>> wa, wb;
    for (int i = 0; i < 3000; ++i) {
      Bytes k(2 + rng() % 2);
      for (auto& x : k) x = uint8_t(rng());
      Bytes v(round == 3 && i % 3 == 0 ? 0 : 1 + rng() % (i % 2 ? 3 : 40));
      for (auto& x : v) x = uint8_t(rng());
      (i % 2 ? wa : wb).emplace_back(k, v);
    }
    st::mpt_test::apply_writes(a, ma, wa, true);
    st::mpt_test::apply_writes(b, mb, wb, round % 2 == 0);
    mpt::Trie* both[2] = {&a, &b};
    mpt::Trie::commit_many(both);
    CHECK(a.root_hash() == st::mpt_test::scratch_root(ma));
    CHECK(b.root_hash() == st::mpt_test::scratch_root(mb));
  }
}
