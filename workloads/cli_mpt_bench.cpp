// cli_mpt_bench: `statetree mpt-bench`: the MPT figures against the bare Keccak-256 of
// exactly the nodes the engine hashes (from scratch, incremental, memory). The protocol is
// engine/experiments/mpt_bench.h; here: the options, the JSON (summaries in ms, ratios
// summarized per rep) and the human tables (median, min, max per figure).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiments/mpt_bench.h"
#include "engine/stats/summary.h"
#include "kernels/keccak256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {

namespace {

int fail(const std::string& msg) { return cli_error("statetree mpt-bench", msg, 2); }

// Timing samples in ns as a summary in ms, noted under `label` for the noise warning.
nlohmann::json ms_summary(const std::vector<double>& ns, const std::string& label) {
  std::vector<double> ms;
  for (double v : ns) ms.push_back(v * 1e-6);
  return report::timing_json(label, ms);
}

// The command's options: the protocol's, and what it prints.
struct MptBenchRequest {
  experiments::MptBenchOptions bench;
  bool scratch = true, incremental = true, json = false;
};

nlohmann::json scratch_json(const experiments::MptBenchOptions& o, const experiments::MptScratchResult& r) {
  const size_t n = r.entries;
  nlohmann::json s;
  s["entries"] = n;
  s["chunk_keys"] = o.chunk_keys;
  s["root"] = "0x" + report::hex(r.root);
  s["leaves"] = r.stats.leaves;
  s["branches"] = r.stats.branches;
  s["extensions"] = r.stats.extensions;
  s["keccak_calls"] = r.stats.keccak_calls;
  s["keccak_bytes"] = r.stats.keccak_bytes;
  s["build_1t_ms"] = ms_summary(r.t1, "from_scratch build_1t_ms");
  s["bare_keccak_ms"] = ms_summary(r.tk, "from_scratch bare_keccak_ms");
  s["build_over_keccak"] = report::summary_json(stats::summarize(r.ratio));
  s["build_1t_cpu_ms"] = ms_summary(r.c1, "from_scratch build_1t_cpu_ms");
  s["bare_keccak_cpu_ms"] = ms_summary(r.ck, "from_scratch bare_keccak_cpu_ms");
  s["build_over_keccak_cpu"] = report::summary_json(stats::summarize(r.cratio));
  s["threads"] = o.threads;
  s["build_nt_ms"] = ms_summary(r.tp, "from_scratch build_nt_ms");
  s["build_nt_process_cpu_ms"] = ms_summary(r.pcpu, "from_scratch build_nt_process_cpu_ms");
  s["build_nt_threads_used"] = report::summary_json(stats::summarize(r.threads_used));
  s["speedup_nt_over_1t"] = report::summary_json(stats::summarize(r.speedup));
  s["input_bytes"] = 88 * n;  // key 32 + value 32 + KeyValue 24
  s["peak_rss_during_build_bytes"] = r.rss_build;
  s["peak_rss_measured"] = r.hwm_reset;
  s["build_peak_extra_bytes_per_million"] = double(r.rss_build - r.rss_input) * 1e6 / double(n);
  return s;
}

nlohmann::json incremental_json(const experiments::MptBenchOptions& o, const experiments::MptIncrementalResult& r) {
  nlohmann::json s;
  s["slots"] = o.slots;
  s["writes"] = o.writes;
  s["timed_block_paths"] = o.warm ? "warm" : "cold";
  s["dirty_nodes"] = report::summary_json(stats::summarize(r.dirty_nodes));
  s["dirty_keccak_calls"] = report::summary_json(stats::summarize(r.calls));
  s["storage_commits_from_batch_log"] = r.logged_commits;  // of the untimed capture blocks (storage + account trie)
  s["block_ms"] = ms_summary(r.tb, "incremental block_ms");
  s["apply_ms"] = ms_summary(r.tapply, "incremental apply_ms");
  s["apply_cpu_ms"] = ms_summary(r.capply, "incremental apply_cpu_ms");
  s["bare_keccak_ms"] = ms_summary(r.tk, "incremental bare_keccak_ms");
  s["block_over_keccak"] = report::summary_json(stats::summarize(r.ratio));
  s["block_cpu_ms"] = ms_summary(r.cb, "incremental block_cpu_ms");
  s["bare_keccak_cpu_ms"] = ms_summary(r.ck, "incremental bare_keccak_cpu_ms");
  s["block_over_keccak_cpu"] = report::summary_json(stats::summarize(r.cratio));
  s["bare_keccak_with_slot_keys_cpu_ms"] = ms_summary(r.cka, "incremental bare_keccak_with_slot_keys_cpu_ms");
  s["block_over_keccak_with_slot_keys_cpu"] = report::summary_json(stats::summarize(r.crat_all));
  s["trie_resident_bytes_per_million_slots"] = double(r.rss_state - r.rss0) * 1e6 / double(o.slots);
  return s;
}

// A figure of ns samples in ms, or of ratios.
nlohmann::json ms_row(const std::string& name, const std::vector<double>& ns, int decimals) {
  std::vector<double> ms;
  for (double v : ns) ms.push_back(v * 1e-6);
  return report::figure_row(name, report::summary_json(stats::summarize(ms)), decimals, "ms");
}
nlohmann::json ratio_row(const std::string& name, const std::vector<double>& r, int decimals, const std::string& unit = "x") {
  return report::figure_row(name, report::summary_json(stats::summarize(r)), decimals, unit);
}

void print_scratch(const experiments::MptBenchOptions& o, const experiments::MptScratchResult& r) {
  std::printf("from-scratch root, %zu secure entries (keccak %s): root 0x%s\n", r.entries,
              st::kernels::keccak256_kernel_name(), report::hex(r.root).c_str());
  std::printf("  nodes: %llu leaves, %llu branches, %llu extensions; %llu keccak calls, %.1f MB hashed\n",
              (unsigned long long)r.stats.leaves, (unsigned long long)r.stats.branches, (unsigned long long)r.stats.extensions,
              (unsigned long long)r.stats.keccak_calls, double(r.stats.keccak_bytes) / 1e6);
  report::Table t = report::figure_table("  ", 26);
  const std::string nt = std::to_string(o.threads) + " threads";
  t.add(ms_row("build, 1 thread", r.t1, 1));
  t.add(ms_row("bare keccak, same", r.tk, 1));
  t.add(ratio_row("build / keccak", r.ratio, 3, "x   wall clock"));
  t.add(ms_row("build, 1 thread (CPU)", r.c1, 1));
  t.add(ms_row("bare keccak (CPU)", r.ck, 1));
  t.add(ratio_row("build / keccak (CPU)", r.cratio, 3, "x   thread CPU time"));
  t.add(ms_row("build, " + nt, r.tp, 1));
  t.add(ratio_row("speedup", r.speedup, 2));
  t.add(ms_row(nt + ", process CPU", r.pcpu, 1));
  t.add(ratio_row("threads built chunks", r.threads_used, 0, ""));
  std::fputs(t.text().c_str(), stdout);
  const double cores = stats::summarize(r.pcpu).median / stats::summarize(r.tp).median;
  std::printf("  (%s run: %.2f cores busy on average, process CPU / wall of the medians)\n", nt.c_str(), cores);
  std::printf("  memory: input %.1f MB per million entries (88 B each); the build adds %.1f MB per million at peak%s\n",
              88.0, double(r.rss_build - r.rss_input) / double(r.entries),
              r.hwm_reset ? "" : " (peak RSS reset unsupported: not measured)");
}

void print_incremental(const experiments::MptBenchOptions& o, const experiments::MptIncrementalResult& r) {
  std::printf("incremental: %zu slot updates into %zu slots (one contract, state model; %s paths)\n", size_t(o.writes),
              size_t(o.slots), o.warm ? "warm" : "cold");
  std::printf("  dirty nodes %.0f, keccak calls %.0f (medians); %llu of %llu capture-block commits took the batch log\n",
              stats::summarize(r.dirty_nodes).median, stats::summarize(r.calls).median, (unsigned long long)r.logged_commits,
              (unsigned long long)(2 * o.reps));
  report::Table t = report::figure_table("  ", 26);
  t.add(ms_row("apply + root", r.tb, 2));
  t.add(ms_row("  of which apply", r.tapply, 2));
  t.add(ms_row("bare keccak, dirty", r.tk, 2));
  t.add(ratio_row("block / keccak", r.ratio, 3, "x   wall clock"));
  t.add(ms_row("block (CPU)", r.cb, 2));
  t.add(ms_row("  of which apply (CPU)", r.capply, 2));
  t.add(ms_row("bare keccak (CPU)", r.ck, 2));
  t.add(ratio_row("block / keccak (CPU)", r.cratio, 3, "x   thread CPU time"));
  t.add(ms_row("bare keccak + slot keys", r.cka, 2));
  t.add(ratio_row("block / that (CPU)", r.crat_all, 3, "x   the dirty nodes + the " + std::to_string(o.writes) + " slot keys"));
  std::fputs(t.text().c_str(), stdout);
  std::printf("  mutable trie: %.1f MB resident per million slots\n", double(r.rss_state - r.rss0) / double(o.slots));
}

void declare_options(Args& args) {
  args.option_u64("entries", "N", "from-scratch: secure-trie entries", 1, 100000000, 1000000);
  args.option_u64("slots", "S", "incremental: storage slots in the state", 1, 100000000, 1000000);
  args.option_u64("writes", "W", "incremental: slot updates per block (at most --slots)", 1, 100000000, 4096);
  add_reps(args, "repetitions of every timing", 5);
  args.option_u64("threads", "T", "the parallel from-scratch run's thread count", 1, 1024, 2);
  args.pin_option("threads");
  add_seed(args, "random seed of the incremental blocks", 1, "N");
  args.option_u64("chunk-keys", "K", "builder: ranges up to K keys are built by one serial stack pass", 1, 100000000, 4096);
  args.flag("skip-scratch", "skip the from-scratch figures");
  args.flag("skip-incremental", "skip the incremental figures");
  args.flag("warm", "incremental: time a block over the slots the untimed capture block just wrote (warm paths)");
  add_json(args, "print one JSON object");
}

MptBenchRequest request_of(const Args& args) {
  MptBenchRequest q;
  experiments::MptBenchOptions& o = q.bench;
  o.entries = args.get_u64("entries");
  o.slots = args.get_u64("slots");
  o.writes = args.get_u64("writes");
  o.reps = args.get_u64("reps");
  o.threads = args.get_u64("threads");
  o.seed = args.get_u64("seed");
  o.chunk_keys = args.get_u64("chunk-keys");
  o.warm = args.given("warm");
  q.scratch = !args.given("skip-scratch");
  q.incremental = !args.given("skip-incremental");
  q.json = args.given("json");
  return q;
}

}  // namespace

