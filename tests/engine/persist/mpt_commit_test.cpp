// mpt_commit_test: block diffs applied to an MPT database as commits (engine/persist/mpt/commit.h),
// checked against engine/mpt's in-memory root of the same state after every commit
// (differential), plus reopen + verify + every key read back; and commits SIGKILLed at
// random points in a child process always reopen at a committed root. Arena store
// (copy-on-write pages) and RocksDB (one WriteBatch per block): the same blocks give the
// same roots in both, block by block, and a RocksDB database after its commits holds
// exactly the nodes a fresh build of the same state writes (no orphan left undeleted).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "../persist_mpt_test_util.h"
#include "tests/engine/persist/kill_child.h"
#include "engine/mpt/state.h"
#include "engine/persist/mpt/commit.h"
#include "workloads/synthetic_state.h"

using namespace pmpt_test;

namespace {

// The expected state: address -> account, storage without zero values.
using Model = std::map<state::Address, state::Account>;

Model model_of(const state::Allocation& a) {
  Model m;
  for (const auto& [addr, acc] : a.accounts) {
    state::Account x = acc;
    for (auto it = x.storage.begin(); it != x.storage.end();)
      it = mpt::is_zero(it->second) ? x.storage.erase(it) : std::next(it);
    m[addr] = std::move(x);
  }
  return m;
}

state::Allocation alloc_of(const Model& m) {
  state::Allocation a;
  for (const auto& [addr, acc] : m) a.accounts.emplace_back(addr, acc);
  return a;
}

void apply_diff(Model& m, const state::StateDiff& d) {
  for (const state::AccountDiff& a : d.accounts) {
    if (a.destroyed) {
      m.erase(a.address);
      if (!a.nonce && !a.balance && !a.code && a.storage_writes.empty()) continue;
    }
    state::Account& acc = m[a.address];
    if (a.nonce) acc.nonce = *a.nonce;
    if (a.balance) acc.balance = *a.balance;
    if (a.code) acc.code = *a.code;
    for (const auto& [slot, v] : a.storage_writes) {
      if (mpt::is_zero(v)) acc.storage.erase(slot);
      else acc.storage[slot] = v;
    }
  }
}

// A random block: balance/nonce changes, new accounts, updates, deletes (some contracts lose
// most or all of their slots: branches collapse, tries empty), new slots (leaves and
// extensions split), deletes of absent slots and duplicate writes.
state::StateDiff random_diff(std::mt19937_64& rng, const Model& m) {
  std::vector<const state::Address*> addrs;
  for (const auto& [addr, acc] : m) addrs.push_back(&addr);
  state::StateDiff d;
  const int touched = 1 + int(rng() % 12);
  for (int t = 0; t < touched; ++t) {
    state::AccountDiff a;
    if (rng() % 8 == 0 || addrs.empty()) {
      for (auto& b : a.address) b = uint8_t(rng());
    } else {
      a.address = *addrs[rng() % addrs.size()];
    }
    if (rng() % 2) a.nonce = rng() % 1000;
    if (rng() % 2) {
      state::U256 bal{};
      if (rng() % 4) for (int k = 24; k < 32; ++k) bal[k] = uint8_t(rng());
      a.balance = bal;
    }
    if (rng() % 16 == 0) a.code = std::vector<uint8_t>(1 + rng() % 40, uint8_t(rng()));
    auto it = m.find(a.address);
    const std::map<state::Hash32, state::Hash32>* st = it == m.end() ? nullptr : &it->second.storage;
    const int mode = int(rng() % 10);
    std::vector<state::Hash32> existing;
    if (st) for (const auto& [slot, v] : *st) existing.push_back(slot);
    if (mode == 0 && !existing.empty()) {
      // Wipe most or all of the storage.
      const bool all = rng() % 2;
      for (const auto& s : existing)
        if (all || rng() % 8) a.storage_writes.push_back({s, state::Hash32{}});
    } else if (mode < 8) {
      const int n = int(rng() % 40);
      for (int k = 0; k < n; ++k) {
        const int what = int(rng() % 10);
        state::Hash32 slot{};
        if (what < 4 && !existing.empty()) {
          slot = existing[rng() % existing.size()];  // update
          a.storage_writes.push_back({slot, random_value(rng)});
        } else if (what < 7 && !existing.empty()) {
          slot = existing[rng() % existing.size()];  // delete
          a.storage_writes.push_back({slot, state::Hash32{}});
        } else if (what == 7) {
          for (auto& b : slot) b = uint8_t(rng());  // delete of an absent slot
          a.storage_writes.push_back({slot, state::Hash32{}});
        } else {
          if (rng() % 2) slot[31] = uint8_t(rng());
          else for (auto& b : slot) b = uint8_t(rng());
          a.storage_writes.push_back({slot, random_value(rng)});  // new (or an update)
        }
      }
    }
    if (rng() % 25 == 0) a.destroyed = true;  // alone: the account goes; with writes: recreated
    if (!a.destroyed && !a.nonce && !a.balance && !a.code && a.storage_writes.empty()) a.nonce = 7;
    d.accounts.push_back(std::move(a));
  }
  return d;
}

std::vector<state::StateKey> keys_of(const Model& m) {
  std::vector<state::StateKey> keys;
  for (const auto& [addr, acc] : m) {
    keys.push_back({addr, std::nullopt});
    for (const auto& [slot, v] : acc.storage) keys.push_back({addr, slot});
  }
  return keys;
}

// Reopens the database and checks it against the model: root, verify (counts), every key.
void check_db(const DbOptions& o, const Model& m, const mpt::Hash32& root) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).message() == "");
  CHECK(db->manifest().root_hash == root);
  persist::VerifyReport vr;
  REQUIRE(db->verify(&vr).message() == "");
  uint64_t slots = 0;
  for (const auto& [addr, acc] : m) slots += acc.storage.size();
  CHECK(vr.accounts == m.size());
  CHECK(vr.slots == slots);
  const std::vector<state::StateKey> keys = keys_of(m);
  std::vector<persist::LookupAnswer> ans;
  persist::LookupStats ls;
  REQUIRE(db->lookup(keys, &ans, &ls).message() == "");
  size_t bad = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const state::Account& acc = m.at(keys[i].address);
    if (!ans[i].account.exists || ans[i].account.nonce != acc.nonce || ans[i].account.balance != acc.balance) ++bad;
    if (keys[i].slot && (!ans[i].slot_value || *ans[i].slot_value != acc.storage.at(*keys[i].slot))) ++bad;
  }
  CHECK(bad == 0);
}

