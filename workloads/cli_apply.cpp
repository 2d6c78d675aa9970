// cli_apply: block access lists applied without execution (engine/state/bal_derive.h: the
// post-state diff of each block).
//
//   statetree apply --db DIR --blocks FILE [--json]
//       each block's diff as ONE copy-on-write commit of an MPT or binary-trie arena
//       database (the engine's block commit loop, engine/experiments/commit_blocks.h);
//       prints the new root per block
//   statetree root --tree mpt|bintrie --alloc FILE --blocks FILE [--hash H] [--json]
//       the same on the in-memory trees (engine/mpt/state.h, engine/bintrie/state_tree.h),
//       from a genesis allocation; prints the root per block
//
// Refused, with the database unchanged (checked for the whole file before the first commit):
// a file written for the other tree; a first block whose pre-state root is not the state's
// root; storage written to an account that does not exist and that neither the block nor an
// earlier block of the file creates (a nonce, balance or code change). A later block that
// names a pre-state root checks it when its turn comes (the earlier blocks are committed by
// then, one commit each; the message says how many). The commit record's spec becomes
// {"kind":"bal_blocks","base":<the state's spec>,"blocks_applied":N,"last_bal_hash":...}:
// `verify` and `get` work on it, `read-bench` and `workload --db` need a synthetic state.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/bintrie/state_tree.h"
#include "engine/database/store_types.h"
#include "engine/experiments/commit_blocks.h"
#include "engine/mpt/state.h"
#include "engine/persist/db_files.h"
#include "engine/state/bal_derive.h"
#include "workloads/block_file.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/genesis.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/table.h"

