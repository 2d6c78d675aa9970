// rocksdb_store_test: batched writes and MultiGet through the RocksDB store, deletes,
// missing keys, persistence across reopen; MultiGet fanned out over threads; a batch's
// order per key; a snapshot view sees whole batches only, none after it, and writes
// nothing. Fails (with a message) without RocksDB.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "io/rocksdb_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;

TEST_CASE("rocksdb store: WriteBatch, MultiGet, delete, reopen") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir dir;
  RocksOptions o;
  o.dir = dir.file("db");
  std::vector<std::string> keys, vals;
  for (int i = 0; i < 500; ++i) {
    keys.push_back("path/" + std::to_string(i * 7919 % 1000));
    std::string v(64 + i % 100, '\0');
    for (size_t j = 0; j < v.size(); ++j) v[j] = char(i * 31 + j);
    vals.push_back(v);
  }
  {
    std::unique_ptr<RocksKvStore> db;
    Status s = RocksKvStore::open(o, &db);
    REQUIRE_MESSAGE(s.ok(), s.message());
    std::vector<KvWrite> w;
    for (size_t i = 0; i < keys.size(); ++i) w.push_back({keys[i], vals[i]});
    REQUIRE(db->write_batch(w).ok());
    std::vector<KvWrite> del = {{keys[3], {}, true}};
    REQUIRE(db->write_batch(del).ok());
    REQUIRE(db->flush().ok());
    CHECK(db->disk_bytes() > 0);
  }
  std::unique_ptr<RocksKvStore> db;
  o.create = false;
  REQUIRE(RocksKvStore::open(o, &db).ok());
  std::vector<std::string_view> q;
  for (const auto& k : keys) q.push_back(k);
  q.push_back("path/absent");
  std::vector<std::string> got;
  std::vector<uint8_t> found;
  REQUIRE(db->multi_get(q, &got, &found).ok());
  REQUIRE(got.size() == q.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(i);
    CHECK(found[i] == (i == 3 ? 0 : 1));
    if (i != 3) CHECK(got[i] == vals[i]);
  }
  CHECK(found.back() == 0);
}

TEST_CASE("rocksdb store: opening a missing database without create is an error value") {
  if (!rocksdb_available()) return;
  st::io::test::TempDir dir;
  RocksOptions o;
  o.dir = dir.file("nope");
  o.create = false;
  std::unique_ptr<RocksKvStore> db;
  Status s = RocksKvStore::open(o, &db);
  CHECK(!s.ok());
  CHECK(s.message().find("rocksdb open") == 0);
}

TEST_CASE("rocksdb store: MultiGet fanned out over read_threads gives every key its own value") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir dir;
  RocksOptions o;
  o.dir = dir.file("db");
  o.read_threads = 8;
  o.sync_writes = false;
  std::unique_ptr<RocksKvStore> db;
  REQUIRE(RocksKvStore::open(o, &db).ok());
  auto key = [](int i) { return "k/" + std::to_string(i * 7919 % 3000); };
  auto value = [](int i, int version) { return std::string(40 + i % 50, char('a' + (i + version) % 26)) + std::to_string(i); };
  std::vector<KvWrite> w;
  std::vector<std::string> ks, vs;
  for (int i = 0; i < 2000; ++i) ks.push_back(key(i)), vs.push_back(value(i, 0));
  for (int i = 0; i < 2000; ++i) w.push_back({ks[i], vs[i]});
  REQUIRE(db->write_batch(w).ok());
  REQUIRE(db->flush().ok());  // half the reads from SST files, half from the memtable
  w.clear();
  for (int i = 1000; i < 2000; ++i) vs[i] = value(i, 1), w.push_back({ks[i], vs[i]});
  REQUIRE(db->write_batch(w).ok());
  // Unsorted, with repeats and absent keys.
  std::vector<std::string> q;
  for (int i = 0; i < 2400; ++i) q.push_back(i < 2000 ? ks[(i * 37) % 2000] : "k/absent/" + std::to_string(i));
  q.push_back(ks[5]);
  std::vector<std::string_view> views(q.begin(), q.end());
  auto check = [&](RocksKvStore& store) {
    std::vector<std::string> got;
    std::vector<uint8_t> found;
    REQUIRE(store.multi_get(views, &got, &found).ok());
    REQUIRE(got.size() == q.size());
    for (size_t i = 0; i < q.size(); ++i) {
      CAPTURE(i);
      const bool present = i < 2000 || i == 2400;
      CHECK(found[i] == (present ? 1 : 0));
      if (present) CHECK(got[i] == vs[i == 2400 ? 5 : (i * 37) % 2000]);
    }
  };
  const uint64_t before = db->read_ranges();
  check(*db);
  CHECK(db->read_ranges() - before == 8);  // 2,401 keys in 8 ranges
  // A few keys stay on the caller's thread (fewer than 16 per range).
  std::vector<std::string> few_got;
  std::vector<uint8_t> few_found;
  REQUIRE(db->multi_get(std::span<const std::string_view>(views.data(), 20), &few_got, &few_found).ok());
  CHECK(db->read_ranges() - before == 9);
  CHECK(few_got[3] == vs[(3 * 37) % 2000]);
  // Two callers at once: each gets its own answers (one of them may read unfanned).
  std::thread other([&] { check(*db); });
  check(*db);
  other.join();
}

