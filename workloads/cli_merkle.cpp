// cli_merkle: `statetree merkle` — the Merkle root of a batch of leaves, timed over reps
// (addData / compute / total ns per leaf as median, min, max), with the kernel used, the
// compression count, the kernel's measured cost and the limit it implies, the efficiency,
// optional inclusion proof, and optional OpenSSL baselines run alternately in the same
// process (their roots must equal the engine's).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "engine/memory/large_buffer.h"
#include "engine/merkle/merkle_roofline.h"
#include "engine/merkle/merkle_tree.h"
#include "engine/pipeline/parallel.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/merkle_baselines.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {

namespace {

int fail(const std::string& msg, int code = 2) { return cli_error("statetree merkle", msg, code); }

std::optional<std::string> read_file(const std::string& path, memory::LargeBuffer* out) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return "cannot open " + path + ": " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path + ": " + std::strerror(errno);
  const auto size = uint64_t(st.st_size);
  if (auto e = memory::check_fits_in_memory(size, "the input file")) return e;
  *out = memory::LargeBuffer(size_t(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(out->data()), std::streamsize(size))) return "cannot read " + path;
  return std::nullopt;
}

struct Series {
  std::vector<double> add, compute, total;
  void push(uint64_t t0, uint64_t t1, uint64_t t2, size_t n) {
    add.push_back(double(t1 - t0) / double(n));
    compute.push_back(double(t2 - t1) / double(n));
    total.push_back(double(t2 - t0) / double(n));
  }
};

nlohmann::json series_json(const Series& s, const std::string& who) {
  return {{"add_ns_per_leaf", report::timing_json(who + " add_ns_per_leaf", s.add)},
          {"compute_ns_per_leaf", report::timing_json(who + " compute_ns_per_leaf", s.compute)},
          {"total_ns_per_leaf", report::timing_json(who + " total_ns_per_leaf", s.total)}};
}

struct MerkleRequest {
  bool json = false, twice = false, given_hashes = false, baseline = false;
  uint64_t threads = 1, reps = 1;
  size_t n = 0, record = 32;
  std::optional<size_t> proof_index;
  std::vector<int> cpus;
};

void declare_options(Args& args) {
  args.option_u64("leaves", "N", "synthetic input: N leaves, leaf i = 32 bytes each equal to i mod 256", 1, uint64_t(1) << 40);
  args.option("input", "FILE", "leaves from a file of fixed-size records (with --leaf-size)");
  args.option_u64("leaf-size", "B", "record size in bytes for --input", 1, 1u << 30, 32);
  args.option_u64("threads", "T", "worker threads (0 = all CPUs)", 0, 1024, 1);
  args.pin_option("threads");
  add_reps(args, "timed repetitions", 5, 100000);
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  args.option_u64("proof", "I", "print and verify the inclusion proof of leaf I", 0, uint64_t(1) << 40);
  args.flag("double", "double SHA-256 everywhere (leaf and node hashes) instead of single");
  args.flag("leaf-hashes", "the 32-byte records are already leaf hashes (level 0 as given, e.g. txids; with --double: Bitcoin's tree)");
  args.flag("baseline", "also time the OpenSSL SHA256() and SHA256_Init/Update/Final loops, alternating");
  add_json(args, "one JSON object on stdout");
}

// The leaves: synthetic (--leaves) or a file's records (--input); sets r->n and r->record.
// nullopt = go on, else the exit status.
std::optional<int> load_input(const Args& args, MerkleRequest* r, memory::LargeBuffer* input) {
  if (args.given("leaves")) {
    const uint64_t leaves = args.get_u64("leaves");
    // Input + arena (+ the baselines' own node array) must fit in this machine's memory.
    const uint64_t arena_bytes = merkle::MerkleArena::bytes_for(size_t(leaves));
    const uint64_t need = leaves * 32 + arena_bytes * (r->baseline ? 2 : 1);
    if (auto e = memory::check_fits_in_memory(need, fmt::format("--leaves {}", leaves))) return fail(*e);
    if (args.given("leaf-size") && r->record != 32) return fail("--leaf-size applies to --input only (synthetic leaves are 32 bytes)");
    r->record = 32;
    r->n = size_t(leaves);
    *input = memory::LargeBuffer(r->n * 32);
    for (size_t i = 0; i < r->n; ++i) std::memset(input->data() + 32 * i, int(i % 256), 32);
    return std::nullopt;
  }
  if (auto e = read_file(args.str("input"), input)) return fail(*e);
  if (input->size() == 0) return fail(args.str("input") + " is empty: a tree with no leaves has no root");
  if (input->size() % r->record != 0)
    return fail(fmt::format("{} has {} bytes, not a multiple of the record size {}", args.str("input"), input->size(), r->record));
  r->n = input->size() / r->record;
  if (auto e = memory::check_fits_in_memory(merkle::MerkleArena::bytes_for(r->n) * (r->baseline ? 2 : 1),
                                            fmt::format("a tree of {} leaves", r->n)))
    return fail(*e);
  return std::nullopt;
}

