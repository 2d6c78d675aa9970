// persist_bintrie_db_test: the binary trie on disk (engine/persist/bintrie/db.h): build ->
// reopen -> every key's lookup equals the source, absent keys are absent -> verify -> proofs
// verify and equal the in-memory tree's; roots equal bintrie::StateTree's (the vectors'
// genesis cases included) at every group depth 1..8, both hashes, both stores; opening with
// another GD is a one-line error; a flipped byte in pages.arena names its page; a build
// SIGKILLed at random points leaves state A or B, verifying.
#include "tests/io/io_test_util.h"
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/bintrie/keys.h"
#include "engine/bintrie/proof.h"
#include "engine/bintrie/state_tree.h"
#include "engine/persist/bintrie/db.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/db_files.h"
#include "engine/persist/tree_db.h"
#include "io/rocksdb_store.h"
#include "kernels/keccak256.h"
#include "kernels/support/splitmix64.h"
#include "test_paths.h"
#include "tests/engine/persist/bintrie_full_group.h"

namespace {

using namespace st;
using persist::DbOptions;
using persist::StoreKind;
using persist::TreeDb;
using state::Hash32;

using st::io::test::TempDir;  // self-deleting directory under /tmp

uint64_t mix(uint64_t& x) { return st::splitmix64(x); }
void fill(uint64_t& rng, uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = mix(rng);
    std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
  }
}

// A small state held in memory, offered as a StateSource.
class VecSource final : public state::StateSource {
 public:
  std::vector<state::AccountRecord> accounts;
  std::string spec = "{\"test\":1}";
  uint64_t account_count() const override { return accounts.size(); }
  uint64_t slot_count() const override {
    uint64_t n = 0;
    for (const auto& a : accounts) n += a.storage.size();
    return n;
  }
  void account(uint64_t i, state::AccountRecord* out) const override { *out = accounts[i]; }
  std::optional<state::StateKey> slot_key(uint64_t i, uint64_t j) const override {
    if (j >= accounts[i].storage.size()) return std::nullopt;
    return state::StateKey{accounts[i].address, accounts[i].storage[j].first};
  }
  uint64_t storage_size(uint64_t i) const override { return accounts[i].storage.size(); }
  std::string spec_json() const override { return spec; }

  state::Allocation allocation() const { return state::allocation_of(*this); }
};

// EOAs and contracts; contract 0 has code whose header stem does not fit a 4 KiB page
// (130 values: a chunked stem record), contract 1 fills a whole code stem (256 chunks).
VecSource random_state(uint64_t seed, size_t eoas, size_t contracts, size_t slots) {
  VecSource s;
  uint64_t rng = seed;
  s.spec = "{\"test\":" + std::to_string(seed) + "}";
  for (size_t i = 0; i < eoas + contracts; ++i) {
    state::AccountRecord a;
    fill(rng, a.address.data(), 20);
    a.nonce = mix(rng) % 1000;
    fill(rng, a.balance.data() + 20, 12);
    if (i >= eoas) {
      const size_t c = i - eoas;
      a.code.resize(c == 0 ? 4000 : c == 1 ? 12000 : 50 + mix(rng) % 200);
      fill(rng, a.code.data(), a.code.size());
      for (size_t j = 0; j < slots; ++j) {
        Hash32 k{}, v{};
        if (j < 4) k[31] = uint8_t(j * 7);  // header slots
        else fill(rng, k.data(), 32);
        fill(rng, v.data(), 32);
        v[0] |= 1;
        a.storage.push_back({k, v});
      }
    }
    s.accounts.push_back(std::move(a));
  }
  return s;
}

bintrie::HashKind bt_hash(io::HashKind k) { return k == io::HashKind::sha256 ? bintrie::HashKind::sha256 : bintrie::HashKind::blake3; }

DbOptions options(const std::string& dir, StoreKind store, unsigned gd, io::HashKind hash, uint32_t page = 4096) {
  DbOptions o;
  o.dir = dir;
  o.store = store;
  o.params.tree_kind = io::TreeKind::bintrie;
  o.params.hash_kind = hash;
  o.params.group_depth = gd;
  o.params.page_size = page;
  o.direct_io = false;
  o.queue_depth = 16;
  return o;
}

// Through the dispatcher (tree_db.cpp -> build_bintrie / open_bintrie).
io::Status bt_build(const DbOptions& o, const state::StateSource& s, persist::BuildReport* rep) {
  return persist::build_db(o, s, rep);
}
io::Status bt_open(const DbOptions& o, std::unique_ptr<TreeDb>* out) { return persist::open_db(o, out); }

