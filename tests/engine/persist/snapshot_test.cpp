// snapshot_test: the flat snapshot (engine/persist/snapshot_*.h) on both trees: built with
// the tree, its lookups answer exactly what the tree's do (every account and slot, absent
// keys too) with one page read per key alone (an account of the binary trie included:
// its two header leaves never straddle pages); verify passes and reports a changed entry,
// a missing entry and a corrupt page; a database without a snapshot works as before; a
// rebuild without --snapshot drops it; the commit record's snapshot block round-trips; a
// batch reads each distinct data page once, and one contract's slots sit in one run of pages
// (MPT) or over the whole table (binary trie). On RocksDB (its own column family): the same
// answers as the tree, one MultiGet per batch; verify reports a changed, a missing and an
// extra entry.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/snapshot/db.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/snapshot/rocks.h"
#include "engine/persist/snapshot/verify.h"
#include "engine/persist/tree_db.h"
#include "kernels/support/splitmix64.h"
#include "tests/engine/persist/snapshot_test_util.h"
#include "tests/io/io_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using namespace st::persist;
using st::persist::test::options;

const state::SyntheticSpec kSpec{400, 4, 300, 5};

void check_same(const LookupAnswer& t, const LookupAnswer& s) {
  CHECK(t.account.exists == s.account.exists);
  CHECK(t.account.nonce == s.account.nonce);
  CHECK(t.account.balance == s.account.balance);
  CHECK(t.account.code_hash == s.account.code_hash);
  CHECK(t.account.storage_root == s.account.storage_root);
  CHECK(t.account.code_size == s.account.code_size);
  CHECK(t.slot_value == s.slot_value);
}

// Every account and slot of the source, plus absent accounts and absent slots.
std::vector<state::StateKey> all_keys(const state::StateSource& src) {
  std::vector<state::StateKey> keys;
  state::AccountRecord rec;
  for (uint64_t i = 0; i < src.account_count(); ++i) {
    src.account_fields(i, &rec);
    keys.push_back({rec.address, std::nullopt});
    for (uint64_t j = 0; j < src.storage_size(i); ++j) keys.push_back(*src.slot_key(i, j));
  }
  uint64_t rng = 99;
  for (int k = 0; k < 50; ++k) {
    state::StateKey a;
    for (auto& b : a.address) b = uint8_t(st::splitmix64(rng));
    keys.push_back(a);
    state::StateKey s = keys[size_t(st::splitmix64(rng) % 200)];
    s.slot = state::Hash32{};
    for (auto& b : *s.slot) b = uint8_t(st::splitmix64(rng));
    keys.push_back(s);
  }
  return keys;
}

}  // namespace

TEST_CASE("snapshot: lookups equal the tree's, one page read per key, both trees") {
  const state::SyntheticState src(kSpec);
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(io::tree_kind_name(tree));
    st::io::test::TempDir dir;
    BuildReport rep;
    REQUIRE(build_db(options(dir.path(), tree, true), src, &rep).ok());
    CHECK(rep.snapshot_entries >= src.account_count() + src.slot_count());  // bintrie: + code hashes and chunks
    std::unique_ptr<TreeDb> db, view, view_alone;
    REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
    std::unique_ptr<TreeDb> t2, t3;
    REQUIRE(open_db(options(dir.path(), tree, false), &t2).ok());
    REQUIRE(open_db(options(dir.path(), tree, false), &t3).ok());
    REQUIRE(open_snapshot_view(std::move(t2), true, &view).ok());
    REQUIRE(open_snapshot_view(std::move(t3), false, &view_alone).ok());

    const std::vector<state::StateKey> keys = all_keys(src);
    std::vector<LookupAnswer> ta, sa;
    LookupStats ts, ss;
    REQUIRE(db->lookup(keys, &ta, &ts).ok());
    REQUIRE(view->lookup(keys, &sa, &ss).ok());
    REQUIRE(ta.size() == keys.size());
    REQUIRE(sa.size() == keys.size());
    size_t present = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      CAPTURE(i);
      check_same(ta[i], sa[i]);
      present += sa[i].account.exists;
    }
    CHECK(present >= src.account_count());
    // The whole table in one batch reads each data page at most once.
    std::unique_ptr<SnapshotReader> snap;
    REQUIRE(db->open_snapshot(&snap).ok());
    CHECK(ss.page_reads <= snap->ref().data_pages);
    CHECK(ss.page_reads > 0);

    // One key alone: one read (accounts: both header leaves of the binary trie on one page).
    for (size_t i = 0; i < keys.size(); i += 3) {
      CAPTURE(i);
      LookupStats one;
      std::vector<LookupAnswer> a;
      REQUIRE(view_alone->lookup({&keys[i], 1}, &a, &one).ok());
      REQUIRE(a.size() == 1);
      check_same(keys[i].slot ? LookupAnswer{{}, ta[i].slot_value} : ta[i], a[0]);
      CHECK(one.page_reads <= 1);
      if (a[0].account.exists || a[0].slot_value) CHECK(one.page_reads == 1);
    }
  }
}