namespace st::cli {
namespace {

bool creates(const state::AccountChanges& a) {
  return !a.nonce_changes.empty() || !a.balance_changes.empty() || !a.code_changes.empty();
}

// The accounts each block writes storage to without creating them (needing to exist before).
std::vector<state::Address> storage_only_accounts(const std::vector<state::Block>& blocks) {
  std::set<state::Address> created, need;
  for (const state::Block& b : blocks)
    for (const state::AccountChanges& a : b.bal.accounts) {
      if (creates(a)) created.insert(a.address);
      else if (!a.storage_changes.empty() && !created.count(a.address)) need.insert(a.address);
    }
  return {need.begin(), need.end()};
}

// The first block and account at which `missing` is written to (for the error message).
std::string missing_message(const std::vector<state::Block>& blocks, const state::Address& missing) {
  for (const state::Block& b : blocks)
    for (const state::AccountChanges& a : b.bal.accounts)
      if (a.address == missing && !a.storage_changes.empty())
        return "block " + std::to_string(b.header.number) + ": account " + hex0x(missing) +
               ": storage written to an account that does not exist (no block of the file creates it)";
  return "account " + hex0x(missing) + " does not exist";
}

std::optional<std::string> check_tree(const std::vector<state::Block>& blocks, state::BalTree tree, const std::string& file) {
  for (const state::Block& b : blocks)
    if (b.header.tree != state::BalTree::any && b.header.tree != tree)
      return file + ": block " + std::to_string(b.header.number) + " was written for the " +
             state::bal_tree_name(b.header.tree) + " (its gas and root), not the " + state::bal_tree_name(tree);
  return std::nullopt;
}

std::string root_mismatch(const state::Block& b, const state::Hash32& have, size_t applied) {
  std::string m = "block " + std::to_string(b.header.number) + ": pre-state root " + hex0x(*b.header.pre_state_root) +
                  " is not the state's root " + hex0x(have);
  m += applied ? " (" + std::to_string(applied) + " earlier blocks of the file are committed)" : " (nothing applied)";
  return m;
}

int fail_apply(const std::string& m, int code = 2) { return cli_error("statetree apply", m, code); }
int fail_root(const std::string& m, int code = 2) { return cli_error("statetree root", m, code); }

// Checks before the first commit: the first block's root, and the accounts storage is
// written to (one batched lookup through a reader handle, closed before the commits).
// nullopt = go on, else the exit status.
std::optional<int> check_before_commit(const std::string& dir, uint32_t qd, const std::vector<state::Block>& blocks) {
  std::unique_ptr<persist::TreeDb> db;
  if (database::Status s = persist::open_any_db(dir, qd, &db); !s.ok()) return fail_apply(s.message(), exit_code_for(s));
  if (blocks[0].header.pre_state_root && *blocks[0].header.pre_state_root != db->manifest().root_hash)
    return fail_apply(root_mismatch(blocks[0], db->manifest().root_hash, 0));
  const std::vector<state::Address> need = storage_only_accounts(blocks);
  if (need.empty()) return std::nullopt;
  std::vector<state::StateKey> keys;
  for (const state::Address& a : need) keys.push_back({a, std::nullopt});
  std::vector<persist::LookupAnswer> answers;
  persist::LookupStats st;
  if (database::Status s = db->lookup(keys, &answers, &st, false); !s.ok()) return fail_apply(s.message(), 1);
  for (size_t i = 0; i < need.size(); ++i)
    if (!answers[i].account.exists) return fail_apply(missing_message(blocks, need[i]));
  return std::nullopt;
}

nlohmann::json apply_row(const state::Block& b, const state::Hash32& bal_hash, const persist::CommitStats& st) {
  return {{"number", b.header.number}, {"root", hex0x(st.root)}, {"bal_hash", hex0x(bal_hash)},
          {"accounts_written", st.accounts_written}, {"slot_writes", st.slot_writes},
          {"records_read", st.records_read}, {"pages_read", st.pages_read},
          {"records_written", st.records_written}, {"pages_written", st.pages_written},
          {"commit_ms", double(st.commit_ns) * 1e-6}, {"disk_bytes", st.disk_bytes}};
}

// The human table of the blocks: columns over apply_row().
report::Table apply_table() {
  using report::Align;
  return report::Table({{"block", 8, Align::left, report::u64_cell("number")},
                        {"root", 66, Align::left, report::text_cell("root")},
                        {"accounts", 9, Align::right, report::u64_cell("accounts_written")},
                        {"slots", 9, Align::right, report::u64_cell("slot_writes")},
                        {"rec.read", 9, Align::right, report::u64_cell("records_read")},
                        {"rec.new", 9, Align::right, report::u64_cell("records_written")},
                        {"ms", 9, Align::right, report::fixed_cell("commit_ms", 1)}});
}

// One commit per block (engine/experiments/commit_blocks.h), each row printed as it lands
// (table output); a later block's pre-state root is checked when its turn comes. nullopt =
// done, else the exit status.
std::optional<int> commit_blocks(persist::DbFiles& files, bool bintrie, const std::vector<state::Block>& blocks, bool json,
                                 nlohmann::json* rows) {
  std::vector<state::Hash32> bal_hashes;
  experiments::BlockSource source;
  source.next = [&](state::StateDiff* diff, uint64_t* number) -> std::optional<std::string> {
    const size_t i = bal_hashes.size();
    const state::Block& b = blocks[i];
    *number = b.header.number;
    if (i > 0 && b.header.pre_state_root && *b.header.pre_state_root != files.manifest.root_hash)
      return root_mismatch(b, files.manifest.root_hash, i);
    *diff = state::post_state_diff(b.bal);
    bal_hashes.push_back(state::bal_hash(b.bal));
    return std::nullopt;
  };
  source.spec_json = [&] { return bal_blocks_spec(files.commit.spec, 1, bal_hashes.back()); };
  const report::Table table = apply_table();
  if (!json) std::fputs(table.header_line().c_str(), stdout);
  experiments::CommitBlocksOptions o;
  o.bintrie = bintrie;
  o.blocks = blocks.size();
  const auto r = experiments::commit_blocks(files, o, source, [&](const experiments::CommittedBlock& c, uint64_t done) {
    rows->push_back(apply_row(blocks[done - 1], bal_hashes[done - 1], c.stats));
    if (!json) std::fputs(table.row_line(rows->back()).c_str(), stdout);
  });
  if (!r.source_error.empty()) return fail_apply(r.source_error);
  const size_t i = r.blocks.size();
  if (!r.status.ok())
    return fail_apply("block " + std::to_string(r.failed_block) + ": " + r.status.message() +
                          (i ? " (" + std::to_string(i) + " earlier blocks of the file are committed)" : " (nothing applied)"),
                      exit_code_for(r.status));
  return std::nullopt;
}

// The in-memory trees of root_blocks: one of them holds the state.
struct MemoryState {
  bool bintrie = false;
  mpt::MptState mpt;
  std::unique_ptr<bintrie::StateTree> btree;
  // "" or the error.
  std::string apply(const state::StateDiff& diff, state::Hash32* root) {
    if (bintrie) {
      if (std::string e = btree->apply_diff(diff); !e.empty()) return e;
      *root = btree->commit();
    } else {
      mpt.apply(diff);
      *root = mpt.root();
    }
    return "";
  }
};

// The allocation's state and its root; nullopt = go on, else the exit status.
std::optional<int> load_memory_state(const std::string& alloc_path, const std::vector<state::Block>& blocks,
                                     bintrie::HashKind kind, MemoryState* ms, state::Hash32* root) {
  auto loaded = workloads::load_genesis_alloc(alloc_path);
  if (auto* e = std::get_if<std::string>(&loaded)) return fail_root(*e);
  const state::Allocation& alloc = std::get<state::Allocation>(loaded);
  std::set<state::Address> exists;
  for (const auto& [a, acc] : alloc.accounts) exists.insert(a);
  for (const state::Address& a : storage_only_accounts(blocks))
    if (!exists.count(a)) return fail_root(missing_message(blocks, a));
  bintrie::KeyScheme ks;
  ks.hasher = bintrie::make_hasher(kind);
  ms->btree = std::make_unique<bintrie::StateTree>(ks);
  if (ms->bintrie) {
    if (std::string e = ms->btree->apply_allocation(alloc); !e.empty()) return fail_root(alloc_path + ": " + e);
    *root = ms->btree->commit();
  } else {
    ms->mpt.load(alloc);
    *root = ms->mpt.root();
  }
  return std::nullopt;
}

}  // namespace

int cmd_apply(int argc, char** argv) {
  Args args("statetree apply",
            "Applies the blocks of an EIP-7928 block file (statetree workload, or a client's BAL) to an MPT or\n"
            "binary-trie arena database without execution: each block's post-state diff as one copy-on-write commit.");
  add_db(args, "database directory (MPT or binary trie, arena or RocksDB store)");
  args.option("blocks", "FILE", "block file (a sequence of blocks, or one bare BAL)");
  add_queue_depth(args, "reads in flight: arena queue depth; RocksDB: MultiGets at once per read round");
  add_json(args);
  args.require("db");
  args.require("blocks");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db"), file = args.str("blocks");
  const uint32_t qd = queue_depth(args);
  std::vector<state::Block> blocks;
  if (auto e = workloads::read_block_file(file, &blocks)) return fail_apply(*e);
  CommitTarget target;
  if (auto e = probe_commit_target(dir, &target)) return fail_apply(e->first, e->second);
  const bool bintrie = target.bintrie;
  if (auto e = check_tree(blocks, bintrie ? state::BalTree::bintrie : state::BalTree::mpt, file)) return fail_apply(*e);
  // The writer lock first (a second writer is refused before anything is read), then the
  // checks, then the commits.
  target.options.queue_depth = qd;
  target.options.rocks_read_threads = qd;
  persist::DbFiles files;
  if (database::Status s = persist::DbFiles::for_commit(target.options, &files); !s.ok())
    return fail_apply(s.message(), exit_code_for(s));
  if (auto rc = check_before_commit(dir, qd, blocks)) return *rc;
  const bool json = args.given("json");
  nlohmann::json rows = nlohmann::json::array();
  if (auto rc = commit_blocks(files, bintrie, blocks, json, &rows)) return *rc;
  if (json) {
    nlohmann::json out = {{"command", "apply"}, {"db", dir}, {"blocks_file", file},
                          {"tree", bintrie ? "bintrie" : "mpt"}, {"root", hex0x(files.manifest.root_hash)},
                          {"blocks", rows}};
    store_regime(files, out);
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}

// `statetree root --tree T --alloc FILE --blocks FILE` (cli_root.cpp forwards here).
int root_blocks(int argc, char** argv) {
  Args args("statetree root --blocks",
            "State root of a genesis allocation after the blocks of an EIP-7928 block file, on the in-memory trees\n"
            "(each block's post-state diff applied without execution); prints the root per block.");
  add_tree(args);
  args.option("alloc", "FILE", "genesis JSON: {\"alloc\": {...}} or the alloc object itself");
  args.option("blocks", "FILE", "block file (a sequence of blocks, or one bare BAL)");
  args.option_one_of("hash", "H", "bintrie hash", {"sha256", "blake3"}, "sha256");
  add_json(args);
  if (!args.parse(argc, argv)) return fail_root(args.error());
  if (args.help_requested()) { std::fputs(args.usage().c_str(), stdout); return 0; }
  const std::string tree = args.str("tree"), alloc_path = args.str("alloc"), file = args.str("blocks");
  if (tree.empty()) return fail_root("--tree T is required (mpt or bintrie)");
  MemoryState ms;
  ms.bintrie = tree == "bintrie";
  if (!ms.bintrie && args.given("hash")) return fail_root("--hash applies to --tree bintrie only");
  if (alloc_path.empty()) return fail_root("--alloc FILE is required");
  if (file.empty()) return fail_root("--blocks FILE is required");
  std::vector<state::Block> blocks;
  if (auto e = workloads::read_block_file(file, &blocks)) return fail_root(*e);
  if (auto e = check_tree(blocks, ms.bintrie ? state::BalTree::bintrie : state::BalTree::mpt, file)) return fail_root(*e);
  state::Hash32 root{};
  if (auto rc = load_memory_state(alloc_path, blocks, *bintrie::hash_kind_from_name(args.str("hash")), &ms, &root)) return *rc;
  if (blocks[0].header.pre_state_root && *blocks[0].header.pre_state_root != root)
    return fail_root(root_mismatch(blocks[0], root, 0));
  const bool json = args.given("json");
  nlohmann::json rows = nlohmann::json::array();
  const report::Table table({{"block", 8, report::Align::left, report::u64_cell("number")},
                             {"root", 0, report::Align::left, report::text_cell("root")}});
  if (!json) std::fputs(table.header_line().c_str(), stdout);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const state::Block& b = blocks[i];
    if (i > 0 && b.header.pre_state_root && *b.header.pre_state_root != root) return fail_root(root_mismatch(b, root, i));
    if (std::string e = ms.apply(state::post_state_diff(b.bal), &root); !e.empty())
      return fail_root("block " + std::to_string(b.header.number) + ": " + e);
    rows.push_back({{"number", b.header.number}, {"root", hex0x(root)}});
    if (!json) std::fputs(table.row_line(rows.back()).c_str(), stdout);
  }
  if (json) {
    nlohmann::json out = {{"command", "root"}, {"tree", tree}, {"alloc", alloc_path}, {"blocks_file", file},
                          {"root", hex0x(root)}, {"blocks", rows}};
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}

}  // namespace st::cli
