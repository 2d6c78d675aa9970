// cli_bintrie_bench: `statetree bintrie-bench`: the binary trie's figures against the bare
// hashing of exactly the same messages (from scratch, threads, the mutable tree, incremental
// batches, dense stems, group blobs, key proofs). The protocol is
// engine/experiments/bintrie_bench.h; here: the options, the JSON (timings as summaries in
// ms) and the human tables (median +-stddev [min, max] per figure; blobs per group depth).
#include <cstdio>
#include <string>
#include <vector>

#include "engine/experiments/bintrie_bench.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {
namespace {

int fail(const std::string& msg, int code = 2) { return cli_error("statetree bintrie-bench", msg, code); }

// Timing samples in ns as a summary in ms, noted under `label` for the noise warning.
nlohmann::json ms_json(const std::vector<double>& ns, const std::string& label) {
  std::vector<double> ms;
  for (double x : ns) ms.push_back(x / 1e6);
  return report::timing_json(label, ms);
}

// The command's options: the protocol's, and what it prints.
struct BintrieBenchRequest {
  experiments::BintrieBenchOptions bench;
  std::string clock;
  bool json = false;
};

nlohmann::json scratch_json(const experiments::BintrieScratchFigures& f) {
  return {{"stems", f.rs.stems}, {"hash32_messages", f.rs.hash32_messages}, {"hash64_messages", f.rs.hash64_messages},
          {"root_1t_ms", ms_json(f.root1_ns, "root_1t_ms")}, {"bare_hash_ms", ms_json(f.bare_ns, "bare_hash_ms")},
          {"ratio_to_bare", report::summary_json(stats::summarize(f.ratio_bare))},
          {"root_1t_wall_ms", ms_json(f.root1_wall_ns, "root_1t_wall_ms")},
          {"root_threads_ms", ms_json(f.rootT_ns, "root_threads_ms")},
          {"speedup_threads", report::summary_json(stats::summarize(f.speedup))},
          {"phases_1t_wall_ms", {{"partition", ms_json(f.p1_part, "phases_1t partition")},
                                 {"buckets", ms_json(f.p1_buckets, "phases_1t buckets")},
                                 {"top", ms_json(f.p1_top, "phases_1t top")}}},
          {"phases_threads_wall_ms", {{"partition", ms_json(f.pT_part, "phases_threads partition")},
                                      {"buckets", ms_json(f.pT_buckets, "phases_threads buckets")},
                                      {"top", ms_json(f.pT_top, "phases_threads top")}}},
          {"threads_process_cpu_per_wall", report::summary_json(stats::summarize(f.cpu_per_wall))}};
}

// The JSON of one incremental kind ("incremental_update" / "incremental_insert").
nlohmann::json incremental_json(const std::string& label, const st::bintrie::CommitStats& cs, const std::vector<double>& ns,
                                const std::vector<double>& bare_ns, const std::vector<double>& ratio) {
  return {{"leaf_hashes", cs.leaf_hashes}, {"hash64_messages", cs.hash64()}, {"internal_hashes", cs.internal_hashes},
          {"ms", ms_json(ns, label + " ms")}, {"bare_hash_ms", ms_json(bare_ns, label + " bare_hash_ms")},
          {"ratio_to_bare", report::summary_json(stats::summarize(ratio))}};
}

nlohmann::json dense_json(uint64_t dense_stems, const experiments::BintrieDenseFigures& f) {
  return {{"stems", dense_stems}, {"ms", ms_json(f.ns, "dense_stem_writes ms")},
          {"bare_hash_ms", ms_json(f.bare_ns, "dense_stem_writes bare_hash_ms")},
          {"ours", {{"leaf_hashes", f.ours_leaf}, {"hash64_messages", f.ours_node}}},
          {"geth_recompute", {{"leaf_hashes", f.geth_leaf}, {"hash64_messages", f.geth_node}, {"bare_hash_ms", f.geth_bare_ms}}},
          {"leaf_hashes_only", {{"leaf_hashes", f.ours_leaf}, {"hash64_messages", f.full_node}, {"bare_hash_ms", f.full_bare_ms}}}};
}

nlohmann::json blobs_json(const experiments::BintrieTreeFigures& f) {
  nlohmann::json blobs = nlohmann::json::array();
  for (const auto& [g, c] : f.blobs) {
    const double mean_group = c.group_blobs ? double(c.group_bytes) / double(c.group_blobs) : 0;
    blobs.push_back({{"gd", g}, {"group_blobs", c.group_blobs}, {"group_bytes", c.group_bytes},
                     {"group_blob_bytes_mean", mean_group}, {"group_blobs_full", c.group_full},
                     {"full_blob_bytes", st::bintrie::group_blob_size(unsigned(g), size_t(1) << g)},
                     {"stem_blobs", c.stem_blobs}, {"stem_bytes", c.stem_bytes}});
  }
  return blobs;
}

nlohmann::json bintrie_bench_json(const BintrieBenchRequest& q, const Args& args, const experiments::BintrieBenchResult& r) {
  const experiments::BintrieBenchOptions& o = q.bench;
  const experiments::BintrieIncrementalFigures& inc = r.incremental;
  nlohmann::json j = {
      {"command", "bintrie-bench"}, {"hash", st::bintrie::hash_kind_name(o.kind)},
      {"sha256_kernel", st::kernels::sha256_active().name}, {"keys", o.keys}, {"writes", o.writes}, {"reps", o.reps},
      {"threads", o.threads}, {"clock", q.clock}, {"root", report::hex0x(r.scratch.root)}, {"tree", "bintrie"},
      {"pinned_cpus", args.pin_cpus()}, {"from_scratch", scratch_json(r.scratch)},
      {"mutable_build_ms", r.tree.build_ns / 1e6}, {"mutable_memory_bytes", r.tree.memory_bytes},
      {"incremental_update", incremental_json("incremental_update", inc.ucs, inc.upd_ns, inc.upd_bare_ns, inc.upd_ratio)},
      {"incremental_insert", incremental_json("incremental_insert", inc.ics, inc.ins_ns, inc.ins_bare_ns, inc.ins_ratio)},
      {"dense_stem_writes", dense_json(o.dense_stems, r.dense)},
      {"blobs", blobs_json(r.tree)},
      {"key_proof_bytes", report::summary_json(r.tree.proof_bytes)},
      {"key_proof_depth", report::summary_json(r.tree.proof_depth)}};
  report::stamp(j);
  return j;
}

// Figures of ns samples in ms, or of ratios: median +-stddev [min, max].
nlohmann::json ms_row(const std::string& name, const std::vector<double>& ns) {
  std::vector<double> ms;
  for (double x : ns) ms.push_back(x / 1e6);
  return report::figure_row(name, report::summary_json(stats::summarize(ms)), 1, "ms");
}
nlohmann::json ratio_row(const std::string& name, const std::vector<double>& r) {
  return report::figure_row(name, report::summary_json(stats::summarize(r)), 2, "x");
}

void print_scratch(const BintrieBenchRequest& q, const experiments::BintrieScratchFigures& f) {
  const experiments::BintrieBenchOptions& o = q.bench;
  std::printf("bintrie-bench: %llu random keys, hash %s, SHA-256 kernel %s, %llu reps, %s clock\n",
              (unsigned long long)o.keys, st::bintrie::hash_kind_name(o.kind), st::kernels::sha256_active().name,
              (unsigned long long)o.reps, o.cpu_clock ? "thread-CPU" : "wall");
  std::printf("root %s\n\n", report::hex0x(f.root).c_str());
  std::printf("from scratch: %zu stems, %zu hash32 + %zu hash64 messages\n", f.rs.stems, f.rs.hash32_messages,
              f.rs.hash64_messages);
  const std::string nt = std::to_string(o.threads) + " threads";
  report::Table t = report::figure_table("  ", 30, true);
  t.add(ms_row("root, 1 thread", f.root1_ns));
  t.add(ms_row("bare hashing, same", f.bare_ns));
  t.add(ratio_row("ratio root/bare", f.ratio_bare));
  t.add(ms_row("root, 1 thread (wall)", f.root1_wall_ns));
  t.add(ms_row("root, " + nt, f.rootT_ns));
  t.add(ratio_row("speedup (wall)", f.speedup));
  t.add(ms_row("partition, 1 thread (wall)", f.p1_part));
  t.add(ms_row("buckets, 1 thread (wall)", f.p1_buckets));
  t.add(ms_row("top, 1 thread (wall)", f.p1_top));
  t.add(ms_row("partition, " + nt, f.pT_part));
  t.add(ms_row("buckets, " + nt, f.pT_buckets));
  t.add(ms_row("top, " + nt, f.pT_top));
  t.add(ratio_row("process CPU / wall, " + nt, f.cpu_per_wall));
  std::fputs(t.text().c_str(), stdout);
}

// One incremental kind's hash counts and its apply+commit / bare / ratio table.
void print_batch(const std::string& what, const st::bintrie::CommitStats& cs, const std::vector<double>& ns,
                 const std::vector<double>& bare_ns, const std::vector<double>& ratio) {
  std::printf("%s: %zu leaf + %zu node hashes (%zu internal)\n", what.c_str(), cs.leaf_hashes, cs.hash64(), cs.internal_hashes);
  report::Table t = report::figure_table("  ", 30, true);
  t.add(ms_row("apply+commit", ns));
  t.add(ms_row("bare hashing, same", bare_ns));
  t.add(ratio_row("ratio", ratio));
  std::fputs(t.text().c_str(), stdout);
}

void print_incremental(const experiments::BintrieBenchOptions& o, const experiments::BintrieTreeFigures& t,
                       const experiments::BintrieIncrementalFigures& f) {
  std::printf("\nmutable tree: build %.1f ms, %.1f MiB\n", t.build_ns / 1e6, double(t.memory_bytes) / 1048576.0);
  const std::string w = std::to_string(o.writes);
  print_batch("incremental, " + w + " overwrites of existing keys", f.ucs, f.upd_ns, f.upd_bare_ns, f.upd_ratio);
  print_batch("incremental, " + w + " new keys (stem splits)", f.ics, f.ins_ns, f.ins_bare_ns, f.ins_ratio);
}

void print_dense(const experiments::BintrieBenchOptions& o, const experiments::BintrieDenseFigures& d) {
  std::printf("dense stems: %llu writes into %llu full stems (stem-subtree keep decision)\n", (unsigned long long)o.writes,
              (unsigned long long)o.dense_stems);
  std::printf("  ours (subtree cache):    %zu leaf + %zu node hashes\n", d.ours_leaf, d.ours_node);
  report::Table t = report::figure_table("    ", 28, true);
  t.add(ms_row("apply+commit", d.ns));
  t.add(ms_row("bare", d.bare_ns));
  std::fputs(t.text().c_str(), stdout);
  std::printf("  go-ethereum recompute:   %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", d.geth_leaf, d.geth_node,
              d.geth_bare_ms);
  std::printf("  leaf hashes only:        %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", d.ours_leaf, d.full_node,
              d.full_bare_ms);
}

// Group blobs per GD: the rows of the JSON's "blobs".
void print_blobs_and_proofs(const experiments::BintrieBenchOptions& o, const experiments::BintrieTreeFigures& tree) {
  using report::Align;
  std::printf("\ngroup blobs of the %llu-key tree (%zu stems):\n", (unsigned long long)o.keys, tree.blob_stems);
  report::Table t({{"GD", 4, Align::right, report::u64_cell("gd")},
                   {"group blobs", 11, Align::right, report::u64_cell("group_blobs")},
                   {"group B", 12, Align::right, report::u64_cell("group_bytes")},
                   {"mean B", 8, Align::right, report::fixed_cell("group_blob_bytes_mean", 1)},
                   {"full B", 7, Align::right, report::u64_cell("full_blob_bytes")},
                   {"full", 7, Align::right, report::u64_cell("group_blobs_full")},
                   {"stem blobs", 10, Align::right, report::u64_cell("stem_blobs")},
                   {"stem B", 11, Align::right, report::u64_cell("stem_bytes")}},
                  "  ");
  for (const auto& row : blobs_json(tree)) t.add(row);
  std::fputs(t.text().c_str(), stdout);
  const stats::Summary &pb = tree.proof_bytes, &pd = tree.proof_depth;
  std::printf("\nkey proofs (1000 present keys): depth median %.0f [%.0f..%.0f], size median %.0f B [%.0f..%.0f]\n",
              pd.median, pd.min, pd.max, pb.median, pb.min, pb.max);
}

void print_bintrie_bench(const BintrieBenchRequest& q, const experiments::BintrieBenchResult& r) {
  report::timing("root_1t_ms", r.scratch.root1_ns);
  report::timing("root_threads_ms", r.scratch.rootT_ns);
  report::timing("incremental_update ms", r.incremental.upd_ns);
  report::timing("incremental_insert ms", r.incremental.ins_ns);
  print_scratch(q, r.scratch);
  print_incremental(q.bench, r.tree, r.incremental);
  if (q.bench.dense_stems > 0) print_dense(q.bench, r.dense);
  print_blobs_and_proofs(q.bench, r.tree);
  std::printf("%s\n", report::stamp_line().c_str());
}

void declare_options(Args& args) {
  args.option_u64("keys", "N", "random keys in the tree (the vectors' random_N family)", 2, 100000000, 1000000);
  args.option_u64("writes", "W", "random writes per incremental batch", 1, 100000000, 4096);
  add_reps(args, "timed repetitions", 5);
  args.option_u64("threads", "T", "threads for the parallel from-scratch root", 1, 256, 2);
  args.pin_option("threads");
  args.option_one_of("hash", "H", "tree hash", {"sha256", "blake3"}, "sha256");
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  args.option_u64_list("gd", "G[,G...]", "group depths for the blob statistics", 1, 8, "1,2,3,4,5,6,7,8");
  args.option_u64("dense-stems", "D", "full stems (256 values) for the stem-subtree keep comparison (0 = skip)", 0, 1000000, 4096);
  args.option_one_of("clock", "wall|cpu", "clock for the single-thread timings (cpu: this thread's CPU time)", {"wall", "cpu"}, "wall");
  add_json(args, "one JSON object on stdout");
}

}  // namespace