TEST_CASE("snapshot: verify passes, and reports a changed entry, a missing entry and a corrupt page") {
  const state::SyntheticState src(kSpec);
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(io::tree_kind_name(tree));
    st::io::test::TempDir dir;
    REQUIRE(build_db(options(dir.path(), tree, true), src, nullptr).ok());
    auto verify = [&](SnapshotVerifyReport* snap) {
      std::unique_ptr<TreeDb> db;
      REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
      VerifyReport tr;
      return verify_with_snapshot(*db, &tr, snap);
    };
    SnapshotVerifyReport sr;
    REQUIRE(verify(&sr).ok());
    CHECK(sr.present);
    CHECK(sr.ok);
    CHECK(sr.entries > src.account_count() + src.slot_count() - 1);

    const test::SnapshotPages sp = test::snapshot_pages(dir.path());
    REQUIRE(sp.data_pages >= 4);
    const uint64_t page = sp.pages[sp.data_pages / 2];
    const std::vector<uint8_t> original = test::read_page(dir.path(), page, sp.page_size);

    // A changed value (the page resealed: only the comparison with the tree can tell).
    {
      std::vector<uint8_t> b = original;
      RecordPage rp;
      REQUIRE(decode_record_page(page, {b.data(), io::page_payload_bytes(sp.page_size)}, &rp).empty());
      const auto& body = rp.records[1].body;
      b[size_t(body.data() + body.size() - 1 - b.data())] ^= 0x01;  // last byte of the value
      test::write_page(dir.path(), page, b);
      io::Status s = verify(&sr);
      CHECK_FALSE(s.ok());
      CHECK(s.message().find("holds") != std::string::npos);
      CHECK(s.message().find(", the tree ") != std::string::npos);
      CHECK_FALSE(sr.ok);
      test::write_page(dir.path(), page, original, false);
      REQUIRE(verify(&sr).ok());
    }
    // A missing entry (the page stays well formed), then a wrong entry count.
    {
      const std::vector<uint8_t> record = test::read_page(dir.path(), sp.commit_record_page, sp.page_size);
      test::drop_entry(dir.path(), page, sp.page_size, 2);
      io::Status s = verify(&sr);
      CHECK_FALSE(s.ok());
      CHECK(s.message().find("is missing from the snapshot") != std::string::npos);
      test::write_page(dir.path(), page, original, false);
      REQUIRE(verify(&sr).ok());
      test::shift_entry_count(dir.path(), sp.commit_record_page, sp.page_size, -1);
      s = verify(&sr);
      CHECK_FALSE(s.ok());
      CHECK(s.message().find("entries, the commit record says") != std::string::npos);
      test::write_page(dir.path(), sp.commit_record_page, record, false);
      REQUIRE(verify(&sr).ok());
    }
    // A torn page (not resealed): the checksum names it.
    {
      std::vector<uint8_t> b = original;
      b[100] ^= 0x40;
      test::write_page(dir.path(), page, b, false);
      io::Status s = verify(&sr);
      CHECK_FALSE(s.ok());
      CHECK(s.message().find(std::to_string(page)) != std::string::npos);
      // The snapshot's lookups of a key on that page fail too, with no answers.
      std::unique_ptr<TreeDb> t, view;
      REQUIRE(open_db(options(dir.path(), tree, false), &t).ok());
      REQUIRE(open_snapshot_view(std::move(t), false, &view).ok());
      const std::vector<state::StateKey> keys = all_keys(src);
      std::vector<LookupAnswer> a;
      CHECK_FALSE(view->lookup(keys, &a, nullptr).ok());
      CHECK(a.empty());
      test::write_page(dir.path(), page, original, false);
      REQUIRE(verify(&sr).ok());
    }
  }
}

