// bintrie_commit_test: block diffs applied to an arena binary-trie database as copy-on-write
// commits (engine/persist/bintrie/commit.h), checked after every commit against the
// in-memory binary trie's root (bintrie::batch_root) of the expected leaves (differential),
// plus reopen + verify + every account and slot read back, at GD 5 / 2 (4 KiB pages) and
// GD 8 (16 KiB pages; a full root group stays one record of 256 children); commits SIGKILLed
// at random points in a forked child always reopen at one of the chain's roots and verify. RocksDB (blobs keyed by
// path, one WriteBatch per block): the same blocks give the arena store's root block by
// block, the database verifies and reads back, and holds exactly its live nodes (every key
// but the commit record is a node verify reached: replaced and moved nodes were deleted).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <map>
#include <random>

#include "../persist_mpt_test_util.h"
#include "tests/engine/persist/bintrie_full_group.h"
#include "tests/engine/persist/bintrie_test_options.h"
#include "tests/engine/persist/kill_child.h"
#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/persist/bintrie/commit.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/tree_db.h"
#include "kernels/keccak256.h"

using namespace pmpt_test;

namespace {

void code_hash(const uint8_t* code, size_t len, uint8_t* out) { kernels::keccak256(code, len, out); }

// The expected state: every leaf (go-ethereum's rules: a storage write of zero is a present
// zero leaf; nothing is removed), and per account its fields and storage for read-back.
struct Model {
  bintrie::KeyScheme ks;
  std::map<bintrie::Hash32, bintrie::Hash32> leaves;
  std::map<state::Address, state::Account> accounts;  // storage: every slot written (zeros included)
  std::map<state::Address, bool> has_fields;           // basic-data leaf present

