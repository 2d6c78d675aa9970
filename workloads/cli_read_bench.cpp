// cli_read_bench: `statetree read-bench`: options -> the read-bench protocol
// (engine/experiments/read_bench.h: K random existing keys of a database, looked up batched
// at each queue depth and one at a time, beside the raw page-read references) -> a table
// or one JSON object.
//
// Reported per lookup: latency (batched: wall / K; one at a time: median, p99), page reads,
// bytes, rounds and reads per round; and the ratios the docs give targets for:
//   engine/raw   (batched wall / its page reads) / (raw wall / raw reads) at the same QD
//   speedup      (one-at-a-time mean per lookup) / (batched per lookup)
//   single/raw   (one-at-a-time median latency) / (raw QD1 median latency x page reads per lookup)
// Figures are medians over reps with min/max. RocksDB databases: the same lookups, no raw
// reference (no page file). Exit: 0 ok; 1 a wrong or missing answer (every batched answer
// is checked against the source) or an I/O error; 2 bad input or a lookup's corrupt page.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/database/store_types.h"
#include "engine/experiments/read_bench.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/stats/summary.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "read-bench";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

nlohmann::json summary(const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); }

// What the report says besides the runs.
struct ReadBenchReport {
  std::string dir, source, root_hex;
  database::StoreParams params;
  bool accounts_only = false, cold = false;
  const experiments::ReadBenchOptions* options = nullptr;
  const experiments::ReadBenchResult* result = nullptr;
};

// The "batched" row of one queue depth (and its raw reference, arena).
nlohmann::json qd_row_json(const experiments::QueueDepthRuns& q, uint64_t k, bool arena) {
  std::vector<double> per_lookup, per_read, io_share, cpu_share, mbps, rawus, rawp50, rawp90, rawp99, rawp999, rawmbps;
  for (const auto& b : q.batched) {
    per_lookup.push_back(b.wall_us / double(k));
    mbps.push_back(b.wall_us > 0 ? double(b.stats.bytes_read) / b.wall_us : 0);  // bytes/us = MB/s
    per_read.push_back(b.stats.page_reads ? b.wall_us / double(b.stats.page_reads) : 0);
    io_share.push_back(b.wall_us > 0 ? double(b.stats.io_wait_ns) / 1e3 / b.wall_us : 0);
    cpu_share.push_back(b.wall_us > 0 ? double(b.stats.cpu_ns) / 1e3 / b.wall_us : 0);
  }
  for (const auto& r : q.raw) {
    rawus.push_back(r.us_per_read), rawp50.push_back(r.p50_us), rawp90.push_back(r.p90_us);
    rawp99.push_back(r.p99_us), rawp999.push_back(r.p999_us), rawmbps.push_back(r.mb_per_s);
  }
  const std::string qd_label = "qd" + std::to_string(q.qd);
  const persist::LookupStats& st = q.batched.back().stats;
  nlohmann::json row = {
      {"qd", q.qd},
      {"batched",
       {{"us_per_lookup", report::timing_json("batched us_per_lookup " + qd_label, per_lookup)},
        {"mb_per_s", summary(mbps)},
        {"us_per_page_read", summary(per_read)},
        {"page_reads_per_lookup", double(st.page_reads) / double(k)},
        {"bytes_per_lookup", double(st.bytes_read) / double(k)},
        {"nodes_per_lookup", double(st.nodes_visited) / double(k)},
        {"page_reads", st.page_reads},
        {"rounds", st.rounds},
        {"reads_per_round", st.reads_per_round},
        // arena (streamed): blocking waits for reads; reads outstanding per wave (rounds)
        {"io_waits", st.io_waits},
        {"reads_in_flight_mean", st.rounds ? double(st.reads_in_flight_sum) / double(st.rounds) : 0.0},
        {"reads_in_flight_max", st.reads_in_flight_max},
        // arena: the share of the batch spent inside read rounds; the rest is CPU between them
        {"io_wait_share", arena ? summary(io_share) : nlohmann::json(nullptr)},
        // arena: the thread's CPU time (user + system) over the batch's wall time
        {"cpu_share", arena ? summary(cpu_share) : nlohmann::json(nullptr)}}},
      {"single_over_batched_per_lookup", summary(q.single_over_batched)},
  };
  if (!q.raw.empty()) {
    row["raw"] = {{"reads", q.raw.back().reads},
                  {"us_per_read", report::timing_json("raw us_per_read " + qd_label, rawus)},
                  {"latency_us_p50", summary(rawp50)},
                  {"latency_us_p90", summary(rawp90)},
                  {"latency_us_p99", summary(rawp99)},
                  {"latency_us_p99_9", summary(rawp999)},
                  {"mb_per_s", summary(rawmbps)}};
    row["engine_over_raw_per_read"] = summary(q.engine_over_raw);
  }
  return row;
}

