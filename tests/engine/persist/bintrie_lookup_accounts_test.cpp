// bintrie_lookup_accounts_test: what a binary-trie database answers about accounts, checked
// against the synthetic source it was built from (workloads/synthetic_state.h):
//   - a slot key's answer carries its account's fields (nonce, balance, code size, code
//     hash), as the MPT's does, for present and absent accounts, present and absent slots,
//     header-stem slots and hashed ones, with and without the account key in the same batch,
//     in the arena (streamed) and RocksDB (level by level) stores;
//   - verify() counts the accounts (stems shaped as an account's header stem), before and
//     after block commits, and not the stems that only look like one at sub 0 (storage slots
//     = 0 mod 256, code chunks 128 + 256k: the synthetic state alone has 5 of them).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"
#include "io/rocksdb_store.h"
#include "kernels/keccak256.h"
#include "tests/engine/persist/bintrie_test_options.h"
#include "tests/io/io_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using persist::DbOptions;
using persist::StoreKind;
using state::Hash32;
using st::io::test::TempDir;

DbOptions options(const std::string& dir, StoreKind store, unsigned gd) {
  return persist::test::bintrie_options(dir, gd, 4096, store);
}

state::SyntheticSpec small_spec() {
  state::SyntheticSpec s;
  s.accounts = 400;
  s.contracts = 8;
  s.slots_per_contract = 60;  // entry 0 is slot 0 (the header stem), the rest hashed slots
  s.seed = 11;
  return s;
}

// The source's account i as a lookup should report it (the binary trie has no storage root).
persist::AccountInfo expected_account(const state::SyntheticState& src, uint64_t i) {
  state::AccountRecord r;
  src.account(i, &r);
  persist::AccountInfo want;
  want.exists = true;
  want.nonce = r.nonce;
  want.balance = r.balance;
  want.code_size = r.code.size();
  kernels::keccak256(r.code.data(), r.code.size(), want.code_hash.data());
  return want;
}

void check_account(const persist::AccountInfo& got, const state::SyntheticState& src, uint64_t i) {
  const persist::AccountInfo want = expected_account(src, i);
  CHECK(got.exists == want.exists);
  CHECK(std::tie(got.nonce, got.balance, got.code_size) == std::tie(want.nonce, want.balance, want.code_size));
  CHECK(got.code_hash == want.code_hash);
  CHECK(got.storage_root == want.storage_root);
}

void check_absent_account(const persist::AccountInfo& got) {
  CHECK_FALSE(got.exists);
  CHECK(got.nonce == 0);
  CHECK(got.balance == state::U256{});
  CHECK(got.code_hash == Hash32{});
}

// One batch: an answer per key (the stats count the caller's keys only).
std::vector<persist::LookupAnswer> lookup(persist::TreeDb& db, const std::vector<state::StateKey>& keys) {
  std::vector<persist::LookupAnswer> out;
  persist::LookupStats stats;
  const io::Status st = db.lookup(keys, &out, &stats);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(out.size() == keys.size());
  CHECK(stats.keys == keys.size());
  return out;
}

