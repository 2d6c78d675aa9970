// cli_build: `statetree build`: writes a state into a database directory (tree_db.h): the
// deterministic synthetic ERC20 state (workloads/synthetic_state.h) or a genesis
// allocation (--alloc), as an MPT or a binary trie, in the arena store or RocksDB. Prints
// the root, node / page counts, bytes on disk (per slot and per entry) and build time.
// The source's spec is stored with the database, so verify / get / read-bench can recreate
// it. --db must be new or empty: an existing database, or the files a killed build left,
// are replaced only with --force (and --force deletes nothing but a database's own
// entries). The memory and disk the build will need are estimated from the entry counts
// and checked against this machine (physical memory; free space of --db's file system)
// before anything is allocated or written.
// Exit: 0 built, 1 an I/O error while building, 2 bad input (see persist_cli.h).
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/database/directory_locks.h"
#include "engine/database/store_types.h"
#include "engine/memory/large_buffer.h"
#include "engine/persist/db_files.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/genesis.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/synthetic_state.h"

namespace st::cli {
namespace {
namespace fs = std::filesystem;
constexpr const char* kCmd = "build";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

constexpr uint64_t kMaxAccounts = uint64_t(1) << 40;
constexpr uint64_t kMaxSlotsPerContract = uint64_t(1) << 32;
constexpr uint64_t kMaxSlots = uint64_t(1) << 40;

// Memory a build holds at its peak, per entry (measured: docs/benchmarks.md, 11M entries):
// the MPT build keeps one 40-byte (hash, index) record per account plus one contract's
// slots at a time (~128 B each); the binary-trie build keeps every leaf (64 B) twice
// (the entries and the sort's copy) for the slots and 2 leaves per account.
constexpr double kMptBytesPerAccount = 40, kMptBytesPerContractSlot = 128;
constexpr double kBintrieBytesPerLeaf = 128;
// Disk per entry (account or slot): the smallest measured over both trees and stores is
// 124 B (docs/benchmarks.md); 100 B keeps the estimate a lower bound.
constexpr double kDiskBytesPerEntry = 100;

std::string gib(double bytes) {
  char b[48];
  if (bytes >= double(1ull << 40)) std::snprintf(b, sizeof b, "%.1f TiB", bytes / double(1ull << 40));
  else std::snprintf(b, sizeof b, "%.1f GiB", bytes / double(1ull << 30));
  return b;
}

// What --db holds and what the build does with it.
struct TargetPlan {
  std::string dir;
  bool exists = false;
  std::vector<fs::path> remove;   // --force: the database's entries, deleted before the build
  uint64_t freed_bytes = 0;       // what those entries occupy
};

// The lock files of a database directory: kept by --force (a running writer holds LOCK; the
// build takes it over), and alone they make no database.
bool lock_file(const std::string& name) { return database::is_lock_file(name); }

// The entries a statetree database directory may hold (tree_db.h's layout, the manifest's
// temporary, the lock files); --force deletes nothing else, and never the lock files.
bool database_entry(const std::string& name) {
  return name == "MANIFEST" || name == "MANIFEST.tmp" || name == "pages.arena" || name == "rocksdb" || lock_file(name);
}

uint64_t tree_bytes(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  uint64_t sum = 0;
  for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) sum += it->file_size(ec);
  return sum;
}

std::optional<std::string> plan_target(const persist::DbOptions& o, bool force, TargetPlan* plan) {
  plan->dir = o.dir;
  std::error_code ec;
  const fs::file_status st = fs::status(o.dir, ec);
  if (!fs::exists(st)) return std::nullopt;
  plan->exists = true;
  if (!fs::is_directory(st))
    return "--db " + o.dir + " is " + (fs::is_regular_file(st) ? "a regular file" : "not a directory") +
           ", not a database directory";
  std::vector<fs::path> entries, foreign;
  for (auto it = fs::directory_iterator(o.dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (lock_file(name)) continue;
    (database_entry(name) ? entries : foreign).push_back(it->path());
  }
  if (ec) return "--db " + o.dir + ": " + ec.message();
  if (entries.empty() && foreign.empty()) return std::nullopt;  // an empty directory: nothing to replace
  persist::DbOptions probed;
  const database::Status ps = persist::DbFiles::probe(o.dir, &probed);
  const std::string what = ps.ok() ? std::string("a database (tree ") + database::tree_kind_name(probed.params.tree_kind) +
                                         ", " + persist::store_kind_name(probed.store) + " store)"
                                   : "files";
  if (!foreign.empty())
    return o.dir + " holds files that are not a statetree database's (" + foreign.front().filename().string() +
           (foreign.size() > 1 ? ", ..." : "") + "); refusing to build there" + (force ? ", even with --force" : "");
  if (!force) {
    if (ps.ok()) return o.dir + " already holds " + what + "; pass --force to replace it";
    return o.dir + " holds the files of a build that did not finish (" + ps.message() + "); pass --force to replace them";
  }
  // --force: an arena database of the same parameters is rebuilt in place (one copy-on-write
  // commit: its state stays readable until the new one is durable); anything else is deleted.
  if (ps.ok() && probed.store == persist::StoreKind::arena && o.store == persist::StoreKind::arena &&
      database::check_params(probed.params, o.params).ok())
    return std::nullopt;
  for (const auto& e : entries) plan->freed_bytes += tree_bytes(e);
  plan->remove = entries;
  return std::nullopt;
}

// Precondition: the caller holds the directory's writer lock (nothing is deleted under a
// running writer).
std::optional<std::string> clear_target(const TargetPlan& plan) {
  std::error_code ec;
  // MANIFEST last: a directory half cleared still reads as an unfinished build, not as a
  // database of the old parameters.
  for (const auto& e : plan.remove)
    if (e.filename() != "MANIFEST" && (fs::remove_all(e, ec), ec)) return "--force: cannot remove " + e.string() + ": " + ec.message();
  for (const auto& e : plan.remove)
    if (e.filename() == "MANIFEST" && (fs::remove_all(e, ec), ec)) return "--force: cannot remove " + e.string() + ": " + ec.message();
  return std::nullopt;
}

// The nearest existing directory at or above p (where the database's bytes will land).
fs::path existing_ancestor(fs::path p) {
  std::error_code ec;
  p = fs::absolute(p, ec);
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return p;
}

// Refuses a build whose memory or disk estimate exceeds what this machine has.
std::optional<std::string> check_build_size(const persist::DbOptions& o, uint64_t accounts, uint64_t slots,
                                            uint64_t slots_per_contract, const TargetPlan& plan) {
  const bool bintrie = o.params.tree_kind == database::TreeKind::bintrie;
  const double mem = bintrie ? kBintrieBytesPerLeaf * (double(slots) + 2.0 * double(accounts))
                             : kMptBytesPerAccount * double(accounts) + kMptBytesPerContractSlot * double(slots_per_contract);
  const std::string what = std::to_string(accounts) + " accounts and " + std::to_string(slots) + " slots";
  if (auto e = memory::check_fits_in_memory(uint64_t(std::min(mem, 1.8e19)), "a build of " + what))
    return *e + " (estimate: " + (bintrie ? "128 B per leaf" : "40 B per account") + ")";
  const double disk = kDiskBytesPerEntry * (double(accounts) + double(slots));
  const fs::path where = existing_ancestor(o.dir);
  struct statvfs vfs{};
  if (!where.empty() && statvfs(where.c_str(), &vfs) == 0) {
    const double free_bytes = double(vfs.f_bavail) * double(vfs.f_frsize) + double(plan.freed_bytes);
    if (disk > free_bytes)
      return "a build of " + what + " needs at least " + gib(disk) + " on disk (" +
             std::to_string(int(kDiskBytesPerEntry)) + " B per entry), the file system of " + where.string() +
             " has " + gib(free_bytes) + " free";
  }
  return std::nullopt;
}

void declare_options(Args& args) {
  add_tree(args);
  args.option_u64("gd", "G", "bintrie group depth (go-ethereum's default 5)", 1, 8, 5);
  args.option_one_of("hash", "H", "bintrie hash; go-ethereum's is sha256 (the MPT always uses keccak256)", {"sha256", "blake3"}, "sha256");
  args.option_u64("accounts", "N", "synthetic state: total accounts (EOAs + contracts)", 1, kMaxAccounts);
  args.option_u64("contracts", "C", "synthetic state: the first C accounts are ERC20-like contracts", 0, kMaxAccounts, 0);
  args.option_u64("slots-per-contract", "S", "synthetic state: storage slots per contract", 0, kMaxSlotsPerContract, 0);
  add_seed(args, "synthetic state seed");
  args.option("alloc", "FILE", "build from a genesis allocation (JSON) instead of the synthetic state");
  add_db(args, "database directory (new or empty; an existing database only with --force)");
  args.flag("force", "replace what DIR holds: a database (an arena one of the same parameters is rebuilt in one "
                     "copy-on-write commit; any other is deleted first) or the files of a build that did not finish");
  add_store(args, "node store: arena = a flat page file, O_DIRECT + io_uring; rocksdb = nodes keyed by path");
  add_page_size(args, "arena page size");
  add_queue_depth(args, "arena write queue depth");
  args.flag("snapshot", "also write the flat snapshot (leaf key -> value; arena: sorted pages, one read per lookup, "
                        "in the same commit; rocksdb: a column family of its own, in the same build)");
  args.pin_option();
  add_json(args);
  args.require("tree");
  args.require("db");
}

// The database's parameters from the command line; nullopt = go on, else the exit status.
std::optional<int> db_options(const Args& args, persist::DbOptions* o) {
  const bool bintrie = args.str("tree") == "bintrie";
  if (!bintrie && args.given("gd")) return fail("--gd applies to --tree bintrie only");
  if (!bintrie && args.given("hash")) return fail("--hash applies to --tree bintrie only (the MPT hashes with keccak256)");
  o->dir = args.str("db");
  if (o->dir.empty()) return fail("--db DIR: empty directory name");
  const std::string store = args.str("store");
  if (args.given("alloc")) {
    for (const char* n : {"accounts", "contracts", "slots-per-contract", "seed"})
      if (args.given(n)) return fail(std::string("--alloc and --") + n + " exclude each other");
  } else if (!args.given("accounts")) {
    return fail("--accounts N (synthetic state) or --alloc FILE is required");
  }
  o->store = store == "rocksdb" ? persist::StoreKind::rocksdb : persist::StoreKind::arena;
  o->params.tree_kind = bintrie ? database::TreeKind::bintrie : database::TreeKind::mpt;
  o->params.hash_kind = !bintrie                        ? database::HashKind::keccak256
                        : args.str("hash") == "blake3" ? database::HashKind::blake3
                                                       : database::HashKind::sha256;
  o->params.group_depth = bintrie ? uint32_t(args.get_u64("gd")) : 0;
  o->params.page_size = uint32_t(args.get_u64("page-size"));
  o->queue_depth = queue_depth(args);
  o->snapshot = args.given("snapshot");
  return std::nullopt;
}

// The source to build and its size, checked against this machine before anything is
// allocated or written; nullopt = go on, else the exit status.
std::optional<int> load_source(const Args& args, const persist::DbOptions& o, const TargetPlan& plan, LoadedSource* src) {
  if (args.given("alloc")) {
    const std::string path = args.str("alloc");
    auto loaded = workloads::load_genesis_alloc(path);
    if (auto* e = std::get_if<std::string>(&loaded)) return fail(*e);
    src->alloc = std::make_unique<state::Allocation>(std::move(std::get<state::Allocation>(loaded)));
    state::AllocationSource probe(*src->alloc, "");
    const uint64_t accounts = probe.account_count(), slots = probe.slot_count();
    src->source = std::make_unique<state::AllocationSource>(*src->alloc, alloc_spec_json(path, accounts, slots));
    src->description = "alloc " + path;
    if (auto e = check_build_size(o, accounts, slots, 0, plan)) return fail(*e);
    return std::nullopt;
  }
  const uint64_t accounts = args.get_u64("accounts");
  const uint64_t contracts = args.get_u64("contracts"), spc = args.get_u64("slots-per-contract");
  const uint64_t seed = args.get_u64("seed");
  if (contracts > accounts)
    return fail("--contracts (" + std::to_string(contracts) + ") must not exceed --accounts (" + std::to_string(accounts) + ")");
  if (spc > 0 && contracts == 0) return fail("--slots-per-contract needs --contracts >= 1");
  const unsigned __int128 total_slots = (unsigned __int128)contracts * spc;
  if (total_slots > kMaxSlots)
    return fail("--contracts x --slots-per-contract = " + std::to_string((long double)total_slots) +
                " slots: at most 2^40 in one build");
  if (auto e = check_build_size(o, accounts, uint64_t(total_slots), spc, plan)) return fail(*e);
  state::SyntheticSpec spec{accounts, contracts, spc, seed};
  src->source = std::make_unique<state::SyntheticState>(spec);
  src->description = "synthetic seed " + std::to_string(seed) + ": " + std::to_string(contracts) + " contracts x " +
                     std::to_string(spc) + " slots";
  return std::nullopt;
}

// Clears what --force replaces, then builds; nullopt = built, else the exit status.
std::optional<int> run_build(const persist::DbOptions& o, const TargetPlan& plan, const LoadedSource& src,
                             const std::string& tree, persist::BuildReport* rep, uint64_t* wall_ns) {
  if (!plan.remove.empty()) {
    // Hold the writer lock while clearing (a running writer refuses the build here, exit 2);
    // the build takes it again when it opens the directory.
    std::unique_ptr<database::WriterLock> lock;
    if (database::Status s = database::WriterLock::acquire(plan.dir, &lock); !s.ok()) return fail(s.message());
    if (auto e = clear_target(plan)) return fail(*e, 1);
  }
  ProgressBar bar("build " + tree);
  const uint64_t t0 = report::now_ns();
  database::Status s = persist::build_db(o, *src.source, rep, bar.fn());
  *wall_ns = report::now_ns() - t0;
  bar.finish();
  if (!s.ok()) return fail(s.message(), exit_code_for(s));
  return std::nullopt;
}

double per_slot(const persist::BuildReport& rep) { return rep.slots ? double(rep.disk_bytes) / double(rep.slots) : 0; }
double per_entry(const persist::BuildReport& rep) {
  return rep.accounts + rep.slots ? double(rep.disk_bytes) / double(rep.accounts + rep.slots) : 0;
}

nlohmann::json build_json(const persist::DbOptions& o, const LoadedSource& src, const persist::BuildReport& rep,
                          uint64_t wall_ns, bool replaced) {
  nlohmann::json out = {
      {"command", "build"},
      {"db", o.dir},
      {"tree", o.params.tree_kind == database::TreeKind::bintrie ? "bintrie" : "mpt"},
      {"hash", database::hash_kind_name(o.params.hash_kind)},
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
      {"snapshot", o.snapshot ? nlohmann::json{{"entries", rep.snapshot_entries}, {"pages", rep.snapshot_pages}}
                              : nlohmann::json(nullptr)},
      {"disk_bytes", rep.disk_bytes},
      {"disk_bytes_per_slot", per_slot(rep)},
      {"disk_bytes_per_entry", per_entry(rep)},
      {"build_seconds", double(rep.build_ns) * 1e-9},
      {"commit_seconds", double(rep.commit_ns) * 1e-9},
      {"wall_seconds", double(wall_ns) * 1e-9},
      {"peak_rss_bytes", report::peak_rss_bytes()},
      {"replaced", replaced},
  };
  report::stamp(out);
  return out;
}

void print_build(const persist::DbOptions& o, const LoadedSource& src, const persist::BuildReport& rep, uint64_t wall_ns) {
  const bool bintrie = o.params.tree_kind == database::TreeKind::bintrie;
  std::printf("built %s (%s%s) in the %s store at %s\n", bintrie ? "bintrie" : "mpt", database::hash_kind_name(o.params.hash_kind),
              bintrie ? (", GD " + std::to_string(o.params.group_depth)).c_str() : "",
              persist::store_kind_name(o.store), o.dir.c_str());
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
  if (o.snapshot && o.store == persist::StoreKind::rocksdb)
    std::printf("  snapshot %llu entries in RocksDB column family \"snapshot\"\n", (unsigned long long)rep.snapshot_entries);
  else if (o.snapshot)
    std::printf("  snapshot %llu entries in %llu pages (data, index, directory)\n",
                (unsigned long long)rep.snapshot_entries, (unsigned long long)rep.snapshot_pages);
  std::printf("  on disk  %.1f MiB: %.1f B per slot, %.1f B per entry (account or slot)\n",
              double(rep.disk_bytes) / 1048576.0, per_slot(rep), per_entry(rep));
  std::printf("  time     build %.2f s (commit %.3f s), wall %.2f s, peak RSS %.0f MiB\n",
              double(rep.build_ns) * 1e-9, double(rep.commit_ns) * 1e-9, double(wall_ns) * 1e-9,
              double(report::peak_rss_bytes()) / 1048576.0);
  std::printf("  %s\n", report::stamp_line().c_str());
}

}  // namespace

int cmd_build(int argc, char** argv) {
  Args args("statetree build",
            "Builds a state into a database directory: a deterministic synthetic state (EOAs plus ERC20-like\n"
            "contracts, storage at Solidity's mapping slots) or a genesis allocation, as an MPT or a binary trie.\n"
            "An existing database (or a directory a killed build left) is replaced only with --force.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  persist::DbOptions o;
  if (auto rc = db_options(args, &o)) return *rc;
  // What --db holds, and what --force will do with it (nothing is touched yet).
  TargetPlan plan;
  if (auto e = plan_target(o, args.given("force"), &plan)) return fail(*e);
  LoadedSource src;
  if (auto rc = load_source(args, o, plan, &src)) return *rc;
  persist::BuildReport rep;
  uint64_t wall_ns = 0;
  if (auto rc = run_build(o, plan, src, args.str("tree"), &rep, &wall_ns)) return *rc;
  const nlohmann::json out = build_json(o, src, rep, wall_ns, plan.exists && args.given("force"));
  if (args.given("json")) std::printf("%s\n", out.dump().c_str());
  else print_build(o, src, rep, wall_ns);
  return 0;
}

}  // namespace st::cli