nlohmann::json single_json(const experiments::SingleRuns& s, uint64_t single_k) {
  nlohmann::json j = {{"keys", single_k},
                      {"qd", 1},
                      {"latency_us_median", report::timing_json("single latency_us_median", s.median_us)},
                      {"latency_us_p90", summary(s.p90_us)},
                      {"latency_us_p99", summary(s.p99_us)},
                      {"latency_us_p99_9", summary(s.p999_us)},
                      {"us_per_lookup_mean", summary(s.mean_us)},
                      {"page_reads_per_lookup", summary(s.reads_per_lookup)}};
  if (!s.raw_qd1_p50_us.empty()) {
    j["raw_qd1_latency_us_p50"] = summary(s.raw_qd1_p50_us);
    j["latency_over_raw_qd1_x_reads"] = summary(s.latency_over_raw_qd1);
  }
  return j;
}

nlohmann::json read_bench_json(const ReadBenchReport& r) {
  const experiments::ReadBenchResult& res = *r.result;
  const bool carry = res.slot_keys_carry_account;
  nlohmann::json out;
  out["command"] = "read-bench";
  out["db"] = r.dir;
  out["tree"] = database::tree_kind_name(r.params.tree_kind);
  out["hash"] = database::hash_kind_name(r.params.hash_kind);
  out["group_depth"] = r.params.group_depth;
  out["store"] = res.arena ? "arena" : "rocksdb";
  out["page_size"] = r.params.page_size;
  out["source"] = r.source;
  out["root"] = r.root_hex;
  out["keys"] = res.keys;
  out["key_kind"] = r.accounts_only ? "accounts" : "slots";
  out["slot_key_accounts"] = carry;
  out["read_from"] = r.options->snapshot ? "snapshot" : "tree";
  // Tree: every node a lookup uses matched its parent's hash (the root: the manifest's).
  // Snapshot: its pages are checksummed; verify proves its entries equal the tree's.
  out["lookups_verified"] = !r.options->snapshot;
  out["checked"] = r.accounts_only ? "every account's fields equal the source's"
                   : carry         ? "every slot value and its account's fields equal the source's"
                                   : "every slot value equals the source's";
  out["reps"] = r.options->reps;
  out["warmup_reads"] = uint64_t(r.options->warmup_reads);
  out["warmup_last"] = {{"first_read_us", res.warm_last.first_read_us}, {"last_read_us", res.warm_last.last_read_us}};
  out["cold"] = r.cold ? nlohmann::json{{"protocol", res.cold.protocol}, {"detail", res.cold.detail}}
                       : nlohmann::json(nullptr);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& q : res.by_qd) results.push_back(qd_row_json(q, res.keys, res.arena));
  out["batched"] = results;
  out["single"] = single_json(res.single, res.single_keys);
  report::stamp(out);
  return out;
}

// "median [min..max]" of a summary.
std::string cell(const nlohmann::json& s, const char* fmt = "%.1f") { return report::range_text(s, fmt); }

