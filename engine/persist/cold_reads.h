// cold_reads: the io-level pieces of a cold read measurement, wrapped for a TreeDb so the
// CLI (workloads/) never includes io/ headers:
//   make_db_cold   evict the database's files from the page cache (io::make_cold:
//                  drop_caches when permitted, else posix_fadvise; the result says which)
//   warm_up_db     wake the I/O path before timing (machine.md: the first reads after
//                  idle are ~10x slower): single O_DIRECT page reads at QD1 of the largest
//                  data file, raw (no store, no cache the lookups use)
//   raw_page_reads the device reference: uniformly random page reads of the arena's
//                  allocated pages [0, page_high_water) at a queue depth, through the
//                  store-less io_uring loop (io/raw_reads.h): what a page read costs the
//                  device, side by side with what a lookup's page read costs the engine
//   device_reference  the three in a row on a database directory, as `run --raw-loop` and
//                  read-bench take the reference: opened for reading, evicted (cold),
//                  woken, then the raw reads at the queue depth
// Invariants: nothing here reads through the TreeDb's own reader, so no engine cache is
// warmed; every function is an error value (never a crash) for a missing file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/node_store.h"  // before tree_db.h, whose page_store() names io::NodeStore
#include "engine/persist/tree_db.h"
#include "io/status.h"

namespace st::persist {

struct ColdInfo {
  std::string protocol;  // "drop_caches" or "fadvise_dontneed"
  std::string detail;    // why drop_caches was not used ("" when it was)
};
io::Status make_db_cold(const TreeDb& db, bool allow_drop_caches, ColdInfo* out);

struct WarmUpInfo {
  uint32_t reads = 0;
  double first_read_us = 0, last_read_us = 0;
};
io::Status warm_up_db(const TreeDb& db, uint32_t reads, uint64_t seed, WarmUpInfo* out);

struct RawReadFigures {
  uint64_t reads = 0;
  uint64_t wall_ns = 0;
  std::vector<uint64_t> latency_ns;  // one per read, completion order
  double us_per_read() const { return reads ? double(wall_ns) / 1e3 / double(reads) : 0; }
  double latency_us_percentile(double q) const;  // nearest rank, 0 < q <= 1
};
// Arena databases only (bad_argument for RocksDB: it has no page file to read).
io::Status raw_page_reads(const TreeDb& db, uint64_t reads, uint32_t queue_depth, uint64_t seed,
                          RawReadFigures* out);

// The device's amortized cost of a page read at a queue depth, on database `dir` (arena).
struct DeviceReference {
  uint64_t reads = 0;
  double us_per_read = 0;  // wall time / reads
  double p50_us = 0;       // the reads' median latency
};
io::Status device_reference(const std::string& dir, uint64_t reads, uint32_t queue_depth, bool cold,
                            uint32_t warm_up_reads, uint64_t seed, DeviceReference* out);

// The nearest-rank percentile (0 < q <= 1) of an unsorted sample; 0 for an empty one.
uint64_t percentile_ns(std::vector<uint64_t> sample, double q);

}  // namespace st::persist
