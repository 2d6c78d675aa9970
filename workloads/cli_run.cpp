// cli_run: `statetree run`: blocks through the block pipeline (engine/pipeline/block_run.h)
// against an MPT or binary-trie database (arena or RocksDB), and what
// each block cost.
//
//   statetree run --db DIR (--blocks FILE | --workload K [generator options])
//                 [--reader serial|bal|geth [--workers W]] [--qd Q] [--inflight K] [--cold]
//                 [--pin STAGE=CPU,...] [--reps R [--scratch DIR]] [--snapshot] [--raw-loop]
//                 [--json | --csv]
//
// --workload generates the blocks with `statetree workload`'s generators on the database's
// synthetic state (before the run starts; the time is not in the figures), --blocks reads a
// block file. Per block: go-ethereum's slow-block columns (state_read_ms, state_hash_ms,
// commit_ms, total_ms, mgas_per_sec, slots read / written, cache hits / misses, ms per slot
// read, per miss, per slot total), then per stage wall time, device reads and bytes, device
// reads per slot, device read latency percentiles (state read and commit), per stage busy
// (thread CPU) time, the block's overlap and the regime (for RocksDB its options, as `apply`
// prints them). --json: one JSON object per block ("type":"block") and one
// summary ("type":"summary") per line; --csv: the block objects as a header and one row per
// block (nested fields as stage.field, per_tx and regime left out), then "# " + the summary. The column definitions are in docs/pipeline.md.
// --cold: the database's files evicted from the OS page cache before the run (persist::make_db_cold,
// as read-bench --cold); the regime's page_cache says which protocol ran.
// --pin: the stages' threads on the CPUs given (RunOptions::stage_cpus), in the regime's pin.
// --reps R: R repetitions of the same blocks, each on a fresh copy of the database made in
// --scratch DIR (pipeline/rep_copy.h; the original is never written; each copy is removed
// after its repetition); the block objects carry "rep", the summary the median and spread
// of the headline figures over the repetitions; --cold evicts before every repetition.
// --snapshot: the blocks' state reads go to the database's flat snapshot (RunOptions::snapshot;
// databases built with --snapshot, arena or RocksDB); the regime's "snapshot" says which ran, and
// device_reads_per_slot counts the snapshot's reads (the commit's tree reads stay apart).
// --raw-loop (arena): after each repetition's blocks, the device's amortized cost of a page
// read at --qd, measured by read-bench's raw loop on that database (persist::device_reference:
// cold with --cold, woken, then as many random page reads as the repetition's blocks made
// on average, at least 1,024); the summary's raw_loop divides the per-slot costs by
// device reads per slot x that.
// The summary's ceiling: the most blocks per second any --inflight could reach on these
// blocks, from the device (with --raw-loop) and the process's CPU (pipeline::inflight_ceiling).
// The database's commit record spec becomes bal_blocks (as `apply` writes it).
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/database/store_types.h"
#include "engine/pipeline/block_run.h"
#include "engine/pipeline/cold_tail.h"
#include "engine/pipeline/rep_copy.h"
#include "engine/pipeline/run_metrics.h"
#include "engine/stats/summary.h"
#include "workloads/block_file.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/generators.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/synthetic_state.h"
#include "workloads/table.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "run";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

double ms(uint64_t ns) { return double(ns) * 1e-6; }
double ratio(double a, double b) { return b > 0 ? a / b : 0; }

const char* kGeneratorOptions[] = {"block-count", "calls", "loads", "stores", "load-share", "txs", "tx-gas", "block-gas",
                                   "start", "contract", "slots", "seed", "zipf", "evm-work-balanceof", "evm-work-approve",
                                   "other-slots", "other-access"};

// The derived per-block figures (docs/pipeline.md).
struct Row {
  double state_read_ms, state_hash_ms, commit_ms, total_ms, mgas_per_sec;
  double ms_per_slot_read, ms_per_miss, ms_per_slot_total;
  uint64_t device_reads, device_bytes;
  double device_reads_per_slot;
  double overlap;
};
Row derive(const pipeline::BlockResult& b) {
  Row r{};
  const persist::CommitStats& c = b.commit_stats;
  r.state_read_ms = ms(b.prefetch.wall_ns() + b.traverse.wall_ns());
  r.state_hash_ms = ms(c.resolve_ns + c.apply_ns + c.write_ns);
  r.commit_ms = ms(c.publish_ns);
  r.total_ms = ms(b.commit.end_ns - b.prefetch.start_ns);
  r.mgas_per_sec = b.gas_known ? ratio(double(b.gas_used) * 1e-6, r.total_ms * 1e-3) : 0;
  r.ms_per_slot_read = ratio(r.state_read_ms, double(b.slots_read));
  r.ms_per_miss = ratio(r.state_read_ms, double(b.misses));
  r.ms_per_slot_total = ratio(r.total_ms, double(b.slots_read));
  r.device_reads = b.prefetch_page_reads + b.traverse_page_reads + b.ahead_page_reads;
  r.device_bytes = b.prefetch_bytes + b.traverse_bytes + b.ahead_bytes;
  r.device_reads_per_slot = ratio(double(r.device_reads), double(b.slots_read));
  r.overlap = pipeline::block_overlap(b);
  return r;
}