// The request from the command line and the input; nullopt = go on, else the exit status.
std::optional<int> parse_request(const Args& args, MerkleRequest* r, memory::LargeBuffer* input) {
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  r->json = args.given("json");
  r->twice = args.given("double");
  r->given_hashes = args.given("leaf-hashes");
  r->baseline = args.given("baseline");
  if (args.given("leaves") == args.given("input")) return fail("give exactly one of --leaves N or --input FILE");
  r->threads = args.get_u64("threads");
  r->reps = args.get_u64("reps");
  r->record = size_t(args.get_u64("leaf-size"));
  r->cpus = args.pin_cpus();
  if (auto e = kernels::sha256_select(args.str("kernel"))) return fail(*e);
  if (auto rc = load_input(args, r, input)) return rc;
  if (r->given_hashes && r->record != 32) return fail("--leaf-hashes needs 32-byte records");
  if (r->given_hashes && r->baseline) return fail("--baseline times leaf hashing: it does not combine with --leaf-hashes");
  if (args.given("proof")) {
    const uint64_t p = args.get_u64("proof");
    if (p >= r->n) return fail(fmt::format("--proof {}: there are only {} leaves", p, r->n));
    r->proof_index = size_t(p);
  }
  return std::nullopt;
}

// The timed reps: the engine's addData / compute, and the OpenSSL baselines alternating.
struct MerkleRun {
  Series engine, oneshot, ctx;
  merkle::MerkleResult result;
  std::array<uint8_t, 32> oneshot_root{}, ctx_root{};
};

// "" or the input error.
std::string time_reps(const MerkleRequest& r, const memory::LargeBuffer& input, merkle::MerkleTree& tree,
                      workloads::MerkleBaselineTree* baseline, MerkleRun* run) {
  report::Progress progress("merkle", r.reps);
  for (uint64_t rep = 0; rep < r.reps; ++rep) {
    const uint64_t t0 = report::now_ns();
    if (auto e = r.given_hashes ? tree.set_leaf_hashes(input.data(), r.n) : tree.add_fixed(input.data(), r.n, r.record))
      return *e;
    const uint64_t t1 = report::now_ns();
    run->result = tree.compute();
    const uint64_t t2 = report::now_ns();
    run->engine.push(t0, t1, t2, r.n);
    if (baseline) {
      for (auto kind : {workloads::MerkleBaseline::oneshot, workloads::MerkleBaseline::ctx}) {
        const uint64_t b0 = report::now_ns();
        baseline->add(kind, input.data(), r.record, r.twice);
        const uint64_t b1 = report::now_ns();
        baseline->compute(kind, r.twice);
        const uint64_t b2 = report::now_ns();
        if (kind == workloads::MerkleBaseline::oneshot) { run->oneshot.push(b0, b1, b2, r.n); run->oneshot_root = baseline->root(); }
        else { run->ctx.push(b0, b1, b2, r.n); run->ctx_root = baseline->root(); }
      }
    }
    progress.update(rep + 1);
  }
  progress.finish();
  return "";
}

// What the run implies: the roofline (kernel cost measured here, on this thread's core), the
// baselines' agreement, the proof, memory.
struct MerkleFigures {
  merkle::MerkleKernelCost cost;
  uint64_t compressions = 0, peak_rss = 0, arena_bytes = 0;
  unsigned threads = 1;
  double limit_ns_per_leaf = 0, total_median = 0, efficiency = 0, cost_per_compression = 0;
  bool baselines_agree = true, proof_ok = true;
  nlohmann::json proof_json;
};

