// snapshot_test_util: the snapshot tests' database options, and page surgery on an arena
// database: read one page's payload, change it, and write it back sealed (a valid checksum),
// so what verify sees is a well-formed page with other content, not a torn one; on a
// RocksDB database, entries of the snapshot's column family changed through RocksDB itself.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/record_page.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/snapshot/rocks.h"
#include "engine/persist/tree_db.h"
#include "io/page_format.h"

namespace st::persist::test {

// A small database of `tree` (MPT, or binary trie GD 5 over SHA-256) in dir, buffered reads,
// with or without the flat snapshot, on the arena store or RocksDB.
inline DbOptions options(const std::string& dir, io::TreeKind tree, bool snapshot, StoreKind store = StoreKind::arena) {
  DbOptions o;
  o.dir = dir;
  o.store = store;
  o.params.tree_kind = tree;
  o.params.hash_kind = tree == io::TreeKind::mpt ? io::HashKind::keccak256 : io::HashKind::sha256;
  o.params.group_depth = tree == io::TreeKind::mpt ? 0 : 5;
  o.direct_io = false;
  o.queue_depth = 16;
  o.snapshot = snapshot;
  return o;
}

// The whole page (payload + trailer).
inline std::vector<uint8_t> read_page(const std::string& dir, uint64_t page, uint32_t page_size) {
  std::vector<uint8_t> b(page_size);
  const int fd = ::open((dir + "/pages.arena").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pread(fd, b.data(), page_size, off_t(page * page_size)) == ssize_t(page_size));
  ::close(fd);
  return b;
}

// Writes the page back; reseal: recompute its trailer (else the bytes go as given).
inline void write_page(const std::string& dir, uint64_t page, std::vector<uint8_t> b, bool reseal = true) {
  if (reseal) io::seal_page(b.data(), uint32_t(b.size()), page);
  const int fd = ::open((dir + "/pages.arena").c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, b.data(), b.size(), off_t(page * b.size())) == ssize_t(b.size()));
  ::fsync(fd);
  ::close(fd);
}

// The snapshot's pages (data pages first, in key order) and the commit record's page.
struct SnapshotPages {
  std::vector<uint64_t> pages;
  uint64_t data_pages = 0;
  uint64_t commit_record_page = 0;
  uint32_t page_size = 0;
};
inline SnapshotPages snapshot_pages(const std::string& dir) {
  std::unique_ptr<TreeDb> db;
  REQUIRE(open_any_db(dir, 4, &db).ok());
  std::unique_ptr<SnapshotReader> snap;
  REQUIRE(db->open_snapshot(&snap).ok());
  SnapshotPages p;
  p.pages = snap->pages();
  p.data_pages = snap->ref().data_pages;
  p.commit_record_page = db->manifest().root_page;
  p.page_size = db->manifest().params.page_size;
  return p;
}

// Rewrites data page `page` with record `drop` left out (the page stays well formed).
inline void drop_entry(const std::string& dir, uint64_t page, uint32_t page_size, uint32_t drop) {
  std::vector<uint8_t> b = read_page(dir, page, page_size);
  const uint32_t payload = io::page_payload_bytes(page_size);
  RecordPage rp;
  REQUIRE(decode_record_page(page, {b.data(), payload}, &rp).empty());
  REQUIRE(drop < rp.records.size());
  RecordPageBuilder pb(payload);
  for (uint32_t i = 0; i < rp.records.size(); ++i)
    if (i != drop) pb.add(rp.records[i].kind, {}, rp.records[i].body);
  std::vector<uint8_t> out(page_size, 0);
  pb.finish(out.data());
  write_page(dir, page, out);
}

// Rewrites the commit record with the snapshot's entry count changed by `delta`.
inline void shift_entry_count(const std::string& dir, uint64_t record_page, uint32_t page_size, int64_t delta) {
  std::vector<uint8_t> b = read_page(dir, record_page, page_size);
  const uint32_t payload = io::page_payload_bytes(page_size);
  CommitInfo c;
  REQUIRE(decode_commit_record({b.data(), payload}, &c).ok());
  REQUIRE(c.snapshot.has_value());
  c.snapshot->entries = uint64_t(int64_t(c.snapshot->entries) + delta);
  std::vector<uint8_t> rec = encode_commit_record(c);
  REQUIRE(rec.size() <= payload);
  std::vector<uint8_t> out(page_size, 0);
  std::copy(rec.begin(), rec.end(), out.begin());
  write_page(dir, record_page, out);
}

// The snapshot column family of a RocksDB database (closed), opened for surgery.
struct RocksSurgery {
  std::unique_ptr<io::RocksKvStore> kv;
  uint32_t family = 0;
  explicit RocksSurgery(const std::string& dir) {
    io::RocksOptions ro;
    ro.dir = dir + "/rocksdb";
    ro.create = false;
    ro.direct_reads = false;
    REQUIRE(io::RocksKvStore::open(ro, &kv).ok());
    REQUIRE(kv->family(kSnapshotFamily) > 0);
    family = uint32_t(kv->family(kSnapshotFamily));
  }
  // The n-th entry's key and value.
  std::pair<std::string, std::string> entry(size_t n) {
    std::pair<std::string, std::string> e;
    size_t i = 0;
    REQUIRE(kv->for_each_in(family, [&](std::string_view k, std::string_view v) {
                 if (i++ < n) return true;
                 e = {std::string(k), std::string(v)};
                 return false;
               }).ok());
    REQUIRE(!e.first.empty());
    return e;
  }
  void put(const std::string& k, const std::string& v) {
    const io::KvWrite w{k, v, false, family};
    REQUIRE(kv->write_batch({&w, 1}).ok());
  }
  void erase(const std::string& k) {
    const io::KvWrite w{k, {}, true, family};
    REQUIRE(kv->write_batch({&w, 1}).ok());
  }
};

}  // namespace st::persist::test
