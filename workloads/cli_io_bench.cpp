// cli_io_bench: `statetree io-bench`: options -> the raw device baseline
// (engine/experiments/io_bench.h: uniformly random page reads through the flat arena store,
// O_DIRECT + io_uring, at each queue depth, beside the store-less io_uring loop and,
// optionally, RocksDB random MultiGets) -> a table or one JSON object: IOPS, per-read
// latency (mean and fio's percentiles p50, p90, p99, p99.9), bandwidth (MB/s = reads x page
// size / wall, 10^6 bytes) and microseconds per read amortized (wall / reads). This is the
// "device's amortized cost" that read-bench's per-node I/O cost is held to.
// Exit: 0 ok, 1 I/O error or corrupt page, 2 bad usage.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/experiments/io_bench.h"
#include "engine/stats/summary.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {
namespace {

using experiments::IoBenchOptions;
using experiments::IoBenchResult;
using experiments::ReadRateRun;

nlohmann::json summary_json(const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); }

int fail(const std::string& msg, int code) { return cli_error("statetree io-bench", msg, code); }

nlohmann::json runs_json(const std::vector<ReadRateRun>& runs) {
  std::vector<double> iops, us, mean, p50, p90, p99, p999, mbps;
  for (const ReadRateRun& r : runs) {
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

nlohmann::json results_json(const IoBenchOptions& o, const IoBenchResult& res) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& q : res.by_qd) {
    nlohmann::json row = runs_json(q.store);
    row["qd"] = q.qd;
    std::vector<double> us;
    for (const ReadRateRun& r : q.store) us.push_back(r.us_per_read);
    report::timing("store us_per_read qd" + std::to_string(q.qd), us);
    if (res.raw) {
      row["raw"] = runs_json(q.raw);
      row["store_over_raw_us_per_read"] = summary_json(q.store_over_raw);
    }
    if (o.rocksdb) row["rocksdb"] = runs_json(q.rocksdb);
    results.push_back(row);
  }
  return results;
}

nlohmann::json io_bench_json(const IoBenchOptions& o, const IoBenchResult& res) {
  const double mib = double(res.pages * o.page_size) / double(1 << 20);
  nlohmann::json out;
  out["command"] = "io-bench";
  out["root"] = nullptr;
  out["root_note"] = "io-bench reads raw pages: no tree, no root";
  out["store"] = "arena";
  out["file"] = o.path;
  out["page_size"] = o.page_size;
  out["pages"] = res.pages;
  out["size_mib"] = mib;
  out["reads_per_run"] = o.reads;
  out["reps"] = o.reps;
  out["warmup_reads"] = o.warmup_reads;
  out["cold"] = o.cold ? nlohmann::json{{"protocol", res.cold_protocol}, {"detail", res.cold_detail}} : nlohmann::json(nullptr);
  out["regime_note"] = res.file_existed ? "file reused: host-cache state unknown"
                                        : "file written by this run: the hypervisor host may still cache it";
  out["features"] = {{"direct_io", res.direct_io},
                     {"registered_buffers", res.registered_buffers},
                     {"registered_file", res.registered_file},
                     {"notes", res.feature_notes}};
  if (!res.file_existed) out["fill"] = {{"seconds", res.fill_seconds}, {"mib_per_s", mib / res.fill_seconds}};
  out["warmup_last"] = {{"first_read_us", res.warm_first_read_us}, {"last_read_us", res.warm_last_read_us}};
  out["results"] = results_json(o, res);
  if (o.rocksdb)
    out["rocksdb"] = {{"dir", res.rocks_dir}, {"values", res.pages}, {"value_bytes", res.rocks_value_bytes},
                      {"disk_bytes", res.rocks_disk_bytes}, {"fill_seconds", res.rocks_fill_seconds},
                      {"note", "MultiGet batches of QD keys; each key's latency is its batch's"}};
  report::stamp(out);
  return out;
}

// The human table of the results: one row per path (store, raw, rocks) and queue depth,
// each a result object of results_json() with its "path" and "qd".
report::Table results_table() {
  using report::Align;
  using report::range_cell;
  return report::Table({{"path", 5, Align::left, report::text_cell("path")},
                        {"QD", 5, Align::right, report::u64_cell("qd")},
                        {"IOPS", 22, Align::right, range_cell("iops")},
                        {"us/read amortized", 22, Align::right, range_cell("us_per_read_amortized")},
                        {"lat mean us", 20, Align::right, range_cell("latency_us_mean")},
                        {"lat p50 us", 20, Align::right, range_cell("latency_us_p50")},
                        {"lat p90 us", 20, Align::right, range_cell("latency_us_p90")},
                        {"lat p99 us", 22, Align::right, range_cell("latency_us_p99")},
                        {"lat p99.9 us", 22, Align::right, range_cell("latency_us_p99_9")},
                        {"MB/s", 22, Align::right, range_cell("mb_per_s")}});
}

