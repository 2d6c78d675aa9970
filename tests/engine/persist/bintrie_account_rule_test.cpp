// bintrie_account_rule_test: the one rule that turns a block's account diffs into binary-trie
// writes (engine/bintrie/account_leaves.h), exercised where it is used: random diffs with
// destroyed accounts (alone, recreated in the same diff, written again in a later block),
// code set and replaced by shorter code, storage zeroed, one address twice in a diff. After
// every block the in-memory state (bintrie::StateTree), an arena database and a RocksDB
// database (persist::BintrieCommitter) and the independent reference
// (tests/reference/bintrie_state_reference, go-ethereum's methods over the spec's keys) give
// one root, and both databases reopen and verify. Plus the destroyed-account rule against
// leaves derived by hand.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "../persist_mpt_test_util.h"
#include "tests/engine/persist/bintrie_test_options.h"
#include "tests/reference/bintrie_state_reference.h"
#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/state_tree.h"
#include "engine/persist/bintrie/commit.h"
#include "engine/persist/tree_db.h"
#include "kernels/keccak256.h"

using namespace pmpt_test;

namespace {

bintrie::KeyScheme sha256_keys() { return {bintrie::make_hasher(bintrie::HashKind::sha256), bintrie::TreeIndexEndian::big}; }

std::vector<uint8_t> random_code(std::mt19937_64& rng) {
  std::vector<uint8_t> code(1 + rng() % (rng() % 4 == 0 ? 4500 : 100));
  for (auto& b : code) b = uint8_t(rng() % 3 == 0 ? 0x60 + rng() % 32 : rng());  // many PUSHn
  return code;
}

state::Hash32 random_slot(std::mt19937_64& rng) {
  state::Hash32 s{};
  if (rng() % 2) s[31] = uint8_t(rng() % 80);  // header slots < 64 and a few above
  else for (auto& b : s) b = uint8_t(rng());
  return s;
}

// One account's diff: any mix of destroyed, fields, code and storage writes (zeros included).
state::AccountDiff random_account_diff(std::mt19937_64& rng, const state::Address& addr) {
  state::AccountDiff a;
  a.address = addr;
  a.destroyed = rng() % 5 == 0;
  if (rng() % 3 == 0) a.nonce = rng() % 1000;
  if (rng() % 3 == 0) {
    state::U256 bal{};
    for (int k = 20; k < 32; ++k) bal[k] = uint8_t(rng());
    a.balance = bal;
  }
  if (rng() % 6 == 0) a.code = random_code(rng);
  const int n = int(rng() % 8);
  for (int k = 0; k < n; ++k) a.storage_writes.push_back({random_slot(rng), rng() % 3 == 0 ? state::Hash32{} : random_value(rng)});
  if (!a.destroyed && !a.nonce && !a.balance && !a.code && a.storage_writes.empty()) a.destroyed = true;
  return a;
}

state::StateDiff random_block(std::mt19937_64& rng, std::vector<state::Address>* addrs) {
  state::StateDiff d;
  const int touched = 1 + int(rng() % 10);
  for (int t = 0; t < touched; ++t) {
    if (rng() % 5 == 0) {
      state::Address fresh;
      for (auto& b : fresh) b = uint8_t(rng());
      addrs->push_back(fresh);
    }
    d.accounts.push_back(random_account_diff(rng, (*addrs)[rng() % addrs->size()]));
    if (rng() % 8 == 0) d.accounts.push_back(random_account_diff(rng, d.accounts.back().address));  // the same account again
  }
  return d;
}

void same_roots_memory_disk_reference(uint64_t seed, unsigned gd, int blocks) {
  TempDir dir_a("btrule_a"), dir_r("btrule_r");
  const DbOptions oa = persist::test::bintrie_options(dir_a.path, gd, 4096);
  const DbOptions orr = persist::test::bintrie_options(dir_r.path, gd, 4096, StoreKind::rocksdb);
  const state::Allocation alloc = random_alloc(seed, 60, 6, 80);
  state::AllocationSource src(alloc, kTestSpec);
  REQUIRE(persist::build_db(oa, src, nullptr).message() == "");
  REQUIRE(persist::build_db(orr, src, nullptr).message() == "");
  bintrie::StateTree mem(sha256_keys());
  REQUIRE(mem.apply_allocation(alloc) == "");
  reference::BintrieStateReference ref;
  ref.apply_allocation(alloc);
  REQUIRE(mem.commit() == ref.root());
  std::vector<state::Address> addrs;
  for (const auto& [addr, acc] : alloc.accounts) addrs.push_back(addr);
  DbFiles fa, fr;
  REQUIRE(DbFiles::for_commit(oa, &fa).message() == "");
  REQUIRE(DbFiles::for_commit(orr, &fr).message() == "");
  persist::BintrieCommitter ca(fa), cr(fr);
  std::mt19937_64 rng(seed);
  int destroyed = 0;
  for (int b = 0; b < blocks; ++b) {
    const state::StateDiff d = random_block(rng, &addrs);
    for (const auto& a : d.accounts) destroyed += a.destroyed;
    ref.apply_diff(d);
    REQUIRE(mem.apply_diff(d) == "");
    const bintrie::Hash32 want = ref.root();
    REQUIRE(mem.commit() == want);
    persist::BintrieCommitStats sa, sr;
    REQUIRE(ca.commit(d, kTestSpec, &sa).message() == "");
    REQUIRE(cr.commit(d, kTestSpec, &sr).message() == "");
    REQUIRE(sa.root == want);
    REQUIRE(sr.root == want);
    CHECK(fa.manifest.key_count == ref.leaves().size());
  }
  CHECK(destroyed > blocks / 2);
  for (const DbOptions* o : {&oa, &orr}) {  // reopened: the root, and verify counts every leaf
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(persist::open_db(*o, &db).message() == "");
    CHECK(db->manifest().root_hash == ref.root());
    persist::VerifyReport vr;
    REQUIRE(db->verify(&vr).message() == "");
    CHECK(vr.leaves == ref.leaves().size());
    // Every address's account as GetAccount reads it: a destroyed one is absent.
    std::vector<state::StateKey> keys;
    for (const state::Address& a : addrs) keys.push_back({a, std::nullopt});
    std::vector<persist::LookupAnswer> ans;
    persist::LookupStats ls;
    REQUIRE(db->lookup(keys, &ans, &ls, false).message() == "");
    REQUIRE(ans.size() == addrs.size());
    size_t absent = 0;
    for (size_t i = 0; i < addrs.size(); ++i) {
      const auto want = ref.get_account(addrs[i]);
      absent += !want;
      CHECK(ans[i].account.exists == want.has_value());
      if (!want || !ans[i].account.exists) continue;
      CHECK(ans[i].account.nonce == want->nonce);
      CHECK(ans[i].account.balance == want->balance);
      CHECK(ans[i].account.code_hash == want->code_hash);
    }
    CHECK(absent > 0);
  }
}

}  // namespace