struct CommitDb {
  DbFiles files;
  std::unique_ptr<persist::MptCommitter> committer;
  explicit CommitDb(const DbOptions& o) {
    REQUIRE(DbFiles::for_commit(o, &files).message() == "");
    committer = std::make_unique<persist::MptCommitter>(files);
  }
};

// Every key and value of a RocksDB database but its commit record.
std::map<std::string, std::string> rocks_nodes(const DbOptions& o) {
  DbFiles files;
  REQUIRE(DbFiles::for_read(o, &files).message() == "");
  std::map<std::string, std::string> out;
  REQUIRE(files.rocks->for_each([&](std::string_view k, std::string_view v) {
                        if (k != persist::kRocksCommitKey) out.emplace(k, v);
                      }).message() == "");
  return out;
}

// The RocksDB database holds exactly what a fresh RocksDB build of the model's state holds.
void check_rocks_like_fresh_build(const DbOptions& o, const Model& m) {
  TempDir fresh("commit_rocks_fresh");
  const DbOptions fo = mpt_options(fresh.path, StoreKind::rocksdb);
  const state::Allocation a = alloc_of(m);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(build(fo, src, &rep).message() == "");
  const auto got = rocks_nodes(o), want = rocks_nodes(fo);
  CHECK(got.size() == want.size());
  CHECK(got == want);
}

