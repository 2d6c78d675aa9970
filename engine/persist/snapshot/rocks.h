// snapshot/rocks: the flat snapshot on a RocksDB database, in a column family of its own
// ("snapshot") beside the path-keyed nodes of the default one. Keys and values are the
// arena snapshot's (snapshot/format.h: the tree's leaf keys -> the leaves' bytes), one
// RocksDB entry each, in RocksDB's bytewise order (= compare_snapshot_keys).
//
//   build    create_rocks_snapshot, then RocksSnapshotWriter::add per entry (ascending; the
//            build's unsynced batches), finish(); the build's commit (DbFiles::commit_rocks,
//            which flushes every family) records a SnapshotRef with zero counts: the
//            marker that this database has a snapshot (RocksDB keeps no entry count)
//   commit   append_snapshot_writes: a block's SnapshotDelta as writes on the family
//            (erased keys, erased prefixes as one range deletion each, then the puts, so a
//            put wins over an erase of the same key), appended to the block's ONE synced
//            WriteBatch with the tree's nodes and the commit record (commit_frame.h)
//   read     open_rocks_snapshot: a SnapshotTable whose lookup is one MultiGet on the
//            family per batch and whose scan iterates it in key order (verify)
//
// Invariants: the family exists iff the commit record carries a snapshot block (a build
// crashed before its commit holds no state); tree and snapshot change only together, in
// one atomic batch; RocksDB stays inside io/ (io::RocksKvStore names families by index).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/persist/snapshot/table.h"
#include "engine/persist/snapshot/update.h"
#include "engine/persist/snapshot/writer.h"
#include "io/rocksdb_store.h"

namespace st::persist {

struct DbFiles;

inline constexpr std::string_view kSnapshotFamily = "snapshot";

// Creates the (empty) snapshot family of a database being built; *family: its index.
io::Status create_rocks_snapshot(io::RocksKvStore& db, uint32_t* family);

// The build's writer: entries in strictly ascending key order, written in batches.
class RocksSnapshotWriter final : public SnapshotSink {
 public:
  RocksSnapshotWriter(io::RocksKvStore& db, uint32_t family) : db_(db), family_(family) {}
  io::Status add(std::span<const uint8_t> key, std::span<const uint8_t> value) override;
  io::Status finish();  // writes the last batch
  uint64_t entries() const { return entries_; }

 private:
  static constexpr size_t kBatch = 10000;
  io::RocksKvStore& db_;
  uint32_t family_;
  std::vector<std::string> keys_, values_;
  std::string last_key_;
  uint64_t entries_ = 0;
};

// A block's changes as writes on `family`, appended to *out; the views point into `delta`
// and into *range_ends (both must outlive the write).
void append_snapshot_writes(const SnapshotDelta& delta, uint32_t family, std::vector<std::string>* range_ends,
                            std::vector<io::KvWrite>* out);

// The snapshot family of the database `files` holds open (a RocksDB database whose commit
// record names a snapshot): not_found when it has none; corrupt_page when the record names
// one and the family is missing. `files` must outlive the table.
io::Status rocks_snapshot_family(const DbFiles& files, uint32_t* family);
io::Status open_rocks_snapshot(DbFiles& files, std::unique_ptr<SnapshotTable>* out);

}  // namespace st::persist