  bintrie::Hash32 root() const {
    std::vector<bintrie::Entry> e;
    for (const auto& [k, v] : leaves) e.push_back({k, v});
    return bintrie::batch_root(ks.hasher, e);
  }
  void set_fields(const state::Address& addr) {
    state::Account a = accounts[addr];
    a.storage.clear();
    std::vector<bintrie::Entry> e;
    bintrie::Hash32 ch;
    code_hash(a.code.data(), a.code.size(), ch.data());
    bintrie::append_account_leaves(ks, addr, a, ch, &e);
    for (const bintrie::Entry& x : e) leaves[x.key] = x.value;
    has_fields[addr] = true;
  }
  void apply(const state::StateDiff& d) {
    for (const state::AccountDiff& a : d.accounts) {
      state::Account& acc = accounts[a.address];
      if (a.nonce) acc.nonce = *a.nonce;
      if (a.balance) acc.balance = *a.balance;
      if (a.code) acc.code = *a.code;
      if (a.nonce || a.balance || a.code) set_fields(a.address);
      for (const auto& [slot, v] : a.storage_writes) {
        leaves[bintrie::storage_slot_key(ks, a.address, slot)] = v;
        acc.storage[slot] = v;
      }
    }
  }
};

Model model_of(const bintrie::Hasher& h, const state::Allocation& a) {
  Model m{bintrie::KeyScheme{h, bintrie::TreeIndexEndian::big}, {}, {}, {}};
  for (const bintrie::Entry& e : bintrie::allocation_leaves(m.ks, a, code_hash)) m.leaves[e.key] = e.value;
  for (const auto& [addr, acc] : a.accounts) {
    state::Account x = acc;
    for (auto it = x.storage.begin(); it != x.storage.end();)
      it = it->second == state::Hash32{} ? x.storage.erase(it) : std::next(it);
    m.accounts[addr] = std::move(x);
    m.has_fields[addr] = true;
  }
  return m;
}

// A random block: field changes, new accounts, code, slot updates, deletes (zero), new slots
// (small ones into the header stem, random ones: new stems that split existing positions),
// zero writes of absent slots, duplicate writes.
state::StateDiff random_diff(std::mt19937_64& rng, const Model& m) {
  std::vector<const state::Address*> addrs;
  for (const auto& [addr, acc] : m.accounts) addrs.push_back(&addr);
  state::StateDiff d;
  const int touched = 1 + int(rng() % 12);
  for (int t = 0; t < touched; ++t) {
    state::AccountDiff a;
    const bool fresh = rng() % 6 == 0;
    if (fresh) for (auto& b : a.address) b = uint8_t(rng());
    else a.address = *addrs[rng() % addrs.size()];
    if (fresh || rng() % 3 == 0) a.nonce = rng() % 1000;
    if (rng() % 3 == 0) {
      state::U256 bal{};
      for (int k = 24; k < 32; ++k) bal[k] = uint8_t(rng());
      a.balance = bal;
    }
    if (rng() % 20 == 0) a.code = std::vector<uint8_t>(1 + rng() % 200, uint8_t(rng()));
    std::vector<state::Hash32> existing;
    if (!fresh)
      for (const auto& [slot, v] : m.accounts.at(a.address).storage) existing.push_back(slot);
    const int n = int(rng() % 30);
    for (int k = 0; k < n; ++k) {
      const int what = int(rng() % 10);
      state::Hash32 slot{};
      if (what < 4 && !existing.empty()) {
        a.storage_writes.push_back({existing[rng() % existing.size()], random_value(rng)});
      } else if (what < 6 && !existing.empty()) {
        a.storage_writes.push_back({existing[rng() % existing.size()], state::Hash32{}});
      } else if (what == 6) {
        for (auto& b : slot) b = uint8_t(rng());
        a.storage_writes.push_back({slot, state::Hash32{}});
      } else {
        if (rng() % 2) slot[31] = uint8_t(rng());
        else for (auto& b : slot) b = uint8_t(rng());
        a.storage_writes.push_back({slot, random_value(rng)});
      }
    }
    if (!a.nonce && !a.balance && !a.code && a.storage_writes.empty()) a.nonce = 7;
    d.accounts.push_back(std::move(a));
  }
  return d;
}

DbOptions bt_options(const std::string& dir, unsigned gd, uint32_t page, StoreKind store = StoreKind::arena) {
  return persist::test::bintrie_options(dir, gd, page, store);
}

// RocksDB: keys in the database other than the commit record (verify counts the nodes it
// reaches, and checks them against the manifest's node count).
uint64_t rocks_node_keys(const DbOptions& o) {
  DbFiles files;
  REQUIRE(DbFiles::for_read(o, &files).message() == "");
  uint64_t n = 0;
  REQUIRE(files.rocks->for_each([&](std::string_view k, std::string_view) { n += k != persist::kRocksCommitKey; })
              .message() == "");
  return n;
}

// Reopens the database: root, verify (every leaf counted), every account and slot read back.
void check_db(const DbOptions& o, const Model& m) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  CHECK(db->manifest().root_hash == m.root());
  CHECK(db->manifest().key_count == m.leaves.size());
  persist::VerifyReport vr;
  REQUIRE(db->verify(&vr).message() == "");
  CHECK(vr.leaves == m.leaves.size());
  CHECK(vr.nodes == db->manifest().node_count);
  if (o.store == StoreKind::rocksdb) CHECK(rocks_node_keys(o) == vr.nodes);
  std::vector<state::StateKey> keys;
  for (const auto& [addr, acc] : m.accounts) {
    keys.push_back({addr, std::nullopt});
    for (const auto& [slot, v] : acc.storage) keys.push_back({addr, slot});
  }
  std::vector<persist::LookupAnswer> ans;
  persist::LookupStats ls;
  REQUIRE(db->lookup(keys, &ans, &ls).message() == "");
  size_t bad = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const state::Account& acc = m.accounts.at(keys[i].address);
    const bool fields = m.has_fields.count(keys[i].address) != 0;
    if (keys[i].slot) {  // a slot key's answer holds the slot only
      if (!ans[i].slot_value || *ans[i].slot_value != acc.storage.at(*keys[i].slot)) ++bad;
      continue;
    }
    if (ans[i].account.exists != fields) ++bad;
    if (fields && (ans[i].account.nonce != acc.nonce || ans[i].account.balance != acc.balance)) ++bad;
  }
  CHECK(bad == 0);
}