// The database at o built from random_alloc(seed, 200, 6, 400); returns its state.
Model build_random_state(const DbOptions& o, uint64_t seed) {
  const state::Allocation a = build_random(o, seed, 200, 6, 400);
  return model_of(a);
}

}  // namespace

TEST_CASE("mpt commit: random block diffs match engine/mpt's root; the database reopens, verifies and reads back") {
  TempDir dir("commit_diff");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  Model m = build_random_state(o, 71);
  std::mt19937_64 rng(5);
  uint64_t released = 0, commits_with_sibling_reads = 0, written = 0;
  const int blocks = 40;
  {
    CommitDb c(o);
    for (int b = 0; b < blocks; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      apply_diff(m, d);
      persist::MptCommitStats st;
      REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
      const mpt::Hash32 want = mpt::allocation_root(alloc_of(m));
      REQUIRE(st.root == want);
      CHECK(c.files.manifest.root_hash == want);
      released += st.pages_released;
      commits_with_sibling_reads += st.sibling_reads > 0;
      written += st.pages_written;
      if (b % 8 == 7) check_db(o, m, want);
    }
  }
  check_db(o, m, mpt::allocation_root(alloc_of(m)));
  // A fresh committer (no memory of earlier dead records) continues from the reopened state.
  {
    CommitDb c(o);
    for (int b = 0; b < 5; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      apply_diff(m, d);
      persist::MptCommitStats st;
      REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
      REQUIRE(st.root == mpt::allocation_root(alloc_of(m)));
    }
  }
  check_db(o, m, mpt::allocation_root(alloc_of(m)));
  MESSAGE("commits: " << blocks << ", pages written " << written << ", released " << released
                      << ", commits that read collapse siblings " << commits_with_sibling_reads);
  CHECK(released > 0);
  CHECK(commits_with_sibling_reads > 0);  // the random deletes did make collapses read siblings
}

// The commit hashes its new records in batches of ready ones inside the encoding pass; a
// block of many times one batch has digests that reach their parent before it is encoded and
// digests patched into a parent encoded earlier, and must still give engine/mpt's root.
TEST_CASE("mpt commit: a block of thousands of new records (many hash batches) matches engine/mpt's root") {
  TempDir dir("commit_big_block");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  Model m = build_random_state(o, 72);
  std::mt19937_64 rng(9);
  CommitDb c(o);
  for (int b = 0; b < 3; ++b) {
    state::StateDiff d;
    for (int t = 0; t < 3; ++t) {  // existing accounts and a new one, 1,500 new or updated slots each
      state::AccountDiff& ad = d.accounts.emplace_back();
      if (t < 2) ad.address = std::next(m.begin(), long(rng() % m.size()))->first;
      else for (auto& x : ad.address) x = uint8_t(rng());
      ad.nonce = rng() % 1000;
      for (int k = 0; k < 1500; ++k) {
        state::Hash32 slot;
        for (auto& x : slot) x = uint8_t(rng());
        ad.storage_writes.push_back({slot, random_value(rng)});
      }
    }
    apply_diff(m, d);
    persist::MptCommitStats st;
    REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
    REQUIRE(st.root == mpt::allocation_root(alloc_of(m)));
    CHECK(st.records_written > 20 * 128);
  }
  check_db(o, m, mpt::allocation_root(alloc_of(m)));
}

