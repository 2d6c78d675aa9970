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
#include "workloads/commands.h"
#include "workloads/merkle_baselines.h"
#include "workloads/report.h"

namespace st::cli {

namespace {

int fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "statetree merkle: %s\n", msg.c_str());
  return code;
}

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

std::string fmt_summary(const std::vector<double>& v) {
  const auto s = stats::summarize(v);
  return fmt::format("{:9.2f} {:9.2f} {:9.2f} {:9.2f} {:9.2f}", s.median, s.mean, s.stddev, s.min, s.max);
}

}  // namespace

int cmd_merkle(int argc, char** argv) {
  Args args("statetree merkle", "Bitcoin-style SHA-256 Merkle root of a batch of leaves (docs/specs/merkle.md).");
  args.option_u64("leaves", "N", "synthetic input: N leaves, leaf i = 32 bytes each equal to i mod 256", 1, uint64_t(1) << 40);
  args.option("input", "FILE", "leaves from a file of fixed-size records (with --leaf-size)");
  args.option_u64("leaf-size", "B", "record size in bytes for --input", 1, 1u << 30, 32);
  args.option_u64("threads", "T", "worker threads (0 = all CPUs)", 0, 1024, 1);
  args.pin_option("threads");
  args.option_u64("reps", "R", "timed repetitions", 1, 100000, 5);
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  args.option_u64("proof", "I", "print and verify the inclusion proof of leaf I", 0, uint64_t(1) << 40);
  args.flag("double", "double SHA-256 everywhere (leaf and node hashes) instead of single");
  args.flag("leaf-hashes", "the 32-byte records are already leaf hashes (level 0 as given, e.g. txids; with --double: Bitcoin's tree)");
  args.flag("baseline", "also time the OpenSSL SHA256() and SHA256_Init/Update/Final loops, alternating");
  args.flag("json", "one JSON object on stdout");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");

  const bool json = args.given("json");
  const bool twice = args.given("double");
  const bool given_hashes = args.given("leaf-hashes");
  if (args.given("leaves") == args.given("input")) return fail("give exactly one of --leaves N or --input FILE");
  const uint64_t threads = args.get_u64("threads");
  const uint64_t reps = args.get_u64("reps");
  const uint64_t leaf_size = args.get_u64("leaf-size");
  const std::vector<int> cpus = args.pin_cpus();
  if (auto e = kernels::sha256_select(args.str("kernel"))) return fail(*e);
  const kernels::Sha256Kernel& kernel = kernels::sha256_active();

  // Input.
  memory::LargeBuffer input;
  size_t n = 0;
  size_t record = size_t(leaf_size);
  if (args.given("leaves")) {
    const uint64_t leaves = args.get_u64("leaves");
    // Input + arena (+ the baselines' own node array) must fit in this machine's memory.
    const uint64_t arena_bytes = merkle::MerkleArena::bytes_for(size_t(leaves));
    const uint64_t need = leaves * 32 + arena_bytes * (args.given("baseline") ? 2 : 1);
    if (auto e = memory::check_fits_in_memory(need, fmt::format("--leaves {}", leaves))) return fail(*e);
    if (args.given("leaf-size") && record != 32) return fail("--leaf-size applies to --input only (synthetic leaves are 32 bytes)");
    record = 32;
    n = size_t(leaves);
    input = memory::LargeBuffer(n * 32);
    for (size_t i = 0; i < n; ++i) std::memset(input.data() + 32 * i, int(i % 256), 32);
  } else {
    if (auto e = read_file(args.str("input"), &input)) return fail(*e);
    if (input.size() == 0) return fail(args.str("input") + " is empty: a tree with no leaves has no root");
    if (input.size() % record != 0)
      return fail(fmt::format("{} has {} bytes, not a multiple of the record size {}", args.str("input"), input.size(), record));
    n = input.size() / record;
    if (auto e = memory::check_fits_in_memory(merkle::MerkleArena::bytes_for(n) * (args.given("baseline") ? 2 : 1),
                                              fmt::format("a tree of {} leaves", n)))
      return fail(*e);
  }
  if (given_hashes && record != 32) return fail("--leaf-hashes needs 32-byte records");
  if (given_hashes && args.given("baseline")) return fail("--baseline times leaf hashing: it does not combine with --leaf-hashes");
  std::optional<size_t> proof_index;
  if (args.given("proof")) {
    const uint64_t p = args.get_u64("proof");
    if (p >= n) return fail(fmt::format("--proof {}: there are only {} leaves", p, n));
    proof_index = size_t(p);
  }

  pipeline::ThreadScope scope(unsigned(threads), cpus);
  const merkle::MerkleOptions options{twice};
  merkle::MerkleTree tree(n, options);
  std::unique_ptr<workloads::MerkleBaselineTree> baseline;
  if (args.given("baseline")) baseline = std::make_unique<workloads::MerkleBaselineTree>(n);

  Series engine_series, oneshot_series, ctx_series;
  merkle::MerkleResult result;
  std::array<uint8_t, 32> oneshot_root{}, ctx_root{};
  report::Progress progress("merkle", reps);
  for (uint64_t rep = 0; rep < reps; ++rep) {
    const uint64_t t0 = report::now_ns();
    if (auto e = given_hashes ? tree.set_leaf_hashes(input.data(), n) : tree.add_fixed(input.data(), n, record)) return fail(*e);
    const uint64_t t1 = report::now_ns();
    result = tree.compute();
    const uint64_t t2 = report::now_ns();
    engine_series.push(t0, t1, t2, n);
    if (baseline) {
      for (auto kind : {workloads::MerkleBaseline::oneshot, workloads::MerkleBaseline::ctx}) {
        const uint64_t b0 = report::now_ns();
        baseline->add(kind, input.data(), record, twice);
        const uint64_t b1 = report::now_ns();
        baseline->compute(kind, twice);
        const uint64_t b2 = report::now_ns();
        if (kind == workloads::MerkleBaseline::oneshot) { oneshot_series.push(b0, b1, b2, n); oneshot_root = baseline->root(); }
        else { ctx_series.push(b0, b1, b2, n); ctx_root = baseline->root(); }
      }
    }
    progress.update(rep + 1);
  }
  progress.finish();

  // Roofline: kernel cost measured here, on this thread's core.
  const merkle::MerkleKernelCost cost = merkle::measure_merkle_kernel_cost();
  const uint64_t parents = tree.parent_count();
  const uint64_t compressions = tree.leaf_compressions() + tree.parent_compressions();
  const double limit_ns = merkle::merkle_limit_ns(cost, tree.leaf_compressions() - (twice ? n : 0), parents,
                                                  twice ? n + parents : 0, scope.threads());
  const double limit_ns_per_leaf = limit_ns / double(n);
  const double total_median = stats::summarize(engine_series.total).median;
  const double efficiency = limit_ns_per_leaf / total_median;
  const double cost_per_compression = limit_ns * scope.threads() / double(compressions);

  const std::string root_hex = report::hex0x(result.root);
  bool baselines_agree = true;
  if (baseline) baselines_agree = oneshot_root == result.root && ctx_root == result.root;

  nlohmann::json proof_json;
  bool proof_ok = true;
  if (proof_index) {
    const auto path = tree.proof(*proof_index);
    const uint8_t* record_bytes = input.data() + *proof_index * record;
    merkle::Digest leaf;
    if (given_hashes) std::memcpy(leaf.data(), record_bytes, 32);
    else leaf = merkle::MerkleTree::leaf_hash(record_bytes, record, options);
    proof_ok = merkle::MerkleTree::verify(leaf, *proof_index, n, path, result.root, options);
    nlohmann::json p = nlohmann::json::array();
    for (const auto& d : path) p.push_back(report::hex0x(d));
    proof_json = {{"index", *proof_index}, {"leaf_hash", report::hex0x(leaf)}, {"path", p}, {"verified", proof_ok}};
  }

  const uint64_t peak_rss = report::peak_rss_bytes();
  if (json) {
    nlohmann::json j = series_json(engine_series, "engine");
    j["command"] = "merkle";
    j["root"] = root_hex;
    j["tree"] = "merkle";
    report::stamp(j);
    j["kernel"] = kernel.name;
    j["leaves"] = n;
    j["leaf_size_bytes"] = record;
    j["double_sha256"] = twice;
    j["leaf_hashes_given"] = given_hashes;
    j["mutated"] = result.mutated;
    j["threads"] = scope.threads();
    j["pinned_cpus"] = cpus;
    j["reps"] = reps;
    j["compressions"] = compressions;
    j["kernel_cost_ns"] = {{"per_leaf_hash", cost.leaf_ns}, {"per_parent", cost.parent_ns}, {"per_digest_rehash", cost.digest_ns},
                           {"per_compression", cost_per_compression}};
    j["limit_ns_per_leaf"] = limit_ns_per_leaf;
    j["efficiency"] = efficiency;
    j["arena_bytes"] = tree.arena().bytes();
    j["input_bytes"] = input.size();
    j["peak_rss_bytes"] = peak_rss;
    if (baseline) {
      nlohmann::json b1 = series_json(oneshot_series, "openssl oneshot"), b2 = series_json(ctx_series, "openssl ctx");
      b1["root"] = report::hex0x(oneshot_root);
      b2["root"] = report::hex0x(ctx_root);
      b1["engine_over_baseline"] = total_median / stats::summarize(oneshot_series.total).median;
      b2["engine_over_baseline"] = total_median / stats::summarize(ctx_series.total).median;
      j["baselines"] = {{"openssl_sha256_oneshot", b1}, {"openssl_sha256_init_update_final", b2}};
      j["baselines_agree"] = baselines_agree;
    }
    if (proof_index) j["proof"] = proof_json;
    std::puts(j.dump().c_str());
  } else {
    fmt::print("root        {}\n", root_hex);
    fmt::print("leaves      {} x {} bytes, {} SHA-256, kernel {}, {} thread(s){}\n", n, record, twice ? "double" : "single",
               kernel.name, scope.threads(), cpus.empty() ? "" : ", pinned");
    if (result.mutated) fmt::print("mutated     yes: two equal siblings (CVE-2012-2459): another leaf list has this root\n");
    report::timing("engine total_ns_per_leaf", engine_series.total);
    fmt::print("\nns/leaf over {} reps      median      mean    stddev       min       max\n", reps);
    fmt::print("  addData               {}\n", fmt_summary(engine_series.add));
    fmt::print("  compute               {}\n", fmt_summary(engine_series.compute));
    fmt::print("  total                 {}\n", fmt_summary(engine_series.total));
    if (baseline) {
      fmt::print("  OpenSSL SHA256()      {}   engine/baseline {:.3f}\n", fmt_summary(oneshot_series.total),
                 total_median / stats::summarize(oneshot_series.total).median);
      fmt::print("  OpenSSL Init/Upd/Fin  {}   engine/baseline {:.3f}\n", fmt_summary(ctx_series.total),
                 total_median / stats::summarize(ctx_series.total).median);
    }
    fmt::print("\ncompressions {}; kernel cost {:.2f} ns/leaf hash, {:.2f} ns/parent ({:.2f} ns/compression)\n", compressions,
               cost.leaf_ns, cost.parent_ns, cost_per_compression);
    fmt::print("limit        {:.2f} ns/leaf on {} thread(s); efficiency (limit/actual) {:.0f}%\n", limit_ns_per_leaf,
               scope.threads(), efficiency * 100);
    fmt::print("memory       arena {:.1f} MiB, input {:.1f} MiB, peak RSS {:.1f} MiB\n", tree.arena().bytes() / 1048576.0,
               input.size() / 1048576.0, peak_rss / 1048576.0);
    if (proof_index) {
      fmt::print("\nproof of leaf {} ({} siblings): {}\n", *proof_index, proof_json["path"].size(), proof_ok ? "verified" : "FAILED");
      for (const auto& s : proof_json["path"]) fmt::print("  {}\n", s.get<std::string>());
    }
    if (baseline) fmt::print("baselines   {}\n", baselines_agree ? "same root" : "ROOT MISMATCH");
    fmt::print("{}\n", report::stamp_line());
  }
  if (!baselines_agree) return fail("baseline roots differ from the engine's root", 1);
  if (!proof_ok) return fail("proof did not verify", 1);
  return 0;
}

}  // namespace st::cli
