// cli_commit: `statetree commit --db DIR [--blocks N] [--writes W] [--seed X] [--json]`:
// applies N deterministic synthetic blocks (the synthetic_writes workload of
// workloads/generators.h, drawn by workloads/synthetic_state.h: ERC20 transfers, a third
// new slots, 2 % deletes, the rest updates, one sender EOA per two writes) to an MPT or
// binary-trie database in the arena store: each block's post-state diff (bal_derive.h) as ONE
// copy-on-write commit, through the engine's protocol (engine/experiments/commit_blocks.h);
// this file draws the blocks, parses the options and prints the result. The
// same blocks written by `statetree workload --kind synthetic_writes` and given to `statetree
// apply` give the same roots. Each commit's record stores the synthetic spec with the
// blocks applied so far, so `verify`, `get` and `read-bench` check every answer against the
// state after them.
//
// Prints per block (a table row; with --json an entry of the one object's "blocks" array):
// root, records read, pages read, read rounds, records / pages written, pages released,
// commit time, bytes on disk, bytes in use (pages the state holds) and live keys, pages
// compacted and records relocated (--compact-pages); then medians [min, max] over the blocks, with the commit's
// phases (resolve, of it inside read rounds, apply, encode + writes, publish). The database's
// first commit of blocks fixes --writes and --seed: later runs continue the same sequence
// (a different value given explicitly is an error). RocksDB databases: one synced
// WriteBatch per block; the JSON records the store's options. Binary trie: sibling_reads is 0 (nothing is
// removed) and a deleted slot stays a present zero leaf (go-ethereum's rule).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/database/store_types.h"
#include "engine/experiments/commit_blocks.h"
#include "engine/state/bal_derive.h"
#include "engine/stats/summary.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/generators.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/synthetic_state.h"
#include "workloads/table.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "commit";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

void declare_options(Args& args) {
  add_db(args, "database directory (an MPT or binary-trie database, arena or RocksDB, built with a synthetic state)");
  args.option_u64("blocks", "N", "blocks to apply", 1, 1000000, 1);
  args.option_u64("writes", "W", "storage writes per block (default: the database's, else 4096)", 1, 1u << 24);
  add_seed(args, "block seed (default: the database's, else 1)", std::nullopt);
  add_queue_depth(args, "reads in flight: arena queue depth; RocksDB: MultiGets at once per read round");
  args.option_u64("block-cache", "B",
                  "RocksDB: block cache bytes, kept across the blocks of the run (0: none, every data block read from "
                  "the files: the cold protocol)",
                  0, 1ull << 40, 8ull << 20);
  args.option_u64("compact-pages", "N",
                  "arena: at most N of the pages a commit reads are compacted (their live records under rewritten "
                  "nodes copied out, so emptied pages are released); 0: no compaction",
                  0, 1u << 20, persist::PageReuse::kDefaultCompactPages);
  args.flag("compact-chains",
            "arena: also compact the emptiest partly dead pages the blocks do not read, with their ancestors' "
            "pages (the first commit walks the whole tree once to index the cross-page parents)");
  args.pin_option();
  add_json(args);
  args.require("db");
}

// The synthetic spec the blocks continue: the database's, whose first commit of blocks
// fixed --writes and --seed; nullopt = go on, else the exit status.
std::optional<int> block_spec(const persist::DbFiles& files, std::optional<uint64_t> writes, std::optional<uint64_t> seed,
                              state::SyntheticSpec* spec) {
  auto parsed = state::parse_synthetic_spec(files.commit.spec);
  if (auto* e = std::get_if<std::string>(&parsed))
    return fail("the database was not built from the synthetic state (" + *e + "); commit needs its spec");
  *spec = std::get<state::SyntheticSpec>(parsed);
  if (spec->blocks == 0) {
    spec->block_writes = writes.value_or(4096);
    spec->block_seed = seed.value_or(1);
    return std::nullopt;
  }
  if (writes && *writes != spec->block_writes)
    return fail("the database's blocks have " + std::to_string(spec->block_writes) + " writes; --writes " +
                std::to_string(*writes) + " would break its sequence");
  if (seed && *seed != spec->block_seed)
    return fail("the database's blocks use seed " + std::to_string(spec->block_seed) + "; --seed " +
                std::to_string(*seed) + " would break its sequence");
  return std::nullopt;
}

// Per block: the commit's figures (ms, counts) and its JSON row.
struct CommitSeries {
  std::vector<double> ms, read_ms, resolve_ms, apply_ms, write_ms, publish_ms, records_read, pages_read, pages_written,
      released;
  nlohmann::json rows = nlohmann::json::array();
  uint64_t bytes_before = 0, bytes_after = 0;
  uint64_t in_use_before = 0, in_use_after = 0;  // DbFiles::in_use_bytes
};