TEST_CASE("mpt commit: tries that shrink to one leaf, empty out, grow back; destroyed accounts") {
  TempDir dir("commit_small");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  state::Allocation a;
  state::Account c1;
  c1.code = {1, 2, 3};
  for (uint8_t k = 1; k <= 3; ++k) {
    state::Hash32 s{}, v{};
    s[31] = k;
    v[31] = uint8_t(k * 3);
    c1.storage[s] = v;
  }
  state::Address x{}, y{};
  x[0] = 1;
  y[0] = 2;
  state::Address z{};
  z[0] = 3;
  state::Account c2;
  c2.nonce = 9;
  for (int k = 0; k < 60; ++k) {  // a storage trie of several records
    state::Hash32 s{}, v{};
    s[0] = uint8_t(k);
    v[31] = uint8_t(k + 1);
    c2.storage[s] = v;
  }
  a.accounts.push_back({x, c1});
  a.accounts.push_back({y, state::Account{}});
  a.accounts.push_back({z, c2});
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(build(o, src, &rep).ok());
  Model m = model_of(a);
  auto slot = [](uint8_t k) {
    state::Hash32 s{};
    s[31] = k;
    return s;
  };
  std::vector<state::StateDiff> steps(6);
  steps[0].accounts.push_back({x, {}, {}, {}, {{slot(1), {}}, {slot(2), {}}}, false});   // one leaf left
  steps[1].accounts.push_back({x, {}, {}, {}, {{slot(3), {}}}, false});                  // storage empty
  steps[2].accounts.push_back({y, {}, {}, {}, {{slot(9), slot(4)}}, false});             // EOA gets storage
  steps[2].accounts.push_back({x, {}, {}, {}, {{slot(1), slot(5)}, {slot(2), slot(6)}}, false});
  steps[3].accounts.push_back({y, 5, {}, {}, {{slot(9), {}}}, false});
  steps[4].accounts.push_back({z, {}, {}, {}, {{slot(7), slot(8)}}, true});  // destroyed, recreated with one slot
  steps[5].accounts.push_back({z, {}, {}, {}, {}, true});                    // destroyed: gone
  steps[5].accounts.push_back({x, {}, {}, {}, {}, true});
  for (const state::StateDiff& d : steps) {
    CommitDb c(o);
    apply_diff(m, d);
    persist::MptCommitStats st;
    REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
    const mpt::Hash32 want = mpt::allocation_root(alloc_of(m));
    REQUIRE(st.root == want);
    check_db(o, m, want);
  }
}

namespace {
void crash_rounds(StoreKind store) {
  TempDir dir(std::string("commit_crash_") + persist::store_kind_name(store));
  const DbOptions o = mpt_options(dir.path, store);
  const state::Allocation a = build_random(o, 81, 200, 6, 300);
  // The chain of diffs and the roots after each prefix.
  std::mt19937_64 rng(17);
  Model m = model_of(a);
  std::vector<state::StateDiff> diffs;
  std::vector<mpt::Hash32> roots{mpt::allocation_root(alloc_of(m))};
  std::vector<Model> models{m};
  const int chain = 30;
  for (int i = 0; i < chain; ++i) {
    diffs.push_back(random_diff(rng, m));
    apply_diff(m, diffs.back());
    roots.push_back(mpt::allocation_root(alloc_of(m)));
    models.push_back(m);
  }
  auto run_commits = [&](size_t from, size_t count) {
    CommitDb c(o);
    for (size_t i = from; i < std::min<size_t>(from + count, diffs.size()); ++i) {
      persist::MptCommitStats st;
      if (!c.committer->commit(diffs[i], kTestSpec, &st).ok()) return false;
    }
    return true;
  };
  // How long three commits take here (scales the kill points; ASan is slower).
  uint64_t probe_us = 0;
  {
    TempDir probe("commit_crash_probe");
    std::filesystem::copy(dir.path, probe.path, std::filesystem::copy_options::recursive);
    const DbOptions po = mpt_options(probe.path, store);
    const auto t0 = std::chrono::steady_clock::now();
    CommitDb c(po);
    uint64_t relocated = 0;
    for (int i = 0; i < 3; ++i) {
      persist::MptCommitStats st;
      REQUIRE(c.committer->commit(diffs[i], kTestSpec, &st).ok());
      relocated += st.records_relocated;
    }
    probe_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    // Arena: the commits killed below compact (on by default): kills land inside it too.
    if (store == StoreKind::arena) CHECK(relocated > 0);
  }
  size_t at = 0;
  int kills = 0, moved = 0;
  std::mt19937_64 krng(23);
  for (int round = 0; round < 14 && at < diffs.size(); ++round) {
    kills += test::run_killed(krng() % (probe_us + 2000), [&] { return run_commits(at, 3); });
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    const mpt::Hash32 r = db->manifest().root_hash;
    size_t found = roots.size();
    for (size_t i = at; i < roots.size() && i <= at + 3; ++i)
      if (roots[i] == r) found = i;
    REQUIRE(found < roots.size());  // the old root or one of the new ones
    moved += found > at;
    at = found;
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).message() == "");
    CHECK(vr.accounts == models[at].size());
  }
  check_db(o, models[at], roots[at]);
  if (store == StoreKind::rocksdb) check_rocks_like_fresh_build(o, models[at]);
  MESSAGE(std::string(persist::store_kind_name(store)) << " commit crash rounds: " << kills << " killed, state advanced in " << moved
                                          << " rounds, at commit " << at);
}
}  // namespace

