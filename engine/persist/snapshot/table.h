// snapshot/table: what a reader sees of a flat snapshot (snapshot/format.h), whichever store
// holds it: the arena's pages (SnapshotReader, snapshot/reader.h) or a RocksDB column family
// of its own (snapshot/rocks.h). Both hold the same keys and values (the tree's leaf keys ->
// the leaves' bytes); lookups (get, read-bench, the pipeline's readers) and verify's ordered
// scan go through this interface.
//
// Invariants: an answer comes from the committed state the table was opened on; a failed
// batch returns no answers; scan yields every entry once, keys strictly ascending.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/persist/page_reader.h"
#include "engine/persist/snapshot/format.h"
#include "io/status.h"

namespace st::persist {

// A snapshot key (up to 64 bytes) held by value.
struct SnapshotKey {
  uint8_t bytes[kSnapMaxKey] = {};
  uint8_t len = 0;
  std::span<const uint8_t> view() const { return {bytes, len}; }
  static SnapshotKey of(std::span<const uint8_t> k);
};

// Arena: device reads of whole data pages. RocksDB (no device reads observable per lookup):
// page_reads = keys asked in MultiGet calls, bytes_read = value bytes returned, rounds =
// MultiGet calls, the io_* fields 0.
struct SnapshotLookupStats {
  uint64_t keys = 0;
  uint64_t page_reads = 0;     // device reads
  uint64_t bytes_read = 0;     // device bytes (whole pages)
  uint64_t io_waits = 0;       // blocking polls
  uint64_t io_wait_ns = 0;
  uint64_t reads_in_flight_sum = 0, reads_in_flight_max = 0;
  uint64_t rounds = 0;
};

class SnapshotTable {
 public:
  virtual ~SnapshotTable() = default;
  // (*values)[i]: key i's value, or nullopt when the snapshot holds no such key. cold_pages
  // (arena): drop the page cache first. On error *values is emptied.
  virtual io::Status lookup(std::span<const SnapshotKey> keys, std::vector<std::optional<std::vector<uint8_t>>>* values,
                            SnapshotLookupStats* stats, bool cold_pages = true) = 0;
  // Every entry in ascending key order. fn returns false to stop (scan then returns ok).
  using EntryFn = std::function<bool(std::span<const uint8_t> key, std::span<const uint8_t> value)>;
  virtual io::Status scan(const EntryFn& fn) = 0;
  // Arena: the data and index pages the commit record names; RocksDB: 0 (no pages).
  virtual uint64_t data_pages() const = 0;
  virtual uint64_t index_pages() const = 0;
  // Arena: every data page read from now on adds its device latency (ns) to `sink`.
  // RocksDB: nothing is recorded.
  virtual void set_latency_sink(stats::LogHistogram* sink) { (void)sink; }
  // Every device read so far (arena, right after open: the directory and index pages);
  // RocksDB: zero.
  virtual const ReadCounters& read_counters() const = 0;
};

struct DbFiles;
// The flat snapshot of the commit `files` holds open, on either store (arena: a
// SnapshotReader over its own page cache; RocksDB: its column family): not_found when that
// commit has none. `files` must outlive the table.
io::Status open_snapshot_table_of(DbFiles& files, std::unique_ptr<SnapshotTable>* out);

}  // namespace st::persist
