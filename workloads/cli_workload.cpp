// cli_workload: `statetree workload`: writes the study's workloads as EIP-7928 block files
// (workloads/generators.h, format engine/state/bal.h), and shows what a block file holds.
//
//   statetree workload --kind K --db DIR --out FILE [options] [--force] [--json]
//   statetree workload --kind K --accounts N --contracts C --slots-per-contract S
//                      [--state-seed X] [--tree mpt|bintrie] --out FILE ...
//   statetree workload --show FILE [--db DIR] [--json]
//
// With --db the target state is the database's (its recorded synthetic spec, tree, hash and
// root: the first block carries the root, so `statetree apply` refuses the file on another
// state); otherwise the same options as `statetree build` name the state. FILE is never
// overwritten without --force. --show prints per block the transactions, gas, accounts,
// slots read / written, deleted (final value zero), bal_hash and bytes; with --db it also
// splits the written slots into new and updated by looking their pre-values up (the file's
// earlier blocks first, then the database). --kind synthetic_writes writes `statetree
// commit`'s blocks (--writes, --seed; by default those of the blocks the state already has,
// continuing its sequence), which `statetree apply` turns into the roots `commit` gives.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/database/store_types.h"
#include "engine/persist/tree_db.h"
#include "engine/state/bal_derive.h"
#include "workloads/bal_json.h"
#include "workloads/block_file.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/generators.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/table.h"
#include "workloads/synthetic_state.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "workload";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

bool is_zero(const state::U256& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}

using SlotKey = std::pair<state::Address, state::Hash32>;

// A block's written slots split into new / updated / deleted (final value zero). Pre-values
// come from the file's earlier blocks (`written`, updated here), then the database (db may be
// null: then only deletes and slots an earlier block wrote are classified). "" or the error.
struct SlotSplit {
  uint64_t new_slots = 0, updated = 0, deleted = 0;
};

std::string split_slots(const state::Block& b, persist::TreeDb* db, std::map<SlotKey, state::U256>* written, SlotSplit* out) {
  std::vector<state::StateKey> keys;
  std::vector<SlotKey> need;
  for (const state::AccountChanges& a : b.bal.accounts)
    for (const state::SlotChanges& c : a.storage_changes)
      if (!written->count({a.address, c.slot})) need.push_back({a.address, c.slot}), keys.push_back({a.address, c.slot});
  std::vector<persist::LookupAnswer> answers;
  if (db && !keys.empty()) {
    persist::LookupStats st;
    if (database::Status e = db->lookup(keys, &answers, &st, false); !e.ok()) return e.message();
  }
  std::map<SlotKey, bool> present;
  for (size_t i = 0; i < answers.size(); ++i) present[need[i]] = answers[i].slot_value && !is_zero(*answers[i].slot_value);
  for (const state::AccountChanges& a : b.bal.accounts)
    for (const state::SlotChanges& c : a.storage_changes) {
      const auto key = std::make_pair(a.address, c.slot);
      const bool post_zero = is_zero(c.changes.back().value);
      bool pre_present = false;
      if (auto it = written->find(key); it != written->end()) pre_present = !is_zero(it->second);
      else pre_present = present[key];
      if (post_zero) out->deleted += 1;
      else if (db || written->count(key)) (pre_present ? out->updated : out->new_slots) += 1;
      (*written)[key] = c.changes.back().value;
    }
  return "";
}

nlohmann::json show_row(const state::Block& b, const state::BalSummary& s, uint64_t gas, uint64_t calls,
                        const SlotSplit& split, bool with_db) {
  nlohmann::json row = {{"number", b.header.number},
                        {"tree", state::bal_tree_name(b.header.tree)},
                        {"pre_state_root", b.header.pre_state_root ? nlohmann::json(hex0x(*b.header.pre_state_root)) : nlohmann::json()},
                        {"tx_count", b.header.tx_count ? nlohmann::json(*b.header.tx_count) : nlohmann::json()},
                        {"gas_used", gas},
                        {"calls", calls},
                        {"accounts", s.accounts},
                        {"accounts_changed", s.accounts_changed},
                        {"slots_read", s.slots_read},
                        {"slots_written", s.slots_written},
                        {"storage_changes", s.storage_changes},
                        {"slots_deleted", split.deleted},
                        {"balance_changes", s.balance_changes},
                        {"nonce_changes", s.nonce_changes},
                        {"code_changes", s.code_changes},
                        {"bal_hash", hex0x(state::bal_hash(b.bal))},
                        {"bytes", state::encode_block(b).size()}};
  if (with_db) row["slots_new"] = split.new_slots, row["slots_updated"] = split.updated;
  return row;
}

