// snapshot/writer: writes a whole snapshot table (snapshot/format.h) into fresh pages of the
// commit in progress, through the same PageWriter as the tree, so that one CowSpace commit
// (one MANIFEST publish) covers tree and snapshot.
//
//   SnapshotWriter sw(w);
//   sw.add(key, value) ...          entries in strictly ascending key order; a binary-trie
//                                   code-hash leaf (stem || 1) stays on the page of its
//                                   basic-data leaf (stem || 0), so one read answers an account
//   sw.finish(&ref)                 writes the last data page, the index pages and the
//                                   directory pages; ref goes into the commit record
//
// A block commit (snapshot/update.h) rewrites only the data pages its changes reach: it
// hands the untouched ones over as they are (add_existing_page) and ends each rewritten run
// with end_run(), so a rewritten page never absorbs a neighbour it did not read.
//
// Invariants: keys strictly ascending (an out-of-order key is Errc::bad_argument, nothing
// published: the caller aborts the commit); a data page is written once it is full, so
// memory holds one page of entries plus the first key of every data page.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/persist/page_writer.h"
#include "engine/persist/snapshot/format.h"
#include "io/status.h"

namespace st::persist {

// Where a build hands the snapshot's entries, in strictly ascending key order: the arena's
// pages (SnapshotWriter) or a RocksDB column family (RocksSnapshotWriter, snapshot/rocks.h).
class SnapshotSink {
 public:
  virtual ~SnapshotSink() = default;
  virtual io::Status add(std::span<const uint8_t> key, std::span<const uint8_t> value) = 0;
};

class SnapshotWriter final : public SnapshotSink {
 public:
  explicit SnapshotWriter(PageWriter& w);
  io::Status add(std::span<const uint8_t> key, std::span<const uint8_t> value) override;
  // Writes the entries added so far as the run's last page (none: nothing).
  io::Status end_run() { return flush_page(0); }
  // A data page kept from the previous commit (after end_run()): its id and first key.
  io::Status add_existing_page(uint64_t page, std::span<const uint8_t> first_key);
  io::Status finish(SnapshotRef* out);
  // True when `key` must share a page with `prev` (stem || 1 after stem || 0).
  static bool glued(std::span<const uint8_t> prev, std::span<const uint8_t> key);

  uint64_t entries() const { return entries_; }
  // Pages this writer wrote (data pages kept from before not counted).
  uint64_t pages_written() const { return data_written_ + index_pages_ + directory_pages_; }

 private:
  io::Status flush_page(size_t keep_last);  // writes all but the last keep_last pending entries

  PageWriter& w_;
  uint32_t payload_;
  std::vector<std::vector<uint8_t>> pending_;  // entry bodies of the open data page
  uint32_t pending_bytes_ = 0;                 // page header + their footprints
  std::vector<uint8_t> last_key_;
  bool have_last_ = false;
  uint64_t entries_ = 0;
  std::vector<uint64_t> data_pages_;
  std::vector<std::vector<uint8_t>> first_keys_;  // of each data page
  uint64_t index_pages_ = 0, directory_pages_ = 0, data_written_ = 0;
  std::vector<uint8_t> page_;
};

}  // namespace st::persist
