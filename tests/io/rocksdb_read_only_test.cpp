// rocksdb_read_only_test: RocksOptions::read_only opens with DB::OpenForReadOnly: every key
// reads back, no file in the directory is created or changed (so a full disk cannot fail
// it), and writes and flushes are refused with one line instead of reaching RocksDB. The
// free-space check refuses a write batch or flush with "no space left on device: need N
// bytes, have M" before RocksDB starts it, and the database stays usable; files take only
// the space written (no WAL preallocation, which filled a 64 MiB ext4 disk and made a 9 MiB
// build abort). Skipped (with a message) without RocksDB.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/rocksdb_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;

namespace {

// name -> (size, mtime) of every file in dir.
std::map<std::string, std::pair<uint64_t, std::filesystem::file_time_type>> listing(const std::string& dir) {
  std::map<std::string, std::pair<uint64_t, std::filesystem::file_time_type>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out[e.path().filename().string()] = {e.is_regular_file() ? e.file_size() : 0, e.last_write_time()};
  return out;
}

struct Keys {
  std::vector<std::string> keys, vals;
  std::vector<KvWrite> writes() const {
    std::vector<KvWrite> w;
    for (size_t i = 0; i < keys.size(); ++i) w.push_back({keys[i], vals[i]});
    return w;
  }
  std::vector<std::string_view> views() const { return {keys.begin(), keys.end()}; }
};

Keys make_keys(int n, int salt) {
  Keys k;
  for (int i = 0; i < n; ++i) {
    k.keys.push_back("node/" + std::to_string(salt) + "/" + std::to_string(i));
    k.vals.push_back(std::string(40 + i % 50, char('a' + (i + salt) % 26)));
  }
  return k;
}

bool all_found(RocksKvStore& db, const Keys& k) {
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  if (!db.multi_get(k.views(), &values, &found).ok()) return false;
  for (size_t i = 0; i < k.keys.size(); ++i)
    if (!found[i] || values[i] != k.vals[i]) return false;
  return true;
}

}  // namespace

TEST_CASE("rocksdb read-only: reads every key, writes no file, refuses writes with one line") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir tmp;
  RocksOptions o;
  o.dir = tmp.file("db");
  const Keys flushed = make_keys(300, 1), in_wal = make_keys(50, 2);
  {
    std::unique_ptr<RocksKvStore> db;
    REQUIRE(RocksKvStore::open(o, &db).ok());
    REQUIRE(db->write_batch(flushed.writes()).ok());
    REQUIRE(db->flush().ok());
    REQUIRE(db->write_batch(in_wal.writes()).ok());  // only in the WAL at close
  }
  const auto before = listing(o.dir);

  RocksOptions r = o;
  r.read_only = true;
  std::unique_ptr<RocksKvStore> db;
  const Status s = RocksKvStore::open(r, &db);
  REQUIRE_MESSAGE(s.ok(), s.message());
  CHECK(all_found(*db, flushed));
  CHECK(all_found(*db, in_wal));  // the WAL is replayed in memory, not rewritten

  const Status w = db->write_batch(make_keys(5, 3).writes());
  CHECK(w.code() == Errc::bad_argument);
  CHECK(w.message() == "rocksdb " + o.dir + " is open read-only: a write batch refused");
  const Status f = db->flush();
  CHECK(f.code() == Errc::bad_argument);
  CHECK(f.message() == "rocksdb " + o.dir + " is open read-only: a flush refused");
  CHECK(all_found(*db, flushed));
  {  // a second read-only instance at the same time (no LOCK taken)
    std::unique_ptr<RocksKvStore> second;
    REQUIRE(RocksKvStore::open(r, &second).ok());
    CHECK(all_found(*second, in_wal));
  }
  db.reset();
  CHECK(listing(o.dir) == before);  // no WAL, MANIFEST, OPTIONS or LOG written

  RocksOptions missing = r;
  missing.dir = tmp.file("none");
  CHECK(!RocksKvStore::open(missing, &db).ok());
  CHECK(!std::filesystem::exists(missing.dir));
}

TEST_CASE("rocksdb full disk: a write batch or flush without room is refused before RocksDB starts it") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir tmp;
  RocksOptions o;
  o.dir = tmp.file("db");
  const Keys first = make_keys(200, 1), second = make_keys(200, 2);
  {
    std::unique_ptr<RocksKvStore> db;
    REQUIRE(RocksKvStore::open(o, &db).ok());
    REQUIRE(db->write_batch(first.writes()).ok());
    REQUIRE(db->flush().ok());
  }
  {
    RocksOptions full = o;
    full.free_space_margin_bytes = uint64_t(1) << 60;  // more than any filesystem here has free
    std::unique_ptr<RocksKvStore> db;
    const Status open = RocksKvStore::open(full, &db);  // opening for writing writes files
    CHECK(open.code() == Errc::full);
    CHECK_MESSAGE(open.message().rfind("no space left on device: need ", 0) == 0, open.message());
    full.free_space_margin_bytes = 0;
    REQUIRE(RocksKvStore::open(full, &db).ok());
    full.free_space_margin_bytes = uint64_t(1) << 60;
    db->set_free_space_margin_bytes(full.free_space_margin_bytes);
    const Status w = db->write_batch(second.writes());
    CHECK(w.code() == Errc::full);
    CHECK_MESSAGE(w.message().rfind("no space left on device: need ", 0) == 0, w.message());
    CHECK(w.message().find(" bytes, have ") != std::string::npos);
    const Status f = db->flush();
    CHECK(f.code() == Errc::full);
    CHECK(all_found(*db, first));  // reads go on
  }
  std::unique_ptr<RocksKvStore> db;
  REQUIRE(RocksKvStore::open(o, &db).ok());  // usable: nothing half-written
  CHECK(all_found(*db, first));
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  REQUIRE(db->multi_get(second.views(), &values, &found).ok());
  for (uint8_t x : found) CHECK(x == 0);
  REQUIRE(db->write_batch(second.writes()).ok());
  CHECK(all_found(*db, second));
}

TEST_CASE("rocksdb full disk: the WAL takes the space written, not a preallocated write buffer") {
  REQUIRE_MESSAGE(rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  st::io::test::TempDir tmp;
  RocksOptions o;
  o.dir = tmp.file("db");
  std::unique_ptr<RocksKvStore> db;
  REQUIRE(RocksKvStore::open(o, &db).ok());
  REQUIRE(db->write_batch(make_keys(20, 1).writes()).ok());  // ~2 KB, synced to the WAL
  uint64_t wal_files = 0, wal_allocated = 0;
  for (const auto& e : std::filesystem::directory_iterator(o.dir)) {
    if (e.path().extension() != ".log") continue;
    struct stat st;
    REQUIRE(::stat(e.path().c_str(), &st) == 0);
    ++wal_files;
    wal_allocated += uint64_t(st.st_blocks) * 512;
  }
  CHECK(wal_files >= 1);
  CHECK_MESSAGE(wal_allocated < (1u << 20), "WAL holds " << wal_allocated << " bytes of disk");
}
