// bintrie_lookup_hash_test: a binary-trie lookup uses a group or stem blob only after it
// hashed to what its parent records for it (the root: the manifest's root hash). Pages
// whose contents changed under a re-sealed checksum (written back through the store, which
// seals them) and a re-published manifest naming another root:
//   - a leaf value of an account's header stem (its nonce gains 2^37),
//   - an entry hash of the group above that stem,
//   - the manifest's root hash,
// each make the engine's lookup (the one key alone, and a streamed batch of every account)
// an error naming the record (arena: "binary trie page P record R"; RocksDB: the node's
// path key), never an answer; `statetree get` and `read-bench` fail with one line on stderr
// and exit 2. Keys whose walks do not touch the changed blob still answer. Every reader of a
// stored blob goes through the one verified fetch (bintrie/verified_fetch.h): the changed
// stem or group also makes verify ("binary trie ...") and a block commit that changes the
// account ("binary trie commit: ...", the database left at its commit) refuse with one line
// naming the node, and so do they for a group whose entry changed in RocksDB and for an arena
// group record whose blob the strict decoder refuses (a bitmap bit set: the decoder's words).
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/keys.h"
#include "engine/persist/bintrie/commit.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/db_files.h"
#include "engine/persist/record_page.h"
#include "engine/persist/tree_db.h"
#include "tests/engine/persist/refusal_checks.h"
#include "io/manifest.h"
#include "io/node_store.h"
#include "io/rocksdb_store.h"
#include "reference/run_command.h"
#include "tests/engine/persist/bintrie_test_options.h"
#include "tests/io/io_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using persist::DbOptions;
using persist::Locator;
using persist::StoreKind;
using state::Hash32;
using st::io::test::TempDir;
namespace bd = persist::bintrie_disk;

constexpr unsigned kGd = 4;

state::SyntheticSpec small_spec() { return persist::test::small_refusal_spec(); }

// The account whose header stem the tests change: an EOA.
uint64_t target_account(const state::SyntheticState& src) { return src.spec().contracts + 3; }

Hash32 header_stem_key(const state::Address& a) {
  const bintrie::KeyScheme ks{bintrie::make_hasher(bintrie::HashKind::sha256), bintrie::TreeIndexEndian::big};
  return bintrie::basic_data_key(ks, a);
}

std::string hex0x(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}

// Basic data leaf: version, 4 reserved, code size (3), nonce (8, big-endian), balance.
// Bit 5 of nonce byte 11 - 8 = 3 from the top: the nonce gains or loses 2^37.
constexpr size_t kNonceByte = 11;
constexpr uint8_t kNonceBit = 0x20;

// ---- arena: pages read, changed and written back through the store (sealed again) ----

void edit_page(const DbOptions& o, uint64_t page, const std::function<void(std::vector<uint8_t>&, const persist::RecordPage&)>& edit) {
  persist::DbFiles files;
  REQUIRE(persist::DbFiles::for_commit(o, &files).ok());
  io::NodeStore& store = files.arena->pages();
  std::vector<uint8_t> buf(store.payload_bytes());
  io::PageOp op{io::PageOpKind::read, page, buf.data(), 0};
  REQUIRE(io::run_batch(store, {&op, 1}).ok());
  persist::RecordPage rp;
  REQUIRE(persist::decode_record_page(page, buf, &rp).empty());
  edit(buf, rp);
  op.kind = io::PageOpKind::write;
  REQUIRE(io::run_batch(store, {&op, 1}).ok());
  REQUIRE(store.sync().ok());
}

// The record of the stem `stem31` and the group record whose child it is.
struct StemAndParent {
  Locator stem = persist::kNoLocator, parent = persist::kNoLocator, root = persist::kNoLocator;
};
StemAndParent find_stem(const DbOptions& o, const uint8_t* stem31) {
  persist::DbFiles files;
  REQUIRE(persist::DbFiles::for_read(o, &files).ok());
  StemAndParent out;
  out.root = files.commit.root;
  io::NodeStore& store = files.arena->pages();
  std::vector<uint8_t> buf(store.payload_bytes());
  std::vector<std::pair<Locator, std::vector<Locator>>> groups;
  for (uint64_t p = 0; p < files.manifest.page_high_water; ++p) {
    io::PageOp op{io::PageOpKind::read, p, buf.data(), 0};
    if (!io::run_batch(store, {&op, 1}).ok()) continue;  // a free page
    persist::RecordPage rp;
    if (!persist::decode_record_page(p, buf, &rp).empty()) continue;
    for (uint32_t r = 0; r < rp.records.size(); ++r) {
      const persist::RecordView& rec = rp.records[r];
      const Locator l = persist::make_locator(p, r);
      if (rec.kind == bd::kStem && rec.body.size() >= 64 && std::memcmp(rec.body.data() + 1, stem31, 31) == 0) out.stem = l;
      if (rec.kind == bd::kGroup) {
        std::vector<Locator> ch;
        for (uint32_t c = 0; c < rec.child_count; ++c) ch.push_back(rec.child(c));
        groups.push_back({l, std::move(ch)});
      }
    }
  }
  REQUIRE(out.stem != persist::kNoLocator);
  for (const auto& [l, ch] : groups)
    for (Locator c : ch)
      if (c == out.stem) out.parent = l;
  REQUIRE(out.parent != persist::kNoLocator);
  return out;
}

