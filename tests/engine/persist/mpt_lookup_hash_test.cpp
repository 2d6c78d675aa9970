// mpt_lookup_hash_test: an MPT lookup uses a node only after keccak(body) matched the
// reference its parent holds (the root: the manifest's root hash). Changed under a
// re-sealed checksum (arena: the page written back through the store; RocksDB: the value
// rewritten) or re-published:
//   - an account leaf (the last byte of its code hash: it still decodes, its record still
//     agrees with it),
//   - the manifest's root hash,
// each make the lookup of that account (alone, cold and warm; a slot key of it; a batch of
// every account: streamed in the arena, by rounds in RocksDB) and its proof an error naming
// the node ("mpt: record R of page P", "mpt: node at path key ..."), with no answers; a key
// whose walk avoids the changed leaf still answers. Every reader of a stored node goes
// through the one verified fetch (mpt/verified_fetch.h): the changed leaf also makes verify
// ("mpt verify: ...") and a block commit that changes that account ("mpt commit: ...", the
// database left at its commit) refuse with one line naming the node.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/mpt/commit.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/record_page.h"
#include "engine/persist/tree_db.h"
#include "io/manifest.h"
#include "io/node_store.h"
#include "io/rocksdb_store.h"
#include "tests/engine/persist/refusal_checks.h"
#include "tests/engine/persist_mpt_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using persist::DbOptions;
using persist::Locator;
using persist::StoreKind;

state::SyntheticSpec small_spec() { return persist::test::small_refusal_spec(); }

uint64_t target_account(const state::SyntheticState& src) { return src.spec().contracts + 3; }  // an EOA

std::string loc_name(Locator l) {
  return "record " + std::to_string(persist::locator_index(l)) + " of page " + std::to_string(persist::locator_page(l));
}

uint64_t source_nonce(const state::SyntheticState& src, uint64_t i) {
  state::AccountRecord r;
  src.account(i, &r);
  return r.nonce;
}

// The body of the target account's leaf (the last node of its account proof).
std::vector<uint8_t> account_leaf(const DbOptions& o, const state::SyntheticState& src) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  persist::StateProof p;
  REQUIRE(db->prove({src.address(target_account(src)), std::nullopt}, &p).message() == "");
  const auto& proof = std::get<mpt::AccountProof>(p).account_proof;
  REQUIRE(proof.size() >= 2);
  REQUIRE(proof.back().size() >= 32);  // hashed, so a record (or RocksDB value) of its own
  return {proof.back().begin(), proof.back().end()};
}

// Arena: the record holding `body`, its last byte flipped, the page written back (sealed).
Locator change_arena_record(const DbOptions& o, const std::vector<uint8_t>& body) {
  persist::DbFiles files;
  REQUIRE(persist::DbFiles::for_commit(o, &files).ok());
  io::NodeStore& store = files.arena->pages();
  std::vector<uint8_t> buf(store.payload_bytes());
  for (uint64_t p = 0; p < files.manifest.page_high_water; ++p) {
    io::PageOp op{io::PageOpKind::read, p, buf.data(), 0};
    if (!io::run_batch(store, {&op, 1}).ok()) continue;  // a free page
    persist::RecordPage rp;
    if (!persist::decode_record_page(p, buf, &rp).empty()) continue;
    for (uint32_t r = 0; r < rp.records.size(); ++r) {
      const persist::RecordView& rec = rp.records[r];
      if (rec.kind != uint8_t(persist::MptRecordKind::account_leaf)) continue;
      if (!std::equal(rec.body.begin(), rec.body.end(), body.begin(), body.end())) continue;
      buf[size_t(rec.body.data() - buf.data()) + rec.body.size() - 1] ^= 0x01;
      op.kind = io::PageOpKind::write;
      REQUIRE(io::run_batch(store, {&op, 1}).ok());
      REQUIRE(store.sync().ok());
      return persist::make_locator(p, r);
    }
  }
  FAIL("no record holds the account leaf");
  return persist::kNoLocator;
}

// RocksDB: the node whose value is `body`, its last byte flipped; returns its path key.
std::string change_rocks_value(const DbOptions& o, const std::vector<uint8_t>& body) {
  io::RocksOptions ro;
  ro.dir = o.dir + "/rocksdb";
  ro.create = false;
  std::unique_ptr<io::RocksKvStore> kv;
  REQUIRE(io::RocksKvStore::open(ro, &kv).ok());
  std::string key, value;
  const std::string_view want(reinterpret_cast<const char*>(body.data()), body.size());
  REQUIRE(kv->for_each([&](std::string_view k, std::string_view v) {
                if (v == want) key = k, value = v;
              }).ok());
  REQUIRE(!key.empty());
  value.back() = char(value.back() ^ 0x01);
  const io::KvWrite w{key, value, false};
  REQUIRE(kv->write_batch({&w, 1}).ok());
  REQUIRE(kv->flush().ok());
  return key;
}

void forge_root(const DbOptions& o) {
  io::FileManifestSlot slot(o.dir);
  io::Manifest m;
  REQUIRE(slot.load(&m).ok());
  m.root_hash[7] ^= 0x40;
  REQUIRE(slot.publish(m).ok());
}