// Every slot of every contract (no account key in the batch), slots of EOAs (present
// account, absent slot), slots of absent addresses, then a batch mixing account keys and
// repeated slot keys of one address.
void check_slot_answers(persist::TreeDb& db, const state::SyntheticState& src) {
  std::vector<state::StateKey> keys;
  std::vector<std::pair<uint64_t, uint64_t>> where;  // (account, live slot entry); entry ~0: absent slot
  for (uint64_t i = 0; i < src.account_count(); ++i) {
    for (uint64_t j = 0; j < src.storage_size(i); ++j) {
      keys.push_back(*src.slot_key(i, j));
      where.push_back({i, j});
    }
    if (i % 37 == 0) {  // a slot the account does not hold
      Hash32 slot{};
      slot[0] = 0xee;
      slot[31] = uint8_t(i);
      keys.push_back({src.address(i), slot});
      where.push_back({i, ~0ull});
    }
  }
  const size_t present = keys.size();
  for (uint64_t k = 0; k < 20; ++k) {  // addresses past the state: no account
    state::StateKey key{src.address(src.account_count() + k), Hash32{}};
    key.slot->at(31) = uint8_t(k);
    keys.push_back(key);
  }
  std::vector<persist::LookupAnswer> ans = lookup(db, keys);
  for (size_t q = 0; q < present; ++q) {
    const auto [i, j] = where[q];
    CAPTURE(i);
    CAPTURE(j);
    check_account(ans[q].account, src, i);
    if (j == ~0ull) CHECK_FALSE(ans[q].slot_value.has_value());
    else CHECK(ans[q].slot_value == src.slot_value(i, j));
  }
  for (size_t q = present; q < keys.size(); ++q) {
    check_absent_account(ans[q].account);
    CHECK_FALSE(ans[q].slot_value.has_value());
  }

  // One slot key alone (its account walked in the same batch), and a batch holding the
  // account key after two slot keys of the same contract and before an EOA's slot.
  for (uint64_t i : {uint64_t(0), uint64_t(5)}) {
    std::vector<state::StateKey> one{*src.slot_key(i, 1)};
    ans = lookup(db, one);
    check_account(ans[0].account, src, i);
    CHECK(ans[0].slot_value == src.slot_value(i, 1));
  }
  const uint64_t c = 3, eoa = src.spec().contracts + 7;
  std::vector<state::StateKey> mixed{*src.slot_key(c, 0), *src.slot_key(c, 2), {src.address(c), std::nullopt},
                                     {src.address(eoa), Hash32{}}, *src.slot_key(c, 0)};
  ans = lookup(db, mixed);
  for (size_t q : {size_t(0), size_t(1), size_t(2), size_t(4)}) check_account(ans[q].account, src, c);
  CHECK(ans[0].slot_value == src.slot_value(c, 0));
  CHECK(ans[1].slot_value == src.slot_value(c, 2));
  CHECK_FALSE(ans[2].slot_value.has_value());
  check_account(ans[3].account, src, eoa);
  CHECK_FALSE(ans[3].slot_value.has_value());
  CHECK(ans[4].slot_value == src.slot_value(c, 0));
}

}  // namespace

TEST_CASE("persist bintrie: a slot key's answer carries its account, as the source holds it") {
  std::vector<StoreKind> stores{StoreKind::arena};
  if (io::rocksdb_available()) stores.push_back(StoreKind::rocksdb);
  for (StoreKind store : stores)
    for (unsigned gd : {2u, 5u}) {
      const std::string store_name = persist::store_kind_name(store);
      CAPTURE(gd);
      CAPTURE(store_name);
      TempDir dir;
      const state::SyntheticState src(small_spec());
      const DbOptions o = options(dir.file("db"), store, gd);
      REQUIRE(persist::build_db(o, src, nullptr).message() == "");
      std::unique_ptr<persist::TreeDb> db;
      REQUIRE(persist::open_db(o, &db).message() == "");
      check_slot_answers(*db, src);
    }
}

TEST_CASE("persist bintrie: verify counts the accounts of the synthetic state, before and after blocks") {
  TempDir dir;
  state::SyntheticSpec spec = small_spec();
  spec.block_writes = 64;
  spec.block_seed = 3;
  state::SyntheticState src(spec);
  const DbOptions o = options(dir.file("db"), StoreKind::arena, 4);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  // deleted_at_most: slots the blocks may have deleted (a deleted slot stays a present zero
  // leaf in the binary trie, so verify counts it; the source no longer lists it).
  auto verify = [&](const state::SyntheticState& s, uint64_t deleted_at_most) {
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(persist::open_db(o, &db).message() == "");
    persist::VerifyReport rep;
    io::Status st = db->verify(&rep);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(rep.accounts == s.account_count());
    CHECK(rep.leaves == db->manifest().key_count);  // every leaf (fields, code chunks, storage)
    // The leaves less the accounts' fields and code chunks.
    CHECK(rep.slots >= s.slot_count());
    CHECK(rep.slots <= s.slot_count() + deleted_at_most);
  };
  verify(src, 0);

  // Block commits keep the count (senders and contracts are existing accounts).
  {
    persist::DbFiles files;
    REQUIRE(persist::DbFiles::for_commit(o, &files).message() == "");
    persist::BintrieCommitter committer(files);
    state::StateDiff diff;
    for (int b = 0; b < 3; ++b) {
      src.next_block(&diff);
      REQUIRE(committer.commit(diff, src.spec_json(), nullptr).message() == "");
    }
  }
  verify(src, 3 * spec.block_writes);
  // And the answers after the blocks are the source's (slot keys carry the accounts).
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  check_slot_answers(*db, src);
}

