// snapshot_commit_test: block commits keep the flat snapshot equal to the tree, in the same
// copy-on-write commit, on both trees: synthetic ERC20 blocks plus new accounts, slot
// deletes (MPT: removed; binary trie: present zero values) and destroyed accounts (MPT:
// recreated and gone); after every block verify compares every snapshot entry with the
// tree's leaves, the snapshot's lookups equal the tree's, and the roots equal those of the
// same blocks committed to a database without a snapshot. The replaced snapshot pages go
// back to free space: at the end the database holds the plain one's live pages plus the
// current snapshot's. Commits SIGKILLed at random points (a child process committing blocks
// to a database with a snapshot) always reopen at one of the committed roots with verify
// passing and the snapshot equal to the tree. The same on RocksDB (the snapshot's column
// family changes in the block's one synced WriteBatch), except the space check.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/commit.h"
#include "engine/persist/snapshot/db.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/snapshot/verify.h"
#include "engine/persist/tree_db.h"
#include "tests/engine/persist/kill_child.h"
#include "tests/engine/persist/snapshot_test_util.h"
#include "tests/io/io_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using namespace st::persist;

state::Hash32 word(uint64_t v) {
  state::Hash32 b{};
  for (int i = 0; i < 8; ++i) b[31 - i] = uint8_t(v >> (8 * i));
  return b;
}

// A committer of either tree over a database opened for commits.
struct Writer {
  DbFiles files;
  std::unique_ptr<MptCommitter> mpt;
  std::unique_ptr<BintrieCommitter> bintrie;
  Writer(const DbOptions& o) {
    REQUIRE(DbFiles::for_commit(o, &files).message() == "");
    if (o.params.tree_kind == io::TreeKind::mpt) mpt = std::make_unique<MptCommitter>(files);
    else bintrie = std::make_unique<BintrieCommitter>(files);
  }
  std::array<uint8_t, 32> commit(const state::StateDiff& d) {
    if (mpt) {
      MptCommitStats st;
      REQUIRE(mpt->commit(d, "{\"test\":1}", &st).message() == "");
      return st.root;
    }
    BintrieCommitStats st;
    REQUIRE(bintrie->commit(d, "{\"test\":1}", &st).message() == "");
    return st.root;
  }
};

}  // namespace