void print_header(const ReadBenchReport& r, const nlohmann::json& out) {
  const bool arena = r.result->arena;
  const experiments::ReadBenchResult& res = *r.result;
  std::printf("read-bench: %s (%s, %s store, %u B pages), %llu random existing %s keys, %llu reps\n", r.dir.c_str(),
              out["tree"].get<std::string>().c_str(), arena ? "arena" : "rocksdb", r.params.page_size,
              (unsigned long long)res.keys, r.accounts_only ? "account" : "slot", (unsigned long long)r.options->reps);
  std::printf("root %s; source: %s; checked: %s\n", r.root_hex.c_str(), r.source.c_str(),
              out["checked"].get<std::string>().c_str());
  if (!r.accounts_only && r.params.tree_kind == database::TreeKind::bintrie)
    std::printf("slot keys: %s\n", r.options->slot_accounts ? "each also fetches its account (--slot-accounts)"
                                                            : "the slot alone (--slot-accounts adds each address's account walk)");
  if (r.options->snapshot)
    std::printf("lookups: the flat snapshot (build --snapshot), no tree walk: %s\n",
                arena ? "one read per distinct data page" : "one MultiGet per batch on its column family");
  if (r.cold)
    std::printf("cold: %s%s%s\n", res.cold.protocol.c_str(), res.cold.detail.empty() ? "" : " (",
                res.cold.detail.empty() ? "" : (res.cold.detail + ")").c_str());
  else
    std::printf("cold: no (page cache as found%s)\n", arena ? "; the arena reads with O_DIRECT anyway" : "");
  std::printf("\nbatched, %s: medians over reps [min..max]%s\n", arena ? "streamed" : "level by level",
              arena ? "" : "\n(RocksDB: reads = keys fetched by MultiGet, KiB = value bytes returned, rounds = MultiGet calls)");
}

// The human table of the batched runs: one row per queue depth (qd_row_json()).
report::Table qd_table() {
  using report::Align;
  using report::range_cell;
  return report::Table({{"QD", 5, Align::right, report::u64_cell("qd")},
                        {"us/lookup", 24, Align::right, range_cell("/batched/us_per_lookup", "%.2f")},
                        {"reads/lk", 8, Align::right, report::fixed_cell("/batched/page_reads_per_lookup", 2)},
                        {"KiB/lk", 9, Align::right, report::fixed_cell("/batched/bytes_per_lookup", 2, 1.0 / 1024.0)},
                        {"rounds", 7, Align::right, report::u64_cell("/batched/rounds")},
                        {"us/page read", 22, Align::right, range_cell("/batched/us_per_page_read", "%.2f")},
                        {"raw us/read", 22, Align::right, range_cell("/raw/us_per_read", "%.2f")},
                        {"engine/raw", 20, Align::right, range_cell("engine_over_raw_per_read", "%.2f")},
                        {"single/batched", 20, Align::right, range_cell("single_over_batched_per_lookup", "%.1f")}});
}

void print_qd_row(const report::Table& table, const nlohmann::json& r) {
  const auto& b = r["batched"];
  std::fputs(table.row_line(r).c_str(), stdout);
  std::string rounds;
  for (const auto& x : b["reads_per_round"]) {
    if (!rounds.empty()) rounds += ' ';
    rounds += std::to_string(x.get<uint64_t>());
  }
  if (b["io_wait_share"].is_null())
    std::printf("      reads per round: %s\n", rounds.c_str());
  else if (!rounds.empty())
    std::printf("      reads per round: %s; time inside read rounds: %.0f %% (the rest: CPU between rounds)\n",
                rounds.c_str(), 100.0 * b["io_wait_share"]["median"].get<double>());
  else
    std::printf("      streamed: %llu blocking waits; %.1f reads outstanding per wave of completions (mean, max %llu); "
                "time blocked: %.0f %%, CPU (user + system): %.0f %% (the rest: runnable, not running)\n",
                (unsigned long long)b["io_waits"].get<uint64_t>(), b["reads_in_flight_mean"].get<double>(),
                (unsigned long long)b["reads_in_flight_max"].get<uint64_t>(),
                100.0 * b["io_wait_share"]["median"].get<double>(), 100.0 * b["cpu_share"]["median"].get<double>());
}

void print_table(const ReadBenchReport& r, const nlohmann::json& out) {
  print_header(r, out);
  const report::Table table = qd_table();
  std::fputs(table.header_line().c_str(), stdout);
  for (const auto& row : out["batched"]) print_qd_row(table, row);
  const auto& s = out["single"];
  std::printf("\none key at a time (%llu keys, QD1): latency median %s us, p90 %s us, p99 %s us, p99.9 %s us, mean %s us, %s page reads/lookup\n",
              (unsigned long long)r.result->single_keys, cell(s["latency_us_median"]).c_str(), cell(s["latency_us_p90"]).c_str(),
              cell(s["latency_us_p99"]).c_str(), cell(s["latency_us_p99_9"]).c_str(),
              cell(s["us_per_lookup_mean"]).c_str(), cell(s["page_reads_per_lookup"], "%.2f").c_str());
  if (s.contains("raw_qd1_latency_us_p50"))
    std::printf("raw QD1 read latency p50 %s us; one-at-a-time latency / (raw QD1 latency x reads): %s\n",
                cell(s["raw_qd1_latency_us_p50"]).c_str(), cell(s["latency_over_raw_qd1_x_reads"], "%.2f").c_str());
  std::printf("%s\n", report::stamp_line().c_str());
}