// Flips the nonce bit of the stem record's first value (sub 0: the basic-data leaf).
void change_stem_leaf(const DbOptions& o, Locator stem) {
  edit_page(o, persist::locator_page(stem), [&](std::vector<uint8_t>& buf, const persist::RecordPage& rp) {
    const persist::RecordView& rec = rp.records[persist::locator_index(stem)];
    REQUIRE(rec.kind == bd::kStem);
    REQUIRE((rec.body[32] & 0x80) != 0);  // sub 0 present: values[0] is the basic-data leaf
    buf[size_t(rec.body.data() - buf.data()) + 64 + kNonceByte] ^= kNonceBit;
  });
}

// Changes the last byte of the group record's blob (its last entry's hash).
void change_group_entry(const DbOptions& o, Locator group) {
  edit_page(o, persist::locator_page(group), [&](std::vector<uint8_t>& buf, const persist::RecordPage& rp) {
    const persist::RecordView& rec = rp.records[persist::locator_index(group)];
    REQUIRE(rec.kind == bd::kGroup);
    buf[size_t(rec.body.data() - buf.data()) + rec.body.size() - 1] ^= 0x01;
  });
}

// Sets the first clear bit of the group record's bitmap: one entry more than the blob holds,
// a shape the strict decoder refuses. Returns the decoder's words for the changed blob.
std::string break_group_bitmap(const DbOptions& o, Locator group) {
  std::string why;
  edit_page(o, persist::locator_page(group), [&](std::vector<uint8_t>& buf, const persist::RecordPage& rp) {
    const persist::RecordView& rec = rp.records[persist::locator_index(group)];
    REQUIRE(rec.kind == bd::kGroup);
    const size_t at = size_t(rec.body.data() - buf.data());
    unsigned pos = 0;
    while (pos < (1u << kGd) && (buf[at + 2 + pos / 8] & (0x80 >> (pos % 8)))) ++pos;
    REQUIRE(pos < (1u << kGd));  // a group with a free position
    buf[at + 2 + pos / 8] |= uint8_t(0x80 >> (pos % 8));
    bintrie::GroupBlobView v;
    why = bintrie::check_group_blob({buf.data() + at, rec.body.size()}, kGd, &v);
  });
  REQUIRE(!why.empty());
  return why;
}

// ---- RocksDB: the blobs on the key's path, rewritten in place ----