struct MemState {
  bintrie::KeyScheme ks;
  bintrie::StateTree tree;
  Hash32 root{};
  explicit MemState(const VecSource& s, bintrie::HashKind h)
      : ks{bintrie::make_hasher(h), bintrie::TreeIndexEndian::big}, tree(ks) {
    REQUIRE(tree.apply_allocation(s.allocation()) == "");
    root = tree.commit();
  }
};

// Lookups of every key (one batch, then a few one at a time), absent keys, proofs.
void check_contents(TreeDb& db, const VecSource& s, const MemState& mem, bool all_proofs) {
  std::vector<state::StateKey> keys;
  for (const auto& a : s.accounts) {
    keys.push_back({a.address, std::nullopt});
    for (const auto& [k, v] : a.storage) keys.push_back({a.address, k});
  }
  const size_t present = keys.size();
  uint64_t rng = 99;
  for (int i = 0; i < 20; ++i) {
    state::StateKey k;
    fill(rng, k.address.data(), 20);
    keys.push_back(k);
    if (!s.accounts.empty()) {
      const auto& a = s.accounts[mix(rng) % s.accounts.size()];
      Hash32 slot;
      fill(rng, slot.data(), 32);
      keys.push_back({a.address, slot});
    }
  }
  std::vector<persist::LookupAnswer> ans;
  persist::LookupStats stats;
  io::Status st = db.lookup(keys, &ans, &stats);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(ans.size() == keys.size());
  CHECK(stats.keys == keys.size());
  size_t i = 0;
  for (const auto& a : s.accounts) {
    const auto& acc = ans[i++].account;
    CHECK(acc.exists);
    CHECK(acc.nonce == a.nonce);
    CHECK(acc.balance == a.balance);
    CHECK(acc.code_size == a.code.size());
    Hash32 ch;
    kernels::keccak256(a.code.data(), a.code.size(), ch.data());
    CHECK(acc.code_hash == ch);
    for (const auto& [k, v] : a.storage) {
      const auto& got = ans[i++].slot_value;
      REQUIRE(got.has_value());
      CHECK(*got == v);
    }
  }
  REQUIRE(i == present);
  for (; i < keys.size(); ++i) {
    if (keys[i].slot) CHECK_FALSE(ans[i].slot_value.has_value());
    else CHECK_FALSE(ans[i].account.exists);
  }
  // One key at a time gives the same answers.
  for (size_t j = 0; j < keys.size(); j += std::max<size_t>(1, keys.size() / 7)) {
    std::vector<persist::LookupAnswer> one;
    REQUIRE(db.lookup({&keys[j], 1}, &one, nullptr).ok());
    CHECK(one[0].account.exists == ans[j].account.exists);
    CHECK(one[0].slot_value == ans[j].slot_value);
  }
  // Proofs: verify against the root, and equal the in-memory tree's proofs.
  const bintrie::Hasher& h = mem.ks.hasher;
  for (size_t j = 0; j < keys.size(); j += all_proofs ? 1 : std::max<size_t>(1, keys.size() / 11)) {
    persist::StateProof sp;
    st = db.prove(keys[j], &sp);
    REQUIRE_MESSAGE(st.ok(), st.message());
    const auto& p = std::get<persist::BintrieStateProof>(sp);
    auto vb = bintrie::verify_key_proof(h, mem.root, p.basic_data_key, p.basic_data);
    REQUIRE(std::holds_alternative<std::optional<Hash32>>(vb));
    bool known = false;
    for (const auto& a : s.accounts) known = known || a.address == keys[j].address;
    CHECK(std::get<std::optional<Hash32>>(vb).has_value() == known);
    CHECK(bintrie::serialize_key_proof(p.basic_data) ==
          bintrie::serialize_key_proof(bintrie::prove_key(mem.tree.tree(), p.basic_data_key)));
    CHECK(bintrie::serialize_key_proof(p.code_hash) ==
          bintrie::serialize_key_proof(bintrie::prove_key(mem.tree.tree(), p.code_hash_key)));
    if (keys[j].slot) {
      REQUIRE(p.slot.has_value());
      auto vs = bintrie::verify_key_proof(h, mem.root, p.slot_key, *p.slot);
      REQUIRE(std::holds_alternative<std::optional<Hash32>>(vs));
      CHECK(std::get<std::optional<Hash32>>(vs) == ans[j].slot_value);
      CHECK(bintrie::serialize_key_proof(*p.slot) ==
            bintrie::serialize_key_proof(bintrie::prove_key(mem.tree.tree(), p.slot_key)));
    }
  }
}