TEST_CASE("mpt commit: a commit killed at random points reopens at a committed root and verifies") {
  crash_rounds(StoreKind::arena);
}

TEST_CASE("mpt commit, RocksDB: a commit killed at random points reopens at a committed root and verifies") {
  crash_rounds(StoreKind::rocksdb);
}

TEST_CASE("mpt commit: synthetic blocks; the spec names the state after them, which the database holds") {
  TempDir dir("commit_synth");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  state::SyntheticSpec spec{150, 5, 120, 4};
  spec.block_seed = 8;
  spec.block_writes = 64;
  state::SyntheticState live(spec);
  persist::BuildReport rep;
  REQUIRE(build(o, live, &rep).ok());
  {
    CommitDb c(o);
    state::StateDiff d;
    for (int b = 0; b < 6; ++b) {
      live.next_block(&d);
      persist::MptCommitStats st;
      REQUIRE(c.committer->commit(d, live.spec_json(), &st).message() == "");
      CHECK(st.slot_writes > 0);
    }
  }
  // The source the database names (what verify / get / read-bench recreate).
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).message() == "");
  auto parsed = state::parse_synthetic_spec(db->source_spec());
  REQUIRE(std::holds_alternative<state::SyntheticSpec>(parsed));
  CHECK(std::get<state::SyntheticSpec>(parsed).blocks == 6);
  state::SyntheticState named(std::get<state::SyntheticSpec>(parsed));
  const state::Allocation alloc = state::allocation_of(named);
  CHECK(db->manifest().root_hash == mpt::allocation_root(alloc));
  persist::VerifyReport vr;
  REQUIRE(db->verify(&vr).message() == "");
  CHECK(vr.slots == named.slot_count());
  CHECK(db->manifest().key_count == named.account_count() + named.slot_count());
  std::vector<state::StateKey> keys;
  std::vector<state::Hash32> want;
  for (uint64_t i = 0; i < 5; ++i)
    for (uint64_t j = 0; j < named.storage_size(i); j += 3) {
      keys.push_back(*named.slot_key(i, j));
      want.push_back(*named.slot_value(i, j));
    }
  std::vector<persist::LookupAnswer> ans;
  persist::LookupStats ls;
  REQUIRE(db->lookup(keys, &ans, &ls).message() == "");
  size_t bad = 0;
  for (size_t k = 0; k < keys.size(); ++k) bad += !ans[k].slot_value || *ans[k].slot_value != want[k];
  CHECK(bad == 0);
}