TEST_CASE("snapshot: block commits keep it equal to the tree, both trees, arena and RocksDB") {
  for (StoreKind store : {StoreKind::arena, StoreKind::rocksdb})
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(store_kind_name(store));
    CAPTURE(io::tree_kind_name(tree));
    auto options = [store](const std::string& dir, io::TreeKind t, bool snapshot) {
      return st::persist::test::options(dir, t, snapshot, store);
    };
    const bool is_mpt = tree == io::TreeKind::mpt;
    state::SyntheticSpec spec{300, 4, 200, 3};
    spec.block_seed = 11;
    spec.block_writes = 64;
    state::SyntheticState live(spec);
    st::io::test::TempDir with, without;
    REQUIRE(build_db(options(with.path(), tree, true), live, nullptr).ok());
    REQUIRE(build_db(options(without.path(), tree, false), live, nullptr).ok());
    Writer w(options(with.path(), tree, false)), plain(options(without.path(), tree, false));

    state::AccountRecord c1, c2, c3;
    live.account(1, &c1);
    live.account(2, &c2);
    live.account(3, &c3);
    for (int b = 0; b < 7; ++b) {
      CAPTURE(b);
      state::StateDiff d;
      live.next_block(&d);
      if (b == 1) {  // new accounts, one with storage
        for (uint64_t k = 0; k < 20; ++k) {
          state::AccountDiff a;
          a.address[0] = 0xee;
          a.address[19] = uint8_t(k);
          a.nonce = k + 1;
          if (k == 0)
            for (uint64_t s = 1; s <= 50; ++s) a.storage_writes.push_back({word(s), word(s * 7)});
          d.accounts.push_back(a);
        }
      }
      if (b == 2) {  // slots of contract 1 deleted (binary trie: written as zero)
        state::AccountDiff a;
        a.address = c1.address;
        for (size_t s = 0; s < c1.storage.size(); s += 3) a.storage_writes.push_back({c1.storage[s].first, state::Hash32{}});
        d.accounts.push_back(a);
      }
      if (b == 3 && is_mpt) {  // contract 2 destroyed and recreated with one slot; contract 3 destroyed
        state::AccountDiff a;
        a.address = c2.address;
        a.destroyed = true;
        a.storage_writes.push_back({word(5), word(6)});
        d.accounts.push_back(a);
        state::AccountDiff g;
        g.address = c3.address;
        g.destroyed = true;
        d.accounts.push_back(g);
        state::AccountDiff same;  // destroyed and recreated as it was: its leaf does not change
        same.address[0] = 0xee;
        same.address[19] = 5;
        same.destroyed = true;
        same.nonce = 6;
        d.accounts.push_back(same);
      }
      const auto root = w.commit(d);
      CHECK(root == plain.commit(d));

      std::unique_ptr<TreeDb> db, t2, view;
      REQUIRE(open_db(options(with.path(), tree, false), &db).ok());
      REQUIRE(db->manifest().root_hash == root);
      VerifyReport tr;
      SnapshotVerifyReport sr;
      io::Status s = verify_with_snapshot(*db, &tr, &sr);
      REQUIRE(s.message() == "");
      CHECK(sr.present);
      CHECK(sr.ok);
      CHECK(sr.entries == tr.leaves);

      // The snapshot's answers equal the tree's for every touched key (and a few absent).
      std::vector<state::StateKey> keys;
      for (const auto& a : d.accounts) {
        keys.push_back({a.address, std::nullopt});
        for (const auto& [slot, v] : a.storage_writes) keys.push_back({a.address, slot});
        keys.push_back({a.address, word(999999)});
      }
      for (const auto& [slot, v] : c2.storage) keys.push_back({c2.address, slot});
      REQUIRE(open_db(options(with.path(), tree, false), &t2).ok());
      REQUIRE(open_snapshot_view(std::move(t2), true, &view).ok());
      std::vector<LookupAnswer> ta, sa;
      REQUIRE(db->lookup(keys, &ta, nullptr).ok());
      REQUIRE(view->lookup(keys, &sa, nullptr).ok());
      REQUIRE(ta.size() == sa.size());
      size_t differ = 0;
      for (size_t i = 0; i < keys.size(); ++i)
        differ += ta[i].account.exists != sa[i].account.exists || ta[i].account.nonce != sa[i].account.nonce ||
                  ta[i].account.balance != sa[i].account.balance || ta[i].account.code_hash != sa[i].account.code_hash ||
                  ta[i].account.storage_root != sa[i].account.storage_root || ta[i].slot_value != sa[i].slot_value;
      CHECK(differ == 0);
    }
    // Space (arena): the snapshot's replaced pages were released. The pages live in the
    // database with the snapshot (not free, not deferred) are the plain one's plus the
    // current snapshot's (give or take a free-list page): nothing of the 7 older snapshots
    // stays.
    if (store == StoreKind::rocksdb) continue;
    std::unique_ptr<TreeDb> db;
    REQUIRE(open_db(options(with.path(), tree, false), &db).ok());
    std::unique_ptr<SnapshotReader> snap;
    REQUIRE(db->open_snapshot(&snap).ok());
    const uint64_t snapshot_pages = snap->pages().size();
    auto live_pages = [](Writer& x) {
      const io::PageAllocator& a = x.files.arena->space().allocator();
      return a.high_water() - a.free_pages() - a.deferred_pages();
    };
    CHECK(live_pages(w) >= live_pages(plain) + snapshot_pages - 1);
    CHECK(live_pages(w) <= live_pages(plain) + snapshot_pages + 1);
  }
}