// --show's human table over show_row's rows ("?": a block without its transaction count;
// "-": new / updated without --db).
const report::Table& show_table() {
  using report::Align;
  const auto count = report::count_column;
  static const report::Table table(
      {{"block", 8, Align::left, report::u64_cell("number")},
       {"tree", 7, Align::left,
        [](const nlohmann::json& row) { const std::string t = row["tree"].get<std::string>(); return t.empty() ? std::string("any") : t; }},
       {"txs", 4, Align::right,
        [](const nlohmann::json& row) { return row["tx_count"].is_null() ? std::string("?") : std::to_string(row["tx_count"].get<uint64_t>()); }},
       count("gas", 12, "gas_used"), count("calls", 9, "calls"), count("accounts", 8, "accounts"),
       count("slots.rd", 9, "slots_read"), count("slots.wr", 9, "slots_written"), count("new", 8, "slots_new"),
       count("updated", 8, "slots_updated"), count("deleted", 8, "slots_deleted"),
       {" bal_hash", 19, Align::left, [](const nlohmann::json& row) {
         std::string cell = " ";  // two blanks before the hash, as the header's
         return cell += row["bal_hash"].get<std::string>().substr(0, 18);
       }},
       count("bytes", 9, "bytes")});
  return table;
}

// Totals over a file's blocks.
struct ShowTotals {
  uint64_t txs = 0, gas = 0, calls = 0, rd = 0, wr = 0, new_slots = 0, updated = 0, deleted = 0;
};

void print_show_totals(size_t blocks, uint64_t bytes, const ShowTotals& t, bool with_db) {
  std::printf("%zu blocks, %llu bytes: %llu transactions, %llu gas, %llu calls, slots %llu read / %llu written", blocks,
              (unsigned long long)bytes, (unsigned long long)t.txs, (unsigned long long)t.gas, (unsigned long long)t.calls,
              (unsigned long long)t.rd, (unsigned long long)t.wr);
  if (with_db)
    std::printf(" (%llu new, %llu updated, %llu deleted)\n", (unsigned long long)t.new_slots, (unsigned long long)t.updated,
                (unsigned long long)t.deleted);
  else std::printf(" (%llu deleted; new vs updated: give --db)\n", (unsigned long long)t.deleted);
}