TEST_CASE("mpt commit: a damaged page on a dirty path fails the commit, which leaves the database as it was") {
  TempDir dir("commit_damage");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  const state::Allocation a = random_alloc(91, 120, 4, 200);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(build(o, src, &rep).ok());
  Model m = model_of(a);
  std::mt19937_64 rng(3);
  const state::StateDiff d = random_diff(rng, m);
  uint64_t root_page = 0, seq = 0;
  {
    DbFiles files;
    REQUIRE(DbFiles::for_read(o, &files).message() == "");
    root_page = persist::locator_page(files.commit.root);
    seq = files.manifest.commit_seq;
  }
  // Flip one byte of the root record's page (every commit reads it).
  const std::string arena = dir.path + "/pages.arena";
  const uint64_t off = root_page * 4096 + 100;
  auto flip = [&] {
    std::FILE* f = std::fopen(arena.c_str(), "r+b");
    REQUIRE(f);
    std::fseek(f, long(off), SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, long(off), SEEK_SET);
    std::fputc(c ^ 0x20, f);
    std::fclose(f);
  };
  flip();
  {
    CommitDb c(o);
    persist::MptCommitStats st;
    const io::Status s = c.committer->commit(d, kTestSpec, &st);
    CHECK(!s.ok());
    CHECK(s.message().find(std::to_string(root_page)) != std::string::npos);  // names the page
  }
  flip();  // repaired: the database is still at its old commit, and takes the block now
  {
    CommitDb c(o);
    CHECK(c.files.manifest.commit_seq == seq);
    CHECK(c.files.manifest.root_hash == rep.root);
    persist::MptCommitStats st;
    REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
  }
  apply_diff(m, d);
  check_db(o, m, mpt::allocation_root(alloc_of(m)));
}

TEST_CASE("mpt commit, RocksDB: the arena store's roots block by block; verify, read back, exactly a fresh build's nodes") {
  TempDir dir_a("commit_rocks_a"), dir_r("commit_rocks_r");
  const DbOptions oa = mpt_options(dir_a.path, StoreKind::arena), orr = mpt_options(dir_r.path, StoreKind::rocksdb);
  const state::Allocation a = random_alloc(71, 200, 6, 400);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(build(oa, src, &rep).ok());
  REQUIRE(build(orr, src, &rep).ok());
  Model m = model_of(a);
  std::mt19937_64 rng(5);
  uint64_t deleted = 0, commits_with_sibling_reads = 0;
  {
    CommitDb ca(oa), cr(orr);
    for (int b = 0; b < 40; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      apply_diff(m, d);
      persist::MptCommitStats sa, sr;
      REQUIRE(ca.committer->commit(d, kTestSpec, &sa).message() == "");
      REQUIRE(cr.committer->commit(d, kTestSpec, &sr).message() == "");
      const mpt::Hash32 want = mpt::allocation_root(alloc_of(m));
      REQUIRE(sa.root == want);
      REQUIRE(sr.root == want);
      CHECK(cr.files.manifest.root_hash == want);
      CHECK(cr.files.manifest.node_count == ca.files.manifest.node_count);
      CHECK(cr.files.manifest.key_count == ca.files.manifest.key_count);
      CHECK(sr.records_read == sa.records_read);  // the same dirty paths, read by key
      CHECK(sr.pages_written == 0);
      deleted += sr.keys_deleted;
      commits_with_sibling_reads += sr.sibling_reads > 0;
      if (b % 8 == 7) check_db(orr, m, want);
    }
  }
  check_db(orr, m, mpt::allocation_root(alloc_of(m)));
  check_rocks_like_fresh_build(orr, m);
  // A fresh committer continues from the reopened database.
  {
    CommitDb cr(orr);
    for (int b = 0; b < 5; ++b) {
      const state::StateDiff d = random_diff(rng, m);
      apply_diff(m, d);
      persist::MptCommitStats st;
      REQUIRE(cr.committer->commit(d, kTestSpec, &st).message() == "");
      REQUIRE(st.root == mpt::allocation_root(alloc_of(m)));
    }
  }
  check_db(orr, m, mpt::allocation_root(alloc_of(m)));
  check_rocks_like_fresh_build(orr, m);
  CHECK(deleted > 0);         // replaced nodes whose keys no new node took were deleted
  CHECK(commits_with_sibling_reads > 0);   // collapses read siblings by key
}