struct PathBlob {
  std::string key, value;
};
// Every blob on the path of `key` (root first).
std::vector<PathBlob> rocks_path(const DbOptions& o, const Hash32& key) {
  persist::DbFiles files;
  REQUIRE(persist::DbFiles::for_read(o, &files).ok());
  std::vector<std::string> keys;
  for (unsigned d = 0; d < 248; ++d) {
    const std::vector<uint8_t> k = bintrie::blob_key(key.data(), d);
    keys.emplace_back(reinterpret_cast<const char*>(k.data()), k.size());
  }
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  REQUIRE(files.rocks->multi_get(views, &values, &found).ok());
  std::vector<PathBlob> out;
  for (size_t d = 0; d < keys.size(); ++d)
    if (found[d]) out.push_back({keys[d], values[d]});
  return out;
}
void rocks_put(const DbOptions& o, const PathBlob& b) {
  // Readers open RocksDB read-only: the tampering opens the store for writing itself.
  io::RocksOptions ro;
  ro.dir = o.dir + "/rocksdb";
  ro.create = false;
  std::unique_ptr<io::RocksKvStore> kv;
  REQUIRE(io::RocksKvStore::open(ro, &kv).ok());
  const io::KvWrite w{b.key, b.value, false};
  REQUIRE(kv->write_batch({&w, 1}).ok());
  REQUIRE(kv->flush().ok());
}
// "node at path key K": how errors name a RocksDB node.
std::string rocks_node_name(const std::string& key) {
  return "node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}
// The RocksDB twins of change_stem_leaf / change_group_entry: the nonce bit of the stem on
// key's path, or the last byte of the group just above it (its last entry's hash), flipped
// in place. Return the blob changed.
PathBlob change_rocks_stem_leaf(const DbOptions& o, const Hash32& key) {
  const std::vector<PathBlob> path = rocks_path(o, key);
  REQUIRE(path.size() >= 2);  // a stem below the root
  PathBlob stem = path.back();
  REQUIRE(uint8_t(stem.value[0]) == bintrie::kStemBlobVersion);
  stem.value[64 + kNonceByte] = char(stem.value[64 + kNonceByte] ^ kNonceBit);
  rocks_put(o, stem);
  return stem;
}
PathBlob change_rocks_group_entry(const DbOptions& o, const Hash32& key) {
  const std::vector<PathBlob> path = rocks_path(o, key);
  REQUIRE(path.size() >= 3);  // root, a group below it, the stem
  PathBlob group = path[path.size() - 2];
  REQUIRE(uint8_t(group.value[0]) == bintrie::kGroupBlobVersion);
  group.value.back() = char(group.value.back() ^ 0x01);
  rocks_put(o, group);
  return group;
}

// ---- the manifest, re-published (sealed) with another root ----

void forge_root(const DbOptions& o) {
  io::FileManifestSlot slot(o.dir);
  io::Manifest m;
  REQUIRE(slot.load(&m).ok());
  m.root_hash[7] ^= 0x40;
  REQUIRE(slot.publish(m).ok());
}

// ---- the checks ----

std::vector<state::StateKey> every_account(const state::SyntheticState& src) {
  std::vector<state::StateKey> keys;
  for (uint64_t i = 0; i < src.account_count(); ++i) keys.push_back({src.address(i), std::nullopt});
  return keys;
}

uint64_t source_nonce(const state::SyntheticState& src, uint64_t i) {
  state::AccountRecord r;
  src.account(i, &r);
  return r.nonce;
}

// The engine's lookups through the changed node fail naming `where` (and `what`); a batch
// of every account (streamed in the arena, level by level in RocksDB) fails too; a key
// whose walk avoids the node (when `other` is given) still answers.
void check_engine_refuses(const DbOptions& o, const state::SyntheticState& src, const std::string& where,
                          const std::string& what, std::optional<uint64_t> other) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  const state::StateKey k{src.address(target_account(src)), std::nullopt};
  std::vector<persist::LookupAnswer> ans;
  for (bool cold : {true, false}) {
    io::Status st = db->lookup({&k, 1}, &ans, nullptr, cold);
    CHECK_FALSE(st.ok());
    CHECK(st.code() == io::Errc::corrupt_page);
    CHECK(ans.empty());
    CHECK_MESSAGE(st.message().find(where) == 0, st.message());
    CHECK_MESSAGE(st.message().find(what) != std::string::npos, st.message());
    CHECK(st.message().find('\n') == std::string::npos);
  }
  // A slot key of the same address carries the account: its walk reaches the stem too.
  const state::StateKey slot_key{k.address, Hash32{}};
  CHECK_FALSE(db->lookup({&slot_key, 1}, &ans, nullptr, true).ok());
  const std::vector<state::StateKey> all = every_account(src);
  io::Status st = db->lookup(all, &ans, nullptr, true);
  CHECK_FALSE(st.ok());
  CHECK(ans.empty());
  CHECK_MESSAGE(st.message().find(where) == 0, st.message());
  if (other) {
    const state::StateKey ok{src.address(*other), std::nullopt};
    st = db->lookup({&ok, 1}, &ans, nullptr, true);
    REQUIRE_MESSAGE(st.ok(), st.message());
    REQUIRE(ans.size() == 1);
    CHECK(ans[0].account.exists);
    CHECK(ans[0].account.nonce == source_nonce(src, *other));
  }
  persist::VerifyReport vr;
  CHECK_FALSE(db->verify(&vr).ok());
  persist::StateProof proof;
  st = db->prove(k, &proof);
  CHECK_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find(where) == 0, st.message());
}

// `statetree get` and `read-bench` (one at a time, then batched) refuse with one line, exit 2.
void check_cli_refuses(const DbOptions& o, const state::SyntheticState& src, const std::string& where) {
  const state::Address a = src.address(target_account(src));
  reference::CommandResult r = reference::run_statetree("get --db " + o.dir + " --address " + hex0x(a.data(), 20));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.find(where) != std::string::npos, r.err);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  r = reference::run_statetree("get --json --db " + o.dir + " --address " + hex0x(a.data(), 20) + " --slot 0x01");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  r = reference::run_statetree("read-bench --db " + o.dir + " --accounts-only --keys " +
                               std::to_string(src.account_count()) + " --single " +
                               std::to_string(src.account_count()) + " --qd 4 --reps 1 --warmup 0 --json");
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find(where) != std::string::npos, r.err);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

