// cli_commit: `statetree commit --db DIR [--blocks N] [--writes W] [--seed X] [--json]`:
// applies N deterministic synthetic blocks (the synthetic_writes workload of
// workloads/generators.h, drawn by engine/state/synthetic_state.h: ERC20 transfers, a third
// new slots, 2 % deletes, the rest updates, one sender EOA per two writes) to an MPT or
// binary-trie database in the arena store: each block's post-state diff (bal_derive.h) as ONE
// copy-on-write commit (engine/persist/mpt_commit.h, engine/persist/bintrie_commit.h). The
// same blocks written by `statetree workload --kind synthetic_writes` and given to `statetree
// apply` give the same roots. Each commit's record stores the synthetic spec with the
// blocks applied so far, so `verify`, `get` and `read-bench` check every answer against the
// state after them.
//
// Prints per block (a table row; with --json an entry of the one object's "blocks" array):
// root, records read, pages read, read rounds, records / pages written, pages released,
// commit time, bytes on disk; then medians [min, max] over the blocks, with the commit's
// phases (resolve, of it inside read rounds, apply, encode + writes, publish). The database's
// first commit of blocks fixes --writes and --seed: later runs continue the same sequence
// (a different value given explicitly is an error). RocksDB databases: one synced
// WriteBatch per block; the JSON records the store's options. Binary trie: apply_passes is 0 (one plan
// pass) and a deleted slot stays a present zero leaf (go-ethereum's rule).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/persist/bintrie_commit.h"
#include "engine/persist/mpt_commit.h"
#include "engine/state/bal_derive.h"
#include "engine/state/synthetic_state.h"
#include "engine/stats/summary.h"
#include "workloads/cli_args.h"
#include "workloads/commands.h"
#include "workloads/generators.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "commit";
int fail(const std::string& m, int code = 2) { return persist_fail(kCmd, m, code); }
}  // namespace