MerkleFigures merkle_figures(const MerkleRequest& r, const memory::LargeBuffer& input, const merkle::MerkleTree& tree,
                             unsigned threads, const MerkleRun& run) {
  MerkleFigures f;
  f.cost = merkle::measure_merkle_kernel_cost();
  const uint64_t parents = tree.parent_count();
  f.compressions = tree.leaf_compressions() + tree.parent_compressions();
  const double limit_ns = merkle::merkle_limit_ns(f.cost, tree.leaf_compressions() - (r.twice ? r.n : 0), parents,
                                                  r.twice ? r.n + parents : 0, threads);
  f.threads = threads;
  f.limit_ns_per_leaf = limit_ns / double(r.n);
  f.total_median = stats::summarize(run.engine.total).median;
  f.efficiency = f.limit_ns_per_leaf / f.total_median;
  f.cost_per_compression = limit_ns * threads / double(f.compressions);
  if (r.baseline) f.baselines_agree = run.oneshot_root == run.result.root && run.ctx_root == run.result.root;
  if (r.proof_index) {
    const merkle::MerkleOptions options{r.twice};
    const auto path = tree.proof(*r.proof_index);
    const uint8_t* record_bytes = input.data() + *r.proof_index * r.record;
    merkle::Hash32 leaf;
    if (r.given_hashes) std::memcpy(leaf.data(), record_bytes, 32);
    else leaf = merkle::MerkleTree::leaf_hash(record_bytes, r.record, options);
    f.proof_ok = merkle::MerkleTree::verify(leaf, *r.proof_index, r.n, path, run.result.root, options);
    nlohmann::json p = nlohmann::json::array();
    for (const auto& d : path) p.push_back(report::hex0x(d));
    f.proof_json = {{"index", *r.proof_index}, {"leaf_hash", report::hex0x(leaf)}, {"path", p}, {"verified", f.proof_ok}};
  }
  f.arena_bytes = tree.arena().bytes();
  f.peak_rss = report::peak_rss_bytes();
  return f;
}

nlohmann::json merkle_json(const MerkleRequest& r, const MerkleRun& run, const MerkleFigures& f, size_t input_bytes) {
  nlohmann::json j = series_json(run.engine, "engine");
  j["command"] = "merkle";
  j["root"] = report::hex0x(run.result.root);
  j["tree"] = "merkle";
  report::stamp(j);
  j["kernel"] = kernels::sha256_active().name;
  j["leaves"] = r.n;
  j["leaf_size_bytes"] = r.record;
  j["double_sha256"] = r.twice;
  j["leaf_hashes_given"] = r.given_hashes;
  j["mutated"] = run.result.mutated;
  j["threads"] = f.threads;
  j["pinned_cpus"] = r.cpus;
  j["reps"] = r.reps;
  j["compressions"] = f.compressions;
  j["kernel_cost_ns"] = {{"per_leaf_hash", f.cost.leaf_ns}, {"per_parent", f.cost.parent_ns},
                         {"per_digest_rehash", f.cost.digest_ns}, {"per_compression", f.cost_per_compression}};
  j["limit_ns_per_leaf"] = f.limit_ns_per_leaf;
  j["efficiency"] = f.efficiency;
  j["arena_bytes"] = f.arena_bytes;
  j["input_bytes"] = input_bytes;
  j["peak_rss_bytes"] = f.peak_rss;
  if (r.baseline) {
    nlohmann::json b1 = series_json(run.oneshot, "openssl oneshot"), b2 = series_json(run.ctx, "openssl ctx");
    b1["root"] = report::hex0x(run.oneshot_root);
    b2["root"] = report::hex0x(run.ctx_root);
    b1["engine_over_baseline"] = f.total_median / stats::summarize(run.oneshot.total).median;
    b2["engine_over_baseline"] = f.total_median / stats::summarize(run.ctx.total).median;
    j["baselines"] = {{"openssl_sha256_oneshot", b1}, {"openssl_sha256_init_update_final", b2}};
    j["baselines_agree"] = f.baselines_agree;
  }
  if (r.proof_index) j["proof"] = f.proof_json;
  return j;
}