int cmd_mpt_bench(int argc, char** argv) {
  Args args("statetree mpt-bench", "MPT from-scratch and incremental root timings vs bare Keccak of the same nodes.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  MptBenchRequest q = request_of(args);
  const experiments::MptBenchOptions& o = q.bench;
  if (o.writes > o.slots)
    return fail("--writes (" + std::to_string(o.writes) + ") must not exceed --slots (" + std::to_string(o.slots) + ")");
  nlohmann::json j;
  j["command"] = "mpt-bench";
  j["tree"] = "mpt";
  j["keccak_kernel"] = st::kernels::keccak256_kernel_name();
  j["reps"] = o.reps;
  j["pinned_cpus"] = args.pin_cpus();
  report::stamp(j);
  report::Progress progress("mpt-bench", o.reps * ((q.scratch ? 1 : 0) + (q.incremental ? 1 : 0)));
  uint64_t reps_done = 0;
  if (!q.json) q.bench.on_rep = [&] { progress.update(++reps_done); };
  if (q.scratch) {
    experiments::MptScratchResult r;
    if (std::string e = experiments::run_mpt_scratch(o, &r); !e.empty()) return fail(e);
    j["from_scratch"] = scratch_json(o, r);
    j["root"] = j["from_scratch"]["root"];  // the from-scratch trie's root
    progress.finish();
    if (!q.json) print_scratch(o, r);
  }
  if (q.incremental) {
    experiments::MptIncrementalResult r;
    experiments::run_mpt_incremental(o, &r);
    j["incremental"] = incremental_json(o, r);
    progress.finish();
    if (!q.json) print_incremental(o, r);
  }
  if (!j.contains("root")) {
    j["root"] = nullptr;
    j["root_note"] = "--skip-scratch: the from-scratch root was not computed";
  }
  if (q.json) std::printf("%s\n", j.dump().c_str());
  else std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