nlohmann::json block_row(uint64_t b, const persist::CommitStats& st) {
  return {{"block", b},
          {"root", hex0x(st.root)},
          {"accounts_written", st.accounts_written},
          {"slot_writes", st.slot_writes},
          {"records_read", st.records_read},
          {"pages_read", st.pages_read},
          {"read_rounds", st.read_rounds},
          {"sibling_reads", st.sibling_reads},
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
          {"disk_bytes", st.disk_bytes},
          {"in_use_bytes", st.in_use_bytes},
          {"live_keys", st.live_keys},
          {"in_use_bytes_per_key", st.live_keys ? double(st.in_use_bytes) / double(st.live_keys) : 0.0},
          {"pages_compacted", st.pages_compacted},
          {"chain_pages", st.chain_pages},
          {"records_relocated", st.records_relocated}};
}

CommitSeries series_of(const experiments::CommitBlocksResult& r) {
  CommitSeries c;
  for (const experiments::CommittedBlock& b : r.blocks) {
    const persist::CommitStats& st = b.stats;
    c.ms.push_back(double(st.commit_ns) * 1e-6);
    c.read_ms.push_back(double(st.read_ns) * 1e-6);
    c.resolve_ms.push_back(double(st.resolve_ns) * 1e-6);
    c.apply_ms.push_back(double(st.apply_ns) * 1e-6);
    c.write_ms.push_back(double(st.write_ns) * 1e-6);
    c.publish_ms.push_back(double(st.publish_ns) * 1e-6);
    c.records_read.push_back(double(st.records_read));
    c.pages_read.push_back(double(st.pages_read));
    c.pages_written.push_back(double(st.pages_written));
    c.released.push_back(double(st.pages_released));
    c.rows.push_back(block_row(b.block, st));
  }
  c.bytes_before = r.disk_bytes_before, c.bytes_after = r.disk_bytes_after;
  c.in_use_before = r.in_use_bytes_before, c.in_use_after = r.in_use_bytes_after;
  return c;
}

// The human table of the blocks: columns over block_row().
report::Table block_table() {
  using report::Align;
  return report::Table({{"block", 6, Align::left, report::u64_cell("block")},
                        {"root", 18, Align::left, report::text_cell("root", 18)},
                        {"rec.read", 9, Align::right, report::u64_cell("records_read")},
                        {"pg.read", 8, Align::right, report::u64_cell("pages_read")},
                        {"rounds", 7, Align::right, report::u64_cell("read_rounds")},
                        {"rec.new", 9, Align::right, report::u64_cell("records_written")},
                        {"pg.new", 8, Align::right, report::u64_cell("pages_written")},
                        {"pg.freed", 9, Align::right, report::u64_cell("pages_released")},
                        {"ms", 9, Align::right, report::fixed_cell("commit_ms", 1)},
                        {"bytes on disk", 14, Align::right, report::u64_cell("disk_bytes")}});
}

// One commit per block (engine/experiments/commit_blocks.h), each row printed as it lands
// (table output); nullopt = done, else the exit status.
std::optional<int> run_blocks(persist::DbFiles& files, const experiments::CommitBlocksOptions& o, bool json,
                              state::SyntheticState& src, CommitSeries* c) {
  const workloads::gas::Tree tree = o.bintrie ? workloads::gas::Tree::bintrie : workloads::gas::Tree::mpt;
  experiments::BlockSource blocks;
  blocks.next = [&](state::StateDiff* diff, uint64_t* number) -> std::optional<std::string> {
    *number = src.spec().blocks;
    *diff = state::post_state_diff(workloads::next_synthetic_writes_block(&src, tree).bal);
    return std::nullopt;
  };
  blocks.spec_json = [&] { return src.spec_json(); };
  ProgressBar bar("commit", !json);
  const persist::ProgressFn progress = bar.fn();  // stderr, on a terminal, after a second
  const report::Table table = block_table();
  if (!json) std::fputs(table.header_line().c_str(), stdout);
  const auto r = experiments::commit_blocks(files, o, blocks, [&](const experiments::CommittedBlock& b, uint64_t done) {
    if (!json) {
      bar.finish();
      std::fputs(table.row_line(block_row(b.block, b.stats)).c_str(), stdout);
    }
    if (progress) progress(done, o.blocks);
  });
  bar.finish();
  if (!r.status.ok()) return fail("block " + std::to_string(r.failed_block) + ": " + r.status.message(), exit_code_for(r.status));
  *c = series_of(r);
  return std::nullopt;
}

nlohmann::json commit_json(const persist::DbFiles& files, const persist::DbOptions& o, const std::string& dir,
                           const state::SyntheticSpec& spec, uint64_t first_block, uint64_t blocks, uint32_t compact_pages,
                           const CommitSeries& c) {
  auto sum = [](const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); };
  auto timing = [](const char* label, const std::vector<double>& v) { return report::timing_json(label, v); };
  nlohmann::json out = {{"command", "commit"},
                        {"db", dir},
                        {"first_block", first_block},
                        {"blocks_applied", blocks},
                        {"writes_per_block", spec.block_writes},
                        {"block_seed", spec.block_seed},
                        {"tree", database::tree_kind_name(o.params.tree_kind)},
                        {"page_size", o.params.page_size},
                        {"root", hex0x(files.manifest.root_hash)},
                        {"commit_ms", timing("commit_ms", c.ms)},
                        {"read_ms", timing("read_ms", c.read_ms)},
                        {"resolve_ms", timing("resolve_ms", c.resolve_ms)},
                        {"apply_ms", timing("apply_ms", c.apply_ms)},
                        {"write_ms", timing("write_ms", c.write_ms)},
                        {"publish_ms", timing("publish_ms", c.publish_ms)},
                        {"records_read", sum(c.records_read)},
                        {"pages_read", sum(c.pages_read)},
                        {"pages_written", sum(c.pages_written)},
                        {"pages_released", sum(c.released)},
                        {"disk_bytes_before", c.bytes_before},
                        {"disk_bytes_after", c.bytes_after},
                        {"in_use_bytes_before", c.in_use_before},
                        {"in_use_bytes_after", c.in_use_after},
                        {"live_keys", files.manifest.key_count},
                        {"compact_pages", compact_pages},
                        {"blocks", c.rows}};
  store_regime(files, out);
  report::stamp(out);
  return out;
}