void run_diffs(unsigned gd, uint32_t page, uint64_t seed, int blocks) {
  TempDir dir("btcommit_gd" + std::to_string(gd));
  const DbOptions o = bt_options(dir.path, gd, page);
  const state::Allocation a = random_alloc(seed, 100, 5, 300);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(persist::build_db(o, src, &rep).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a);
  REQUIRE(rep.root == m.root());
  std::mt19937_64 rng(seed * 7 + 1);
  uint64_t released = 0, reused_pages = 0;
  for (int round = 0; round < 2; ++round) {  // round 1: a fresh committer over the reopened files
    DbFiles files;
    REQUIRE(DbFiles::for_commit(o, &files).message() == "");
    persist::BintrieCommitter c(files);
    for (int b = 0; b < blocks; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      m.apply(d);
      persist::BintrieCommitStats st;
      REQUIRE(c.commit(d, kTestSpec, &st).message() == "");
      const bintrie::Hash32 want = m.root();
      REQUIRE(st.root == want);
      CHECK(files.manifest.root_hash == want);
      CHECK(files.manifest.key_count == m.leaves.size());
      released += st.pages_released;
      reused_pages += st.records_read > st.records_superseded;
      if (b % 10 == 9) check_db(o, m);
    }
    // An empty diff keeps the root.
    persist::BintrieCommitStats st;
    REQUIRE(c.commit(state::StateDiff{}, kTestSpec, &st).message() == "");
    CHECK(st.root == m.root());
    CHECK(st.records_written == 0);
  }
  check_db(o, m);
  CHECK(released > 0);
}

// The same diffs committed to an arena and a RocksDB database: equal roots block by block.
void run_diffs_both(unsigned gd, uint32_t page, uint64_t seed, int blocks) {
  TempDir dir_a("btcommit_rocks_a" + std::to_string(gd)), dir_r("btcommit_rocks_r" + std::to_string(gd));
  const DbOptions oa = bt_options(dir_a.path, gd, page), orr = bt_options(dir_r.path, gd, page, StoreKind::rocksdb);
  const state::Allocation a = random_alloc(seed, 100, 5, 300);
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(oa, src, nullptr).message() == "");
  REQUIRE(persist::build_db(orr, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a);
  std::mt19937_64 rng(seed * 7 + 1);
  uint64_t deleted = 0;
  for (int round = 0; round < 2; ++round) {  // round 1: fresh committers over the reopened files
    DbFiles fa, fr;
    REQUIRE(DbFiles::for_commit(oa, &fa).message() == "");
    REQUIRE(DbFiles::for_commit(orr, &fr).message() == "");
    persist::BintrieCommitter ca(fa), cr(fr);
    for (int b = 0; b < blocks; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      m.apply(d);
      persist::BintrieCommitStats sa, sr;
      REQUIRE(ca.commit(d, kTestSpec, &sa).message() == "");
      REQUIRE(cr.commit(d, kTestSpec, &sr).message() == "");
      REQUIRE(sa.root == m.root());
      REQUIRE(sr.root == sa.root);
      CHECK(fr.manifest.key_count == m.leaves.size());
      CHECK(sr.records_read == sr.pages_read);  // one key per node read
      deleted += sr.keys_deleted;
      if (b % 10 == 9) check_db(orr, m);
    }
    persist::BintrieCommitStats st;
    REQUIRE(cr.commit(state::StateDiff{}, kTestSpec, &st).message() == "");
    CHECK(st.root == m.root());
    CHECK(st.records_written == 0);
  }
  check_db(orr, m);
  CHECK(deleted > 0);
}

// The longest bit prefix two of `keys` share (their first 31 bytes, the stems).
unsigned longest_shared_stem_prefix(std::vector<bintrie::Hash32> keys) {
  std::sort(keys.begin(), keys.end());
  unsigned best = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    unsigned bits = 0;
    while (bits < 248 && ((keys[i - 1][bits / 8] ^ keys[i][bits / 8]) & (0x80 >> (bits % 8))) == 0) ++bits;
    if (bits < 248) best = std::max(best, bits);  // 248: the same stem
  }
  return best;
}