void print_row(const report::Table& table, const char* path, uint64_t qd, nlohmann::json r) {
  r["path"] = path;
  r["qd"] = qd;
  std::fputs(table.row_line(r).c_str(), stdout);
}

void print_table(const IoBenchOptions& o, const IoBenchResult& res, const nlohmann::json& out) {
  std::printf("io-bench: %s, %llu pages x %llu B, %llu reads/run, %llu reps, cold: %s\n", o.path.c_str(),
              (unsigned long long)res.pages, (unsigned long long)o.page_size, (unsigned long long)o.reads,
              (unsigned long long)o.reps, o.cold ? res.cold_protocol.c_str() : "no");
  std::printf("features: O_DIRECT %s, registered buffers %s, registered file %s%s%s\n", res.direct_io ? "on" : "off",
              res.registered_buffers ? "on" : "off", res.registered_file ? "on" : "off",
              res.feature_notes.empty() ? "" : "; ", res.feature_notes.c_str());
  std::printf("medians over reps [min..max]\n");
  const report::Table table = results_table();
  std::fputs(table.header_line().c_str(), stdout);
  for (const auto& r : out["results"]) {
    const uint64_t qd = r["qd"].get<uint64_t>();
    print_row(table, "store", qd, r);
    if (res.raw) {
      print_row(table, "raw", qd, r["raw"]);
      const auto& q = r["store_over_raw_us_per_read"];
      std::printf("%-5s %5llu store/raw us per read: %.2f [%.2f..%.2f]\n", "ratio", (unsigned long long)qd,
                  q["median"].get<double>(), q["min"].get<double>(), q["max"].get<double>());
    }
    if (o.rocksdb) print_row(table, "rocks", qd, r["rocksdb"]);
  }
  std::printf("note: %s\n", out["regime_note"].get<std::string>().c_str());
  std::printf("%s\n", report::stamp_line().c_str());
}

void declare_options(Args& args) {
  args.option("file", "PATH", "arena file to create (must not exist unless --reuse)");
  args.option_u64("size-mib", "M", "file size in MiB", 1, 1u << 20, 256);
  add_page_size(args, "page size");
  add_queue_depth_list(args, "queue depths, comma-separated", "1,8,32,64");
  args.option_u64("reads", "N", "timed random reads per queue depth and repetition", 1, 100000000, 4096);
  add_reps(args, "repetitions (queue depths interleaved within each)", 3);
  add_warmup(args, "untimed QD1 reads before each timed run (first reads after idle are slow)");
  add_seed(args, "random page sequence seed", 1, "S");
  args.pin_option();
  add_cold(args, "evict before each timed run: drop_caches when permitted (root), else posix_fadvise");
  args.flag("reuse", "use an existing arena file of the given page size instead of creating one");
  args.flag("keep", "keep the file this run created");
  args.flag("buffered", "no O_DIRECT (for comparison)");
  args.flag("no-raw", "skip the store-less io_uring baseline");
  args.flag("rocksdb", "also read the same count of payload-sized values from RocksDB (PATH.rocksdb), MultiGet batches of QD");
  add_json(args);
  args.require("file");
}

}  // namespace

int cmd_io_bench(int argc, char** argv) {
  Args args("statetree io-bench",
            "Raw random page reads through the arena store (O_DIRECT + io_uring) at each queue depth:\n"
            "IOPS, latency per read (mean, p50, p90, p99, p99.9), MB/s and us per read amortized (the device baseline).");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  IoBenchOptions o;
  o.path = args.str("file");
  o.size_mib = args.get_u64("size-mib");
  o.page_size = args.get_u64("page-size");
  o.queue_depths = queue_depths(args);
  o.reads = args.get_u64("reads");
  o.reps = args.get_u64("reps");
  o.warmup_reads = args.get_u64("warmup");
  o.seed = args.get_u64("seed");
  o.cold = args.given("cold"), o.reuse = args.given("reuse"), o.keep = args.given("keep");
  o.buffered = args.given("buffered"), o.no_raw = args.given("no-raw"), o.rocksdb = args.given("rocksdb");
  const bool json = args.given("json");
  if (!json) o.announce = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  ProgressBar bar("io-bench", !json);
  o.progress = bar.fn();

  IoBenchResult res;
  const experiments::IoBenchStatus s = experiments::run_io_bench(o, &res);
  bar.finish();
  if (!s.ok()) return fail(s.status.message(), s.bad_input ? 2 : 1);
  const nlohmann::json out = io_bench_json(o, res);
  if (json) std::printf("%s\n", out.dump().c_str());
  else print_table(o, res, out);
  return 0;
}

}  // namespace st::cli