int cmd_commit(int argc, char** argv) {
  Args args("statetree commit",
            "Applies N synthetic blocks (ERC20 transfers: new slots, updates, deletes, sender nonces and balances)\n"
            "to an MPT or binary-trie arena database, one copy-on-write commit per block; prints per-block reads, writes, time.");
  args.option("db", "DIR", "database directory (an MPT or binary-trie database, arena or RocksDB, built with a synthetic state)");
  args.option_u64("blocks", "N", "blocks to apply", 1, 1000000, 1);
  args.option_u64("writes", "W", "storage writes per block (default: the database's, else 4096)", 1, 1u << 24);
  args.option_u64("seed", "X", "block seed (default: the database's, else 1)", 0, UINT64_MAX);
  args.option_u64("qd", "Q", "arena queue depth", 1, 4096, 32);
  args.pin_option();
  args.flag("json", "print one JSON object on stdout");
  args.require("db");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db");
  const uint64_t blocks = args.get_u64("blocks");
  const uint64_t qd = args.get_u64("qd");
  const std::optional<uint64_t> writes = args.get_u64_opt("writes"), seed = args.get_u64_opt("seed");
  const bool json = args.given("json");
  CommitTarget target;
  if (auto e = probe_commit_target(dir, &target)) return fail(e->first, e->second);
  persist::DbOptions& o = target.options;
  const bool bintrie = target.bintrie;
  o.queue_depth = uint32_t(qd);
  persist::DbFiles files;
  if (io::Status s = persist::DbFiles::for_commit(o, &files); !s.ok()) return fail(s.message(), exit_code_for(s));
  auto parsed = state::parse_synthetic_spec(files.commit.spec);
  if (auto* e = std::get_if<std::string>(&parsed))
    return fail("the database was not built from the synthetic state (" + *e + "); commit needs its spec");
  state::SyntheticSpec spec = std::get<state::SyntheticSpec>(parsed);
  if (spec.blocks > 0) {
    if (writes && *writes != spec.block_writes)
      return fail("the database's blocks have " + std::to_string(spec.block_writes) + " writes; --writes " +
                  std::to_string(*writes) + " would break its sequence");
    if (seed && *seed != spec.block_seed)
      return fail("the database's blocks use seed " + std::to_string(spec.block_seed) + "; --seed " +
                  std::to_string(*seed) + " would break its sequence");
  } else {
    spec.block_writes = writes.value_or(4096);
    spec.block_seed = seed.value_or(1);
  }
  const uint64_t first_block = spec.blocks;
  state::SyntheticState src(spec);  // replays the blocks already applied

  std::unique_ptr<persist::MptCommitter> mpt_committer;
  std::unique_ptr<persist::BintrieCommitter> bt_committer;
  if (bintrie) bt_committer = std::make_unique<persist::BintrieCommitter>(files);
  else mpt_committer = std::make_unique<persist::MptCommitter>(files);
  // One commit; both committers report persist::CommitStats.
  auto commit_one = [&](const state::StateDiff& d, persist::CommitStats* st) -> io::Status {
    if (!bintrie) return mpt_committer->commit(d, src.spec_json(), st);
    persist::BintrieCommitStats b;
    io::Status s = bt_committer->commit(d, src.spec_json(), &b);
    *st = b;  // the shared fields (stems_dirty is not printed)
    return s;
  };
  ProgressBar bar("commit", !json);
  const persist::ProgressFn progress = bar.fn();  // stderr, on a terminal, after a second
  std::vector<double> ms, read_ms, resolve_ms, apply_ms, write_ms, publish_ms, records_read, pages_read, pages_written, released;
  nlohmann::json rows = nlohmann::json::array();
  const uint64_t bytes_before = files.disk_bytes();
  if (!json)
    std::printf("%-6s %-18s %9s %8s %7s %9s %8s %9s %9s %14s\n", "block", "root", "rec.read", "pg.read", "rounds",
                "rec.new", "pg.new", "pg.freed", "ms", "bytes on disk");
  state::StateDiff diff;
  for (uint64_t k = 0; k < blocks; ++k) {
    diff = state::post_state_diff(
        workloads::next_synthetic_writes_block(&src, bintrie ? workloads::gas::Tree::bintrie : workloads::gas::Tree::mpt).bal);
    persist::CommitStats st;
    if (io::Status s = commit_one(diff, &st); !s.ok())
      return fail("block " + std::to_string(src.spec().blocks - 1) + ": " + s.message(), exit_code_for(s));
    ms.push_back(double(st.commit_ns) * 1e-6);
    read_ms.push_back(double(st.read_ns) * 1e-6);
    resolve_ms.push_back(double(st.resolve_ns) * 1e-6);
    apply_ms.push_back(double(st.apply_ns) * 1e-6);
    write_ms.push_back(double(st.write_ns) * 1e-6);
    publish_ms.push_back(double(st.publish_ns) * 1e-6);
    records_read.push_back(double(st.records_read));
    pages_read.push_back(double(st.pages_read));
    pages_written.push_back(double(st.pages_written));
    released.push_back(double(st.pages_released));
    const uint64_t b = src.spec().blocks - 1;
    rows.push_back({{"block", b},
                    {"root", hex0x(st.root)},
                    {"accounts_written", st.accounts_written},
                    {"slot_writes", st.slot_writes},
                    {"records_read", st.records_read},
                    {"pages_read", st.pages_read},
                    {"read_rounds", st.read_rounds},
                    {"apply_passes", st.apply_passes},
                    {"records_written", st.records_written},
                    {"pages_written", st.pages_written},
                    {"records_superseded", st.records_superseded},
                    {"pages_released", st.pages_released},
                    {"keys_delta", st.keys_delta},
                    {"commit_ms", double(st.commit_ns) * 1e-6},
                    {"read_ms", double(st.read_ns) * 1e-6},
                    {"resolve_ms", double(st.resolve_ns) * 1e-6},
                    {"apply_ms", double(st.apply_ns) * 1e-6},
                    {"write_ms", double(st.write_ns) * 1e-6},
                    {"publish_ms", double(st.publish_ns) * 1e-6},
                    {"disk_bytes", st.disk_bytes}});
    if (!json) {
      bar.finish();
      std::printf("%-6llu %.18s %9llu %8llu %7llu %9llu %8llu %9llu %9.1f %14llu\n", (unsigned long long)b,
                  hex0x(st.root).c_str(), (unsigned long long)st.records_read, (unsigned long long)st.pages_read,
                  (unsigned long long)st.read_rounds, (unsigned long long)st.records_written,
                  (unsigned long long)st.pages_written, (unsigned long long)st.pages_released, ms.back(),
                  (unsigned long long)st.disk_bytes);
    }
    if (progress) progress(k + 1, blocks);
  }
  bar.finish();
  const uint64_t bytes_after = files.disk_bytes();
  auto sum = [](const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); };
  auto timing = [](const char* label, const std::vector<double>& v) { return report::timing_json(label, v); };
  if (json) {
    nlohmann::json out = {{"command", "commit"},
                          {"db", dir},
                          {"first_block", first_block},
                          {"blocks_applied", blocks},
                          {"writes_per_block", spec.block_writes},
                          {"block_seed", spec.block_seed},
                          {"tree", io::tree_kind_name(o.params.tree_kind)},
                          {"page_size", o.params.page_size},
                          {"root", hex0x(files.manifest.root_hash)},
                          {"commit_ms", timing("commit_ms", ms)},
                          {"read_ms", timing("read_ms", read_ms)},
                          {"resolve_ms", timing("resolve_ms", resolve_ms)},
                          {"apply_ms", timing("apply_ms", apply_ms)},
                          {"write_ms", timing("write_ms", write_ms)},
                          {"publish_ms", timing("publish_ms", publish_ms)},
                          {"records_read", sum(records_read)},
                          {"pages_read", sum(pages_read)},
                          {"pages_written", sum(pages_written)},
                          {"pages_released", sum(released)},
                          {"disk_bytes_before", bytes_before},
                          {"disk_bytes_after", bytes_after},
                          {"blocks", rows}};
    store_regime(files, out);
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  auto line = [](const char* what, const std::vector<double>& v, const char* fmt) {
    const stats::Summary s = stats::summarize(v);
    std::printf("  %-16s ", what);
    std::printf(fmt, s.median, s.min, s.max);
    std::printf("\n");
  };
  std::printf("%llu blocks of %llu writes (blocks %llu..%llu, seed %llu), medians [min, max] over blocks:\n",
              (unsigned long long)blocks, (unsigned long long)spec.block_writes, (unsigned long long)first_block,
              (unsigned long long)(first_block + blocks - 1), (unsigned long long)spec.block_seed);
  report::timing("commit_ms", ms);
  line("commit ms", ms, "%.1f [%.1f, %.1f]");
  line(" resolve ms", resolve_ms, "%.1f [%.1f, %.1f]");
  line("  in read rounds", read_ms, "%.1f [%.1f, %.1f]");
  line(" apply ms", apply_ms, "%.1f [%.1f, %.1f]");
  line(" encode+write ms", write_ms, "%.1f [%.1f, %.1f]");
  line(" publish ms", publish_ms, "%.1f [%.1f, %.1f]");
  line("records read", records_read, "%.0f [%.0f, %.0f]");
  line("pages read", pages_read, "%.0f [%.0f, %.0f]");
  line("pages written", pages_written, "%.0f [%.0f, %.0f]");
  line("pages released", released, "%.0f [%.0f, %.0f]");
  std::printf("  bytes on disk    %llu -> %llu (%+.0f per block)\n", (unsigned long long)bytes_before,
              (unsigned long long)bytes_after,
              blocks ? (double(bytes_after) - double(bytes_before)) / double(blocks) : 0.0);
  std::printf("  root             %s\n", hex0x(files.manifest.root_hash).c_str());
  std::printf("  %s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
