// cli_io_bench: `statetree io-bench`, the raw device baseline: uniformly random page reads
// through the flat arena store (O_DIRECT + io_uring) at each queue depth, reporting IOPS,
// per-read latency (mean and fio's percentiles p50, p90, p99, p99.9), bandwidth (MB/s =
// reads x page size / wall, 10^6 bytes) and microseconds per read amortized (wall / reads).
// This is the "device's amortized cost" that read-bench's per-node I/O cost is held to.
//
// Protocol per run: create + fill the file with sealed pages (or --reuse an existing one),
// then for each repetition and each queue depth, side by side: [--cold: evict] -> open a
// store at that QD -> warm-up reads (QD1) -> timed reads; then (unless --no-raw) the same
// page sequence through a store-less io_uring loop (io/raw_reads.h), order alternating by
// repetition, and the ratio store/raw of the amortized cost per read. With --rocksdb, the
// same number of page-payload-sized values in RocksDB (PATH.rocksdb), read by random
// MultiGet batches of QD keys, as the LSM side of the "which database" comparison. Files it created are deleted
// unless --keep. Exit: 0 ok, 1 I/O error or corrupt page, 2 bad usage.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/stats/summary.h"
#include "io/arena_store.h"
#include "io/cold_cache.h"
#include "io/random_reads.h"
#include "io/raw_reads.h"
#include "io/rocksdb_store.h"
#include "workloads/cli_args.h"
#include "workloads/report.h"
#include "workloads/commands.h"

namespace st::cli {
namespace {

struct QdRun {
  double iops, us_per_read, lat_mean_us, lat_p50_us, lat_p99_us, lat_p90_us, lat_p999_us, mb_per_s;
};

// One timed run's figures; bytes_per_read: the page (store, raw) or value (RocksDB) size.
QdRun to_run(const io::RandomReadResult& r, double bytes_per_read) {
  const stats::Latency l = stats::latency(r.latency_ns);
  const double mbps = r.wall_ns ? double(r.reads) * bytes_per_read / (double(r.wall_ns) * 1e-9) / 1e6 : 0;
  return {r.iops(), r.us_per_read(), l.mean / 1e3, l.p50 / 1e3, l.p99 / 1e3, l.p90 / 1e3, l.p999 / 1e3, mbps};
}

nlohmann::json runs_json(const std::vector<QdRun>& runs);

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

nlohmann::json summary_json(const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); }

int fail(const std::string& msg, int code) {
  std::fprintf(stderr, "statetree io-bench: %s\n", msg.c_str());
  return code;
}

// Writes every page once (sealed, deterministic payload) at QD 64, then fdatasync.
io::Status fill(io::ArenaFileStore& store) {
  const uint32_t payload = store.payload_bytes();
  const uint32_t batch = 256;
  std::vector<unsigned char> bufs(size_t(batch) * payload);
  std::vector<io::PageOp> ops;
  for (uint64_t first = 0; first < store.capacity_pages(); first += batch) {
    ops.clear();
    for (uint64_t p = first; p < std::min<uint64_t>(first + batch, store.capacity_pages()); ++p) {
      unsigned char* b = bufs.data() + size_t(p - first) * payload;
      for (uint32_t i = 0; i < payload; i += 8) {
        const uint64_t v = (p * 0x9e3779b97f4a7c15ull) ^ i;
        std::memcpy(b + i, &v, std::min<uint32_t>(8, payload - i));
      }
      ops.push_back({io::PageOpKind::write, p, b, p});
    }
    if (io::Status s = io::run_batch(store, ops); !s.ok()) return s;
  }
  return store.sync();
}

nlohmann::json runs_json(const std::vector<QdRun>& runs) {
  std::vector<double> iops, us, mean, p50, p90, p99, p999, mbps;
  for (const QdRun& r : runs) {
    iops.push_back(r.iops);
    us.push_back(r.us_per_read);
    mean.push_back(r.lat_mean_us);
    p50.push_back(r.lat_p50_us);
    p90.push_back(r.lat_p90_us);
    p99.push_back(r.lat_p99_us);
    p999.push_back(r.lat_p999_us);
    mbps.push_back(r.mb_per_s);
  }
  return {{"iops", summary_json(iops)},
          {"us_per_read_amortized", summary_json(us)},
          {"latency_us_mean", summary_json(mean)},
          {"latency_us_p50", summary_json(p50)},
          {"latency_us_p90", summary_json(p90)},
          {"latency_us_p99", summary_json(p99)},
          {"latency_us_p99_9", summary_json(p999)},
          {"mb_per_s", summary_json(mbps)}};
}

}  // namespace