persist::BuildReport build_check(const VecSource& s, StoreKind store, unsigned gd, io::HashKind hash, uint32_t page,
                                 bool all_proofs) {
  CAPTURE(gd);
  const std::string store_name = persist::store_kind_name(store), hash_name = io::hash_kind_name(hash);
  CAPTURE(store_name);
  CAPTURE(hash_name);
  CAPTURE(page);
  TempDir dir;
  const DbOptions o = options(dir.file("db"), store, gd, hash, page);
  const MemState mem(s, bt_hash(hash));
  persist::BuildReport rep;
  io::Status st = bt_build(o, s, &rep);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(rep.root == mem.root);
  CHECK(rep.accounts == s.accounts.size());
  CHECK(rep.slots == s.slot_count());
  std::unique_ptr<TreeDb> db;
  st = bt_open(o, &db);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(db->manifest().root_hash == mem.root);
  CHECK(db->source_spec() == s.spec);
  CHECK((db->page_store() != nullptr) == (store == StoreKind::arena));
  CHECK_FALSE(db->data_files().empty());
  persist::VerifyReport vr;
  st = db->verify(&vr);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(vr.ok);
  CHECK(vr.root == mem.root);
  CHECK(vr.leaves == mem.tree.tree().value_count());
  CHECK(vr.accounts == s.accounts.size());
  CHECK(vr.slots == s.slot_count());
  CHECK(vr.nodes == rep.nodes);
  check_contents(*db, s, mem, all_proofs);
  return rep;
}

