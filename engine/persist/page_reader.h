// page_reader: the read side of the persistent tries. A lookup batch resolves level by
// level: the caller collects the locators it needs next (all keys, one depth), load()
// reads every distinct page among them that is not cached in ONE submission (the store
// keeps the device queue topped up to its depth) and parses them; record() then serves any
// record of a loaded page without I/O, so a walk continues through the records that share
// a page until it needs the next one.
//
// Counters: rounds (load() calls that read at least one page), page reads, bytes, and the
// reads of each round, so a command can say "4 rounds, 3.9 reads per key".
//
// Invariants: a record is returned only from a page whose checksum verified and whose
// layout decoded (record_page.h); a failed read (corrupt page, errno) is an error naming
// the page; nothing is cached from a failed round.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/persist/record_page.h"
#include "io/node_store.h"

namespace st::persist {

struct ReadCounters {
  uint64_t rounds = 0;
  uint64_t page_reads = 0;
  uint64_t bytes_read = 0;        // device bytes (whole pages)
  uint64_t cache_hits = 0;        // pages asked for that were already loaded
  uint64_t read_wall_ns = 0;      // inside load(): submission to the last completion
  std::vector<uint32_t> reads_per_round;
};

class PageReader {
 public:
  explicit PageReader(io::NodeStore& store);
  PageReader(const PageReader&) = delete;
  PageReader& operator=(const PageReader&) = delete;

  // Loads the pages of `locators` (kNoLocator entries are ignored) that are not cached.
  io::Status load(std::span<const Locator> locators);
  io::Status load_pages(std::span<const uint64_t> page_ids);
  bool loaded(uint64_t page_id) const { return pages_.count(page_id) != 0; }
  // A record of a loaded page; an error (naming the locator) for an index past the page's
  // records or a page that is not loaded.
  io::Status record(Locator l, RecordView* out) const;
  // Drops every cached page (cold-per-batch experiments); counters are kept.
  void clear();
  size_t cached_pages() const { return pages_.size(); }

  const ReadCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }

 private:
  struct Page {
    std::unique_ptr<uint8_t[]> bytes;
    RecordPage parsed;
  };
  io::NodeStore& store_;
  std::unordered_map<uint64_t, Page> pages_;
  std::vector<uint64_t> want_;
  ReadCounters counters_;
};

}  // namespace st::persist
