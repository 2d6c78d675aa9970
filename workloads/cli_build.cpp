// cli_build: `statetree build`: writes a state into a database directory (tree_db.h): the
// deterministic synthetic ERC20 state (engine/state/synthetic_state.h) or a genesis
// allocation (--alloc), as an MPT or a binary trie, in the arena store or RocksDB. Prints
// the root, node / page counts, bytes on disk (per slot and per entry) and build time.
// The source's spec is stored with the database, so verify / get / read-bench can recreate
// it. Exit: 0 built, 1 an I/O error while building, 2 bad input (see persist_cli.h).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/state/synthetic_state.h"
#include "workloads/cli_args.h"
#include "workloads/commands.h"
#include "workloads/genesis.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "build";
int fail(const std::string& m, int code = 2) { return persist_fail(kCmd, m, code); }
}  // namespace

int cmd_build(int argc, char** argv) {
  Args args("statetree build",
            "Builds a state into a database directory: a deterministic synthetic state (EOAs plus ERC20-like\n"
            "contracts, storage at Solidity's mapping slots) or a genesis allocation, as an MPT or a binary trie.");
  args.option("tree", "T", "mpt or bintrie");
  args.option("gd", "G", "bintrie group depth 1..8 (go-ethereum's default 5)", "5");
  args.option("hash", "H", "bintrie hash: sha256 (go-ethereum) or blake3 (the MPT always uses keccak256)", "sha256");
  args.option("accounts", "N", "synthetic state: total accounts (EOAs + contracts)");
  args.option("contracts", "C", "synthetic state: the first C accounts are ERC20-like contracts", "0");
  args.option("slots-per-contract", "S", "synthetic state: storage slots per contract", "0");
  args.option("seed", "X", "synthetic state seed", "1");
  args.option("alloc", "FILE", "build from a genesis allocation (JSON) instead of the synthetic state");
  args.option("db", "DIR", "database directory (new, or an arena database of the same parameters to rebuild)");
  args.option("store", "S", "arena (flat page file, O_DIRECT + io_uring) or rocksdb (nodes keyed by path)", "arena");
  args.option("page-size", "B", "arena page size: 4096 or 16384", "4096");
  args.option("qd", "Q", "arena write queue depth", "32");
  args.flag("json", "print one JSON object on stdout");
  if (!args.parse(argc, argv)) return fail(args.error());
  if (args.help_requested()) { std::fputs(args.usage().c_str(), stdout); return 0; }

  std::string err;
  const std::string tree = args.str("tree");
  if (tree.empty()) return fail("--tree mpt|bintrie is required");
  if (tree != "mpt" && tree != "bintrie") return fail("--tree must be mpt or bintrie (got '" + tree + "')");
  const bool bintrie = tree == "bintrie";
  if (!bintrie && args.given("gd")) return fail("--gd applies to --tree bintrie only");
  if (!bintrie && args.given("hash")) return fail("--hash applies to --tree bintrie only (the MPT hashes with keccak256)");
  const auto gd = args.u64("gd", &err);
  if (!gd) return fail(err);
  if (*gd < 1 || *gd > 8) return fail("--gd must be in 1..8 (got " + std::to_string(*gd) + ")");
  const std::string hash = args.str("hash");
  if (hash != "sha256" && hash != "blake3") return fail("--hash must be sha256 or blake3 (got '" + hash + "')");
  const std::string dir = args.str("db");
  if (dir.empty()) return fail("--db DIR is required");
  const std::string store = args.str("store");
  if (store != "arena" && store != "rocksdb") return fail("--store must be arena or rocksdb (got '" + store + "')");
  const auto page_size = args.u64("page-size", &err);
  if (!page_size) return fail(err);
  if (*page_size != 4096 && *page_size != 16384)
    return fail("--page-size must be 4096 or 16384 (got " + std::to_string(*page_size) + ")");
  const auto qd = args.u64("qd", &err);
  if (!qd) return fail(err);
  if (*qd < 1 || *qd > 4096) return fail("--qd must be in 1..4096");

  const bool from_alloc = args.given("alloc");
  if (from_alloc) {
    for (const char* o : {"accounts", "contracts", "slots-per-contract", "seed"})
      if (args.given(o)) return fail(std::string("--alloc and --") + o + " exclude each other");
  } else if (!args.given("accounts")) {
    return fail("--accounts N (synthetic state) or --alloc FILE is required");
  }

  LoadedSource src;
  if (from_alloc) {
    const std::string path = args.str("alloc");
    auto loaded = workloads::load_genesis_alloc(path);
    if (auto* e = std::get_if<std::string>(&loaded)) return fail(*e);
    src.alloc = std::make_unique<state::Allocation>(std::move(std::get<state::Allocation>(loaded)));
    state::AllocationSource probe(*src.alloc, "");
    src.source = std::make_unique<state::AllocationSource>(
        *src.alloc, alloc_spec_json(path, probe.account_count(), probe.slot_count()));
    src.description = "alloc " + path;
  } else {
    state::SyntheticSpec spec;
    const auto accounts = args.u64("accounts", &err);
    const auto contracts = args.u64("contracts", &err);
    const auto slots = args.u64("slots-per-contract", &err);
    const auto seed = args.u64("seed", &err);
    if (!accounts || !contracts || !slots || !seed) return fail(err);
    if (*accounts == 0 || *accounts > (1ull << 40)) return fail("--accounts must be in 1..2^40");
    if (*contracts > *accounts)
      return fail("--contracts (" + std::to_string(*contracts) + ") must not exceed --accounts (" +
                  std::to_string(*accounts) + ")");
    if (*slots > 0 && *contracts == 0) return fail("--slots-per-contract needs --contracts >= 1");
    if (*slots > (1ull << 32)) return fail("--slots-per-contract must be <= 2^32");
    spec = {*accounts, *contracts, *slots, *seed};
    src.source = std::make_unique<state::SyntheticState>(spec);
    src.description = "synthetic seed " + std::to_string(*seed) + ": " + std::to_string(*contracts) +
                      " contracts x " + std::to_string(*slots) + " slots";
  }

  persist::DbOptions o;
  o.dir = dir;
  o.store = store == "rocksdb" ? persist::StoreKind::rocksdb : persist::StoreKind::arena;
  o.params.tree_kind = bintrie ? io::TreeKind::bintrie : io::TreeKind::mpt;
  o.params.hash_kind = !bintrie ? io::HashKind::keccak256 : hash == "blake3" ? io::HashKind::blake3 : io::HashKind::sha256;
  o.params.group_depth = bintrie ? uint32_t(*gd) : 0;
  o.params.page_size = uint32_t(*page_size);
  o.queue_depth = uint32_t(*qd);

  const bool json = args.given("json");
  ProgressBar bar("build " + tree);
  persist::BuildReport rep;
  const uint64_t t0 = report::now_ns();
  io::Status s = persist::build_db(o, *src.source, &rep, bar.fn());
  const uint64_t wall_ns = report::now_ns() - t0;
  bar.finish();
  if (!s.ok()) return fail(s.message(), exit_code_for(s));

  const double bytes_per_slot = rep.slots ? double(rep.disk_bytes) / double(rep.slots) : 0;
  const double bytes_per_entry =
      rep.accounts + rep.slots ? double(rep.disk_bytes) / double(rep.accounts + rep.slots) : 0;
  nlohmann::json out = {
      {"command", "build"},
      {"db", dir},
      {"tree", tree},
      {"hash", io::hash_kind_name(o.params.hash_kind)},
      {"group_depth", o.params.group_depth},
      {"store", persist::store_kind_name(o.store)},
      {"page_size", o.params.page_size},
      {"source", nlohmann::json::parse(src.source->spec_json())},
      {"root", hex0x(rep.root)},
      {"accounts", rep.accounts},
      {"slots", rep.slots},
      {"nodes", rep.nodes},
      {"pages", rep.pages},
      {"node_bytes", rep.node_bytes},
      {"page_fill", rep.page_fill},
      {"disk_bytes", rep.disk_bytes},
      {"disk_bytes_per_slot", bytes_per_slot},
      {"disk_bytes_per_entry", bytes_per_entry},
      {"build_seconds", double(rep.build_ns) * 1e-9},
      {"commit_seconds", double(rep.commit_ns) * 1e-9},
      {"wall_seconds", double(wall_ns) * 1e-9},
      {"peak_rss_bytes", report::peak_rss_bytes()},
  };
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("built %s (%s%s) in the %s store at %s\n", tree.c_str(), io::hash_kind_name(o.params.hash_kind),
              bintrie ? (", GD " + std::to_string(o.params.group_depth)).c_str() : "",
              persist::store_kind_name(o.store), dir.c_str());
  std::printf("  state    %llu accounts, %llu slots (%s)\n", (unsigned long long)rep.accounts,
              (unsigned long long)rep.slots, src.description.c_str());
  std::printf("  root     %s\n", hex0x(rep.root).c_str());
  if (o.store == persist::StoreKind::arena)
    std::printf("  nodes    %llu (%.1f MiB encoded) in %llu pages of %u B, fill %.1f %%\n",
                (unsigned long long)rep.nodes, double(rep.node_bytes) / 1048576.0, (unsigned long long)rep.pages,
                o.params.page_size, rep.page_fill * 100.0);
  else
    std::printf("  nodes    %llu (%.1f MiB encoded)\n", (unsigned long long)rep.nodes,
                double(rep.node_bytes) / 1048576.0);
  std::printf("  on disk  %.1f MiB: %.1f B per slot, %.1f B per entry (account or slot)\n",
              double(rep.disk_bytes) / 1048576.0, bytes_per_slot, bytes_per_entry);
  std::printf("  time     build %.2f s (commit %.3f s), wall %.2f s, peak RSS %.0f MiB\n",
              double(rep.build_ns) * 1e-9, double(rep.commit_ns) * 1e-9, double(wall_ns) * 1e-9,
              double(report::peak_rss_bytes()) / 1048576.0);
  return 0;
}

}  // namespace st::cli
