// db_files_lock_test: DbFiles' open modes. A writer (for_build, for_commit) holds the
// directory's lock, arena and RocksDB alike: a second writer is refused at once (Errc::locked,
// naming this pid); readers (for_read) open beside it (RocksDB read-only, so RocksDB's own
// lock does not refuse them). A reader opened before a run of MPT block commits verifies
// and answers its own state after every one of them (the pages it reads are never reused
// under it), and a reader opened afterwards sees the newest state.
#include <doctest/doctest.h>
#include <unistd.h>

#include "engine/persist/mpt/commit.h"
#include "io/rocksdb_store.h"
#include "tests/engine/persist_mpt_test_util.h"
#include "workloads/synthetic_state.h"

using namespace pmpt_test;

namespace {

state::SyntheticSpec lock_spec() {
  state::SyntheticSpec spec{600, 6, 150, 11};
  spec.block_writes = 256;
  spec.block_seed = 2;
  return spec;
}

}  // namespace

TEST_CASE("db files: one writer per database (arena and RocksDB); readers open beside it") {
  std::vector<StoreKind> stores{StoreKind::arena};
  if (io::rocksdb_available()) stores.push_back(StoreKind::rocksdb);
  const std::string me = "is locked by pid " + std::to_string(::getpid()) + " (";
  for (StoreKind store : stores) {
    const std::string store_name = persist::store_kind_name(store);
    CAPTURE(store_name);
    TempDir dir("lock"), other("lock_build");
    const DbOptions o = mpt_options(dir.path, store);
    const state::SyntheticState src(lock_spec());
    {
      const DbOptions b = mpt_options(other.path, store);
      DbFiles building;  // a build in progress holds the lock before its first commit
      REQUIRE(DbFiles::for_build(b, &building).message() == "");
      DbFiles second;
      const io::Status s = DbFiles::for_build(b, &second);
      CHECK(s.code() == io::Errc::locked);
      CHECK(s.message().find(me) != std::string::npos);
    }
    REQUIRE(persist::build_db(o, src, nullptr).message() == "");
    DbFiles writer;
    REQUIRE(DbFiles::for_commit(o, &writer).message() == "");
    DbFiles second;
    io::Status s = DbFiles::for_commit(o, &second);
    CHECK(s.code() == io::Errc::locked);
    CHECK(s.message().find("database " + dir.path + " " + me) == 0);
    s = persist::build_db(o, src, nullptr);
    CHECK(s.code() == io::Errc::locked);
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    persist::VerifyReport rep;
    CHECK(db->verify(&rep).message() == "");
    CHECK(rep.ok);
    writer = DbFiles{};  // released
    REQUIRE(DbFiles::for_commit(o, &second).message() == "");
  }
}

TEST_CASE("db files: a reader verifies and answers its own state while MPT blocks are committed") {
  TempDir dir("lock_readers");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  state::SyntheticState src(lock_spec());
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  std::unique_ptr<persist::TreeDb> reader;
  REQUIRE(open(o, &reader).message() == "");
  const auto root = reader->manifest().root_hash;
  // Keys whose values the blocks change: the first block's storage writes.
  state::SyntheticState probe(lock_spec());
  state::StateDiff first;
  probe.next_block(&first);
  std::vector<state::StateKey> keys;
  for (const auto& a : first.accounts)
    for (const auto& w : a.storage_writes) keys.push_back({a.address, w.first});
  REQUIRE(!keys.empty());
  std::vector<persist::LookupAnswer> before;
  REQUIRE(reader->lookup(keys, &before, nullptr).message() == "");

  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  persist::MptCommitter committer(files);
  state::StateDiff diff;
  for (int b = 0; b < 12; ++b) {
    src.next_block(&diff);
    REQUIRE(committer.commit(diff, src.spec_json(), nullptr).message() == "");
    persist::VerifyReport rep;
    REQUIRE(reader->verify(&rep).message() == "");
    CHECK(rep.root == root);
    std::vector<persist::LookupAnswer> now;
    REQUIRE(reader->lookup(keys, &now, nullptr).message() == "");
    for (size_t i = 0; i < keys.size(); ++i) CHECK(now[i].slot_value == before[i].slot_value);
  }
  std::unique_ptr<persist::TreeDb> fresh;
  REQUIRE(open(o, &fresh).message() == "");
  CHECK(fresh->manifest().root_hash == files.manifest.root_hash);
  CHECK(fresh->manifest().root_hash != root);
  persist::VerifyReport rep;
  CHECK(fresh->verify(&rep).message() == "");
}