TEST_CASE("mpt commit, RocksDB: tries that shrink to one leaf, empty out, grow back; destroyed accounts") {
  TempDir dir("commit_rocks_small");
  const DbOptions o = mpt_options(dir.path, StoreKind::rocksdb);
  const state::Allocation a = build_random(o, 72, 40, 4, 120);
  Model m = model_of(a);
  // Each contract in turn loses all of its storage, gets one slot back, is destroyed with
  // and without a recreating write; an EOA gains storage.
  std::vector<state::StateDiff> steps;
  for (const auto& [addr, acc] : m) {
    if (acc.storage.empty()) continue;
    state::StateDiff wipe, one, destroy, gone;
    wipe.accounts.push_back({addr, {}, {}, {}, {}, false});
    for (const auto& [slot, v] : acc.storage) wipe.accounts[0].storage_writes.push_back({slot, state::Hash32{}});
    state::Hash32 s{}, v{};
    s[31] = 9;
    v[31] = 4;
    one.accounts.push_back({addr, {}, {}, {}, {{s, v}}, false});
    destroy.accounts.push_back({addr, {}, {}, {}, {{v, s}}, true});
    gone.accounts.push_back({addr, {}, {}, {}, {}, true});
    steps.push_back(wipe);
    steps.push_back(one);
    steps.push_back(destroy);
    steps.push_back(gone);
  }
  REQUIRE(steps.size() >= 8);
  for (const state::StateDiff& d : steps) {
    CommitDb c(o);
    apply_diff(m, d);
    persist::MptCommitStats st;
    REQUIRE(c.committer->commit(d, kTestSpec, &st).message() == "");
    REQUIRE(st.root == mpt::allocation_root(alloc_of(m)));
  }
  check_db(o, m, mpt::allocation_root(alloc_of(m)));
  check_rocks_like_fresh_build(o, m);
}

TEST_CASE("mpt commit, RocksDB: a crash after the batch, before the MANIFEST, reopens at the batch's commit") {
  TempDir dir("commit_rocks_manifest");
  const DbOptions o = mpt_options(dir.path, StoreKind::rocksdb);
  const state::Allocation a = build_random(o, 73, 60, 3, 100);
  Model m = model_of(a);
  std::mt19937_64 rng(9);
  const std::string manifest = dir.path + "/MANIFEST";
  const std::string before = [&] {
    std::ifstream in(manifest, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const state::StateDiff d = random_diff(rng, m);
  apply_diff(m, d);
  {
    CommitDb c(o);
    REQUIRE(c.committer->commit(d, kTestSpec, nullptr).message() == "");
  }
  {  // the MANIFEST as it was before the commit: the process died before publishing it
    std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
    out << before;
  }
  const mpt::Hash32 want = mpt::allocation_root(alloc_of(m));
  check_db(o, m, want);  // a reader: at the batch's commit
  {
    CommitDb c(o);  // a writer republishes the MANIFEST
    CHECK(c.files.manifest.root_hash == want);
    CHECK(c.files.manifest.commit_seq == 2);
  }
  io::FileManifestSlot slot(dir.path);
  io::Manifest mf;
  REQUIRE(slot.load(&mf).message() == "");
  CHECK(mf.root_hash == want);
  CHECK(mf.commit_seq == 2);
}

TEST_CASE("RocksDB commit batch: a node replaced and rewritten under the same key is only its put") {
  REQUIRE_MESSAGE(io::rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  TempDir dir("rocks_batch");
  io::RocksOptions o;
  o.dir = dir.path;
  std::unique_ptr<io::RocksKvStore> db;
  const io::Status opened = io::RocksKvStore::open(o, &db);
  REQUIRE_MESSAGE(opened.ok(), opened.message());
  persist::RocksCommitBatch batch(*db);
  batch.erase("A\x01\x02");  // replaced, its path rewritten by the commit
  batch.erase("A\x01\x03");  // replaced, its path gone
  batch.put("A\x01\x02", "new branch");
  batch.put("A\x01\x04", "new leaf");
  const std::vector<io::KvWrite> w = batch.writes();
  REQUIRE(w.size() == 3);
  CHECK((w[0].erase && w[0].key == "A\x01\x03"));
  CHECK((!w[1].erase && w[1].key == "A\x01\x02" && w[1].value == "new branch"));
  CHECK((!w[2].erase && w[2].key == "A\x01\x04"));
  CHECK(batch.net_deletes() == 1);
}