void print_commit_summary(const persist::DbFiles& files, const state::SyntheticSpec& spec, uint64_t first_block,
                          uint64_t blocks, const CommitSeries& c) {
  auto line = [](const char* what, const std::vector<double>& v, const char* fmt) {
    const stats::Summary s = stats::summarize(v);
    std::printf("  %-16s ", what);
    std::printf(fmt, s.median, s.min, s.max);
    std::printf("\n");
  };
  std::printf("%llu blocks of %llu writes (blocks %llu..%llu, seed %llu), medians [min, max] over blocks:\n",
              (unsigned long long)blocks, (unsigned long long)spec.block_writes, (unsigned long long)first_block,
              (unsigned long long)(first_block + blocks - 1), (unsigned long long)spec.block_seed);
  report::timing("commit_ms", c.ms);
  line("commit ms", c.ms, "%.1f [%.1f, %.1f]");
  line(" resolve ms", c.resolve_ms, "%.1f [%.1f, %.1f]");
  line("  in read rounds", c.read_ms, "%.1f [%.1f, %.1f]");
  line(" apply ms", c.apply_ms, "%.1f [%.1f, %.1f]");
  line(" encode+write ms", c.write_ms, "%.1f [%.1f, %.1f]");
  line(" publish ms", c.publish_ms, "%.1f [%.1f, %.1f]");
  line("records read", c.records_read, "%.0f [%.0f, %.0f]");
  line("pages read", c.pages_read, "%.0f [%.0f, %.0f]");
  line("pages written", c.pages_written, "%.0f [%.0f, %.0f]");
  line("pages released", c.released, "%.0f [%.0f, %.0f]");
  std::printf("  bytes on disk    %llu -> %llu (%+.0f per block)\n", (unsigned long long)c.bytes_before,
              (unsigned long long)c.bytes_after,
              blocks ? (double(c.bytes_after) - double(c.bytes_before)) / double(blocks) : 0.0);
  std::printf("  bytes in use     %llu -> %llu (%.1f per key, %llu keys)\n", (unsigned long long)c.in_use_before,
              (unsigned long long)c.in_use_after,
              files.manifest.key_count ? double(c.in_use_after) / double(files.manifest.key_count) : 0.0,
              (unsigned long long)files.manifest.key_count);
  std::printf("  root             %s\n", hex0x(files.manifest.root_hash).c_str());
  std::printf("  %s\n", report::stamp_line().c_str());
}

}  // namespace

int cmd_commit(int argc, char** argv) {
  Args args("statetree commit",
            "Applies N synthetic blocks (ERC20 transfers: new slots, updates, deletes, sender nonces and balances)\n"
            "to an MPT or binary-trie arena database, one copy-on-write commit per block; prints per-block reads, writes, time.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db");
  const uint64_t blocks = args.get_u64("blocks");
  const bool json = args.given("json");
  CommitTarget target;
  if (auto e = probe_commit_target(dir, &target)) return fail(e->first, e->second);
  target.options.queue_depth = queue_depth(args);
  target.options.rocks_read_threads = target.options.queue_depth;
  target.options.rocks_block_cache_bytes = args.get_u64("block-cache");
  persist::DbFiles files;
  if (database::Status s = persist::DbFiles::for_commit(target.options, &files); !s.ok()) return fail(s.message(), exit_code_for(s));
  state::SyntheticSpec spec;
  if (auto rc = block_spec(files, args.get_u64_opt("writes"), args.get_u64_opt("seed"), &spec)) return *rc;
  const uint64_t first_block = spec.blocks;
  state::SyntheticState src(spec);  // replays the blocks already applied
  CommitSeries c;
  experiments::CommitBlocksOptions o;
  o.bintrie = target.bintrie;
  o.blocks = blocks;
  o.compact_pages = uint32_t(args.get_u64("compact-pages"));
  o.compact_chains = args.has("compact-chains");
  if (auto rc = run_blocks(files, o, json, src, &c)) return *rc;
  if (json)
    std::printf("%s\n", commit_json(files, target.options, dir, spec, first_block, blocks, o.compact_pages, c).dump().c_str());
  else print_commit_summary(files, spec, first_block, blocks, c);
  return 0;
}

}  // namespace st::cli