void build(const DbOptions& o, const state::SyntheticState& src) {
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  // Before any change: the target account answers its source nonce.
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  const state::StateKey k{src.address(target_account(src)), std::nullopt};
  std::vector<persist::LookupAnswer> ans;
  REQUIRE(db->lookup({&k, 1}, &ans, nullptr).ok());
  REQUIRE(ans.size() == 1);
  CHECK(ans[0].account.nonce == source_nonce(src, target_account(src)));
}

TEST_CASE("persist bintrie lookup: a changed stem leaf under a re-sealed page is an error, not a value") {
  const state::SyntheticState src(small_spec());
  TempDir dir;
  const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
  build(o, src);
  const state::Address a = src.address(target_account(src));
  const Hash32 key = header_stem_key(a);
  const StemAndParent at = find_stem(o, key.data());
  change_stem_leaf(o, at.stem);
  const std::string where = "binary trie " + bd::locator_name(at.stem);
  check_engine_refuses(o, src, where, "stem hash does not match its parent's entry", target_account(src) + 1);
  check_cli_refuses(o, src, where);
}

TEST_CASE("persist bintrie lookup: a changed group entry under a re-sealed page is an error, not a value") {
  const state::SyntheticState src(small_spec());
  TempDir dir;
  const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
  build(o, src);
  const Hash32 key = header_stem_key(src.address(target_account(src)));
  const StemAndParent at = find_stem(o, key.data());
  REQUIRE(at.parent != at.root);  // the group's own parent names it by hash
  change_group_entry(o, at.parent);
  const std::string where = "binary trie " + bd::locator_name(at.parent);
  check_engine_refuses(o, src, where, "group hash does not match its parent's entry", std::nullopt);
  check_cli_refuses(o, src, where);
}

TEST_CASE("persist bintrie lookup: a re-sealed manifest with another root is an error, not a value") {
  const state::SyntheticState src(small_spec());
  TempDir dir;
  const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
  build(o, src);
  Locator root;
  {
    persist::DbFiles files;
    REQUIRE(persist::DbFiles::for_read(o, &files).ok());
    root = files.commit.root;
  }
  forge_root(o);
  const std::string where = "binary trie " + bd::locator_name(root);
  check_engine_refuses(o, src, where, "root hash does not match the manifest", std::nullopt);
  check_cli_refuses(o, src, where);
}

TEST_CASE("persist bintrie lookup, RocksDB: changed stem leaf, group entry and root are errors, not values") {
  if (!io::rocksdb_available()) return;  // a build without RocksDB has no such store to check
  const state::SyntheticState src(small_spec());
  const Hash32 key = header_stem_key(src.address(target_account(src)));
  auto key_name = [](const std::string& k) { return "binary trie " + rocks_node_name(k); };
  SUBCASE("stem leaf") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
    build(o, src);
    const PathBlob stem = change_rocks_stem_leaf(o, key);
    check_engine_refuses(o, src, key_name(stem.key), "stem hash does not match its parent's entry",
                         target_account(src) + 1);
    check_cli_refuses(o, src, key_name(stem.key));
  }
  SUBCASE("group entry") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
    build(o, src);
    const PathBlob group = change_rocks_group_entry(o, key);
    check_engine_refuses(o, src, key_name(group.key), "group hash does not match its parent's entry", std::nullopt);
    check_cli_refuses(o, src, key_name(group.key));
  }
  SUBCASE("root") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
    build(o, src);
    forge_root(o);
    const std::string root_key = key_name(std::string(1, '\0'));
    check_engine_refuses(o, src, root_key, "root hash does not match the manifest", std::nullopt);
    check_cli_refuses(o, src, root_key);
  }
}

// Verify and a block commit that changes the target account (its balance) refuse with one
// line naming the node (name: "page P record R" or "node at path key K") and `what`; the
// commit publishes nothing.
void check_verify_and_commit_refuse(const DbOptions& o, const state::SyntheticState& src, const std::string& name,
                                    const std::string& what) {
  persist::test::check_verify_and_commit_refuse(o, src.address(target_account(src)), "{}",
                                                "binary trie " + name + ": " + what,
                                                "binary trie commit: " + name + ": " + what);
}