TEST_CASE("bintrie account rule: random diffs give one root in memory, on disk (arena, RocksDB) and in the reference") {
  same_roots_memory_disk_reference(41, 5, 40);
  same_roots_memory_disk_reference(42, 2, 25);
}

TEST_CASE("bintrie account rule: the reference's keys and chunks are the spec's (engine keys agree)") {
  const bintrie::KeyScheme ks = sha256_keys();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    state::Address a;
    for (auto& b : a) b = uint8_t(rng());
    const state::Hash32 slot = random_slot(rng);
    state::Hash32 max_slot;
    max_slot.fill(0xff);
    reference::BintrieStateReference r;
    state::StateDiff d;
    d.accounts.push_back({a, {}, {}, {}, {{slot, random_value(rng)}, {max_slot, random_value(rng)}}, false});
    r.apply_diff(d);
    CHECK(r.leaves().count(bintrie::storage_slot_key(ks, a, slot)) == 1);
    CHECK(r.leaves().count(bintrie::storage_slot_key(ks, a, max_slot)) == 1);
    const std::vector<uint8_t> code = random_code(rng);
    const auto ours = bintrie::chunkify_code(code);
    const auto theirs = reference::ref_chunkify(code);
    REQUIRE(ours.size() == theirs.size());
    for (size_t j = 0; j < ours.size(); ++j) CHECK(ours[j] == theirs[j]);
  }
}

namespace {

bintrie::Hash32 from_hex(const char* h) {
  bintrie::Hash32 out{};
  for (int i = 0; i < 32; ++i) out[i] = uint8_t(std::stoi(std::string(h + 2 * i, 2), nullptr, 16));
  return out;
}

// The in-memory state and an arena database take the same diff; both must hold `want`.
struct Both {
  bintrie::StateTree mem{sha256_keys()};
  DbFiles files;
  std::unique_ptr<persist::BintrieCommitter> disk;
  void apply(const state::StateDiff& d, const std::map<bintrie::Hash32, bintrie::Hash32>& want) {
    REQUIRE(mem.apply_diff(d) == "");
    for (const auto& [k, v] : want) CHECK(mem.tree().get(k) == std::optional<bintrie::Hash32>(v));
    std::vector<bintrie::Entry> e;
    for (const auto& [k, v] : want) e.push_back({k, v});
    const bintrie::Hash32 root = bintrie::batch_root(sha256_keys().hasher, e);
    CHECK(mem.commit() == root);
    persist::BintrieCommitStats st;
    REQUIRE(disk->commit(d, kTestSpec, &st).message() == "");
    CHECK(st.root == root);
  }
};

}  // namespace

