// snapshot/reader: the read side of the flat snapshot on the arena store (snapshot/format.h),
// a SnapshotTable (snapshot/table.h).
//
//   open(store, ref)   reads the directory pages, then the index pages (one submission per
//                      level), into the in-memory index: the first key and page id of every
//                      data page (checked: ascending, as many as ref says)
//   lookup(keys)       a batch of N keys at the store's queue depth: each key's data page is
//                      found in memory (binary search), requested from the streamed
//                      PageReader (one read per distinct page: keys that share a page share
//                      its read), and searched when it lands. This is the call a prefetch
//                      stage makes: values and the device reads it took.
//   scan(fn)           every entry in key order (verify), a window of data pages at a time;
//                      checks the order across pages, each page's first key against the
//                      index, and the entry count
//
// Invariants: an answer comes only from a page whose checksum verified (io layer) and whose
// record layout decoded (record_page.h); a corrupt page fails the whole batch (no answers),
// naming the page. The reader sees the pages of the commit whose ref it was given; the
// caller keeps that commit readable (a reader pin, db_files.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/persist/page_reader.h"
#include "engine/persist/snapshot/format.h"
#include "engine/persist/snapshot/table.h"
#include "io/node_store.h"
#include "io/status.h"

namespace st::persist {

struct DbFiles;

class SnapshotReader final : public SnapshotTable {
 public:
  // Errors: a corrupt or inconsistent directory / index page (corrupt_page, naming it).
  static io::Status open(io::NodeStore& store, const SnapshotRef& ref, std::unique_ptr<SnapshotReader>* out);

  // (*values)[i]: key i's value, or nullopt when the snapshot holds no such key. cold_pages:
  // drop the page cache first. On error *values is emptied.
  io::Status lookup(std::span<const SnapshotKey> keys, std::vector<std::optional<std::vector<uint8_t>>>* values,
                    SnapshotLookupStats* stats, bool cold_pages = true) override;

  // Every entry in ascending key order. fn returns false to stop (scan then returns ok).
  io::Status scan(const EntryFn& fn) override;
  uint64_t data_pages() const override { return ref_.data_pages; }
  uint64_t index_pages() const override { return ref_.index_pages; }

  const SnapshotRef& ref() const { return ref_; }

  // The in-memory index, for a commit that rewrites some data pages (snapshot/update.h).
  size_t data_page_count() const { return data_page_.size(); }
  uint64_t data_page_id(size_t i) const { return data_page_[i]; }
  std::span<const uint8_t> first_key(size_t i) const { return {first_keys_.data() + kSnapMaxKey * i, first_key_len_[i]}; }
  // The data page that would hold `key`, or -1 when the key sorts before every page.
  int64_t route(std::span<const uint8_t> key) const;
  // Reads data pages (by index) into the cache, dropping what it held; then entries_of.
  io::Status load_data_pages(std::span<const size_t> indices);
  // The entries of a loaded data page, in order (checked as scan checks them).
  io::Status entries_of(size_t index, const EntryFn& fn) const;
  const std::vector<uint64_t>& index_page_ids() const { return index_page_ids_; }
  // Every page the snapshot occupies (data, index, directory): what a commit that replaces
  // it releases.
  std::vector<uint64_t> pages() const;
  uint64_t index_bytes() const;  // memory held by the in-memory index
  // Every data page read from now on adds its device latency (ns) to `sink` (nullptr stops it).
  void set_latency_sink(stats::LogHistogram* sink) override { reader_.set_latency_sink(sink); }
  // Every device read of this reader so far (right after open: the directory and index pages).
  const ReadCounters& read_counters() const override { return reader_.counters(); }

 private:
  SnapshotReader(io::NodeStore& store, SnapshotRef ref);
  io::Status load_index();
  // Searches a loaded data page.
  io::Status find_in_page(uint64_t page, std::span<const uint8_t> key, std::optional<std::vector<uint8_t>>* out) const;

  io::NodeStore& store_;
  SnapshotRef ref_;
  PageReader reader_;
  std::vector<uint64_t> index_page_ids_;
  std::vector<uint64_t> data_page_;        // per data page, in key order
  std::vector<uint8_t> first_key_len_;     // per data page
  std::vector<uint8_t> first_keys_;        // kSnapMaxKey bytes per data page
};

// The snapshot of the commit `files` holds open (its own page cache over the arena store):
// not_found when that commit has none.
io::Status open_snapshot_of(DbFiles& files, std::unique_ptr<SnapshotReader>* out);

}  // namespace st::persist