int cmd_io_bench(int argc, char** argv) {
  Args args("statetree io-bench",
            "Raw random page reads through the arena store (O_DIRECT + io_uring) at each queue depth:\n"
            "IOPS, latency per read (mean, p50, p90, p99, p99.9), MB/s and us per read amortized (the device baseline).");
  args.option("file", "PATH", "arena file to create (must not exist unless --reuse)");
  args.option_u64("size-mib", "M", "file size in MiB", 1, 1u << 20, 256);
  args.option_u64("page-size", "B", "page size: 4096 or 16384", 4096, 16384, 4096);
  args.option_u64_list("qd", "LIST", "queue depths, comma-separated", 1, 4096, "1,8,32,64");
  args.option_u64("reads", "N", "timed random reads per queue depth and repetition", 1, 100000000, 4096);
  args.option_u64("reps", "R", "repetitions (queue depths interleaved within each)", 1, 1000, 3);
  args.option_u64("warmup", "W", "untimed QD1 reads before each timed run (first reads after idle are slow)", 0, 100000, 32);
  args.option_u64("seed", "S", "random page sequence seed", 0, UINT64_MAX, 1);
  args.pin_option();
  args.flag("cold", "evict before each timed run: drop_caches when permitted (root), else posix_fadvise");
  args.flag("reuse", "use an existing arena file of the given page size instead of creating one");
  args.flag("keep", "keep the file this run created");
  args.flag("buffered", "no O_DIRECT (for comparison)");
  args.flag("no-raw", "skip the store-less io_uring baseline");
  args.flag("rocksdb", "also read the same count of payload-sized values from RocksDB (PATH.rocksdb), MultiGet batches of QD");
  args.flag("json", "print one JSON object on stdout");
  args.require("file");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;

  const uint64_t size_mib = args.get_u64("size-mib");
  const uint64_t page_size = args.get_u64("page-size");
  const std::vector<uint64_t> qds = args.get_u64_list("qd");
  const uint64_t reads = args.get_u64("reads");
  const uint64_t reps = args.get_u64("reps");
  const uint64_t warmup = args.get_u64("warmup");
  const uint64_t seed = args.get_u64("seed");
  const std::string path = args.str("file");
  if (!io::valid_page_size(uint32_t(page_size)) || page_size > 16384)
    return fail("--page-size must be 4096 or 16384 (got " + std::to_string(page_size) + ")", 2);
  const bool json = args.given("json"), cold = args.given("cold"), reuse = args.given("reuse");

  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (existed && !reuse) return fail(path + " exists; remove it or pass --reuse", 2);
  if (!existed && reuse) return fail(path + " does not exist (--reuse needs an arena file)", 2);
  const uint64_t pages = (size_mib << 20) / page_size;
  const bool rocks = args.given("rocksdb");
  const std::string rocks_dir = path + ".rocksdb";
  if (rocks && !io::rocksdb_available()) return fail("--rocksdb: this build has no RocksDB", 2);
  const bool rocks_existed = rocks && std::filesystem::exists(rocks_dir, ec);
  if (rocks_existed && !reuse) return fail(rocks_dir + " exists; remove it or pass --reuse", 2);

  io::ArenaOptions o;
  o.path = path;
  o.page_size = uint32_t(page_size);
  o.capacity_pages = existed ? 0 : pages;
  o.create = !existed;
  o.direct_io = !args.given("buffered");
  o.queue_depth = 64;
  bool created = false;
  bool rocks_created = false;
  auto cleanup = [&] {
    if (created && !args.given("keep")) std::filesystem::remove(path, ec);
    if (rocks_created && !args.given("keep")) std::filesystem::remove_all(rocks_dir, ec);
  };

  double fill_s = 0;
  io::ArenaFeatures features;
  uint64_t capacity = 0;
  {
    std::unique_ptr<io::ArenaFileStore> store;
    io::Status s = io::ArenaFileStore::open(o, &store);
    if (!s.ok()) return fail(s.message(), s.code() == io::Errc::unsupported ? 1 : 2);
    created = !existed;
    features = store->features();
    capacity = store->capacity_pages();
    if (!existed) {
      if (!json) std::fprintf(stderr, "io-bench: filling %s (%llu pages of %llu B)...\n", path.c_str(),
                              (unsigned long long)capacity, (unsigned long long)page_size);
      const double t0 = now_s();
      s = fill(*store);
      fill_s = now_s() - t0;
      if (!s.ok()) { cleanup(); return fail("fill: " + s.message(), 1); }
    }
  }
  o.create = false;
  o.capacity_pages = 0;

  const uint32_t payload = io::page_payload_bytes(uint32_t(page_size));
  double rocks_fill_s = 0;
  io::RocksOptions ro;
  ro.dir = rocks_dir;
  if (rocks && !rocks_existed) {
    ro.sync_writes = false;  // the fill is one bulk load; flush() below makes it durable
    std::unique_ptr<io::RocksKvStore> db;
    if (io::Status s = io::RocksKvStore::open(ro, &db); !s.ok()) { cleanup(); return fail(s.message(), 1); }
    rocks_created = true;
    if (!json) std::fprintf(stderr, "io-bench: filling %s (%llu values of %u B)...\n", rocks_dir.c_str(),
                            (unsigned long long)capacity, payload);
    const double t0 = now_s();
    std::vector<std::string> keys, values;
    std::vector<io::KvWrite> batch;
    for (uint64_t first = 0; first < capacity; first += 1024) {
      keys.clear();
      values.clear();
      batch.clear();
      for (uint64_t i = first; i < std::min<uint64_t>(first + 1024, capacity); ++i) {
        keys.push_back(io::rocks_bench_key(i));
        std::string v(payload, '\0');  // incompressible, like node hashes
        uint64_t x = i;
        for (uint32_t b = 0; b < payload; b += 8) {
          const uint64_t r = io::random_page(x, ~uint64_t(0));
          std::memcpy(v.data() + b, &r, std::min<uint32_t>(8, payload - b));
        }
        values.push_back(std::move(v));
      }
      for (size_t k = 0; k < keys.size(); ++k) batch.push_back({keys[k], values[k]});
      if (io::Status s = db->write_batch(batch); !s.ok()) { cleanup(); return fail(s.message(), 1); }
    }
    if (io::Status s = db->flush(); !s.ok()) { cleanup(); return fail(s.message(), 1); }
    rocks_fill_s = now_s() - t0;
  }
  ro.sync_writes = true;
  ro.create = false;
  uint64_t rocks_bytes = 0;

  // The raw baseline always reads with O_DIRECT: against a buffered store it would compare
  // the page cache with the device, so --buffered runs without it.
  const bool raw = !args.given("no-raw") && !args.given("buffered");
  std::vector<std::vector<QdRun>> runs(qds.size()), raw_runs(qds.size()), rocks_runs(qds.size());
  std::vector<std::vector<double>> ratios(qds.size());
  io::ColdResult cold_result;
  io::WarmUpResult last_warm;
  report::Progress progress("io-bench", reps * qds.size());
  for (uint64_t rep = 0; rep < reps; ++rep) {
    for (size_t qi = 0; qi < qds.size(); ++qi) {
      if (!json) progress.update(rep * qds.size() + qi);
      const uint32_t qd = uint32_t(qds[qi]);
      o.queue_depth = qd;
      const uint64_t run_seed = seed + rep * 1000003 + qi * 101;
      auto evict = [&]() -> io::Status {
        if (!cold) return {};
        const std::string files[] = {path};
        return io::make_cold(files, true, &cold_result);
      };
      auto run_store = [&]() -> io::Status {
        if (io::Status s = evict(); !s.ok()) return s;
        std::unique_ptr<io::ArenaFileStore> store;
        if (io::Status s = io::ArenaFileStore::open(o, &store); !s.ok()) return s;
        last_warm = io::warm_up(*store, uint32_t(warmup), seed * 7919 + rep * 31 + qi);
        io::RandomReadResult r;
        if (io::Status s = io::random_reads(*store, reads, 2 * qd, run_seed, &r); !s.ok()) return s;
        runs[qi].push_back(to_run(r, double(page_size)));
        return {};
      };
      auto run_raw = [&]() -> io::Status {
        if (io::Status s = evict(); !s.ok()) return s;
        io::RandomReadResult r;
        if (io::Status s = io::raw_random_reads(path, uint32_t(page_size), capacity, qd, warmup,
                                                seed * 7919 + rep * 31 + qi, &r); !s.ok())
          return s;
        if (io::Status s = io::raw_random_reads(path, uint32_t(page_size), capacity, qd, reads, run_seed, &r); !s.ok())
          return s;
        raw_runs[qi].push_back(to_run(r, double(page_size)));
        return {};
      };
      // Alternate which goes first so neither always gets the warmer device.
      const bool raw_first = raw && rep % 2 == 1;
      if (raw_first) if (io::Status s = run_raw(); !s.ok()) { cleanup(); return fail(s.message(), 1); }
      if (io::Status s = run_store(); !s.ok()) { cleanup(); return fail(s.message(), 1); }
      if (raw && !raw_first) if (io::Status s = run_raw(); !s.ok()) { cleanup(); return fail(s.message(), 1); }
      if (raw) ratios[qi].push_back(runs[qi].back().us_per_read / raw_runs[qi].back().us_per_read);
      if (rocks) {
        std::vector<std::string> files;
        for (const auto& e : std::filesystem::directory_iterator(rocks_dir, ec))
          if (e.is_regular_file(ec)) files.push_back(e.path().string());
        if (cold) if (io::Status s = io::make_cold(files, true, &cold_result); !s.ok()) { cleanup(); return fail(s.message(), 1); }
        std::unique_ptr<io::RocksKvStore> db;
        if (io::Status s = io::RocksKvStore::open(ro, &db); !s.ok()) { cleanup(); return fail(s.message(), 1); }
        rocks_bytes = db->disk_bytes();
        io::RandomReadResult r;
        if (io::Status s = io::rocks_random_reads(*db, capacity, payload, warmup, 1, run_seed ^ 0x55, &r); !s.ok()) {
          cleanup();
          return fail(s.message(), 1);
        }
        if (io::Status s = io::rocks_random_reads(*db, capacity, payload, reads, qd, run_seed, &r); !s.ok()) {
          cleanup();
          return fail(s.message(), 1);
        }
        rocks_runs[qi].push_back(to_run(r, double(payload)));
      }
    }
  }
  progress.finish();
  cleanup();

  nlohmann::json out;
  out["command"] = "io-bench";
  out["root"] = nullptr;
  out["root_note"] = "io-bench reads raw pages: no tree, no root";
  out["store"] = "arena";
  out["file"] = path;
  out["page_size"] = page_size;
  out["pages"] = capacity;
  out["size_mib"] = double(capacity * page_size) / double(1 << 20);
  out["reads_per_run"] = reads;
  out["reps"] = reps;
  out["warmup_reads"] = warmup;
  out["cold"] = cold ? nlohmann::json{{"protocol", io::cold_protocol_name(cold_result.protocol)},
                                      {"detail", cold_result.detail}}
                     : nlohmann::json(nullptr);
  out["regime_note"] = existed ? "file reused: host-cache state unknown"
                               : "file written by this run: the hypervisor host may still cache it";
  out["features"] = {{"direct_io", features.direct_io},
                     {"registered_buffers", features.registered_buffers},
                     {"registered_file", features.registered_file},
                     {"notes", features.notes}};
  if (!existed) out["fill"] = {{"seconds", fill_s}, {"mib_per_s", double(capacity * page_size) / double(1 << 20) / fill_s}};
  out["warmup_last"] = {{"first_read_us", last_warm.first_read_us}, {"last_read_us", last_warm.last_read_us}};
  nlohmann::json results = nlohmann::json::array();
  for (size_t qi = 0; qi < qds.size(); ++qi) {
    nlohmann::json row = runs_json(runs[qi]);
    row["qd"] = qds[qi];
    {
      std::vector<double> us;
      for (const QdRun& r : runs[qi]) us.push_back(r.us_per_read);
      report::timing("store us_per_read qd" + std::to_string(qds[qi]), us);
    }
    if (raw) {
      row["raw"] = runs_json(raw_runs[qi]);
      row["store_over_raw_us_per_read"] = summary_json(ratios[qi]);
    }
    if (rocks) row["rocksdb"] = runs_json(rocks_runs[qi]);
    results.push_back(row);
  }
  out["results"] = results;
  if (rocks)
    out["rocksdb"] = {{"dir", rocks_dir}, {"values", capacity}, {"value_bytes", payload}, {"disk_bytes", rocks_bytes},
                      {"fill_seconds", rocks_fill_s}, {"note", "MultiGet batches of QD keys; each key's latency is its batch's"}};

  report::stamp(out);
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("io-bench: %s, %llu pages x %llu B, %llu reads/run, %llu reps, cold: %s\n", path.c_str(),
              (unsigned long long)capacity, (unsigned long long)page_size, (unsigned long long)reads,
              (unsigned long long)reps, cold ? io::cold_protocol_name(cold_result.protocol) : "no");
  std::printf("features: O_DIRECT %s, registered buffers %s, registered file %s%s%s\n",
              features.direct_io ? "on" : "off", features.registered_buffers ? "on" : "off",
              features.registered_file ? "on" : "off", features.notes.empty() ? "" : "; ",
              features.notes.c_str());
  std::printf("medians over reps [min..max]\n");
  std::printf("%-5s %5s %22s %22s %20s %20s %20s %22s %22s %22s\n", "path", "QD", "IOPS", "us/read amortized", "lat mean us",
              "lat p50 us", "lat p90 us", "lat p99 us", "lat p99.9 us", "MB/s");
  auto print_row = [&](const char* name, uint64_t qd, const nlohmann::json& r) {
    auto cell = [&](const char* k) {
      char b[64];
      std::snprintf(b, sizeof b, "%.1f [%.1f..%.1f]", r[k]["median"].get<double>(), r[k]["min"].get<double>(),
                    r[k]["max"].get<double>());
      return std::string(b);
    };
    std::printf("%-5s %5llu %22s %22s %20s %20s %20s %22s %22s %22s\n", name, (unsigned long long)qd, cell("iops").c_str(),
                cell("us_per_read_amortized").c_str(), cell("latency_us_mean").c_str(),
                cell("latency_us_p50").c_str(), cell("latency_us_p90").c_str(), cell("latency_us_p99").c_str(),
                cell("latency_us_p99_9").c_str(), cell("mb_per_s").c_str());
  };
  for (const auto& r : results) {
    const uint64_t qd = r["qd"].get<uint64_t>();
    print_row("store", qd, r);
    if (raw) {
      print_row("raw", qd, r["raw"]);
      const auto& q = r["store_over_raw_us_per_read"];
      std::printf("%-5s %5llu store/raw us per read: %.2f [%.2f..%.2f]\n", "ratio", (unsigned long long)qd,
                  q["median"].get<double>(), q["min"].get<double>(), q["max"].get<double>());
    }
    if (rocks) print_row("rocks", qd, r["rocksdb"]);
  }
  std::printf("note: %s\n", out["regime_note"].get<std::string>().c_str());
  std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