TEST_CASE("bintrie account rule: destroyed zeroes basic data and code hash only; recreated starts from nothing") {
  const bintrie::KeyScheme ks = sha256_keys();
  state::Address x{}, y{};
  x[19] = 0x11;
  y[19] = 0x22;
  state::Account acc;
  acc.nonce = 3;
  acc.balance[30] = 0x01;  // 256 wei
  acc.code = std::vector<uint8_t>(40, 0x5b);  // 40 JUMPDESTs: two chunks
  state::Hash32 low{}, high{}, v1{}, v2{};
  low[31] = 5;
  high[0] = 0x80;  // 2^255: a main-storage stem
  v1[31] = 0xaa;
  v2[31] = 0xbb;
  acc.storage = {{low, v1}, {high, v2}};
  state::Allocation alloc;
  alloc.accounts.push_back({x, acc});
  TempDir dir("btrule_hand");
  const DbOptions o = persist::test::bintrie_options(dir.path, 5, 4096);
  state::AllocationSource src(alloc, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Both both;
  REQUIRE(both.mem.apply_allocation(alloc) == "");
  REQUIRE(DbFiles::for_commit(o, &both.files).message() == "");
  both.disk = std::make_unique<persist::BintrieCommitter>(both.files);

  const bintrie::Hash32 basic = bintrie::basic_data_key(ks, x);
  bintrie::Hash32 code_hash_k = basic;
  code_hash_k[31] = 1;
  bintrie::Hash32 chunk0 = basic, chunk1 = basic, slot_low = basic;
  chunk0[31] = 128;
  chunk1[31] = 129;
  slot_low[31] = 64 + 5;
  bintrie::Hash32 chunk = from_hex("005b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b");
  bintrie::Hash32 tail = from_hex("005b5b5b5b5b5b5b5b5b00000000000000000000000000000000000000000000");
  std::map<bintrie::Hash32, bintrie::Hash32> want = {
      {basic, from_hex("0000000000000028000000000000000300000000000000000000000000000100")},
      {code_hash_k, bintrie::Hash32{}},  // filled below: keccak256 of the code
      {chunk0, chunk}, {chunk1, tail}, {slot_low, v1}, {bintrie::storage_slot_key(ks, x, high), v2}};
  kernels::keccak256(acc.code.data(), acc.code.size(), want[code_hash_k].data());
  CHECK(both.mem.commit() == bintrie::batch_root(ks.hasher, [&] {
          std::vector<bintrie::Entry> e;
          for (const auto& [k, v] : want) e.push_back({k, v});
          return e;
        }()));

  // Block 1: x destroyed: sub 0 and sub 1 become 32 zero bytes; chunks and both slots stay.
  state::StateDiff d1;
  d1.accounts.push_back({x, {}, {}, {}, {}, true});
  want[basic] = bintrie::Hash32{};
  want[code_hash_k] = bintrie::Hash32{};
  both.apply(d1, want);

  // Block 2: x recreated with nonce 1 (no code): from nothing, so balance 0, code size 0 and
  // the empty-code hash, not the zero one the destruction left.
  state::StateDiff d2;
  d2.accounts.push_back({x, 1, {}, {}, {}, false});
  want[basic] = from_hex("0000000000000000000000000000000100000000000000000000000000000000");
  want[code_hash_k] = from_hex("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  both.apply(d2, want);

  // Block 3: y, which never existed, destroyed and recreated in one diff with a balance and
  // a slot; x destroyed, then given balance 9 by a second diff in the same block.
  state::StateDiff d3;
  state::U256 nine{};
  nine[31] = 9;
  d3.accounts.push_back({y, {}, nine, {}, {{low, v2}}, true});
  d3.accounts.push_back({x, {}, {}, {}, {}, true});
  d3.accounts.push_back({x, {}, nine, {}, {}, false});
  const bintrie::Hash32 y_basic = bintrie::basic_data_key(ks, y);
  bintrie::Hash32 y_code_hash = y_basic, y_low = y_basic;
  y_code_hash[31] = 1;
  y_low[31] = 64 + 5;
  want[y_basic] = from_hex("0000000000000000000000000000000000000000000000000000000000000009");
  want[y_code_hash] = want[code_hash_k];
  want[y_low] = v2;
  want[basic] = want[y_basic];
  both.apply(d3, want);
}