// The ns-per-leaf table: addData / compute / total, and the baselines' totals against the engine's.
report::Table timing_table(const MerkleRequest& r, const MerkleRun& run, const MerkleFigures& f) {
  auto number = [](const char* key) {
    return report::number_column(key, 9, std::string("/ns/") + key, 2);
  };
  report::Table t({{fmt::format("ns/leaf over {} reps", r.reps), 23, report::Align::left,
                    [](const nlohmann::json& row) { return "  " + row["name"].get<std::string>(); }},
                   number("median"), number("mean"), number("stddev"), number("min"), number("max"),
                   {"", 0, report::Align::left, [](const nlohmann::json& row) {
                      return row.contains("ratio") ? fmt::format("  engine/baseline {:.3f}", row["ratio"].get<double>()) : "";
                    }}});
  auto add = [&t](const char* name, const std::vector<double>& ns) {
    t.add({{"name", name}, {"ns", report::summary_json(stats::summarize(ns))}});
  };
  add("addData", run.engine.add);
  add("compute", run.engine.compute);
  add("total", run.engine.total);
  if (r.baseline) {
    for (const auto& [name, series] : {std::pair{"OpenSSL SHA256()", &run.oneshot}, std::pair{"OpenSSL Init/Upd/Fin", &run.ctx}}) {
      nlohmann::json row = {{"name", name}, {"ns", report::summary_json(stats::summarize(series->total))}};
      row["ratio"] = f.total_median / row["ns"]["median"].get<double>();
      t.add(std::move(row));
    }
  }
  return t;
}

void print_merkle(const MerkleRequest& r, const MerkleRun& run, const MerkleFigures& f, size_t input_bytes) {
  fmt::print("root        {}\n", report::hex0x(run.result.root));
  fmt::print("leaves      {} x {} bytes, {} SHA-256, kernel {}, {} thread(s){}\n", r.n, r.record, r.twice ? "double" : "single",
             kernels::sha256_active().name, f.threads, r.cpus.empty() ? "" : ", pinned");
  if (run.result.mutated) fmt::print("mutated     yes: two equal siblings (CVE-2012-2459): another leaf list has this root\n");
  report::timing("engine total_ns_per_leaf", run.engine.total);
  fmt::print("\n{}", timing_table(r, run, f).text());
  fmt::print("\ncompressions {}; kernel cost {:.2f} ns/leaf hash, {:.2f} ns/parent ({:.2f} ns/compression)\n", f.compressions,
             f.cost.leaf_ns, f.cost.parent_ns, f.cost_per_compression);
  fmt::print("limit        {:.2f} ns/leaf on {} thread(s); efficiency (limit/actual) {:.0f}%\n", f.limit_ns_per_leaf,
             f.threads, f.efficiency * 100);
  fmt::print("memory       arena {:.1f} MiB, input {:.1f} MiB, peak RSS {:.1f} MiB\n", f.arena_bytes / 1048576.0,
             input_bytes / 1048576.0, f.peak_rss / 1048576.0);
  if (r.proof_index) {
    fmt::print("\nproof of leaf {} ({} siblings): {}\n", *r.proof_index, f.proof_json["path"].size(), f.proof_ok ? "verified" : "FAILED");
    for (const auto& s : f.proof_json["path"]) fmt::print("  {}\n", s.get<std::string>());
  }
  if (r.baseline) fmt::print("baselines   {}\n", f.baselines_agree ? "same root" : "ROOT MISMATCH");
  fmt::print("{}\n", report::stamp_line());
}

}  // namespace

int cmd_merkle(int argc, char** argv) {
  Args args("statetree merkle", "Bitcoin-style SHA-256 Merkle root of a batch of leaves (docs/specs/merkle.md).");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  MerkleRequest r;
  memory::LargeBuffer input;
  if (auto rc = parse_request(args, &r, &input)) return *rc;
  pipeline::ThreadScope scope(unsigned(r.threads), r.cpus);
  merkle::MerkleTree tree(r.n, merkle::MerkleOptions{r.twice});
  std::unique_ptr<workloads::MerkleBaselineTree> baseline;
  if (r.baseline) baseline = std::make_unique<workloads::MerkleBaselineTree>(r.n);
  MerkleRun run;
  if (std::string e = time_reps(r, input, tree, baseline.get(), &run); !e.empty()) return fail(e);
  const MerkleFigures f = merkle_figures(r, input, tree, scope.threads(), run);
  if (r.json) std::puts(merkle_json(r, run, f, input.size()).dump().c_str());
  else print_merkle(r, run, f, input.size());
  if (!f.baselines_agree) return fail("baseline roots differ from the engine's root", 1);
  if (!f.proof_ok) return fail("proof did not verify", 1);
  return 0;
}

}  // namespace st::cli