TEST_CASE("snapshot: a database without one works as before; a rebuild without --snapshot drops it") {
  const state::SyntheticState src(kSpec);
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(io::tree_kind_name(tree));
    st::io::test::TempDir dir;
    REQUIRE(build_db(options(dir.path(), tree, false), src, nullptr).ok());
    std::unique_ptr<TreeDb> db, view;
    REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
    std::unique_ptr<SnapshotReader> snap;
    CHECK(db->open_snapshot(&snap).code() == io::Errc::not_found);
    SnapshotVerifyReport sr;
    VerifyReport tr;
    REQUIRE(verify_with_snapshot(*db, &tr, &sr).ok());
    CHECK(tr.ok);
    CHECK_FALSE(sr.present);
    CHECK(open_snapshot_view(std::move(db), true, &view).code() == io::Errc::not_found);

    // Rebuilt in place with a snapshot, then without: each state verifies.
    REQUIRE(build_db(options(dir.path(), tree, true), src, nullptr).ok());
    REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
    REQUIRE(verify_with_snapshot(*db, &tr, &sr).ok());
    CHECK(sr.ok);
    db.reset();
    REQUIRE(build_db(options(dir.path(), tree, false), src, nullptr).ok());
    REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
    REQUIRE(verify_with_snapshot(*db, &tr, &sr).ok());
    CHECK_FALSE(sr.present);
  }
  // RocksDB without a snapshot: no column family, verify as before, no view.
  st::io::test::TempDir dir;
  const DbOptions o = options(dir.path() + "/db", io::TreeKind::mpt, false, StoreKind::rocksdb);
  REQUIRE(build_db(o, src, nullptr).ok());
  std::unique_ptr<TreeDb> db, view;
  REQUIRE(open_db(o, &db).ok());
  std::unique_ptr<SnapshotTable> table;
  CHECK(db->open_snapshot_table(&table).code() == io::Errc::not_found);
  SnapshotVerifyReport sr;
  VerifyReport tr;
  REQUIRE(verify_with_snapshot(*db, &tr, &sr).ok());
  CHECK(tr.ok);
  CHECK_FALSE(sr.present);
  CHECK(open_snapshot_view(std::move(db), true, &view).code() == io::Errc::not_found);
}


