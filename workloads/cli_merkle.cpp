// cli_merkle: `statetree merkle` — the Merkle root of a batch of leaves, timed over reps
// (addData / compute / total ns per leaf as median, min, max), with the kernel used, the
// compression count, the kernel's measured cost and the limit it implies, the efficiency,
// optional inclusion proof, and optional OpenSSL baselines run alternately in the same
// process (their roots must equal the engine's). The protocol is
// engine/experiments/merkle_bench.h; this file parses the request, hands it the OpenSSL
// loops (workloads/merkle_baselines.h) and renders the result.
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

#include "engine/experiments/merkle_bench.h"
#include "engine/memory/large_buffer.h"
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

nlohmann::json series_json(const experiments::MerkleSeries& s, const std::string& who) {
  return {{"add_ns_per_leaf", report::timing_json(who + " add_ns_per_leaf", s.add_ns)},
          {"compute_ns_per_leaf", report::timing_json(who + " compute_ns_per_leaf", s.compute_ns)},
          {"total_ns_per_leaf", report::timing_json(who + " total_ns_per_leaf", s.total_ns)}};
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

// One of the OpenSSL loops as the protocol's baseline (the two share one node array).
class OpenSslLoop : public experiments::MerkleBaselineLoop {
 public:
  OpenSslLoop(workloads::MerkleBaselineTree* tree, workloads::MerkleBaseline kind) : tree_(tree), kind_(kind) {}
  void add(const uint8_t* data, size_t leaf_size, bool twice) override { tree_->add(kind_, data, leaf_size, twice); }
  void compute(bool twice) override { tree_->compute(kind_, twice); }
  std::array<uint8_t, 32> root() const override { return tree_->root(); }

 private:
  workloads::MerkleBaselineTree* tree_;
  workloads::MerkleBaseline kind_;
};

// What the run adds beyond the protocol's result: the thread count, memory.
struct MerkleRun {
  experiments::MerkleBenchResult b;
  unsigned threads = 1;
  uint64_t peak_rss = 0;
};

nlohmann::json proof_json(const MerkleRequest& r, const experiments::MerkleBenchResult& b) {
  nlohmann::json p = nlohmann::json::array();
  for (const auto& d : b.proof_path) p.push_back(report::hex0x(d));
  return {{"index", *r.proof_index}, {"leaf_hash", report::hex0x(b.proof_leaf_hash)}, {"path", p}, {"verified", b.proof_ok}};
}

nlohmann::json merkle_json(const MerkleRequest& r, const MerkleRun& run, size_t input_bytes) {
  const experiments::MerkleBenchResult& b = run.b;
  nlohmann::json j = series_json(b.engine, "engine");
  j["command"] = "merkle";
  j["root"] = report::hex0x(b.result.root);
  j["tree"] = "merkle";
  report::stamp(j);
  j["kernel"] = kernels::sha256_active().name;
  j["leaves"] = r.n;
  j["leaf_size_bytes"] = r.record;
  j["double_sha256"] = r.twice;
  j["leaf_hashes_given"] = r.given_hashes;
  j["mutated"] = b.result.mutated;
  j["threads"] = run.threads;
  j["pinned_cpus"] = r.cpus;
  j["reps"] = r.reps;
  j["compressions"] = b.compressions;
  j["kernel_cost_ns"] = {{"per_leaf_hash", b.cost.leaf_ns}, {"per_parent", b.cost.parent_ns},
                         {"per_digest_rehash", b.cost.digest_ns}, {"per_compression", b.cost_per_compression_ns}};
  j["limit_ns_per_leaf"] = b.limit_ns_per_leaf;
  j["efficiency"] = b.efficiency;
  j["arena_bytes"] = b.arena_bytes;
  j["input_bytes"] = input_bytes;
  j["peak_rss_bytes"] = run.peak_rss;
  if (r.baseline) {  // baselines [0] oneshot, [1] ctx (cmd_merkle's order)
    nlohmann::json b1 = series_json(b.baselines[0], "openssl oneshot"), b2 = series_json(b.baselines[1], "openssl ctx");
    b1["root"] = report::hex0x(b.baseline_roots[0]);
    b2["root"] = report::hex0x(b.baseline_roots[1]);
    b1["engine_over_baseline"] = b.total_median_ns / stats::summarize(b.baselines[0].total_ns).median;
    b2["engine_over_baseline"] = b.total_median_ns / stats::summarize(b.baselines[1].total_ns).median;
    j["baselines"] = {{"openssl_sha256_oneshot", b1}, {"openssl_sha256_init_update_final", b2}};
    j["baselines_agree"] = b.baselines_agree;
  }
  if (r.proof_index) j["proof"] = proof_json(r, b);
  return j;
}

// The ns-per-leaf table: addData / compute / total, and the baselines' totals against the engine's.
report::Table timing_table(const MerkleRequest& r, const experiments::MerkleBenchResult& b) {
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
  add("addData", b.engine.add_ns);
  add("compute", b.engine.compute_ns);
  add("total", b.engine.total_ns);
  if (r.baseline) {
    for (const auto& [name, series] : {std::pair{"OpenSSL SHA256()", &b.baselines[0]}, std::pair{"OpenSSL Init/Upd/Fin", &b.baselines[1]}}) {
      nlohmann::json row = {{"name", name}, {"ns", report::summary_json(stats::summarize(series->total_ns))}};
      row["ratio"] = b.total_median_ns / row["ns"]["median"].get<double>();
      t.add(std::move(row));
    }
  }
  return t;
}

void print_merkle(const MerkleRequest& r, const MerkleRun& run, size_t input_bytes) {
  const experiments::MerkleBenchResult& b = run.b;
  fmt::print("root        {}\n", report::hex0x(b.result.root));
  fmt::print("leaves      {} x {} bytes, {} SHA-256, kernel {}, {} thread(s){}\n", r.n, r.record, r.twice ? "double" : "single",
             kernels::sha256_active().name, run.threads, r.cpus.empty() ? "" : ", pinned");
  if (b.result.mutated) fmt::print("mutated     yes: two equal siblings (CVE-2012-2459): another leaf list has this root\n");
  report::timing("engine total_ns_per_leaf", b.engine.total_ns);
  fmt::print("\n{}", timing_table(r, b).text());
  fmt::print("\ncompressions {}; kernel cost {:.2f} ns/leaf hash, {:.2f} ns/parent ({:.2f} ns/compression)\n", b.compressions,
             b.cost.leaf_ns, b.cost.parent_ns, b.cost_per_compression_ns);
  fmt::print("limit        {:.2f} ns/leaf on {} thread(s); efficiency (limit/actual) {:.0f}%\n", b.limit_ns_per_leaf,
             run.threads, b.efficiency * 100);
  fmt::print("memory       arena {:.1f} MiB, input {:.1f} MiB, peak RSS {:.1f} MiB\n", b.arena_bytes / 1048576.0,
             input_bytes / 1048576.0, run.peak_rss / 1048576.0);
  if (r.proof_index) {
    fmt::print("\nproof of leaf {} ({} siblings): {}\n", *r.proof_index, b.proof_path.size(), b.proof_ok ? "verified" : "FAILED");
    for (const auto& s : b.proof_path) fmt::print("  {}\n", report::hex0x(s));
  }
  if (r.baseline) fmt::print("baselines   {}\n", b.baselines_agree ? "same root" : "ROOT MISMATCH");
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
  std::unique_ptr<workloads::MerkleBaselineTree> baseline;
  std::unique_ptr<OpenSslLoop> oneshot, ctx;
  experiments::MerkleBenchOptions o;
  if (r.baseline) {
    baseline = std::make_unique<workloads::MerkleBaselineTree>(r.n);
    oneshot = std::make_unique<OpenSslLoop>(baseline.get(), workloads::MerkleBaseline::oneshot);
    ctx = std::make_unique<OpenSslLoop>(baseline.get(), workloads::MerkleBaseline::ctx);
    o.baselines = {oneshot.get(), ctx.get()};
  }
  o.input = input.data();
  o.leaf_count = r.n;
  o.record_bytes = r.record;
  o.twice = r.twice;
  o.given_hashes = r.given_hashes;
  o.reps = r.reps;
  o.threads = scope.threads();
  o.proof_index = r.proof_index;
  report::Progress progress("merkle", r.reps);
  o.progress = [&](uint64_t done) {
    progress.update(done);
    if (done == r.reps) progress.finish();  // before the figures (the kernel cost is measured after the reps)
  };
  MerkleRun run;
  if (std::string e = experiments::run_merkle_bench(o, &run.b); !e.empty()) return fail(e);
  run.threads = scope.threads();
  run.peak_rss = report::peak_rss_bytes();
  if (r.json) std::puts(merkle_json(r, run, input.size()).dump().c_str());
  else print_merkle(r, run, input.size());
  if (!run.b.baselines_agree) return fail("baseline roots differ from the engine's root", 1);
  if (!run.b.proof_ok) return fail("proof did not verify", 1);
  return 0;
}

}  // namespace st::cli