// Blocks of many new stems (pairs of them sharing 20 bits and more: new groups nested many
// levels deep, of every height) together with changes to shallow existing stems (header
// stems of built accounts). The commit hashes its new groups level by level, children before
// parents; a wrong level order (a parent's entry read before its new child is hashed) or a
// digest copied into the wrong entry changes the root.
void run_deep_blocks(unsigned gd, uint32_t page, uint64_t seed, StoreKind store,
                     bintrie::HashKind hash = bintrie::HashKind::sha256) {
  TempDir dir("btcommit_deep" + std::to_string(gd));
  DbOptions o = bt_options(dir.path, gd, page, store);
  o.params.hash_kind = hash;
  const state::Allocation a = random_alloc(seed, 30, 3, 20);
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(hash), a);
  std::mt19937_64 rng(seed * 3 + 5);
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  persist::BintrieCommitter c(files);
  for (int b = 0; b < 3; ++b) {
    state::StateDiff d;
    std::vector<bintrie::Hash32> new_keys;
    for (int t = 0; t < 4; ++t) {
      state::AccountDiff ad;
      for (auto& x : ad.address) x = uint8_t(rng());
      ad.nonce = uint64_t(b + 1);
      for (int k = 0; k < 1000; ++k) {
        state::Hash32 slot{};
        for (auto& x : slot) x = uint8_t(rng());
        ad.storage_writes.push_back({slot, random_value(rng)});
        new_keys.push_back(bintrie::storage_slot_key(m.ks, ad.address, slot));
      }
      d.accounts.push_back(std::move(ad));
    }
    for (size_t i = 0; i < 3; ++i) {  // shallow: built accounts' header stems
      state::AccountDiff ad;
      ad.address = a.accounts[(size_t(b) * 3 + i) % a.accounts.size()].first;
      ad.nonce = uint64_t(1000 + b);
      d.accounts.push_back(std::move(ad));
    }
    CHECK(longest_shared_stem_prefix(new_keys) >= 20);
    m.apply(d);
    persist::BintrieCommitStats st;
    REQUIRE(c.commit(d, kTestSpec, &st).message() == "");
    REQUIRE(st.root == m.root());
  }
  check_db(o, m);
}

}  // namespace

TEST_CASE("bintrie commit: blocks of deep and shallow new stems at GD 1, 2, 5, 8, RocksDB at GD 3, BLAKE3 at GD 4") {
  run_deep_blocks(1, 4096, 41, StoreKind::arena);
  run_deep_blocks(2, 4096, 42, StoreKind::arena);
  run_deep_blocks(5, 4096, 43, StoreKind::arena);
  run_deep_blocks(8, 16384, 44, StoreKind::arena);
  run_deep_blocks(3, 4096, 45, StoreKind::rocksdb);
  run_deep_blocks(4, 4096, 46, StoreKind::arena, bintrie::HashKind::blake3);
}

TEST_CASE("bintrie commit, RocksDB: the arena store's roots block by block; verify, read back, no orphan keys") {
  run_diffs_both(5, 4096, 31, 30);
  run_diffs_both(2, 4096, 32, 15);
  run_diffs_both(8, 16384, 33, 15);
}

TEST_CASE("bintrie commit, RocksDB: an empty database takes blocks; the root stem moves down as it splits") {
  TempDir dir("btcommit_rocks_empty");
  const DbOptions o = bt_options(dir.path, 5, 4096, StoreKind::rocksdb);
  state::Allocation none;
  state::AllocationSource src(none, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), none);
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  persist::BintrieCommitter c(files);
  std::mt19937_64 rng(3);
  for (int b = 0; b < 8; ++b) {
    state::StateDiff d;
    state::AccountDiff a;
    for (auto& x : a.address) x = uint8_t(rng());
    a.nonce = uint64_t(b + 1);
    if (b % 2) a.storage_writes.push_back({state::Hash32{}, random_value(rng)});
    d.accounts.push_back(a);
    m.apply(d);
    persist::BintrieCommitStats st;
    REQUIRE(c.commit(d, kTestSpec, &st).message() == "");
    REQUIRE(st.root == m.root());
    check_db(o, m);
  }
}

