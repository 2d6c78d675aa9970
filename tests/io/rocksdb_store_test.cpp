// rocksdb_store_test: batched writes and MultiGet through the RocksDB store, deletes,
// missing keys, persistence across reopen. Skipped (with a message) without RocksDB.
#include <doctest/doctest.h>

#include <string>
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