// A device read latency distribution in microseconds.
nlohmann::json latency_json(const stats::Latency& l) {
  return {{"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"max", l.max}, {"count", l.count}};
}

// The block's prefetch and traverse stages: time, keys or lookups, device work.
nlohmann::json prefetch_json(const pipeline::BlockResult& b) {
  return {{"wall_ms", ms(b.prefetch.wall_ns())}, {"busy_ms", ms(b.prefetch.busy_ns)}, {"start_ms", ms(b.prefetch.start_ns)},
          {"keys", b.prefetch_keys}, {"device_reads", b.prefetch_page_reads}, {"bytes", b.prefetch_bytes},
          {"io_wait_ms", ms(b.prefetch_io_wait_ns)}, {"threads", b.prefetch_threads}, {"shared_queue", b.prefetch_shared_queue},
          {"helper_busy_ms", ms(b.prefetch_helper_busy_ns)}, {"snapshot_index_reads", b.snapshot_index_page_reads},
          {"snapshot_index_bytes", b.snapshot_index_bytes}};
}
nlohmann::json traverse_json(const pipeline::BlockResult& b) {
  return {{"wall_ms", ms(b.traverse.wall_ns())}, {"busy_ms", ms(b.traverse.busy_ns)}, {"start_ms", ms(b.traverse.start_ns)},
          {"lookups", b.traverse_lookups}, {"device_reads", b.traverse_page_reads}, {"bytes", b.traverse_bytes},
          {"io_wait_ms", ms(b.traverse_io_wait_ns)}};
}

nlohmann::json block_json(const pipeline::BlockResult& b, uint64_t rep, const nlohmann::json& regime) {
  const Row r = derive(b);
  const persist::CommitStats& c = b.commit_stats;
  nlohmann::json txs = nlohmann::json::array();
  for (const pipeline::TxStats& t : b.txs)
    txs.push_back({{"index", t.index}, {"accesses", t.accesses}, {"misses", t.misses}, {"device_reads", t.page_reads},
                   {"bytes", t.bytes_read}, {"ms", ms(t.time_ns)}});
  return {{"type", "block"},
          {"rep", rep},
          {"index", b.index},
          {"number", b.number},
          {"root", hex0x(c.root)},
          {"txs", b.tx_count},
          {"gas_used", b.gas_known ? nlohmann::json(b.gas_used) : nlohmann::json()},
          {"state_read_ms", r.state_read_ms},
          {"state_hash_ms", r.state_hash_ms},
          {"commit_ms", r.commit_ms},
          {"total_ms", r.total_ms},
          {"mgas_per_sec", b.gas_known ? nlohmann::json(r.mgas_per_sec) : nlohmann::json()},
          {"accounts", b.accounts},
          {"slots_read", b.slots_read},
          {"slots_written", b.slots_written},
          {"accesses", b.accesses},
          {"cache_hits", b.hits},
          {"cache_misses", b.misses},
          {"diff_layer_hits", b.layer_hits},
          {"ms_per_slot_read", r.ms_per_slot_read},
          {"ms_per_miss", r.ms_per_miss},
          {"ms_per_slot_total", r.ms_per_slot_total},
          {"prefetch", prefetch_json(b)},
          {"traverse", traverse_json(b)},
          {"hash", {{"wall_ms", ms(b.hash.wall_ns())}, {"busy_ms", ms(b.hash.busy_ns)}, {"start_ms", ms(b.hash.start_ns)}}},
          {"commit", {{"wall_ms", ms(b.commit.wall_ns())}, {"busy_ms", ms(b.commit.busy_ns)},
                      {"start_ms", ms(b.commit.start_ns)},
                      {"resolve_ms", ms(c.resolve_ns)}, {"read_ms", ms(c.read_ns)}, {"apply_ms", ms(c.apply_ns)},
                      {"write_ms", ms(c.write_ns)}, {"hash_ms", ms(c.hash_ns)}, {"page_write_ms", ms(c.page_write_ns)},
                      {"publish_ms", ms(c.publish_ns)}, {"device_reads", c.pages_read}, {"pages_reused", c.pages_reused},
                      {"read_pages_offered", b.read_pages_offered}, {"read_pages_stale", b.read_pages_stale},
                      {"pure_hash_ms", ms(c.pure_hash_ns)}, {"pure_hash_nodes", c.pure_hash_nodes},
                      {"pure_hash_calls", c.pure_hash_calls}, {"records_read", c.records_read},
                      {"records_written", c.records_written}, {"pages_written", c.pages_written},
                      {"page_write_ops", c.page_write_ops}, {"pages_released", c.pages_released}, {"disk_bytes", c.disk_bytes}}},
          {"geth", {{"workers", b.geth_workers}, {"warm_hits", b.warm_hits}, {"ahead_lookups", b.ahead_lookups},
                    {"ahead_device_reads", b.ahead_page_reads}, {"ahead_bytes", b.ahead_bytes},
                    {"reader_lock_wait_ms", ms(b.reader_lock_wait_ns)}, {"workers_busy_ms", ms(b.geth_workers_busy_ns)}}},
          {"pure_hash_ms", c.pure_hash_nodes ? nlohmann::json(ms(c.pure_hash_ns)) : nlohmann::json()},
          {"hash_stage_over_pure", c.pure_hash_ns ? nlohmann::json(ratio(double(c.hash_ns), double(c.pure_hash_ns))) : nlohmann::json()},
          {"state_hash_over_pure", c.pure_hash_ns ? nlohmann::json(ratio(double(c.resolve_ns + c.apply_ns + c.write_ns), double(c.pure_hash_ns))) : nlohmann::json()},
          {"device_reads", r.device_reads},
          {"device_bytes", r.device_bytes},
          {"device_reads_per_slot", r.device_reads_per_slot},
          {"device_read_latency_us", latency_json(b.state_read_latency_us)},
          {"commit_device_read_latency_us", latency_json(b.commit_read_latency_us)},
          {"overlap", r.overlap},
          {"reader_blocks_visible", b.reader_blocks_visible},
          {"read_digest", report::hex(reinterpret_cast<const uint8_t*>(&b.read_digest), 8)},
          {"per_tx", txs},
          {"regime", regime}};
}

// --csv: the block object flattened (report::csv_cells: nested objects' fields as
// "stage.field", null as an empty cell, strings unquoted, none holds a comma), per_tx and the
// regime left out (the regime is in the summary).
void print_csv_row(const pipeline::BlockResult& b, uint64_t rep, const nlohmann::json& regime) {
  const auto cells = report::csv_cells(block_json(b, rep, regime), {"per_tx", "regime"});
  if (b.index == 0 && rep == 0) std::fputs(report::csv_header(cells).c_str(), stdout);
  std::fputs(report::csv_line(cells).c_str(), stdout);
}

// The human table of the blocks: go-ethereum's slow-block columns, the stages' wall times,
// device reads; each cell a field of the block's JSON row.
const report::Table& block_table() {
  using report::Align;
  auto num = [](const char* h, int w, const char* key, int decimals, double scale = 1.0) {
    return report::number_column(h, w, key, decimals, scale);
  };
  const auto count = report::count_column;
  static const report::Table table({{"block", 7, Align::left, report::u64_cell("number")}, count("txs", 4, "txs"),
                                    num("Mgas", 8, "gas_used", 2, 1e-6), count("sl.rd", 7, "slots_read"),
                                    count("sl.wr", 7, "slots_written"), count("hits", 7, "cache_hits"),
                                    count("misses", 7, "cache_misses"), num("read_ms", 8, "state_read_ms", 2),
                                    num("hash_ms", 8, "state_hash_ms", 2), num("cmt_ms", 8, "commit_ms", 2),
                                    num("total_ms", 8, "total_ms", 2), num("Mgas/s", 7, "mgas_per_sec", 1),
                                    num("ms/slot", 8, "ms_per_slot_read", 4), num("ms/miss", 8, "ms_per_miss", 4),
                                    num("pref_ms", 8, "/prefetch/wall_ms", 2), num("trav_ms", 8, "/traverse/wall_ms", 2),
                                    num("hstg_ms", 8, "/hash/wall_ms", 2), num("cstg_ms", 8, "/commit/wall_ms", 2),
                                    count("dev.rd", 8, "device_reads"), num("rd/slot", 7, "device_reads_per_slot", 2),
                                    num("rd.p99us", 8, "/device_read_latency_us/p99", 1),
                                    num("c.p99us", 8, "/commit_device_read_latency_us/p99", 1),
                                    num("overlap", 7, "overlap", 2)});
  return table;
}

// --pin STAGE=CPU[,STAGE=CPU...]: the stages' CPUs (stages not named run unpinned), and the
// regime's "pin" object. An error message for anything else.
std::optional<std::string> parse_stage_pins(const std::string& spec, pipeline::RunOptions::StageCpus* out,
                                            nlohmann::json* regime) {
  const std::string form = "--pin takes STAGE=CPU[,STAGE=CPU...] with STAGE prefetch, traverse, hash or commit";
  const std::vector<int> allowed = available_cpu_list();
  std::vector<std::string> items;
  size_t from = 0;
  for (;;) {
    const size_t comma = spec.find(',', from);
    items.push_back(spec.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  *regime = nlohmann::json::object();
  for (const std::string& it : items) {
    const size_t eq = it.find('=');
    if (eq == std::string::npos) return form + " (got '" + it + "')";
    const std::string stage = it.substr(0, eq);
    std::vector<int>* cpus = stage == "prefetch" ? &out->prefetch
                             : stage == "traverse" ? &out->traverse
                             : stage == "hash"     ? &out->hash
                             : stage == "commit"   ? &out->commit
                                                 : nullptr;
    if (!cpus) return form + " (unknown stage '" + stage + "')";
    if (!cpus->empty()) return "--pin names " + stage + " twice";
    const auto cpu = parse_u64(it.substr(eq + 1));
    if (!cpu) return form + " (bad CPU in '" + it + "')";
    if (std::find(allowed.begin(), allowed.end(), int64_t(*cpu)) == allowed.end())
      return "--pin: CPU " + std::to_string(*cpu) + " is not one this process may run on (" + cpu_list_string(allowed) + ")";
    cpus->push_back(int(*cpu));
    (*regime)[stage] = *cpu;
  }
  return std::nullopt;
}

// The generated blocks of --workload on the database's synthetic state.
std::optional<std::string> generate(const Args& args, const std::string& dir, std::vector<state::Block>* out) {
  const auto kind = workloads::workload_kind_from_name(args.str("workload"));
  if (!kind)
    return "unknown --workload '" + args.str("workload") + "' (erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like)";
  workloads::WorkloadOptions o;
  o.kind = *kind;
  o.blocks = args.get_u64("block-count");
  o.calls = args.get_u64_opt("calls");
  o.loads = args.get_u64_opt("loads");
  o.stores = args.get_u64_opt("stores");
  o.txs = args.get_u64_opt("txs");
  o.block_gas = args.get_u64_opt("block-gas");
  o.load_share_percent = args.get_u64("load-share");
  o.tx_gas = args.get_u64("tx-gas");
  o.start = args.get_u64("start");
  o.contract = args.get_u64("contract");
  o.seed = args.get_u64("seed");
  o.evm_work_balance_of = args.get_u64("evm-work-balanceof");
  o.evm_work_approve = args.get_u64("evm-work-approve");
  o.other_slots = args.get_u64("other-slots");
  if (args.str("other-access") == "write") o.other_write = true;
  else if (args.str("other-access") != "read") return "--other-access must be read or write (got '" + args.str("other-access") + "')";
  if (args.given("other-access") && o.other_slots == 0) return "--other-access needs --other-slots N";
  if (o.calls && o.kind == workloads::WorkloadKind::mixed_sload_sstore) return "mixed_sload_sstore takes --loads / --stores, not --calls";
  if ((o.loads || o.stores) && o.kind != workloads::WorkloadKind::mixed_sload_sstore)
    return "--loads / --stores apply to mixed_sload_sstore only";
  if (args.given("slots")) {
    const std::string m = args.str("slots");
    if (m == "existing") o.slots = workloads::SlotsMode::existing;
    else if (m == "empty") o.slots = workloads::SlotsMode::empty;
    else return "--slots must be existing or empty (got '" + m + "')";
  }
  try {
    size_t used = 0;
    o.zipf = std::stod(args.str("zipf"), &used);
    if (used != args.str("zipf").size() || !(o.zipf > 0 && o.zipf < 10)) throw std::invalid_argument("");
  } catch (...) {
    return "--zipf must be a number in (0, 10)";
  }
  std::unique_ptr<persist::TreeDb> db;
  if (database::Status s = persist::open_any_db(dir, 1, &db); !s.ok()) return s.message();
  const auto& m = db->manifest();
  if (m.params.tree_kind == database::TreeKind::mpt) o.tree = workloads::gas::Tree::mpt;
  else if (m.params.tree_kind == database::TreeKind::bintrie) o.tree = workloads::gas::Tree::bintrie;
  else return std::string("the block pipeline needs an MPT or binary-trie database, not ") + database::tree_kind_name(m.params.tree_kind);
  if (m.params.hash_kind == database::HashKind::blake3) o.bintrie_hash = bintrie::HashKind::blake3;
  o.pre_state_root = m.root_hash;
  auto parsed = state::parse_synthetic_spec(db->source_spec());
  if (auto* e = std::get_if<std::string>(&parsed))
    return "--workload needs a database built from a synthetic state (" + *e + "); give --blocks FILE instead";
  const state::SyntheticState src(std::get<state::SyntheticSpec>(parsed));
  auto gen = workloads::generate_workload(src, o);
  if (auto* e = std::get_if<std::string>(&gen)) return *e;
  *out = std::move(std::get<std::vector<state::Block>>(gen));
  return std::nullopt;
}

// The command's options; the generator's are kGeneratorOptions.
void declare_options(Args& args) {
  add_db(args, "database directory (MPT or binary trie; arena or RocksDB store)");
  args.option("blocks", "FILE", "block file (statetree workload, or a client's BAL)");
  args.option("workload", "K", "generate the blocks instead: erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like");
  args.option("reader", "M",
              "serial (each access read when its transaction reaches it), bal (the block's access set in one batch)\n"
              "or geth (workers read later transactions' accesses ahead, one mutex-serialised reader)", "bal");
  args.option_u64("workers", "W", "--reader geth: workers ahead of the main traversal (default 4/5 of the CPUs, at least 1)", 1, 256);
  add_queue_depth(args, "queue depth of the reads");
  args.option_u64("inflight", "K", "blocks in flight (1: no overlap; 2: block k+1 reads while block k commits)", 1, 16, 1);
  args.option_u64("prefetch-threads", "N",
                  "--reader bal on the arena: threads the block's batch is split over, each a reader at qd / N\n"
                  "(1: one reader on the stage's thread)", 1, 16, 1);
}

void declare_generator_options(Args& args) {
  args.option_u64("block-count", "N", "--workload: blocks", 1, 100000, 1);
  args.option_u64("calls", "N", "--workload: calls per transaction (default: as many as fit in --tx-gas)", 1, 10000000);
  args.option_u64("loads", "N", "--workload mixed: balanceOf calls per transaction", 0, 10000000);
  args.option_u64("stores", "N", "--workload mixed: approve calls per transaction", 0, 10000000);
  args.option_u64("load-share", "P", "--workload mixed: balanceOf's share of the gas, percent", 1, 99, 50);
  args.option_u64("txs", "T", "--workload: transactions per block (default: as many as fit in --block-gas)", 1, 100000);
  args.option_u64("tx-gas", "G", "--workload: per-transaction gas cap", 21000, UINT64_MAX, 16777216);
  args.option_u64("block-gas", "G", "--workload: block gas limit (default 100000000; mainnet_like 36000000)", 21000, UINT64_MAX);
  args.option_u64("start", "K", "--workload: first holder index / integer address", 0, 1ull << 62, 1);
  args.option_u64("contract", "C", "--workload: the token (contract index in the state)", 0, UINT64_MAX, 0);
  args.option("slots", "M", "--workload: existing or empty (default: existing for balanceOf, empty for approve)");
  add_seed(args, "--workload: seed");
  args.option("zipf", "S", "--workload mainnet_like: Zipf exponent of the contract draw", "1.8");
  args.option_u64("other-slots", "N",
                  "--workload ERC20 kinds: the published cold-tail conditions: each transaction after a block's first also\n"
                  "touches N distinct existing slots of the state's other contracts (docs/workloads.md)", 0, 1000000, 0);
  args.option("other-access", "M", "--workload with --other-slots: read (SLOADs) or write (each slot updated)", "read");
  args.option_u64("evm-work-balanceof", "G", "--workload: EVM gas of one balanceOf call besides its slot access", 0, 1000000, 627);
  args.option_u64("evm-work-approve", "G", "--workload: EVM gas of one approve call besides its slot access", 0, 1000000, 797);
}

void declare_run_options(Args& args) {
  add_cold(args, "before the run, evict the database's files from the OS page cache as read-bench --cold does:\n"
                    "drop_caches when permitted (root), else posix_fadvise; the regime's page_cache names the protocol");
  args.option("pin", "STAGE=CPU,...",
              "run each named stage's thread on one CPU (prefetch, traverse, hash, commit; e.g.\n"
              "prefetch=0,traverse=0,hash=1,commit=1; geth's workers run on traverse's CPU); stages not named are not pinned");
  args.flag("no-page-reuse", "the commit reads its dirty paths itself instead of taking the pages the block's reader read");
  args.flag("no-hash-overlap", "with --inflight > 1: block k+1's hash waits for block k's publish instead of its packed pages");
  args.flag("no-prefetch-overlap", "with --inflight > 1 and --reader bal on the arena: one prefetch at a time instead of\n"
                                   "the next block's starting while the previous one reads, both under one --qd budget");
  args.flag("no-write-runs", "the commit writes its pages one by one instead of consecutive pages as one write of up to 64 KiB");
  args.flag("snapshot", "the state reads go to the database's flat snapshot (built with `build --snapshot`): arena, at\n"
                        "most one device read per slot; RocksDB, one MultiGet on its column family per batch; the commit\n"
                        "still reads the tree paths it rewrites and updates the snapshot in the same commit");
  args.flag("no-pure-hash", "do not hash the commit's new nodes again alone through the batch kernels (pure_hash_ms)");
  add_reps(args, "run the same blocks R times, each repetition on a fresh copy of the database made in --scratch DIR\n"
                  "(the writer lock of --db held while copying; --db itself is never written; each copy is removed after\n"
                  "its repetition); the summary gives the median and spread over the repetitions; --cold evicts before each", 1);
  args.option("scratch", "DIR",
              "--reps: an empty or absent directory for the copies (needed for R > 1; with R = 1 the run is on a copy too)");
  args.flag("raw-loop", "arena: after each repetition's blocks, time read-bench's store-less io_uring loop on the database at\n"
                        "--qd (cold with --cold; as many random page reads as a block of the repetition made, at least 1,024);\n"
                        "the summary gives its us per read and the per-slot costs over device reads per slot x that");
  add_json(args, "one JSON object per block and a summary object, one per line, on stdout");
  args.flag("csv", "a header line and one row per block (the block object's fields, nested ones as stage.field), then\n"
                   "the summary object as one line \"# {...}\"");
}

// What the options ask for, checked: the pipeline's options, the repetitions, the output.
struct Setup {
  pipeline::RunOptions ro;
  nlohmann::json pins = nlohmann::json::object();
  uint64_t reps = 1;
  bool scratch = false, json = false, csv = false, cold = false, raw_loop = false;
  std::string dir, scratch_dir;
};

std::optional<std::string> parse_setup(const Args& args, Setup* st) {
  st->dir = args.str("db");
  if (args.given("blocks") == args.given("workload")) return "give exactly one of --blocks FILE and --workload K";
  if (args.given("blocks"))
    for (const char* n : kGeneratorOptions)
      if (args.given(n)) return std::string("--") + n + " applies to --workload only";
  st->reps = args.get_u64("reps");
  st->scratch = args.given("scratch");
  if (st->reps > 1 && !st->scratch)
    return "--reps " + std::to_string(st->reps) + " needs --scratch DIR (each repetition runs on a fresh copy of the database)";
  st->scratch_dir = st->scratch ? args.str("scratch") : std::string();
  pipeline::RunOptions& ro = st->ro;
  ro.dir = st->dir;
  const std::string reader = args.str("reader");
  if (reader == "serial") ro.reader = pipeline::ReaderModel::serial;
  else if (reader == "bal") ro.reader = pipeline::ReaderModel::bal;
  else if (reader == "geth") ro.reader = pipeline::ReaderModel::geth;
  else return "--reader must be serial, bal or geth (got '" + reader + "')";
  if (args.given("workers") && ro.reader != pipeline::ReaderModel::geth) return "--workers applies to --reader geth only";
  ro.geth_workers = uint32_t(args.get_u64_opt("workers").value_or(0));
  ro.queue_depth = queue_depth(args);
  ro.inflight = uint32_t(args.get_u64("inflight"));
  ro.prefetch_threads = uint32_t(args.get_u64("prefetch-threads"));
  ro.reuse_read_pages = !args.given("no-page-reuse");
  ro.overlap_hash = !args.given("no-hash-overlap");
  ro.overlap_prefetch = !args.given("no-prefetch-overlap");
  ro.write_runs = !args.given("no-write-runs");
  ro.pure_hash = !args.given("no-pure-hash");
  ro.snapshot = args.given("snapshot");
  if (args.given("pin"))
    if (auto e = parse_stage_pins(args.str("pin"), &ro.stage_cpus, &st->pins)) return e;
  ro.commit_spec = [](const std::string& prev, const state::Block& b) { return bal_blocks_spec(prev, 1, state::bal_hash(b.bal)); };
  st->json = args.given("json"), st->csv = args.given("csv"), st->cold = args.given("cold");
  st->raw_loop = args.given("raw-loop");
  if (st->raw_loop) {
    persist::DbOptions probed;
    if (database::Status s = persist::DbFiles::probe(st->dir, &probed); s.ok() && probed.store != persist::StoreKind::arena)
      return "--raw-loop needs an arena database (RocksDB has no page file to read raw)";
  }
  return std::nullopt;
}

// One repetition's headline figures: its blocks' mean total / state read / hash / commit
// time, its read time per slot and per miss, its blocks per second over its wall and in
// the steady state (run_metrics.h; 0 with one block), and the steady state's blocks and span.
struct RepFigures {
  double total_ms = 0, state_read_ms = 0, state_hash_ms = 0, commit_ms = 0;
  double ms_per_slot_read = 0, ms_per_miss = 0, blocks_per_sec = 0, steady_blocks_per_sec = 0;
  pipeline::SteadyRate steady;
};

RepFigures rep_figures_of(const pipeline::RunResult& res, std::string* digests) {
  RepFigures f;
  uint64_t slots = 0, misses = 0;
  double read_ms = 0;
  for (const pipeline::BlockResult& b : res.blocks) {
    const Row r = derive(b);
    f.total_ms += r.total_ms, f.state_read_ms += r.state_read_ms, f.state_hash_ms += r.state_hash_ms, f.commit_ms += r.commit_ms;
    slots += b.slots_read, misses += b.misses, read_ms += r.state_read_ms;
    *digests += report::hex(reinterpret_cast<const uint8_t*>(&b.read_digest), 8);
  }
  const double n = double(res.blocks.size());
  f.total_ms /= n, f.state_read_ms /= n, f.state_hash_ms /= n, f.commit_ms /= n;
  f.ms_per_slot_read = ratio(read_ms, double(slots));
  f.ms_per_miss = ratio(read_ms, double(misses));
  f.blocks_per_sec = ratio(n, ms(res.wall_ns) * 1e-3);
  f.steady = pipeline::steady_rate(res.blocks);
  f.steady_blocks_per_sec = f.steady.blocks_per_sec();
  return f;
}

// Every repetition's results, gathered.
struct Runs {
  std::vector<pipeline::BlockResult> all;  // every repetition's blocks, in order
  stats::LogHistogram read_latency, commit_latency;
  uint64_t wall_ns = 0, cpu_ns = 0;  // sums over the repetitions
  uint32_t cpus = 0;
  std::vector<RepFigures> figures;
  std::vector<std::array<uint8_t, 32>> roots;
  std::vector<std::string> digests;
  std::vector<persist::DeviceReference> raw;  // --raw-loop: one per repetition
  pipeline::RunResult last;
};

// --raw-loop: the device reference on the repetition's database, once its blocks ran.
database::Status raw_loop(const Setup& st, const pipeline::RunResult& res, uint64_t rep, Runs* runs) {
  uint64_t reads = 0;
  for (const pipeline::BlockResult& b : res.blocks) reads += derive(b).device_reads;
  reads = std::max<uint64_t>(1024, res.blocks.empty() ? 0 : reads / res.blocks.size());
  persist::DeviceReference ref;
  if (database::Status s = persist::device_reference(st.ro.dir, reads, st.ro.queue_depth, st.cold, 32, rep + 1, &ref); !s.ok())
    return s;
  runs->raw.push_back(ref);
  return {};
}

void print_block(const Setup& st, const pipeline::BlockResult& b, uint64_t rep, const nlohmann::json& regime) {
  if (st.json) {
    std::printf("%s\n", block_json(b, rep, regime).dump().c_str());
  } else if (st.csv) {
    print_csv_row(b, rep, regime);
  } else {
    if (b.index == 0) std::fputs(block_table().header_line().c_str(), stdout);  // nothing on stdout before the first commit
    std::fputs(block_table().row_line(block_json(b, rep, regime)).c_str(), stdout);
  }
  std::fflush(stdout);
}

// The database's files evicted from the page cache (--cold), and the regime's page_cache.
database::Status make_cold(const Setup& st, const std::string& dir, nlohmann::json* regime) {
  if (!st.cold) {
    (*regime)["page_cache"] = {{"dropped", false}, {"protocol", "as found"}, {"detail", ""}};
    return {};
  }
  std::unique_ptr<persist::TreeDb> db;
  if (database::Status s = persist::open_any_db(dir, 1, &db); !s.ok()) return s;
  persist::ColdInfo cold;
  if (database::Status s = persist::make_db_cold(*db, true, &cold); !s.ok()) return s;
  (*regime)["page_cache"] = {{"dropped", true}, {"protocol", cold.protocol}, {"detail", cold.detail}};
  return {};
}

// Each repetition: a fresh copy of the database (--scratch), evicted with --cold after the
// blocks were read or generated (generating reads the database), so the run's first reads
// find none of its pages in the page cache; then the blocks through the pipeline.
// Returns the exit code of a failure, or 0.
int run_reps(Setup& st, const std::vector<state::Block>& blocks, nlohmann::json& regime, Runs* runs) {
  report::Progress progress("run", blocks.size() * st.reps);
  for (uint64_t rep = 0; rep < st.reps; ++rep) {
    pipeline::RunOptions& ro = st.ro;
    ro.dir = st.scratch ? (std::filesystem::path(st.scratch_dir) / ("rep-" + std::to_string(rep))).string() : st.dir;
    if (st.scratch)
      if (database::Status s = pipeline::copy_database(st.dir, ro.dir); !s.ok()) return fail(s.message(), exit_code_for(s));
    if (database::Status s = make_cold(st, ro.dir, &regime); !s.ok()) return fail(s.message(), exit_code_for(s));
    if (!st.json && !st.csv && st.reps > 1)
      std::printf("%srepetition %llu of %llu (a copy of %s)\n", rep ? "\n" : "", (unsigned long long)rep + 1,
                  (unsigned long long)st.reps, st.dir.c_str());
    pipeline::RunResult& res = runs->last;
    const database::Status s = pipeline::run_blocks(ro, blocks, &res, [&](const pipeline::BlockResult& b) {
      print_block(st, b, rep, regime);
      progress.update(rep * blocks.size() + b.index + 1);
    });
    if (!s.ok()) {
      progress.finish();
      return fail(s.message() + (st.scratch ? " (repetition " + std::to_string(rep + 1) + ", on the copy " + ro.dir + ")" : ""),
                  exit_code_for(s));
    }
    if (st.raw_loop)
      if (database::Status r = raw_loop(st, res, rep, runs); !r.ok()) {
        progress.finish();
        return fail("--raw-loop: " + r.message(), exit_code_for(r));
      }
    std::string digests;
    runs->figures.push_back(rep_figures_of(res, &digests));
    runs->roots.push_back(res.root);
    runs->digests.push_back(digests);
    runs->all.insert(runs->all.end(), res.blocks.begin(), res.blocks.end());
    runs->read_latency.merge(res.state_read_latency_ns);
    runs->commit_latency.merge(res.commit_read_latency_ns);
    runs->wall_ns += res.wall_ns, runs->cpu_ns += res.cpu_ns, runs->cpus = res.cpus;
    if (st.scratch) {
      std::error_code ec;
      std::filesystem::remove_all(ro.dir, ec);  // the next repetition starts from a fresh copy
    }
  }
  progress.finish();
  return 0;
}

// The summary's sums over every repetition's blocks.
struct Totals {
  uint64_t gas = 0, slots_read = 0, slots_written = 0, misses = 0, reads = 0, snapshot_index_reads = 0;
  uint64_t commit_reads = 0, pages_reused = 0, hash_ns = 0, pure_ns = 0, state_hash_ns = 0;
  uint64_t busy_prefetch = 0, busy_traverse = 0, busy_hash = 0, busy_commit = 0, busy_workers = 0;
  double read_ms = 0;
  bool gas_known = true;
};

Totals totals_of(const std::vector<pipeline::BlockResult>& all) {
  Totals t;
  for (const pipeline::BlockResult& b : all) {
    t.gas += b.gas_used, t.slots_read += b.slots_read, t.slots_written += b.slots_written, t.misses += b.misses;
    t.gas_known = t.gas_known && b.gas_known;
    const Row r = derive(b);
    t.reads += r.device_reads, t.read_ms += r.state_read_ms, t.snapshot_index_reads += b.snapshot_index_page_reads;
    const persist::CommitStats& c = b.commit_stats;
    t.commit_reads += c.pages_read, t.pages_reused += c.pages_reused, t.hash_ns += c.hash_ns, t.pure_ns += c.pure_hash_ns;
    t.state_hash_ns += c.resolve_ns + c.apply_ns + c.write_ns;
    t.busy_prefetch += b.prefetch.busy_ns, t.busy_traverse += b.traverse.busy_ns, t.busy_hash += b.hash.busy_ns;
    t.busy_commit += b.commit.busy_ns;
    t.busy_workers += b.geth_workers_busy_ns;
  }
  return t;
}

// --raw-loop's us per read over the repetitions (median and spread; empty without it).
stats::Summary raw_us_per_read(const Runs& runs) {
  std::vector<double> us;
  for (const persist::DeviceReference& r : runs.raw) us.push_back(r.us_per_read);
  return stats::summarize(us);
}

// --raw-loop's figures over the repetitions (null without it): the raw loop's us per read
// (median and spread), and each per-slot cost over device reads per slot x that median.
nlohmann::json raw_loop_json(const Setup& st, const Runs& runs, const Totals& t, double wall_ms) {
  if (runs.raw.empty()) return nullptr;
  std::vector<double> p50;
  for (const persist::DeviceReference& r : runs.raw) p50.push_back(r.p50_us);
  const stats::Summary u = raw_us_per_read(runs);
  const double per_slot_ms = ratio(double(t.reads), double(t.slots_read)) * u.median * 1e-3;
  return {{"qd", st.ro.queue_depth},
          {"reads", runs.raw.front().reads},
          {"us_per_read", {{"median", u.median}, {"min", u.min}, {"max", u.max}, {"samples", u.samples}}},
          {"latency_us_p50", stats::summarize(p50).median},
          {"device_ms_per_slot", per_slot_ms},
          {"state_read_over_raw", ratio(ratio(t.read_ms, double(t.slots_read)), per_slot_ms)},
          {"total_over_raw", ratio(ratio(wall_ms, double(t.slots_read)), per_slot_ms)}};
}

// The ceiling on what any --inflight could reach on these blocks (pipeline::inflight_ceiling):
// the device's bound from the raw loop's median us per read (null without --raw-loop), the
// CPU's from the process's CPU time over the repetitions.
nlohmann::json ceiling_json(const Runs& runs, const Totals& t, double blocks_per_sec) {
  const bool measured = !runs.raw.empty();
  const double raw_us = measured ? raw_us_per_read(runs).median : 0;
  const pipeline::InflightCeiling c = pipeline::inflight_ceiling(runs.all.size(), runs.cpu_ns, runs.cpus, t.reads, raw_us);
  const double bps = c.blocks_per_sec();
  return {{"cpus", runs.cpus},
          {"cpu_ms_per_block", c.cpu_ms_per_block},
          {"cpu_bound_ms", c.cpu_bound_ms},
          {"device_ms_per_block", measured ? nlohmann::json(c.device_ms_per_block) : nlohmann::json()},
          {"blocks_per_sec", bps},
          {"bound_by", c.device_bound() ? "device" : "cpu"},
          {"reached", ratio(blocks_per_sec, bps)}};
}

nlohmann::json summary_json(const Args& args, const Setup& st, const Runs& runs, const nlohmann::json& regime) {
  const Totals t = totals_of(runs.all);
  const double wall_ms = ms(runs.wall_ns);
  const double blocks_per_sec = ratio(double(runs.all.size()), wall_ms * 1e-3);
  const auto null_or = [](bool known, double v) { return known ? nlohmann::json(v) : nlohmann::json(); };
  pipeline::SteadyRate steady;  // summed over the repetitions
  for (const RepFigures& f : runs.figures) steady.blocks += f.steady.blocks, steady.span_ns += f.steady.span_ns;
  return {{"type", "summary"},
          {"command", "run"},
          {"db", st.dir},
          {"source", args.given("blocks") ? args.str("blocks") : "workload " + args.str("workload")},
          {"root", hex0x(runs.last.root)},
          {"blocks", runs.all.size()},
          {"wall_ms", wall_ms},
          {"blocks_per_sec", blocks_per_sec},
          {"steady_blocks_per_sec", null_or(steady.span_ns > 0, steady.blocks_per_sec())},
          {"gas_used", t.gas_known ? nlohmann::json(t.gas) : nlohmann::json()},
          {"mgas_per_sec", null_or(t.gas_known, ratio(double(t.gas) * 1e-6, wall_ms * 1e-3))},
          {"slots_read", t.slots_read},
          {"slots_written", t.slots_written},
          {"cache_misses", t.misses},
          {"device_reads", t.reads},
          {"device_reads_per_slot", ratio(double(t.reads), double(t.slots_read))},
          {"snapshot_index_device_reads", t.snapshot_index_reads},
          {"ms_per_slot_read", ratio(t.read_ms, double(t.slots_read))},
          {"ms_per_slot_total", ratio(wall_ms, double(t.slots_read))},
          {"diff_layer_entries_max", runs.last.diff_layer_entries_max},
          {"commit_device_reads", t.commit_reads},
          {"commit_pages_reused", t.pages_reused},
          {"state_hash_ms", ms(t.state_hash_ns)},
          {"hash_ms", ms(t.hash_ns)},
          {"pure_hash_ms", null_or(st.ro.pure_hash, ms(t.pure_ns))},
          {"hash_stage_over_pure", null_or(t.pure_ns > 0, ratio(double(t.hash_ns), double(t.pure_ns)))},
          {"state_hash_over_pure", null_or(t.pure_ns > 0, ratio(double(t.state_hash_ns), double(t.pure_ns)))},
          {"device_read_latency_us", {{"state_read", latency_json(runs.read_latency.latency(1000.0))},
                                      {"commit", latency_json(runs.commit_latency.latency(1000.0))}}},
          {"busy_ms", {{"prefetch", ms(t.busy_prefetch)}, {"traverse", ms(t.busy_traverse)},
                       {"hash", ms(t.busy_hash)}, {"commit", ms(t.busy_commit)}, {"geth_workers", ms(t.busy_workers)}}},
          {"overlap", pipeline::run_overlap(runs.all, runs.wall_ns)},
          {"raw_loop", raw_loop_json(st, runs, t, wall_ms)},
          {"ceiling", ceiling_json(runs, t, blocks_per_sec)},
          {"regime", regime}};
}

// Over the repetitions: each headline figure's median and spread; identical roots and reads.
nlohmann::json reps_json(const Setup& st, const Runs& runs) {
  nlohmann::json figures = nlohmann::json::object();
  auto add = [&](const char* name, double RepFigures::*field) {
    std::vector<double> v;
    for (const RepFigures& f : runs.figures) v.push_back(f.*field);
    const stats::Summary m = stats::summarize(v);
    figures[name] = {{"median", m.median}, {"min", m.min}, {"max", m.max}, {"samples", m.samples}};
  };
  add("total_ms", &RepFigures::total_ms);
  add("state_read_ms", &RepFigures::state_read_ms);
  add("state_hash_ms", &RepFigures::state_hash_ms);
  add("commit_ms", &RepFigures::commit_ms);
  add("ms_per_slot_read", &RepFigures::ms_per_slot_read);
  add("ms_per_miss", &RepFigures::ms_per_miss);
  add("blocks_per_sec", &RepFigures::blocks_per_sec);
  add("steady_blocks_per_sec", &RepFigures::steady_blocks_per_sec);
  bool same_roots = true, same_reads = true;
  for (size_t i = 1; i < runs.roots.size(); ++i)
    same_roots = same_roots && runs.roots[i] == runs.roots[0], same_reads = same_reads && runs.digests[i] == runs.digests[0];
  return {{"count", st.reps},
          {"scratch", st.scratch ? nlohmann::json(st.scratch_dir) : nlohmann::json()},
          {"roots_identical", same_roots},
          {"read_digests_identical", same_reads},
          {"figures", figures}};
}

nlohmann::json cold_tail_json(const std::vector<pipeline::ColdTailRow>& by_count,
                              const std::vector<pipeline::ColdTailRow>& by_index) {
  nlohmann::json c = nlohmann::json::array(), x = nlohmann::json::array();
  for (const pipeline::ColdTailRow& r : by_count)
    c.push_back({{"txs", r.key}, {"blocks", r.count}, {"state_read_ms", ms(r.read_ns)}, {"misses", r.misses},
                 {"slots_read", r.slots_read}, {"device_reads", r.device_reads}, {"ms_per_miss", r.ms_per_miss()},
                 {"ms_per_slot", r.ms_per_slot()}, {"ms_per_device_read", r.ms_per_device_read()}});
  for (const pipeline::ColdTailRow& r : by_index)
    x.push_back({{"index", r.key}, {"txs", r.count}, {"traverse_ms", ms(r.read_ns)}, {"misses", r.misses},
                 {"device_reads", r.device_reads}, {"ms_per_miss", r.ms_per_miss()},
                 {"ms_per_device_read", r.ms_per_device_read()}});
  return {{"by_tx_count", c}, {"by_tx_index", x}};
}

// The ceiling's line: the bound any --inflight could reach, what bounds it, and this run's share.
void print_ceiling(const nlohmann::json& c) {
  const double cpu = c["cpu_ms_per_block"].get<double>(), cpu_bound = c["cpu_bound_ms"].get<double>();
  char device[96] = "device: not measured (--raw-loop)";
  if (!c["device_ms_per_block"].is_null())
    std::snprintf(device, sizeof device, "device: %.1f ms a block, its reads at the raw loop's cost",
                  c["device_ms_per_block"].get<double>());
  std::printf("ceiling for any --inflight: %.2f blocks/s, bound by the %s (%s; CPU: %.1f ms a block over %u CPUs, %.1f ms); "
              "this run reached %.0f %% of it\n",
              c["blocks_per_sec"].get<double>(), c["bound_by"].get<std::string>().c_str(), device, cpu,
              c["cpus"].get<uint32_t>(), cpu_bound, 100 * c["reached"].get<double>());
}

// The human summary: headline line, page cache, latencies, busy time, repetitions.
void print_summary_head(const Setup& st, const Runs& runs, const nlohmann::json& sum) {
  std::printf("%zu blocks in %.1f ms (%.2f blocks/s", runs.all.size(), sum["wall_ms"].get<double>(),
              sum["blocks_per_sec"].get<double>());
  if (!sum["steady_blocks_per_sec"].is_null())
    std::printf(", %.2f after the first block", sum["steady_blocks_per_sec"].get<double>());
  if (!sum["mgas_per_sec"].is_null()) std::printf(", %.1f Mgas/s", sum["mgas_per_sec"].get<double>());
  std::printf("); %.3f ms per slot read, %.2f device reads per slot; reader %s, qd %u, inflight %u, reads from the %s\n"
              "root %s\n",
              sum["ms_per_slot_read"].get<double>(), sum["device_reads_per_slot"].get<double>(),
              pipeline::reader_model_name(st.ro.reader), st.ro.queue_depth, st.ro.inflight,
              st.ro.snapshot ? "snapshot" : "tree", hex0x(runs.last.root).c_str());
  const nlohmann::json& pc = sum["regime"]["page_cache"];
  if (pc["dropped"].get<bool>()) {
    const std::string detail = pc["detail"].get<std::string>();
    std::printf("page cache dropped before the run: %s%s\n", pc["protocol"].get<std::string>().c_str(),
                detail.empty() ? "" : (" (" + detail + ")").c_str());
  }
  auto latency_line = [](const char* what, const stats::Latency& l) {
    std::printf("device read latency, %s: p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us (%zu reads)\n", what, l.p50,
                l.p90, l.p99, l.max, l.count);
  };
  latency_line("state read", runs.read_latency.latency(1000.0));
  latency_line("commit", runs.commit_latency.latency(1000.0));
  const nlohmann::json& busy = sum["busy_ms"];
  std::printf("busy (thread CPU): prefetch %.1f ms, traverse %.1f ms, hash %.1f ms, commit %.1f ms, geth workers %.1f ms; "
              "overlap %.2f (stage walls / run wall)\n",
              busy["prefetch"].get<double>(), busy["traverse"].get<double>(), busy["hash"].get<double>(), busy["commit"].get<double>(),
              busy["geth_workers"].get<double>(), sum["overlap"].get<double>());
  if (const nlohmann::json& raw = sum["raw_loop"]; !raw.is_null())
    std::printf("raw loop (store-less io_uring, qd %u, %llu random page reads%s): %.2f us per read; state read per slot / "
                "(device reads per slot x that) %.2fx, total per slot %.2fx\n",
                raw["qd"].get<uint32_t>(), (unsigned long long)raw["reads"].get<uint64_t>(), st.cold ? ", cold" : "",
                raw["us_per_read"]["median"].get<double>(), raw["state_read_over_raw"].get<double>(),
                raw["total_over_raw"].get<double>());
  print_ceiling(sum["ceiling"]);
  if (st.reps > 1) {
    const nlohmann::json& r = sum["reps"];
    std::printf("over %llu repetitions (roots %s, reads %s):\n", (unsigned long long)st.reps,
                r["roots_identical"].get<bool>() ? "identical" : "DIFFER",
                r["read_digests_identical"].get<bool>() ? "identical" : "DIFFER");
    report::Table figures = report::figure_table("  ", 17);
    for (auto it = r["figures"].begin(); it != r["figures"].end(); ++it) figures.add(report::figure_row(it.key(), *it, 4, ""));
    std::fputs(figures.text().c_str(), stdout);
  }
}

// The cold tail from the summary's cold_tail rows: per transaction count, and per transaction
// index up to 16 (--json has every index).
void print_cold_tail(const nlohmann::json& cold_tail) {
  const auto count = report::count_column;
  auto num = [](const char* h, int w, const char* key) { return report::number_column(h, w, key, 4); };
  const report::Table by_count({count("txs", 4, "txs"), count("blocks", 6, "blocks"), count("misses", 9, "misses"),
                                count("slots", 9, "slots_read"), count("dev.rd", 9, "device_reads"),
                                num("ms/miss", 10, "ms_per_miss"), num("ms/slot", 10, "ms_per_slot"),
                                num("ms/dev.read", 12, "ms_per_device_read")},
                               "  ");
  std::printf("cold tail by transaction count (state read per block):\n%s", by_count.header_line().c_str());
  for (const auto& row : cold_tail["by_tx_count"]) std::fputs(by_count.row_line(row).c_str(), stdout);
  const report::Table by_index({count("index", 5, "index"), count("txs", 6, "txs"), count("misses", 9, "misses"),
                                count("dev.rd", 9, "device_reads"), num("ms/miss", 10, "ms_per_miss")},
                               "  ");
  std::printf("by transaction index (the traversal's own time; --json has every index):\n%s", by_index.header_line().c_str());
  for (const auto& row : cold_tail["by_tx_index"])
    if (row["index"].get<uint64_t>() <= 16) std::fputs(by_index.row_line(row).c_str(), stdout);
}

}  // namespace

int cmd_run(int argc, char** argv) {
  Args args("statetree run",
            "The block pipeline: replays blocks (a block file, or a generated workload) against an MPT or binary-trie\n"
            "database through prefetch -> traverse -> commit on a TBB flow graph, one commit per block (arena:\n"
            "copy-on-write; RocksDB: one synced WriteBatch), and prints per block go-ethereum's slow-block columns and per-stage wall time and device reads.");
  declare_options(args);
  declare_generator_options(args);
  declare_run_options(args);
  args.require("db");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  Setup st;
  if (auto e = parse_setup(args, &st)) return fail(*e);
  std::vector<state::Block> blocks;
  if (args.given("blocks")) {
    if (auto e = workloads::read_block_file(args.str("blocks"), &blocks)) return fail(*e);
  } else if (auto e = generate(args, st.dir, &blocks)) {
    return fail(*e);
  }
  if (st.json && st.csv) return fail("give at most one of --json and --csv");
  nlohmann::json regime = {{"reader", pipeline::reader_model_name(st.ro.reader)}, {"qd", st.ro.queue_depth},
                           {"inflight", st.ro.inflight}, {"pin", st.pins}, {"page_reuse", st.ro.reuse_read_pages},
                           {"pure_hash", st.ro.pure_hash}, {"snapshot", st.ro.snapshot},
                           {"hash_overlap", st.ro.overlap_hash}, {"write_runs", st.ro.write_runs}};
  st.ro.on_open = [&regime, &st](const persist::DbFiles& files) {
    store_regime(files, regime);
    regime["prefetch_threads"] = pipeline::prefetch_threads_used(st.ro, files.store);
    regime["prefetch_overlap"] = pipeline::prefetch_overlap_used(st.ro, files.store);
    regime["cold"] = files.store == persist::StoreKind::rocksdb
                         ? "a RocksDB snapshot of the writer's instance per block (its reads do not fill the block cache)"
                         : "O_DIRECT reads; a fresh reader page cache per block";
  };
  // The copies' directory: checked (and created) after the blocks were read, before any copy.
  if (st.scratch)
    if (database::Status s = pipeline::prepare_scratch(st.scratch_dir, st.dir); !s.ok()) return fail(s.message(), exit_code_for(s));
  Runs runs;
  if (int rc = run_reps(st, blocks, regime, &runs)) return rc;
  nlohmann::json sum = summary_json(args, st, runs, regime);
  sum["reps"] = reps_json(st, runs);
  const std::vector<pipeline::ColdTailRow> by_count = pipeline::cold_tail_by_tx_count(runs.all);
  const std::vector<pipeline::ColdTailRow> by_index = pipeline::cold_tail_by_tx_index(runs.all);
  sum["cold_tail"] = cold_tail_json(by_count, by_index);
  if (st.json || st.csv) {
    report::stamp(sum);
    std::printf("%s%s\n", st.csv ? "# " : "", sum.dump().c_str());
  } else {
    print_summary_head(st, runs, sum);
    print_cold_tail(sum["cold_tail"]);
  }
  return 0;
}

}  // namespace st::cli