TEST_CASE("snapshot on RocksDB: its own column family; lookups equal the tree's; verify reports a changed, a missing and an extra entry") {
  const state::SyntheticState src(kSpec);
  for (io::TreeKind tree : {io::TreeKind::mpt, io::TreeKind::bintrie}) {
    CAPTURE(io::tree_kind_name(tree));
    st::io::test::TempDir dir;
    const DbOptions o = options(dir.path() + "/db", tree, true, StoreKind::rocksdb);
    BuildReport rep;
    REQUIRE(build_db(o, src, &rep).ok());
    CHECK(rep.snapshot_entries >= src.account_count() + src.slot_count());
    std::unique_ptr<TreeDb> db, t2, view;
    REQUIRE(open_db(o, &db).ok());
    REQUIRE(open_db(o, &t2).ok());
    REQUIRE(open_snapshot_view(std::move(t2), true, &view).ok());
    const std::vector<state::StateKey> keys = all_keys(src);
    std::vector<LookupAnswer> ta, sa;
    LookupStats ss;
    REQUIRE(db->lookup(keys, &ta, nullptr).ok());
    REQUIRE(view->lookup(keys, &sa, &ss).ok());
    REQUIRE(sa.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      CAPTURE(i);
      check_same(ta[i], sa[i]);
    }
    CHECK(ss.rounds == 1);  // the whole batch: one MultiGet
    CHECK(ss.page_reads >= keys.size());
    VerifyReport tr;
    SnapshotVerifyReport sr;
    REQUIRE(verify_with_snapshot(*db, &tr, &sr).message() == "");
    CHECK(sr.present);
    CHECK(sr.ok);
    CHECK(sr.entries == tr.leaves);
    CHECK(sr.entries == rep.snapshot_entries);
    db.reset();
    view.reset();

    auto verify_error = [&] {
      std::unique_ptr<TreeDb> d;
      REQUIRE(open_db(o, &d).ok());
      VerifyReport vr;
      SnapshotVerifyReport vs;
      const io::Status s = verify_with_snapshot(*d, &vr, &vs);
      CHECK(s.code() == io::Errc::corrupt_page);
      CHECK_FALSE(vs.ok);
      return s.message();
    };
    const auto [key, value] = st::persist::test::RocksSurgery(o.dir).entry(17);
    {  // a changed value
      std::string changed = value;
      changed.back() = char(changed.back() ^ 0x10);
      st::persist::test::RocksSurgery(o.dir).put(key, changed);
      const std::string e = verify_error();
      CHECK(e.find("snapshot: entry 0x") != std::string::npos);
      CHECK(e.find(", the tree 0x") != std::string::npos);
    }
    {  // a missing entry
      st::persist::test::RocksSurgery(o.dir).erase(key);
      CHECK(verify_error().find("is missing from the snapshot") != std::string::npos);
    }
    {  // an entry the tree lacks
      const std::string extra = key.substr(0, 32) + "x";  // 33 bytes: no tree key is that long
      st::persist::test::RocksSurgery(o.dir).put(key, value);
      st::persist::test::RocksSurgery(o.dir).put(extra, value);
      CHECK(verify_error().find("is not in the tree") != std::string::npos);
      st::persist::test::RocksSurgery(o.dir).erase(extra);
    }
    std::unique_ptr<TreeDb> d;
    REQUIRE(open_db(o, &d).ok());
    REQUIRE(verify_with_snapshot(*d, &tr, &sr).message() == "");
    CHECK(sr.ok);
  }
}

TEST_CASE("snapshot: the commit record's snapshot block round-trips and is checked") {
  CommitInfo c{make_locator(12, 3), "{\"kind\":\"synthetic\"}", {}};
  SnapshotRef r;
  r.entries = 1000;
  r.data_pages = 30;
  r.index_pages = 2;
  r.directory_pages = {77};
  c.snapshot = r;
  std::vector<uint8_t> b = encode_commit_record(c);
  CommitInfo d;
  REQUIRE(decode_commit_record(b, &d).ok());
  REQUIRE(d.snapshot.has_value());
  CHECK(*d.snapshot == r);
  CHECK(d.spec == c.spec);
  // Padded with zeros as in a page: the same.
  b.resize(4080, 0);
  REQUIRE(decode_commit_record(b, &d).ok());
  CHECK(*d.snapshot == r);
  // Without a snapshot: none.
  c.snapshot.reset();
  REQUIRE(decode_commit_record(encode_commit_record(c), &d).ok());
  CHECK_FALSE(d.snapshot.has_value());
  // Truncated directory list, inconsistent counts: corrupt.
  c.snapshot = r;
  b = encode_commit_record(c);
  b.resize(b.size() - 4);
  CHECK(decode_commit_record(b, &d).code() == io::Errc::corrupt_page);
  r.index_pages = 0;
  c.snapshot = r;
  CHECK(decode_commit_record(encode_commit_record(c), &d).code() == io::Errc::corrupt_page);
}

