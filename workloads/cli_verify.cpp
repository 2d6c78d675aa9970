// cli_verify: `statetree verify --db DIR`: re-reads every node of the committed state,
// re-hashes it, checks every page checksum and the root (TreeDb::verify). Exit 0 only if
// everything is consistent; 1 with the first inconsistency (one line naming the page /
// locator) otherwise; 2 for bad input (no database at DIR).
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/database/store_types.h"
#include "engine/persist/snapshot/verify.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "verify";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }
nlohmann::json verify_json(const std::string& dir, persist::TreeDb& db, bool ok, const std::string& error,
                           const persist::VerifyReport& rep, const persist::SnapshotVerifyReport& snap, double secs) {
  const database::Manifest& m = db.manifest();
  nlohmann::json out = {{"command", "verify"},
                        {"db", dir},
                        {"ok", ok},
                        {"error", ok ? nlohmann::json(nullptr) : nlohmann::json(error)},
                        {"tree", database::tree_kind_name(m.params.tree_kind)},
                        {"hash", database::hash_kind_name(m.params.hash_kind)},
                        {"group_depth", m.params.group_depth},
                        {"store", db.page_store() ? "arena" : "rocksdb"},
                        {"page_size", m.params.page_size},
                        {"root", hex0x(m.root_hash)},  // the committed root; recomputed_root is what the nodes hash to
                        {"manifest_root", hex0x(m.root_hash)},
                        {"recomputed_root", hex0x(rep.root)},
                        {"nodes", rep.nodes},
                        {"pages", rep.pages},
                        {"bytes", rep.bytes},
                        {"leaves", rep.leaves},
                        {"accounts", rep.accounts},
                        {"slots", rep.slots},
                        {"snapshot", snap.present ? nlohmann::json{{"ok", snap.ok},
                                                                   {"entries", snap.entries},
                                                                   {"data_pages", snap.data_pages},
                                                                   {"index_pages", snap.index_pages}}
                                                  : nlohmann::json(nullptr)},
                        {"seconds", secs}};
  report::stamp(out);
  return out;
}

void print_verified(persist::TreeDb& db, const persist::VerifyReport& rep, const persist::SnapshotVerifyReport& snap,
                    double secs) {
  const database::Manifest& m = db.manifest();
  std::printf("ok: %s (%s store, %u B pages) root %s: %llu nodes, %llu pages, %llu bytes re-read, %llu leaves: %llu accounts, %llu slots (%.2f s)\n",
              database::tree_kind_name(m.params.tree_kind), db.page_store() ? "arena" : "rocksdb", m.params.page_size,
              hex0x(rep.root).c_str(), (unsigned long long)rep.nodes,
              (unsigned long long)rep.pages, (unsigned long long)rep.bytes, (unsigned long long)rep.leaves,
              (unsigned long long)rep.accounts, (unsigned long long)rep.slots, secs);
  if (snap.present && !db.page_store())
    std::printf("ok: snapshot equals the tree: %llu entries in RocksDB column family \"snapshot\"\n",
                (unsigned long long)snap.entries);
  else if (snap.present)
    std::printf("ok: snapshot equals the tree: %llu entries in %llu data pages, %llu index pages\n",
                (unsigned long long)snap.entries, (unsigned long long)snap.data_pages,
                (unsigned long long)snap.index_pages);
}

}  // namespace

int cmd_verify(int argc, char** argv) {
  Args args("statetree verify",
            "Re-reads every node of a database from disk, re-hashes it, checks every page checksum and the root;\n"
            "with a snapshot (build --snapshot), also that its entries equal the tree's leaves exactly.\n"
            "Exit 0 only if all is consistent; 1 and the first inconsistency otherwise.");
  add_db(args);
  add_queue_depth(args, "arena read queue depth");
  args.pin_option();
  add_json(args);
  args.require("db");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return fail("no database at " + dir + " (not a directory)");
  std::unique_ptr<persist::TreeDb> db;
  if (database::Status s = persist::open_any_db(dir, queue_depth(args), &db); !s.ok())
    return fail(s.message(), exit_code_for(s));
  persist::VerifyReport rep;
  persist::SnapshotVerifyReport snap;
  ProgressBar bar("verify");
  const uint64_t t0 = report::now_ns();
  database::Status s = persist::verify_with_snapshot(*db, &rep, &snap, bar.fn());
  const double secs = double(report::now_ns() - t0) * 1e-9;
  bar.finish();
  const bool ok = s.ok() && rep.ok;
  const std::string error = !s.ok() ? s.message() : rep.error;
  if (args.given("json")) std::printf("%s\n", verify_json(dir, *db, ok, error, rep, snap, secs).dump().c_str());
  else if (ok) print_verified(*db, rep, snap, secs);
  if (!ok) return fail(error.empty() ? "inconsistent (no detail)" : error, 1);
  return 0;
}

}  // namespace st::cli