int cmd_bintrie_bench(int argc, char** argv) {
  Args args("statetree bintrie-bench", "EIP-7864 binary trie figures: batch root, incremental updates, threads, group blobs.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  BintrieBenchRequest q;
  experiments::BintrieBenchOptions& o = q.bench;
  o.keys = args.get_u64("keys");
  o.writes = args.get_u64("writes");
  o.reps = args.get_u64("reps");
  o.threads = args.get_u64("threads");
  o.dense_stems = args.get_u64("dense-stems");
  o.gds = args.get_u64_list("gd");
  o.kind = *st::bintrie::hash_kind_from_name(args.str("hash"));  // checked by parse()
  q.clock = args.str("clock");
  o.cpu_clock = q.clock == "cpu";
  q.json = args.given("json");
  if (auto e = st::kernels::sha256_select(args.str("kernel"))) return fail(*e);
  report::Progress progress("bintrie-bench", o.reps * (2 + (o.dense_stems > 0 ? 1 : 0)));
  uint64_t reps_started = 0;
  if (!q.json) o.on_rep = [&] { progress.update(reps_started++); };
  experiments::BintrieBenchResult r;
  if (std::string e = experiments::run_bintrie_bench(o, &r); !e.empty()) return fail(e, 70);
  progress.finish();
  if (q.json) std::puts(bintrie_bench_json(q, args, r).dump().c_str());
  else print_bintrie_bench(q, r);
  return 0;
}

}  // namespace st::cli