namespace {

// What one tree's snapshot does with a balanceOf-like batch: every other slot of contract 0
// (entries 2, 4, ..., as erc20_balanceof reads them), each key twice.
struct BatchPages {
  uint64_t page_reads = 0;       // device reads of the batch
  size_t distinct_pages = 0;     // distinct data pages the batch's keys route to
  size_t contract_pages = 0;     // distinct data pages holding any slot of contract 0
  size_t contract_span = 0;      // last - first + 1 of those pages (index order)
  uint64_t data_pages = 0;
};

BatchPages batch_pages(io::TreeKind tree, const state::SyntheticState& src, uint64_t reads) {
  st::io::test::TempDir dir;
  BuildReport rep;
  REQUIRE(build_db(options(dir.path(), tree, true), src, &rep).ok());
  std::unique_ptr<TreeDb> db;
  REQUIRE(open_db(options(dir.path(), tree, false), &db).ok());
  std::unique_ptr<SnapshotReader> snap;
  REQUIRE(db->open_snapshot(&snap).ok());
  const SnapshotKeyer keyer{db->manifest().params};
  std::vector<SnapshotKey> all, batch;
  for (uint64_t j = 0; j < src.storage_size(0); ++j) keyer.keys(*src.slot_key(0, j), false, &all);
  for (uint64_t n = 0; n < reads; ++n) batch.push_back(all[size_t(2 * n + 2)]);
  const size_t distinct = batch.size();
  for (size_t i = 0; i < distinct; ++i) batch.push_back(batch[i]);
  std::set<int64_t> routed, contract;
  for (const SnapshotKey& k : batch) routed.insert(snap->route(k.view()));
  for (const SnapshotKey& k : all) contract.insert(snap->route(k.view()));
  std::vector<std::optional<std::vector<uint8_t>>> values;
  SnapshotLookupStats st;
  REQUIRE(snap->lookup(batch, &values, &st).ok());
  CHECK(size_t(std::count_if(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) == batch.size());
  return {st.page_reads, routed.size(), contract.size(), size_t(*contract.rbegin() - *contract.begin() + 1),
          snap->ref().data_pages};
}

}  // namespace

// The binary trie's snapshot reads more pages than the MPT's for the same slots because of
// where its keys put one contract's slots, not because of duplicate reads: the MPT's keys
// (keccak(address) || keccak(slot)) keep a contract's slots in one run of pages, the binary
// trie's (stem = hash(address, tree index)) spread them over the whole table.
TEST_CASE("snapshot: a batch reads each distinct page once; MPT keeps a contract's slots together, binary trie spreads them") {
  const state::SyntheticState src(state::SyntheticSpec{200, 2, 1000, 3});
  const BatchPages mpt = batch_pages(io::TreeKind::mpt, src, 150);
  const BatchPages bin = batch_pages(io::TreeKind::bintrie, src, 150);
  for (const BatchPages& b : {mpt, bin}) {
    CHECK(b.page_reads == b.distinct_pages);  // duplicate keys and keys that share a page: one read
    MESSAGE("reads " << b.page_reads << " contract pages " << b.contract_pages << " span " << b.contract_span
                     << " of " << b.data_pages);
  }
  CHECK(mpt.contract_span == mpt.contract_pages);  // one run
  CHECK(2 * mpt.contract_pages < mpt.data_pages + 4);
  CHECK(10 * bin.contract_pages > 9 * bin.data_pages);  // nearly every page
  CHECK(mpt.page_reads < bin.page_reads);
}