void check_refuses(const DbOptions& o, const state::SyntheticState& src, const std::string& where,
                   std::optional<uint64_t> other) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  const std::string what = "hash does not match its parent's reference";
  auto refused = [&](const io::Status& st, const std::vector<persist::LookupAnswer>& ans) {
    CHECK_FALSE(st.ok());
    CHECK(st.code() == io::Errc::corrupt_page);
    CHECK(ans.empty());
    CHECK_MESSAGE(st.message() == where + ": " + what, st.message());
  };
  const state::StateKey k{src.address(target_account(src)), std::nullopt};
  std::vector<persist::LookupAnswer> ans;
  for (bool cold : {true, false}) refused(db->lookup({&k, 1}, &ans, nullptr, cold), ans);
  const state::StateKey slot_key{k.address, state::Hash32{}};
  refused(db->lookup({&slot_key, 1}, &ans, nullptr, true), ans);
  std::vector<state::StateKey> all;
  for (uint64_t i = 0; i < src.account_count(); ++i) all.push_back({src.address(i), std::nullopt});
  refused(db->lookup(all, &ans, nullptr, true), ans);
  persist::StateProof proof;
  const io::Status ps = db->prove(k, &proof);
  CHECK_MESSAGE(ps.message() == where + ": " + what, ps.message());
  if (other) {
    const state::StateKey ok{src.address(*other), std::nullopt};
    const io::Status st = db->lookup({&ok, 1}, &ans, nullptr, true);
    REQUIRE_MESSAGE(st.ok(), st.message());
    REQUIRE(ans.size() == 1);
    CHECK(ans[0].account.exists);
    CHECK(ans[0].account.nonce == source_nonce(src, *other));
  }
}

void build(const DbOptions& o, const state::SyntheticState& src) {
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  const state::StateKey k{src.address(target_account(src)), std::nullopt};
  std::vector<persist::LookupAnswer> ans;
  REQUIRE(db->lookup({&k, 1}, &ans, nullptr).ok());
  REQUIRE(ans.size() == 1);
  CHECK(ans[0].account.nonce == source_nonce(src, target_account(src)));
}

TEST_CASE("persist mpt lookup: a changed account leaf under a re-sealed page is an error, not a value") {
  const state::SyntheticState src(small_spec());
  pmpt_test::TempDir dir("leaf");
  const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::arena);
  build(o, src);
  const Locator at = change_arena_record(o, account_leaf(o, src));
  check_refuses(o, src, "mpt: " + loc_name(at), target_account(src) + 1);
}

TEST_CASE("persist mpt lookup: a re-sealed manifest with another root is an error, not a value") {
  const state::SyntheticState src(small_spec());
  pmpt_test::TempDir dir("root");
  const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::arena);
  build(o, src);
  Locator root;
  {
    persist::DbFiles files;
    REQUIRE(persist::DbFiles::for_read(o, &files).ok());
    root = files.commit.root;
  }
  forge_root(o);
  check_refuses(o, src, "mpt: " + loc_name(root), std::nullopt);
}

TEST_CASE("persist mpt lookup, RocksDB: a changed account leaf and a forged root are errors, not values") {
  if (!io::rocksdb_available()) return;  // a build without RocksDB has no such store to check
  const state::SyntheticState src(small_spec());
  SUBCASE("account leaf") {
    pmpt_test::TempDir dir("rleaf");
    const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::rocksdb);
    build(o, src);
    const std::string key = change_rocks_value(o, account_leaf(o, src));
    check_refuses(o, src, "mpt: node at path key " + persist::path_key_hex(key), target_account(src) + 1);
  }
  SUBCASE("root") {
    pmpt_test::TempDir dir("rroot");
    const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::rocksdb);
    build(o, src);
    forge_root(o);
    const uint8_t zero[32] = {};
    check_refuses(o, src, "mpt: node at path key " + persist::path_key_hex(persist::account_node_key(zero, 0)),
                  std::nullopt);
  }
}

// Verify and a block commit that changes the target account (its balance) refuse with one
// line: "<who>: <where>: hash does not match its parent's reference"; the commit publishes
// nothing.
void check_verify_and_commit_refuse(const DbOptions& o, const state::SyntheticState& src, const std::string& where) {
  const std::string what = ": " + where + ": hash does not match its parent's reference";
  persist::test::check_verify_and_commit_refuse(o, src.address(target_account(src)), pmpt_test::kTestSpec,
                                                "mpt verify" + what, "mpt commit" + what);
}

TEST_CASE("persist mpt verified fetch: lookup, prove, verify and a block commit all refuse a changed node") {
  const state::SyntheticState src(small_spec());
  SUBCASE("arena") {
    pmpt_test::TempDir dir("fetch_arena");
    const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::arena);
    build(o, src);
    const Locator at = change_arena_record(o, account_leaf(o, src));
    check_refuses(o, src, "mpt: " + loc_name(at), target_account(src) + 1);
    check_verify_and_commit_refuse(o, src, loc_name(at));
  }
  SUBCASE("RocksDB") {
    if (!io::rocksdb_available()) return;
    pmpt_test::TempDir dir("fetch_rocks");
    const DbOptions o = pmpt_test::mpt_options(dir.path, StoreKind::rocksdb);
    build(o, src);
    const std::string key = change_rocks_value(o, account_leaf(o, src));
    const std::string where = "node at path key " + persist::path_key_hex(key);
    check_refuses(o, src, "mpt: " + where, target_account(src) + 1);
    check_verify_and_commit_refuse(o, src, where);
  }
}

}  // namespace