TEST_CASE("persist bintrie: verify does not count stems that only look like a header stem at sub 0") {
  // Per account: its header stem. Besides: contract 0's second code stem holds chunks 128..161
  // (subs 0..33), contract 1's holds chunks 128 and 129 only (subs 0 and 1), all zero bytes,
  // so sub 0 reads as a basic-data leaf of version 0, code size 0; contract 2's storage has
  // slots 256 and 257 (one stem, subs 0 and 1, small values) and slot 512 (sub 0 alone).
  state::Allocation alloc;
  for (uint8_t i = 0; i < 40; ++i) {
    state::Address a{};
    a[0] = 0xa0;
    a[19] = i;
    state::Account acc;
    acc.nonce = i;
    acc.balance[31] = uint8_t(i + 1);
    if (i == 0) acc.code.assign(5000, 0x60);
    if (i == 1) acc.code.assign(130 * 31, 0);
    if (i == 2)
      for (uint64_t slot : {256u, 257u, 512u, 3u}) {
        Hash32 k{}, v{};
        k[30] = uint8_t(slot >> 8);
        k[31] = uint8_t(slot);
        v[31] = uint8_t(slot % 7 + 1);
        acc.storage[k] = v;
      }
    alloc.accounts.push_back({a, std::move(acc)});
  }
  const state::AllocationSource src(alloc, "{\"test\":\"headers\"}");
  for (unsigned gd : {1u, 5u}) {
    CAPTURE(gd);
    TempDir dir;
    const DbOptions o = options(dir.file("db"), StoreKind::arena, gd);
    REQUIRE(persist::build_db(o, src, nullptr).message() == "");
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(persist::open_db(o, &db).message() == "");
    persist::VerifyReport rep;
    io::Status st = db->verify(&rep);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(rep.accounts == alloc.accounts.size());
    CHECK(rep.leaves == db->manifest().key_count);
    CHECK(rep.slots == src.slot_count());  // the 4 slots: code chunks in stems of their own are not slots
  }
}

TEST_CASE("persist bintrie: with slot_key_accounts off a slot key reads its slot alone") {
  TempDir dir;
  const state::SyntheticState src(small_spec());
  DbOptions o = options(dir.file("db"), StoreKind::arena, 5);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  std::vector<state::StateKey> keys;
  std::vector<std::pair<uint64_t, uint64_t>> where;
  for (uint64_t i = 0; i < src.spec().contracts; ++i)
    for (uint64_t j = 1; j < src.storage_size(i); j += 7) {  // hashed slots: not on the header stem
      keys.push_back(*src.slot_key(i, j));
      where.push_back({i, j});
    }
  uint64_t reads[2] = {0, 0};  // records decoded, with / without the account walks
  for (bool with_accounts : {true, false}) {
    CAPTURE(with_accounts);
    o.slot_key_accounts = with_accounts;
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(persist::open_db(o, &db).message() == "");
    std::vector<persist::LookupAnswer> ans;
    persist::LookupStats stats;
    REQUIRE(db->lookup(keys, &ans, &stats, true).message() == "");
    REQUIRE(ans.size() == keys.size());
    for (size_t q = 0; q < keys.size(); ++q) {
      CHECK(ans[q].slot_value == src.slot_value(where[q].first, where[q].second));
      if (with_accounts) check_account(ans[q].account, src, where[q].first);
      else check_absent_account(ans[q].account);
    }
    reads[with_accounts ? 0 : 1] = stats.nodes_visited;
  }
  CHECK(reads[1] > 0);
  CHECK(reads[1] < reads[0]);  // the account walks decode records of their own
}