// A block that writes the values the state holds (its slots and its nonce again) changes no
// hash: every record read is kept, nothing is written or superseded; then one real change
// writes and supersedes what it replaces, and the database still verifies.
void run_unchanged_block(StoreKind store) {
  TempDir dir("btcommit_same");
  const DbOptions o = bt_options(dir.path, 5, 4096, store);
  const state::Allocation a = random_alloc(77, 60, 5, 200);
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a);
  state::StateDiff same;
  for (const auto& [addr, acc] : m.accounts) {
    if (acc.storage.empty()) continue;
    state::AccountDiff d;
    d.address = addr;
    d.nonce = acc.nonce;
    for (const auto& [slot, v] : acc.storage) d.storage_writes.push_back({slot, v});
    same.accounts.push_back(std::move(d));
    if (same.accounts.size() == 3) break;
  }
  REQUIRE(same.accounts.size() == 3);
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  persist::BintrieCommitter c(files);
  persist::BintrieCommitStats st;
  REQUIRE(c.commit(same, kTestSpec, &st).message() == "");
  CHECK(st.root == m.root());
  CHECK(st.records_read > 0);
  CHECK(st.records_written == 0);
  CHECK(st.records_superseded == 0);
  CHECK(st.keys_deleted == 0);
  state::StateDiff changed = same;
  changed.accounts[0].storage_writes[0].second[0] ^= 0x5a;
  m.apply(changed);
  REQUIRE(c.commit(changed, kTestSpec, &st).message() == "");
  CHECK(st.root == m.root());
  CHECK(st.records_written > 0);
  CHECK(st.records_superseded > 0);
  CHECK(st.records_superseded <= st.records_read);
  check_db(o, m);
}

TEST_CASE("bintrie commit: a block that writes the values the state holds keeps every record (arena, RocksDB)") {
  run_unchanged_block(StoreKind::arena);
  run_unchanged_block(StoreKind::rocksdb);
}

TEST_CASE("bintrie commit: random block diffs match the in-memory root; reopen, verify, read back (GD 5)") {
  run_diffs(5, 4096, 11, 30);
}

TEST_CASE("bintrie commit: random block diffs at GD 2 and GD 8 (16 KiB pages)") {
  run_diffs(2, 4096, 12, 20);
  run_diffs(8, 16384, 13, 20);
}

TEST_CASE("bintrie commit: a full GD-8 group stays one record of 256 children across blocks") {
  TempDir dir("btcommit_full_group");
  const DbOptions o = bt_options(dir.path, 8, 16384);
  // 256 accounts (3 of them contracts with storage) whose header stems start with every byte
  // value: the root group is full.
  state::Allocation a = random_alloc(14, 256, 3, 100);
  const bintrie::KeyScheme ks{bintrie::make_hasher(bintrie::HashKind::sha256), bintrie::TreeIndexEndian::big};
  const std::vector<state::Address> addrs = persist::test::full_root_group_addresses(ks, 14);
  for (size_t i = 0; i < addrs.size(); ++i) a.accounts[i].first = addrs[i];
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a);
  persist::test::RecordCensus c = persist::test::record_census(o);
  CHECK(c.root_kind == persist::bintrie_disk::kGroup);
  CHECK(c.root_children == 256);
  std::mt19937_64 rng(15);
  {
    DbFiles files;
    REQUIRE(DbFiles::for_commit(o, &files).message() == "");
    persist::BintrieCommitter committer(files);
    for (int b = 0; b < 6; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      m.apply(d);
      persist::BintrieCommitStats st;
      REQUIRE(committer.commit(d, kTestSpec, &st).message() == "");
      REQUIRE(st.root == m.root());
      c = persist::test::record_census(o);
      CHECK(c.root_kind == persist::bintrie_disk::kGroup);
      CHECK(c.root_children == 256);
      CHECK(c.records == files.manifest.node_count);  // one record per node
    }
  }
  check_db(o, m);
}

TEST_CASE("bintrie commit: an empty database takes blocks; the first stem is the root, then splits") {
  TempDir dir("btcommit_empty");
  const DbOptions o = bt_options(dir.path, 5, 4096);
  state::Allocation none;
  state::AllocationSource src(none, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), none);
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  persist::BintrieCommitter c(files);
  std::mt19937_64 rng(3);
  for (int b = 0; b < 6; ++b) {
    state::StateDiff d;
    state::AccountDiff a;
    for (auto& x : a.address) x = uint8_t(rng());
    a.nonce = uint64_t(b + 1);
    if (b % 2) a.storage_writes.push_back({state::Hash32{}, random_value(rng)});
    d.accounts.push_back(a);
    m.apply(d);
    persist::BintrieCommitStats st;
    REQUIRE(c.commit(d, kTestSpec, &st).message() == "");
    REQUIRE(st.root == m.root());
  }
  check_db(o, m);
}