namespace {

// In a child process: commits diffs [from, from + count) to the database in dir; false on
// any failure (no doctest assertion may fire there).
bool commit_blocks(const DbOptions& o, const std::vector<state::StateDiff>& diffs, size_t from, size_t count) {
  DbFiles files;
  if (!DbFiles::for_commit(o, &files).ok()) return false;
  std::unique_ptr<MptCommitter> mpt;
  std::unique_ptr<BintrieCommitter> bintrie;
  if (o.params.tree_kind == io::TreeKind::mpt) mpt = std::make_unique<MptCommitter>(files);
  else bintrie = std::make_unique<BintrieCommitter>(files);
  for (size_t i = from; i < std::min(from + count, diffs.size()); ++i) {
    MptCommitStats ms;
    BintrieCommitStats bs;
    if (!(mpt ? mpt->commit(diffs[i], "{\"test\":1}", &ms) : bintrie->commit(diffs[i], "{\"test\":1}", &bs)).ok()) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("snapshot: commits SIGKILLed at random points reopen at a committed root, the snapshot equal to the tree") {
  constexpr size_t kChain = 40, kPerChild = 3;
  for (StoreKind store : {StoreKind::arena, StoreKind::rocksdb})
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(store_kind_name(store));
    CAPTURE(io::tree_kind_name(tree));
    // RocksDB: fewer rounds (each opens RocksDB twice).
    const int kRounds = store == StoreKind::arena ? 16 : 10;
    auto options = [store](const std::string& dir, io::TreeKind t, bool snapshot) {
      return st::persist::test::options(dir, t, snapshot, store);
    };
    state::SyntheticSpec spec{300, 4, 200, 3};
    spec.block_seed = 5;
    spec.block_writes = 48;
    state::SyntheticState live(spec);
    st::io::test::TempDir dir, plain_dir;
    BuildReport rep;
    REQUIRE(build_db(options(dir.path(), tree, true), live, &rep).ok());
    REQUIRE(build_db(options(plain_dir.path(), tree, false), live, nullptr).ok());
    // The chain of blocks and the root after each prefix (committed to a database without
    // a snapshot: the same roots, the case above).
    std::vector<state::StateDiff> diffs(kChain);
    std::vector<std::array<uint8_t, 32>> roots{rep.root};
    {
      Writer plain(options(plain_dir.path(), tree, false));
      for (state::StateDiff& d : diffs) {
        live.next_block(&d);
        roots.push_back(plain.commit(d));
      }
    }
    const DbOptions o = options(dir.path(), tree, false);
    uint64_t probe_us = 0;  // three commits here (scales the kill points; ASan is slower)
    {
      st::io::test::TempDir probe;
      std::filesystem::remove_all(probe.path());
      std::filesystem::copy(dir.path(), probe.path(), std::filesystem::copy_options::recursive);
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(commit_blocks(options(probe.path(), tree, false), diffs, 0, kPerChild));
      probe_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    }
    size_t at = 0;
    int kills = 0, moved = 0;
    std::mt19937_64 krng(tree == io::TreeKind::mpt ? 31 : 37);
    // The kill points are drawn from [0, window). A child slower than the probe (a loaded
    // machine; RocksDB's open in a fresh process) may be killed before its first commit
    // every time: after each round that did not advance, the window grows by half, and it
    // returns to the probe's after one that did.
    uint64_t window_us = probe_us + 2000;
    for (int round = 0; round < kRounds && at < kChain; ++round) {
      CAPTURE(round);
      kills += st::test::run_killed(krng() % window_us, [&] { return commit_blocks(o, diffs, at, kPerChild); });
      std::unique_ptr<TreeDb> db;
      REQUIRE(open_db(o, &db).message() == "");
      const auto r = db->manifest().root_hash;
      size_t found = roots.size();
      for (size_t i = at; i < roots.size() && i <= at + kPerChild; ++i)
        if (roots[i] == r) found = i;
      REQUIRE(found < roots.size());  // the old root or one of the new ones
      moved += found > at;
      window_us = found > at ? probe_us + 2000 : window_us + window_us / 2;
      at = found;
      VerifyReport tr;
      SnapshotVerifyReport sr;
      CHECK(verify_with_snapshot(*db, &tr, &sr).message() == "");
      CHECK(tr.root == r);
      CHECK(sr.present);
      CHECK(sr.ok);
      CHECK(sr.entries == tr.leaves);
    }
    MESSAGE((std::string(store_kind_name(store)) + " " + io::tree_kind_name(tree)) << " snapshot commit crash rounds: " << kills << " killed, state advanced in " << moved
                                     << " rounds, at commit " << at << " (three commits: " << probe_us << " us)");
    CHECK(kills >= kRounds / 4);
    CHECK(moved >= 1);
  }
}