TEST_CASE("persist bintrie verified fetch: lookup, prove, verify and a block commit all refuse a changed node") {
  const state::SyntheticState src(small_spec());
  const Hash32 key = header_stem_key(src.address(target_account(src)));
  const std::string stem_what = "stem hash does not match its parent's entry";
  const std::string group_what = "group hash does not match its parent's entry";
  SUBCASE("arena: stem leaf") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
    build(o, src);
    const StemAndParent at = find_stem(o, key.data());
    change_stem_leaf(o, at.stem);
    const std::string name = bd::locator_name(at.stem);
    check_engine_refuses(o, src, "binary trie " + name, stem_what, target_account(src) + 1);
    check_verify_and_commit_refuse(o, src, name, stem_what);
  }
  SUBCASE("arena: group entry") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
    build(o, src);
    const StemAndParent at = find_stem(o, key.data());
    REQUIRE(at.parent != at.root);
    change_group_entry(o, at.parent);
    const std::string name = bd::locator_name(at.parent);
    check_engine_refuses(o, src, "binary trie " + name, group_what, std::nullopt);
    check_verify_and_commit_refuse(o, src, name, group_what);
  }
  SUBCASE("arena: a group blob the strict decoder refuses") {
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
    build(o, src);
    const StemAndParent at = find_stem(o, key.data());
    REQUIRE(at.parent != at.root);
    const std::string why = break_group_bitmap(o, at.parent);
    check_verify_and_commit_refuse(o, src, bd::locator_name(at.parent), why);
  }
  SUBCASE("RocksDB: group entry") {
    if (!io::rocksdb_available()) return;
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
    build(o, src);
    const PathBlob group = change_rocks_group_entry(o, key);
    check_verify_and_commit_refuse(o, src, rocks_node_name(group.key), group_what);
  }
  SUBCASE("RocksDB: stem leaf") {
    if (!io::rocksdb_available()) return;
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
    build(o, src);
    const PathBlob stem = change_rocks_stem_leaf(o, key);
    const std::string name = rocks_node_name(stem.key);
    check_engine_refuses(o, src, "binary trie " + name, stem_what, target_account(src) + 1);
    check_verify_and_commit_refuse(o, src, name, stem_what);
  }
}

// verify() hashes its nodes in batches (blob_checks.h) of up to 1,024 records: in a
// database of many batches a changed stem leaf (accounts early, midway and last in the
// source) or a changed group entry is still named alone, exactly, with the page cache
// whole or dropped every few pages (arena), and in RocksDB.
std::string verify_message(const DbOptions& o) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  persist::VerifyReport vr;
  const io::Status st = db->verify(&vr);
  CHECK(st.code() == io::Errc::corrupt_page);
  CHECK_FALSE(vr.ok);
  CHECK(vr.error == st.message());
  return st.message();
}

TEST_CASE("persist bintrie verify: a changed node among many hash batches is named exactly") {
  const state::SyntheticSpec spec = persist::test::many_pages_spec();
  const state::SyntheticState src(spec);
  const std::string stem_what = "stem hash does not match its parent's entry";
  for (const uint64_t account : {uint64_t(spec.contracts + 3), spec.accounts / 2, spec.accounts - 1}) {
    CAPTURE(account);
    const Hash32 key = header_stem_key(src.address(account));
    TempDir dir;
    DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd);
    persist::BuildReport built;
    REQUIRE(persist::build_db(o, src, &built).message() == "");
    REQUIRE(built.nodes > 8 * 1024);
    const StemAndParent at = find_stem(o, key.data());
    if (account == spec.accounts - 1) {
      change_group_entry(o, at.parent);
      CHECK(verify_message(o) ==
            "binary trie " + bd::locator_name(at.parent) + ": group hash does not match its parent's entry");
      continue;
    }
    change_stem_leaf(o, at.stem);
    const std::string want = "binary trie " + bd::locator_name(at.stem) + ": " + stem_what;
    CHECK(verify_message(o) == want);
    o.verify_cache_pages = 16;
    CHECK(verify_message(o) == want);
  }
  if (!io::rocksdb_available()) return;
  TempDir dir;
  const DbOptions o = persist::test::bintrie_options(dir.file("db"), kGd, 4096, StoreKind::rocksdb);
  REQUIRE(persist::build_db(o, src, nullptr).message() == "");
  const PathBlob stem = change_rocks_stem_leaf(o, header_stem_key(src.address(spec.accounts / 2)));
  CHECK(verify_message(o) == "binary trie " + rocks_node_name(stem.key) + ": " + stem_what);
}

}  // namespace