// Destroyed accounts follow account_leaves.h's rule (bintrie_account_rule_test);
// a diff that does not fit the basic-data layout still is, with nothing published.
TEST_CASE("bintrie commit: a balance over 128 bits is refused, nothing published") {
  TempDir dir("btcommit_refuse");
  const DbOptions o = bt_options(dir.path, 5, 4096);
  const state::Allocation a = random_alloc(21, 20, 2, 20);
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  const auto root = files.manifest.root_hash;
  persist::BintrieCommitter c(files);
  state::StateDiff d;
  d.accounts.push_back({});
  d.accounts[0].address = a.accounts[0].first;
  d.accounts[0].balance = state::U256{};
  (*d.accounts[0].balance)[15] = 1;  // 2^128
  d.accounts[0].storage_writes.push_back({state::Hash32{}, state::Hash32{1}});  // a valid write in the same diff
  persist::BintrieCommitStats st;
  CHECK(c.commit(d, kTestSpec, &st).message().find("128 bits") != std::string::npos);
  CHECK(files.manifest.root_hash == root);
  check_db(o, model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a));
}

namespace {
void crash_rounds(StoreKind store) {
  TempDir dir(std::string("btcommit_crash_") + persist::store_kind_name(store));
  const DbOptions o = bt_options(dir.path, 5, 4096, store);
  const state::Allocation a = random_alloc(81, 100, 5, 300);
  state::AllocationSource src(a, kTestSpec);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  std::mt19937_64 rng(17);
  Model m = model_of(bintrie::make_hasher(bintrie::HashKind::sha256), a);
  std::vector<state::StateDiff> diffs;
  std::vector<Model> models{m};
  std::vector<bintrie::Hash32> roots{m.root()};
  for (int i = 0; i < 30; ++i) {
    diffs.push_back(random_diff(rng, m));
    m.apply(diffs.back());
    models.push_back(m);
    roots.push_back(m.root());
  }
  auto run_commits = [&](const DbOptions& opt, size_t from, size_t count) {
    DbFiles files;
    if (!DbFiles::for_commit(opt, &files).ok()) return false;
    persist::BintrieCommitter c(files);
    for (size_t i = from; i < std::min(from + count, diffs.size()); ++i)
      if (!c.commit(diffs[i], kTestSpec, nullptr).ok()) return false;
    return true;
  };
  uint64_t probe_us = 0;  // three commits (scales the kill points; ASan is slower)
  {
    TempDir probe("btcommit_crash_probe");
    std::filesystem::copy(dir.path, probe.path, std::filesystem::copy_options::recursive);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(run_commits(bt_options(probe.path, 5, 4096, store), 0, 3));
    probe_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  size_t at = 0;
  int kills = 0, moved = 0;
  std::mt19937_64 krng(23);
  for (int round = 0; round < 12 && at < diffs.size(); ++round) {
    kills += test::run_killed(krng() % (probe_us + 2000), [&] { return run_commits(o, at, 3); });
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(persist::open_db(o, &db).message() == "");
    const auto r = db->manifest().root_hash;
    size_t found = roots.size();
    for (size_t i = at; i < roots.size() && i <= at + 3; ++i)
      if (roots[i] == r) found = i;
    REQUIRE(found < roots.size());  // the old root or one of the new ones
    moved += found > at;
    at = found;
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).message() == "");
    CHECK(vr.leaves == models[at].leaves.size());
  }
  check_db(o, models[at]);
  MESSAGE("bintrie " << std::string(persist::store_kind_name(store)) << " commit crash rounds: " << kills
                     << " killed, state advanced in " << moved << " rounds, at commit " << at);
}
}  // namespace

TEST_CASE("bintrie commit: a commit killed at random points reopens at a committed root and verifies") {
  crash_rounds(StoreKind::arena);
}

TEST_CASE("bintrie commit, RocksDB: a commit killed at random points reopens at a committed root and verifies") {
  crash_rounds(StoreKind::rocksdb);
}
