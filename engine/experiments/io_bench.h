// io_bench: the protocol of `statetree io-bench`, the raw device baseline: uniformly random
// page reads through the flat arena store (O_DIRECT + io_uring) at each queue depth, beside
// a store-less io_uring loop over the same page sequence and, optionally, the same count of
// page-payload-sized values read from RocksDB. The "device's amortized cost" that
// read-bench's per-node I/O cost is held to.
//
//   create + fill the file with sealed pages (or reuse an existing one); [rocksdb: fill
//   PATH.rocksdb with `pages` incompressible payload-sized values, one bulk load + flush]
//   for each repetition, for each queue depth Q, side by side:
//     store    [cold: evict] -> open a store at Q -> warm-up reads (QD1) -> timed reads
//     raw      [cold: evict] -> warm-up + timed reads through io/raw_reads.h, the same page
//              sequence (unless no_raw or buffered: the raw loop always reads O_DIRECT);
//              store / raw order alternates by repetition
//     rocksdb  [cold: evict its files] -> open -> warm-up (batches of 1) -> timed random
//              MultiGet batches of Q keys
//   files this run created are deleted at the end (and on failure) unless keep.
//
// Invariants: the page sequences are functions of (seed, repetition, queue depth index)
// alone, the same for store and raw; every store read verifies its page (a corrupt page
// stops the run). Nothing here prints: progress and the fill announcements go to callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/status.h"

namespace st::experiments {

struct IoBenchOptions {
  std::string path;                  // the arena file (must not exist unless reuse)
  uint64_t size_mib = 256;           // of a file this run creates
  uint64_t page_size = 4096;         // 4096 or 16384
  std::vector<uint32_t> queue_depths;
  uint64_t reads = 4096;             // timed random reads per queue depth and repetition
  uint64_t reps = 3;
  uint64_t warmup_reads = 32;        // untimed QD1 reads before each timed run
  uint64_t seed = 1;
  bool cold = false;                 // evict before each timed run
  bool reuse = false;                // read an existing arena file (and PATH.rocksdb) instead of creating one
  bool keep = false;                 // keep the files this run created
  bool buffered = false;             // no O_DIRECT (and no raw baseline)
  bool no_raw = false;
  bool rocksdb = false;
  std::function<void(const std::string& line)> announce;        // one line before each fill
  std::function<void(uint64_t done, uint64_t total)> progress;  // before each (repetition, queue depth)
};

// One timed run: IOPS, amortized us per read (wall / reads), per-read latency in us (mean and
// fio's percentiles), MB/s (reads x bytes per read / wall, 10^6 bytes).
struct ReadRateRun {
  double iops = 0, us_per_read = 0, lat_mean_us = 0, lat_p50_us = 0, lat_p99_us = 0, lat_p90_us = 0,
         lat_p999_us = 0, mb_per_s = 0;
};
// Per queue depth, one entry per repetition.
struct IoBenchQueueDepth {
  uint32_t qd = 0;
  std::vector<ReadRateRun> store, raw, rocksdb;
  std::vector<double> store_over_raw;  // store us per read / raw us per read
};

struct IoBenchResult {
  bool file_existed = false;
  uint64_t pages = 0;                // the arena's capacity
  double fill_seconds = 0;           // of a file this run created
  bool direct_io = false, registered_buffers = false, registered_file = false;
  std::string feature_notes;         // why an optional feature is off ("" when all are on)
  bool raw = false;                  // the raw baseline ran
  std::string cold_protocol, cold_detail;  // the last eviction's (when cold)
  double warm_first_read_us = 0, warm_last_read_us = 0;  // the last warm-up's
  std::vector<IoBenchQueueDepth> by_qd;  // in options.queue_depths order
  // rocksdb
  std::string rocks_dir;
  uint32_t rocks_value_bytes = 0;    // the arena's page payload
  uint64_t rocks_disk_bytes = 0;
  double rocks_fill_seconds = 0;
};

// How a run stopped: ok, or the first failure (one line) and whether the input is at fault
// (bad options, files in the way or missing, an arena file that does not open) or the run.
struct IoBenchStatus {
  io::Status status;
  bool bad_input = false;
  bool ok() const { return status.ok(); }
};

IoBenchStatus run_io_bench(const IoBenchOptions& options, IoBenchResult* out);

}  // namespace st::experiments