std::vector<StoreKind> stores() {
  REQUIRE_MESSAGE(io::rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  return {StoreKind::arena, StoreKind::rocksdb};
}

Hash32 unhex32(const std::string& s) {
  Hash32 b{};
  for (size_t i = 0; i < 32; ++i) b[i] = uint8_t(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return b;
}

// Decimal string -> 32-byte big-endian.
Hash32 dec_to_be(const std::string& dec) {
  Hash32 out{};
  for (char ch : dec) {
    unsigned carry = unsigned(ch - '0');
    for (int i = 31; i >= 0; --i) {
      const unsigned v = unsigned(out[i]) * 10 + carry;
      out[i] = uint8_t(v & 0xff);
      carry = v >> 8;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("persist bintrie: the vectors' genesis cases on disk have the vectors' roots") {
  std::ifstream f(std::string(STATETREE_VECTORS_DIR) + "/bintrie/bintrie_vectors.json");
  REQUIRE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const auto& c : j["account_cases"]) {
    CAPTURE(c["name"].get<std::string>());
    VecSource s;
    for (const auto& a : c["accounts"]) {
      state::AccountRecord r;
      const std::string addr = a["address"];
      for (size_t i = 0; i < 20; ++i) r.address[i] = uint8_t(std::stoi(addr.substr(2 * i, 2), nullptr, 16));
      r.nonce = a["nonce"];
      r.balance = dec_to_be(a["balance"]);
      const std::string code = a["code"];
      for (size_t i = 0; i + 1 < code.size(); i += 2) r.code.push_back(uint8_t(std::stoi(code.substr(i, 2), nullptr, 16)));
      for (const auto& [slot, value] : a["storage"].items()) {
        std::string v = value.get<std::string>();
        v = std::string(64 - v.size(), '0') + v;
        r.storage.push_back({dec_to_be(slot), unhex32(v)});
      }
      s.accounts.push_back(r);
    }
    for (const auto& [variant, hash] : {std::pair{"geth_sha256_be", io::HashKind::sha256},
                                         std::pair{"eip_blake3_be", io::HashKind::blake3}}) {
      CAPTURE(variant);
      const Hash32 want = unhex32(c["root"][variant].get<std::string>());
      for (StoreKind store : stores()) {
        TempDir dir;
        const DbOptions o = options(dir.file("db"), store, 5, hash);
        persist::BuildReport rep;
        io::Status st = bt_build(o, s, &rep);
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK(rep.root == want);
        std::unique_ptr<TreeDb> db;
        REQUIRE(bt_open(o, &db).ok());
        persist::VerifyReport vr;
        st = db->verify(&vr);
        CHECK_MESSAGE(st.ok(), st.message());
        const MemState mem(s, bt_hash(hash));
        CHECK(mem.root == want);
        check_contents(*db, s, mem, true);
      }
    }
  }
}

TEST_CASE("persist bintrie: every group depth, both hashes, both stores") {
  const VecSource s = random_state(7, 150, 6, 40);
  for (StoreKind store : stores()) {
    for (unsigned gd = 1; gd <= 8; ++gd) {
      const io::HashKind hash = gd % 2 ? io::HashKind::sha256 : io::HashKind::blake3;
      build_check(s, store, gd, hash, gd >= 7 ? 16384 : 4096, false);
    }
  }
  // The other hash at the default depth, and 16 KiB pages at a small one.
  build_check(s, StoreKind::arena, 5, io::HashKind::blake3, 4096, false);
  build_check(s, StoreKind::arena, 4, io::HashKind::sha256, 16384, false);
}

TEST_CASE("persist bintrie: a full GD-8 group is one record of 256 children; tiny states") {
  // 256 EOAs whose header stems start with every byte value: the root group holds 256 stems.
  VecSource crafted = random_state(12, 256, 0, 0);
  const bintrie::KeyScheme ks{bintrie::make_hasher(bintrie::HashKind::sha256), bintrie::TreeIndexEndian::big};
  const std::vector<state::Address> addrs = persist::test::full_root_group_addresses(ks, 12);
  for (size_t i = 0; i < addrs.size(); ++i) crafted.accounts[i].address = addrs[i];
  // 3000 random EOAs: the root group and those below it are full at GD 8.
  const VecSource many = random_state(11, 3000, 0, 0);
  for (const VecSource* s : std::vector<const VecSource*>{&crafted, &many}) {
    CAPTURE(s->accounts.size());
    const persist::BuildReport rep = build_check(*s, StoreKind::arena, 8, io::HashKind::sha256, 16384, false);
    TempDir dir;
    const DbOptions o = options(dir.file("db"), StoreKind::arena, 8, io::HashKind::sha256, 16384);
    REQUIRE(bt_build(o, *s, nullptr).ok());
    const persist::test::RecordCensus c = persist::test::record_census(o);
    CHECK(c.root_kind == persist::bintrie_disk::kGroup);
    CHECK(c.root_children == 256);
    CHECK(c.full_groups >= 1);
    CHECK(c.records == rep.nodes);  // one record per node: no extra record for a full group
    for (const auto& [kind, n] : c.kinds)
      CHECK_MESSAGE((kind == persist::bintrie_disk::kGroup || kind == persist::bintrie_disk::kStem), int(kind));
  }
  // Empty state, one account (a lone stem at the root), two accounts.
  for (size_t n : {0, 1, 2}) {
    CAPTURE(n);
    for (StoreKind store : stores()) build_check(random_state(20 + n, n, 0, 0), store, 3, io::HashKind::sha256, 4096, true);
  }
}

TEST_CASE("persist bintrie: parameter errors are one line") {
  const VecSource s = random_state(3, 20, 1, 5);
  TempDir dir;
  // GD 7 / 8 full groups do not fit 4 KiB pages: refused before anything is written.
  for (unsigned gd : {7u, 8u}) {
    persist::BuildReport rep;
    io::Status st = bt_build(options(dir.file("gd" + std::to_string(gd)), StoreKind::arena, gd, io::HashKind::sha256), s, &rep);
    CHECK_FALSE(st.ok());
    CHECK(st.message().find("--page-size 16384") != std::string::npos);
    CHECK(st.message().find('\n') == std::string::npos);
  }
  // Opening with another GD.
  for (StoreKind store : stores()) {
    const std::string d = dir.file(std::string("db-") + persist::store_kind_name(store));
    REQUIRE(bt_build(options(d, store, 4, io::HashKind::sha256), s, nullptr).ok());
    std::unique_ptr<TreeDb> db;
    io::Status st = bt_open(options(d, store, 5, io::HashKind::sha256), &db);
    CHECK_FALSE(st.ok());
    CHECK(st.code() == io::Errc::mismatch);
    CHECK(st.message().find('\n') == std::string::npos);
    CHECK(st.message().find("group depth") != std::string::npos);
    st = bt_open(options(d, store, 4, io::HashKind::blake3), &db);
    CHECK_FALSE(st.ok());
    CHECK(bt_open(options(d, store, 4, io::HashKind::sha256), &db).ok());
    // open_any_db takes the parameters from the manifest.
    db.reset();
    st = persist::open_any_db(d, 4, &db);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(db->manifest().params.group_depth == 4);
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).ok());
  }
}

TEST_CASE("persist bintrie: a flipped byte in pages.arena is that page's corruption") {
  const VecSource s = random_state(5, 300, 3, 30);
  TempDir dir;
  const DbOptions o = options(dir.file("db"), StoreKind::arena, 4, io::HashKind::sha256);
  REQUIRE(bt_build(o, s, nullptr).ok());
  uint64_t page = 0;
  {
    persist::DbFiles files;
    REQUIRE(persist::DbFiles::for_read(o, &files).ok());
    REQUIRE(files.commit.root != persist::kNoLocator);
    page = persist::locator_page(files.commit.root);
  }
  {
    std::fstream f(o.dir + "/pages.arena", std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f.good());
    f.seekg(std::streamoff(page * o.params.page_size + 40));
    char b = 0;
    f.read(&b, 1);
    b = char(b ^ 0x10);
    f.seekp(std::streamoff(page * o.params.page_size + 40));
    f.write(&b, 1);
  }
  std::unique_ptr<TreeDb> db;
  REQUIRE(bt_open(o, &db).ok());
  persist::VerifyReport vr;
  io::Status st = db->verify(&vr);
  CHECK_FALSE(st.ok());
  CHECK_FALSE(vr.ok);
  CHECK(st.code() == io::Errc::corrupt_page);
  CHECK(st.message().find("page " + std::to_string(page)) != std::string::npos);
  MESSAGE(st.message());
  std::vector<persist::LookupAnswer> ans;
  const state::StateKey k{s.accounts[0].address, std::nullopt};
  st = db->lookup({&k, 1}, &ans, nullptr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("page " + std::to_string(page)) != std::string::npos);
}

// Rewrites one record body byte of the root record's page, with a valid page checksum (the
// decoders, not the checksum, must catch it). Returns the root locator.
persist::Locator rewrite_root_record(const DbOptions& o, size_t body_offset_from_end, uint8_t new_value, bool from_start) {
  persist::DbFiles files;
  REQUIRE(persist::DbFiles::for_commit(o, &files).ok());
  const persist::Locator root = files.commit.root;
  REQUIRE(root != persist::kNoLocator);
  io::NodeStore& store = files.arena->pages();
  std::vector<uint8_t> buf(store.payload_bytes());
  io::PageOp op{io::PageOpKind::read, persist::locator_page(root), buf.data(), 0};
  REQUIRE(io::run_batch(store, {&op, 1}).ok());
  persist::RecordPage page;
  REQUIRE(persist::decode_record_page(op.page_id, buf, &page).empty());
  const auto& rec = page.records[persist::locator_index(root)];
  REQUIRE(rec.body.size() > body_offset_from_end);
  const size_t at = size_t(rec.body.data() - buf.data()) +
                    (from_start ? body_offset_from_end : rec.body.size() - 1 - body_offset_from_end);
  buf[at] = new_value;
  op.kind = io::PageOpKind::write;
  REQUIRE(io::run_batch(store, {&op, 1}).ok());
  REQUIRE(store.sync().ok());
  return root;
}

TEST_CASE("persist bintrie: inconsistent records are errors naming the record") {
  const VecSource s = random_state(9, 300, 3, 30);
  TempDir dir;
  const DbOptions o = options(dir.file("db"), StoreKind::arena, 4, io::HashKind::sha256);
  REQUIRE(bt_build(o, s, nullptr).ok());
  std::unique_ptr<TreeDb> db;
  // A hash byte of the root group's last entry: verify names the record (lookups through that
  // entry fail their hash check too: tests/engine/persist/bintrie_lookup_hash_test.cpp).
  const persist::Locator root = rewrite_root_record(o, 0, 0x5a, false);
  const std::string name = "binary trie " + persist::bintrie_disk::locator_name(root);
  REQUIRE(bt_open(o, &db).ok());
  persist::VerifyReport vr;
  io::Status st = db->verify(&vr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(name) == 0);
  CHECK(st.message().find("hash") != std::string::npos);
  MESSAGE(st.message());
  db.reset();
  // The group blob's version byte: every walk fails on that record.
  rewrite_root_record(o, 0, 0x07, true);
  REQUIRE(bt_open(o, &db).ok());
  st = db->verify(&vr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(name) == 0);
  MESSAGE(st.message());
  std::vector<persist::LookupAnswer> ans;
  const state::StateKey k{s.accounts[0].address, std::nullopt};
  st = db->lookup({&k, 1}, &ans, nullptr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(name) == 0);
  persist::StateProof proof;
  CHECK_FALSE(db->prove(k, &proof).ok());
  db.reset();
  // The group depth byte (another g): named too.
  rewrite_root_record(o, 0, 0x02, true);
  rewrite_root_record(o, 1, 0x03, true);
  REQUIRE(bt_open(o, &db).ok());
  st = db->verify(&vr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(name) == 0);
  MESSAGE(st.message());
}

// The crash harness's child: builds one state into a database and exits. Runs only when
// the parent test below re-executes this binary with STATETREE_PBIN_CRASH_DIR set.
TEST_CASE("persist bintrie crash child") {
  const char* dir = ::getenv("STATETREE_PBIN_CRASH_DIR");
  if (!dir) return;
  const uint64_t seed = std::stoull(::getenv("STATETREE_PBIN_CRASH_SEED"));
  const VecSource s = random_state(seed, 4000, 4, 300);
  const io::Status st = bt_build(options(dir, StoreKind::arena, 4, io::HashKind::sha256), s, nullptr);
  ::_exit(st.ok() ? 0 : 7);
}

TEST_CASE("persist bintrie: SIGKILL during a rebuild leaves state A or state B, verifying") {
  TempDir dir;
  const std::string db_dir = dir.file("db");
  const VecSource a = random_state(100, 4000, 4, 300), b = random_state(101, 4000, 4, 300);
  const MemState ma(a, bintrie::HashKind::sha256), mb(b, bintrie::HashKind::sha256);
  const DbOptions o = options(db_dir, StoreKind::arena, 4, io::HashKind::sha256);
  REQUIRE(bt_build(o, a, nullptr).ok());
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  REQUIRE(n > 0);
  self[n] = 0;
  auto spawn = [&](uint64_t seed) {
    // Everything the child needs is prepared before fork (only exec-safe calls after it).
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
    env_s.push_back("STATETREE_PBIN_CRASH_DIR=" + db_dir);
    env_s.push_back("STATETREE_PBIN_CRASH_SEED=" + std::to_string(seed));
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string filter = "--test-case=persist bintrie crash child";
    char* argv[] = {self, filter.data(), nullptr};
    const int null = ::open("/dev/null", O_WRONLY);
    REQUIRE(null >= 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execve(self, argv, envp.data());
      ::_exit(9);
    }
    ::close(null);
    return pid;
  };
  // One uninterrupted rebuild (A -> B) measures how long a build takes.
  const auto t0 = std::chrono::steady_clock::now();
  {
    const pid_t pid = spawn(101);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  const int64_t full_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("one child rebuild: " << full_us / 1000 << " ms");
  uint64_t rng = 4242;
  std::set<std::string> seen;
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    const pid_t pid = spawn(round % 2 ? 101 : 100);
    const int64_t delay_us = int64_t(mix(rng) % uint64_t(full_us + 1));
    timespec ts{delay_us / 1000000, long(delay_us % 1000000) * 1000};
    ::nanosleep(&ts, nullptr);
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status)) CHECK(WEXITSTATUS(status) == 0);
    std::unique_ptr<TreeDb> db;
    io::Status st = bt_open(o, &db);
    REQUIRE_MESSAGE(st.ok(), st.message());
    const Hash32 root = db->manifest().root_hash;
    const bool is_a = root == ma.root, is_b = root == mb.root;
    CHECK((is_a || is_b));
    seen.insert(is_a ? "A" : "B");
    persist::VerifyReport vr;
    st = db->verify(&vr);
    CHECK_MESSAGE(st.ok(), st.message());
    CHECK(vr.root == root);
    std::vector<persist::LookupAnswer> ans;
    const VecSource& cur = is_a ? a : b;
    const state::StateKey k{cur.accounts[17].address, std::nullopt};
    REQUIRE(db->lookup({&k, 1}, &ans, nullptr).ok());
    CHECK(ans[0].account.exists);
    CHECK(ans[0].account.nonce == cur.accounts[17].nonce);
  }
  MESSAGE("states seen after kills: " << seen.size());
}