TEST_CASE("rocksdb store: a batch's writes of one key keep their order; a range deletion's family keeps its order") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir dir;
  RocksOptions o;
  o.dir = dir.file("db");
  std::unique_ptr<RocksKvStore> db;
  REQUIRE(RocksKvStore::open(o, &db).ok());
  uint32_t side = 0;
  REQUIRE(db->create_family("side", &side).ok());
  // Family 0: sorted for RocksDB, but each key's writes in the given order (the last wins).
  // Family `side`: a put inside a range deleted before it survives, one put before it does not.
  std::vector<KvWrite> w = {
      {"m", "1"},       {"b", "1"},          {"m", {}, true},  {"z", "1"},          {"b", "2"},
      {"z", {}, true},  {"m", "3"},          {"q/1", "old", false, side},          {"q/2", "old", false, side},
      {"q/", "q/\xff", false, side, true},   {"q/2", "new", false, side},          {"a", "1"},
  };
  REQUIRE(db->write_batch(w).ok());
  std::vector<std::string_view> keys = {"a", "b", "m", "z"};
  std::vector<std::string> got;
  std::vector<uint8_t> found;
  REQUIRE(db->multi_get(keys, &got, &found).ok());
  CHECK(found == std::vector<uint8_t>{1, 1, 1, 0});
  CHECK(got[1] == "2");
  CHECK(got[2] == "3");
  std::vector<std::string_view> side_keys = {"q/1", "q/2"};
  REQUIRE(db->multi_get(side_keys, &got, &found, side).ok());
  CHECK(found == std::vector<uint8_t>{0, 1});
  CHECK(got[1] == "new");
}

namespace {
// Every key of `keys` through `db`: their values, "" for a missing one; "!" for each when the
// read fails (no REQUIRE: it runs on other threads too).
std::vector<std::string> values_of(RocksKvStore& db, const std::vector<std::string>& keys) {
  std::vector<std::string_view> q(keys.begin(), keys.end());
  std::vector<std::string> got;
  std::vector<uint8_t> found;
  if (!db.multi_get(q, &got, &found).ok()) return std::vector<std::string>(keys.size(), "!");
  for (size_t i = 0; i < got.size(); ++i)
    if (!found[i]) got[i].clear();
  return got;
}
}  // namespace

TEST_CASE("rocksdb store: a snapshot view reads the batches before it, none after, each whole; it refuses writes") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir dir;
  RocksOptions o;
  o.dir = dir.file("db");
  o.direct_reads = false;
  std::unique_ptr<RocksKvStore> db;
  REQUIRE(RocksKvStore::open(o, &db).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < 64; ++i) keys.push_back("path/" + std::to_string(i));
  // Batch n sets every key to "v<n>", so a view that saw a batch in part would read two values.
  auto write_all = [&](int n) {
    std::string v = "v";
    v += std::to_string(n);
    std::vector<KvWrite> w;
    for (const std::string& k : keys) w.push_back({k, v});
    return db->write_batch(w);
  };
  REQUIRE(write_all(0).ok());
  std::unique_ptr<RocksKvStore> view0;
  REQUIRE(db->snapshot_view(&view0).ok());
  REQUIRE(write_all(1).ok());
  std::vector<KvWrite> del = {{keys[5], {}, true}};
  REQUIRE(db->write_batch(del).ok());
  REQUIRE(db->flush().ok());  // the memtable goes to an SST: the view still reads batch 0
  for (const std::string& v : values_of(*view0, keys)) CHECK(v == "v0");
  const std::vector<std::string> now = values_of(*db, keys);
  CHECK(now[5].empty());
  CHECK(now[6] == "v1");
  size_t scanned = 0;
  REQUIRE(view0->for_each_in(0, [&](std::string_view, std::string_view v) {
    CHECK(v == "v0");
    return ++scanned > 0;
  }).ok());
  CHECK(scanned == keys.size());
  // Views taken while batches land: each reads one batch's value for every key.
  std::atomic<bool> done{false};
  std::atomic<int> mixed{0}, views{0};
  std::thread reader([&] {
    do {
      std::unique_ptr<RocksKvStore> v;
      if (!db->snapshot_view(&v).ok()) {
        mixed.fetch_add(1);
        return;
      }
      std::vector<std::string> got = values_of(*v, keys);
      got.erase(got.begin() + 5);  // deleted in batch 1, written again from batch 2 on
      for (const std::string& x : got)
        if (x != got[0] || x == "!") mixed.fetch_add(1);
      views.fetch_add(1);
    } while (!done.load());
  });
  for (int n = 2; n < 40; ++n) REQUIRE(write_all(n).ok());
  done.store(true);
  reader.join();
  CHECK(mixed.load() == 0);
  CHECK(views.load() > 0);
  // A view writes nothing.
  std::vector<KvWrite> w = {{keys[0], "x"}};
  CHECK(!view0->write_batch(w).ok());
  CHECK(!view0->flush().ok());
  for (const std::string& v : values_of(*view0, keys)) CHECK(v == "v0");
}
