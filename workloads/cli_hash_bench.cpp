// cli_hash_bench: `statetree hash-bench`, the SHA-256 kernel micro-benchmark: the tiers and
// options from the command line, the protocol (engine/experiments/hash_bench.h), and its
// result as a table (ns per message and per compression: median +-stddev [min, max] over
// --reps) or one JSON object (with the samples).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiments/hash_bench.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {

namespace {

using kernels::Sha256Tier;

int fail(const std::string& msg, int code = 2) { return cli_error("statetree hash-bench", msg, code); }

constexpr Sha256Tier kTiers[] = {Sha256Tier::portable, Sha256Tier::shani, Sha256Tier::avx2, Sha256Tier::avx512};

// The tiers --kernel names ("all": every available one), each passing its self-test;
// nullopt = go on, else the exit status.
std::optional<int> select_tiers(const std::string& name, std::vector<Sha256Tier>* tiers) {
  if (name == "all") {
    for (Sha256Tier t : kTiers)
      if (kernels::sha256_tier_available(t)) tiers->push_back(t);
  } else {
    const auto t = kernels::sha256_tier_from_name(name);
    if (!t) return fail("unknown kernel '" + name + "' (portable, shani, avx2, avx512 or all)");
    if (!kernels::sha256_tier_available(*t)) return fail("kernel '" + name + "' is not available on this CPU/build");
    tiers->push_back(*t);
  }
  for (Sha256Tier t : *tiers)
    if (std::string failure = kernels::sha256_self_test(t); !failure.empty()) return fail(failure, 70);
  return std::nullopt;
}

nlohmann::json hash_bench_json(const experiments::HashBenchOptions& o, const experiments::HashBenchResult& r) {
  nlohmann::json j;
  j["command"] = "hash-bench";
  j["root"] = nullptr;
  j["root_note"] = "hash-bench times hash kernels on buffers: no tree, no root";
  report::stamp(j);
  j["active_kernel"] = kernels::sha256_active().name;
  j["messages_per_pass"] = o.messages;
  j["reps"] = o.reps;
  j["sink"] = r.sink;
  j["results"] = nlohmann::json::array();
  for (const experiments::HashBenchEntry& e : r.entries)
    j["results"].push_back({{"kernel", e.kernel}, {"entry", e.entry}, {"compressions_per_msg", e.compressions_per_msg},
                            {"ns_per_msg", report::summary_json(e.ns_per_msg)}, {"ns_per_compression", report::summary_json(e.ns_per_compression)}});
  return j;
}

// A summary as "median +-stddev [min, max]" in fixed widths.
std::string summary_text(const nlohmann::json& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%8.2f +-%6.2f [%7.2f, %8.2f]", s["median"].get<double>(), s["stddev"].get<double>(),
                s["min"].get<double>(), s["max"].get<double>());
  return buf;
}

void print_hash_bench(const nlohmann::json& j) {
  std::printf("sha256 hash-bench: active kernel %s, %llu messages per pass, %llu reps, median +-stddev [min, max]\n",
              j["active_kernel"].get<std::string>().c_str(), (unsigned long long)j["messages_per_pass"].get<uint64_t>(),
              (unsigned long long)j["reps"].get<uint64_t>());
  const report::Table table({{"kernel", 9, report::Align::left, report::text_cell("kernel")},
                             {"entry", 40, report::Align::left, report::text_cell("entry")},
                             {"ns/message", 38, report::Align::left, report::field_cell("ns_per_msg", summary_text)},
                             {"ns/compression", 38, report::Align::left, report::field_cell("ns_per_compression", summary_text)}});
  std::fputs(table.header_line().c_str(), stdout);
  for (const auto& row : j["results"]) std::fputs(table.row_line(row).c_str(), stdout);
  std::printf("(checksum %llu)\n", (unsigned long long)(j["sink"].get<uint64_t>() & 0xffff));
  std::printf("%s\n", report::stamp_line().c_str());
}

}  // namespace

int cmd_hash_bench(int argc, char** argv) {
  Args args("statetree hash-bench",
            "Times every SHA-256 kernel tier and entry point on L1/L2-resident buffers:\n"
            "ns per message and ns per 64-byte compression (median [min, max] over reps).");
  args.option("kernel", "NAME", "portable, shani, avx2, avx512, or all available", "all");
  add_reps(args, "samples per entry point (each ~0.25 ms)", 31, 10000);
  args.option_u64("messages", "N", "messages per pass, a multiple of 16 (1024 = 64 KiB of input, L2-resident)", 16,
                  1u << 20, 1024);
  args.pin_option();
  add_json(args, "print one JSON object instead of the table");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  experiments::HashBenchOptions o;
  o.reps = args.get_u64("reps");
  o.messages = args.get_u64("messages");
  if (o.messages % 16) return fail("--messages must be a multiple of 16 (got " + std::to_string(o.messages) + ")");
  const std::string name = args.str("kernel");
  if (auto rc = select_tiers(name, &o.tiers)) return *rc;
  o.vzeroupper_check = kernels::sha256_tier_available(Sha256Tier::shani) && kernels::sha256_tier_available(Sha256Tier::avx512) &&
                       (name == "all" || name == "shani" || name == "avx512");
  const bool json = args.given("json");
  report::Progress progress("hash-bench", o.tiers.size() * experiments::kHashBenchEntriesPerTier);
  if (!json) o.progress = [&](uint64_t done) { progress.update(done); };
  const experiments::HashBenchResult r = experiments::run_hash_bench(o);
  progress.finish();
  for (const experiments::HashBenchEntry& e : r.entries) report::note_timing(e.kernel + " " + e.entry, e.ns_per_msg);
  const nlohmann::json j = hash_bench_json(o, r);
  if (json) std::printf("%s\n", j.dump().c_str());
  else print_hash_bench(j);
  return 0;
}

}  // namespace st::cli