void declare_options(Args& args) {
  add_db(args, "database directory (built by statetree build)");
  args.option_u64("keys", "K", "random existing keys per batch (storage slots unless --accounts-only)", 1, 10000000);
  add_queue_depth_list(args, "queue depths, comma-separated (the database is reopened at each)", "1,8,32");
  add_reps(args, "repetitions (median, min, max reported)", 3);
  add_seed(args, "key sample seed");
  args.option_u64("single", "N", "one-at-a-time lookups: the first min(K, N) keys of the sample", 1, 10000000, 256);
  add_warmup(args, "raw QD1 reads that wake the I/O path before each timed run");
  args.pin_option();
  add_cold(args, "evict the database files before each timed run: drop_caches when permitted (root), else posix_fadvise");
  args.flag("accounts-only", "sample account keys instead of storage slots");
  args.flag("slot-accounts", "binary trie (and --snapshot): each slot key also fetches its account, as `get` does (default: the slot alone)");
  args.flag("snapshot", "look the keys up in the flat snapshot (build --snapshot) instead of walking the tree");
  add_json(args);
  args.require("db");
  args.require("keys");
}

}  // namespace

int cmd_read_bench(int argc, char** argv) {
  Args args("statetree read-bench",
            "Lookups of K random existing keys of a database: batched (streamed) at each queue depth, one key at a\n"
            "time, and the raw page-read reference at the same queue depth (arena): latency, I/Os and bytes per lookup.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  experiments::ReadBenchOptions o;
  o.dir = args.str("db");
  o.queue_depths = queue_depths(args);
  o.reps = args.get_u64("reps");
  o.seed = args.get_u64("seed");
  o.single = args.get_u64("single");
  o.warmup_reads = uint32_t(args.get_u64("warmup"));
  o.cold = args.given("cold");
  o.slot_accounts = args.given("slot-accounts");
  o.snapshot = args.given("snapshot");
  ReadBenchReport r{o.dir, "", "", {}, args.given("accounts-only"), o.cold, &o, nullptr};
  std::error_code ec;
  if (!std::filesystem::is_directory(o.dir, ec)) return fail("no database at " + o.dir + " (not a directory)");

  std::unique_ptr<persist::TreeDb> db;  // stays open: every reopen reads its state, even while a commit runs
  if (database::Status s = persist::open_any_db(o.dir, o.queue_depths.front(), &db); !s.ok()) return fail(s.message(), exit_code_for(s));
  if (o.snapshot) {
    std::unique_ptr<persist::SnapshotTable> snap;
    if (database::Status s = db->open_snapshot_table(&snap); !s.ok()) return fail(s.message(), exit_code_for(s));
  }
  r.params = db->manifest().params;
  r.root_hex = hex0x(db->manifest().root_hash);
  LoadedSource src;
  if (auto e = load_source(db->source_spec(), &src)) return fail(*e);
  r.source = src.description;
  if (source_unhashed_alloc(db->source_spec()))
    o.wrong_answer_note = " (the database records no hash of its source file: if " + src.description +
                          " changed since the build, that is the cause)";
  experiments::KeySample sample;
  if (auto e = experiments::sample_keys(*src.source, args.get_u64("keys"), r.accounts_only, o.seed, &sample)) return fail(*e);

  const bool json = args.given("json");
  ProgressBar bar("read-bench", !json);
  o.progress = bar.fn();
  experiments::ReadBenchResult result;
  const experiments::ReadBenchStatus s = experiments::run_read_bench(o, *db, *src.source, sample, &result);
  if (!s.ok()) return fail(s.status.message(), s.in_lookup && s.status.code() == database::Errc::corrupt_page ? 2 : 1);
  bar.finish();
  r.result = &result;
  const nlohmann::json out = read_bench_json(r);
  if (json) std::printf("%s\n", out.dump().c_str());
  else print_table(r, out);
  return 0;
}

}  // namespace st::cli