// --show FILE: per block the transactions, gas, accounts, slots and their split, bal_hash, bytes.
int show(const Args& args) {
  std::vector<state::Block> blocks;
  uint64_t bytes = 0;
  if (auto e = workloads::read_block_file(args.str("show"), &blocks, &bytes)) return fail(*e);
  std::unique_ptr<persist::TreeDb> db;
  if (args.given("db")) {
    if (database::Status s = persist::open_any_db(args.str("db"), 32, &db); !s.ok()) return fail(s.message(), exit_code_for(s));
  }
  const bool json = args.given("json");
  nlohmann::json rows = nlohmann::json::array();
  std::map<SlotKey, state::U256> written;  // by earlier blocks of the file
  if (!json) std::fputs(show_table().header_line().c_str(), stdout);
  ShowTotals t;
  for (const state::Block& b : blocks) {
    const state::BalSummary s = state::summarize_bal(b.bal);
    uint64_t gas = 0, calls = 0;
    for (const state::TxInfo& tx : b.header.txs) gas += tx.gas_used, calls += tx.calls;
    SlotSplit split;
    if (std::string e = split_slots(b, db.get(), &written, &split); !e.empty()) return fail(e, 1);
    t.txs += b.header.tx_count.value_or(uint32_t(b.header.txs.size())), t.gas += gas, t.calls += calls;
    t.rd += s.slots_read, t.wr += s.slots_written;
    t.new_slots += split.new_slots, t.updated += split.updated, t.deleted += split.deleted;
    rows.push_back(show_row(b, s, gas, calls, split, db != nullptr));
    if (!json) std::fputs(show_table().row_line(rows.back()).c_str(), stdout);
  }
  if (json) {
    nlohmann::json out = {{"command", "workload"}, {"file", args.str("show")}, {"file_bytes", bytes}, {"blocks", rows},
                          {"root", nullptr}, {"root_note", "a block file; statetree apply gives the roots"}};
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  print_show_totals(blocks.size(), bytes, t, db != nullptr);
  return 0;
}

void declare_options(Args& args) {
  args.option("kind", "K", "erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like or synthetic_writes");
  add_db(args, "the target database (built from a synthetic state); with --show: classify new vs updated");
  args.option_u64("accounts", "N", "without --db: the synthetic state's accounts (as `build`)", 0, UINT64_MAX);
  args.option_u64("contracts", "C", "without --db: its contracts", 0, UINT64_MAX, 0);
  args.option_u64("slots-per-contract", "S", "without --db: its slots per contract", 0, UINT64_MAX, 0);
  args.option_u64("state-seed", "X", "without --db: its seed (`build --seed`)", 0, UINT64_MAX, 1);
  add_tree(args, "without --db: the gas rules and the file's tree", "mpt");
  args.option_one_of("hash", "H", "without --db, bintrie: the stems' hash for the witness charges", {"sha256", "blake3"},
                     "sha256");
  args.option("out", "FILE", "the block file to write");
  args.flag("force", "overwrite FILE");
  args.option_u64("blocks", "B", "blocks", 1, 100000, 1);
  args.option_u64("calls", "N", "calls per transaction (default: as many as fit in --tx-gas)", 1, 10000000);
  args.option_u64("loads", "N", "mixed: balanceOf calls per transaction", 0, UINT64_MAX);
  args.option_u64("stores", "N", "mixed: approve calls per transaction", 0, UINT64_MAX);
  args.option_u64("load-share", "P", "mixed: balanceOf's share of the gas, percent", 1, 99, 50);
  args.option_u64("txs", "T", "transactions per block (default: as many as fit in --block-gas; mainnet_like 200 per 36M)", 1,
                  100000);
  args.option_u64("tx-gas", "G", "per-transaction gas cap", 21000, UINT64_MAX, 16777216);
  args.option_u64("block-gas", "G", "block gas limit (default 100000000; mainnet_like 36000000)", 21000, UINT64_MAX);
  args.option_u64("start", "K", "first holder index / integer address", 0, uint64_t(1) << 62, 1);
  args.option_u64("contract", "C", "the token: contract index in the state", 0, UINT64_MAX, 0);
  args.option_one_of("slots", "M", "existing or empty (default: existing for balanceOf, empty for approve)",
                     {"existing", "empty"});
  add_seed(args, "workload seed (owner A, senders, mainnet_like draws; synthetic_writes: the block seed)");
  args.option_u64("writes", "W", "synthetic_writes: storage writes per block (default: the state's, else 4096)", 1,
                  uint64_t(1) << 24);
  args.option("zipf", "S", "mainnet_like: Zipf exponent of the contract draw", "1.8");
  args.option_u64("other-slots", "N",
                  "ERC20 kinds: the published cold-tail conditions: each transaction after a block's first also touches\n"
                  "N distinct existing slots of the state's other contracts (never one slot twice in the file; seeded by\n"
                  "--seed), gas by rule (per slot: its contract's account access, cold then warm, and a cold SLOAD or\n"
                  "SSTORE)", 0, 1000000, 0);
  args.option_one_of("other-access", "M", "with --other-slots: read (SLOADs, read-only slots of the BAL) or write (each slot\n"
                     "updated to a new non-zero value: a change at the transaction's index)", {"read", "write"}, "read");
  args.option_u64("evm-work-balanceof", "G", "EVM gas of one balanceOf call besides its slot access", 0, UINT64_MAX, 627);
  args.option_u64("evm-work-approve", "G", "EVM gas of one approve call besides its slot access", 0, UINT64_MAX, 797);
  args.option("show", "FILE", "print a summary of a block file instead");
  add_json(args, "print one JSON object on stdout (with --out: the blocks in their JSON form)");
}

// --kind and the options that apply to it only; nullopt = go on, else the exit status.
std::optional<int> parse_kind(const Args& args, workloads::WorkloadOptions* o) {
  const std::string kind_name = args.str("kind");
  if (kind_name.empty()) return fail("--kind K (or --show FILE) is required");
  const auto kind = workloads::workload_kind_from_name(kind_name);
  if (!kind)
    return fail("unknown --kind '" + kind_name +
                "' (erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like, synthetic_writes)");
  o->kind = *kind;
  if (*kind == workloads::WorkloadKind::synthetic_writes) {
    for (const char* n : {"calls", "loads", "stores", "load-share", "txs", "tx-gas", "block-gas", "start", "contract",
                          "slots", "zipf", "evm-work-balanceof", "evm-work-approve", "other-slots", "other-access"})
      if (args.given(n)) return fail(std::string("--") + n + " does not apply to synthetic_writes (it takes --writes and --seed)");
  } else if (args.given("writes")) {
    return fail("--writes applies to synthetic_writes only");
  }
  const bool mixed = *kind == workloads::WorkloadKind::mixed_sload_sstore;
  if (args.given("calls") && mixed) return fail("mixed_sload_sstore takes --loads / --stores, not --calls");
  if ((args.given("loads") || args.given("stores")) && !mixed) return fail("--loads / --stores apply to mixed_sload_sstore only");
  if (args.given("other-access") && args.get_u64("other-slots") == 0) return fail("--other-access needs --other-slots N");
  return std::nullopt;
}

// The generator's numbers (their ranges checked by parse()); nullopt = go on, else the exit status.
std::optional<int> parse_generator(const Args& args, workloads::WorkloadOptions* o) {
  o->blocks = args.get_u64("blocks");
  o->calls = args.get_u64_opt("calls");
  o->loads = args.get_u64_opt("loads");
  o->stores = args.get_u64_opt("stores");
  o->txs = args.get_u64_opt("txs");
  o->block_gas = args.get_u64_opt("block-gas");
  o->other_slots = args.get_u64("other-slots");
  o->other_write = args.str("other-access") == "write";
  o->tx_gas = args.get_u64("tx-gas");
  o->start = args.get_u64("start");
  o->contract = args.get_u64("contract");
  o->seed = args.get_u64("seed");
  o->evm_work_balance_of = args.get_u64("evm-work-balanceof");
  o->evm_work_approve = args.get_u64("evm-work-approve");
  o->load_share_percent = args.get_u64("load-share");
  if (args.given("slots")) o->slots = args.str("slots") == "existing" ? workloads::SlotsMode::existing : workloads::SlotsMode::empty;
  try {
    size_t used = 0;
    o->zipf = std::stod(args.str("zipf"), &used);
    if (used != args.str("zipf").size() || !(o->zipf > 0 && o->zipf < 10)) throw std::invalid_argument("");
  } catch (...) {
    return fail("--zipf must be a number in (0, 10)");
  }
  return std::nullopt;
}

// The target state: the database's (--db) or `build`'s options; nullopt = go on, else the exit status.
std::optional<int> parse_state(const Args& args, workloads::WorkloadOptions* o, state::SyntheticSpec* spec) {
  if (!args.given("db")) {
    if (!args.given("accounts")) return fail("--db DIR or --accounts N (the state's options) is required");
    spec->accounts = args.get_u64("accounts");
    spec->contracts = args.get_u64("contracts");
    spec->slots_per_contract = args.get_u64("slots-per-contract");
    spec->seed = args.get_u64("state-seed");
    if (spec->accounts < 1 || spec->contracts > spec->accounts)
      return fail("--contracts must be at most --accounts (and --accounts >= 1)");
    o->tree = args.str("tree") == "mpt" ? workloads::gas::Tree::mpt : workloads::gas::Tree::bintrie;
    if (args.str("hash") == "blake3") o->bintrie_hash = bintrie::HashKind::blake3;
    return std::nullopt;
  }
  for (const char* n : {"accounts", "contracts", "slots-per-contract", "state-seed", "tree", "hash"})
    if (args.given(n)) return fail(std::string("--db and --") + n + " exclude each other (the database names its state)");
  std::unique_ptr<persist::TreeDb> db;
  if (database::Status s = persist::open_any_db(args.str("db"), 1, &db); !s.ok()) return fail(s.message(), exit_code_for(s));
  const database::Manifest& m = db->manifest();
  if (m.params.tree_kind == database::TreeKind::mpt) o->tree = workloads::gas::Tree::mpt;
  else if (m.params.tree_kind == database::TreeKind::bintrie) o->tree = workloads::gas::Tree::bintrie;
  else return fail(std::string("workloads need an MPT or binary-trie database, not ") + database::tree_kind_name(m.params.tree_kind));
  if (m.params.hash_kind == database::HashKind::blake3) o->bintrie_hash = bintrie::HashKind::blake3;
  o->pre_state_root = m.root_hash;
  auto parsed = state::parse_synthetic_spec(db->source_spec());
  if (auto* e = std::get_if<std::string>(&parsed))
    return fail("the database does not hold a synthetic state (" + *e + "); give the state's options instead of --db");
  *spec = std::get<state::SyntheticSpec>(parsed);
  return std::nullopt;
}

// What a written block file holds, summed over its blocks.
struct WorkloadSummary {
  std::vector<state::Block> blocks;
  uint64_t txs = 0, gas = 0, calls = 0, slots_read = 0, slots_written = 0, bytes = 0;
};

// Generates the blocks on `spec`'s state and writes them to out_path; nullopt = done, else the exit status.
std::optional<int> run_workload(const state::SyntheticSpec& spec, const workloads::WorkloadOptions& o,
                                const std::string& out_path, WorkloadSummary* r) {
  const state::SyntheticState src(spec);
  auto gen = workloads::generate_workload(src, o);
  if (auto* e = std::get_if<std::string>(&gen)) return fail(*e);
  r->blocks = std::move(std::get<std::vector<state::Block>>(gen));
  if (auto e = workloads::write_block_file(out_path, r->blocks)) return fail(*e, 1);
  for (const state::Block& b : r->blocks) {
    const state::BalSummary s = state::summarize_bal(b.bal);
    r->slots_read += s.slots_read, r->slots_written += s.slots_written;
    r->txs += b.header.tx_count.value_or(uint32_t(b.header.txs.size()));
    for (const state::TxInfo& t : b.header.txs) r->gas += t.gas_used, r->calls += t.calls;
  }
  std::error_code ec;
  r->bytes = std::filesystem::file_size(out_path, ec);
  return std::nullopt;
}

void print_workload(const workloads::WorkloadOptions& o, const std::string& out_path, const WorkloadSummary& r, bool json) {
  const char* tree = o.tree == workloads::gas::Tree::mpt ? "mpt" : "bintrie";
  if (json) {
    nlohmann::json jb = nlohmann::json::array();
    for (const state::Block& b : r.blocks) jb.push_back(workloads::block_to_json(b));
    nlohmann::json out = {{"command", "workload"}, {"kind", workloads::workload_kind_name(o.kind)}, {"tree", tree},
                          {"out", out_path}, {"bytes", r.bytes}, {"transactions", r.txs}, {"gas_used", r.gas},
                          {"calls", r.calls}, {"slots_read", r.slots_read}, {"slots_written", r.slots_written},
                          {"blocks", jb}, {"root", nullptr}, {"root_note", "a block file; statetree apply gives the roots"}};
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("%s (%s): %llu blocks, %llu transactions, %llu calls, %llu gas, slots %llu read / %llu written -> %s (%llu bytes)\n",
              workloads::workload_kind_name(o.kind), tree, (unsigned long long)r.blocks.size(), (unsigned long long)r.txs,
              (unsigned long long)r.calls, (unsigned long long)r.gas, (unsigned long long)r.slots_read,
              (unsigned long long)r.slots_written, out_path.c_str(), (unsigned long long)r.bytes);
}

}  // namespace

int cmd_workload(int argc, char** argv) {
  Args args("statetree workload",
            "Writes the study's workloads (erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like) as\n"
            "EIP-7928 block access lists with gas by rule, or `commit`'s synthetic blocks (synthetic_writes), on the\n"
            "state of a database or of `build`'s options; --show FILE prints what a block file holds.");
  declare_options(args);
  if (!args.parse(argc, argv)) return fail(args.error());
  if (args.help_requested()) { std::fputs(args.usage().c_str(), stdout); return 0; }
  if (args.given("show")) {
    for (const char* o : {"kind", "out", "accounts"})
      if (args.given(o)) return fail(std::string("--show and --") + o + " exclude each other");
    return show(args);
  }
  workloads::WorkloadOptions o;
  if (auto rc = parse_kind(args, &o)) return *rc;
  const std::string out_path = args.str("out");
  if (out_path.empty()) return fail("--out FILE is required");
  std::error_code ec;
  if (std::filesystem::exists(out_path, ec) && !args.given("force"))
    return fail(out_path + " exists (give --force to overwrite it)");
  if (auto rc = parse_generator(args, &o)) return *rc;
  state::SyntheticSpec spec;
  if (auto rc = parse_state(args, &o, &spec)) return *rc;
  if (o.kind == workloads::WorkloadKind::synthetic_writes) {  // continue the state's block sequence unless told otherwise
    if (!args.given("seed") && spec.blocks > 0) o.seed = spec.block_seed;
    if (args.given("writes")) o.writes = args.get_u64("writes");
    else if (spec.blocks > 0) o.writes = spec.block_writes;
  }
  WorkloadSummary r;
  if (auto rc = run_workload(spec, o, out_path, &r)) return *rc;
  print_workload(o, out_path, r, args.given("json"));
  return 0;
}

}  // namespace st::cli
