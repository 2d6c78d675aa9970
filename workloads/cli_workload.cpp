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

#include "engine/persist/tree_db.h"
#include "engine/state/bal_derive.h"
#include "engine/state/synthetic_state.h"
#include "workloads/bal_json.h"
#include "workloads/block_file.h"
#include "workloads/cli_args.h"
#include "workloads/commands.h"
#include "workloads/generators.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "workload";
int fail(const std::string& m, int code = 2) { return persist_fail(kCmd, m, code); }

bool is_zero(const state::U256& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}

int show(const Args& args) {
  std::vector<state::Block> blocks;
  uint64_t bytes = 0;
  if (auto e = workloads::read_block_file(args.str("show"), &blocks, &bytes)) return fail(*e);
  std::unique_ptr<persist::TreeDb> db;
  if (args.given("db")) {
    if (io::Status s = persist::open_any_db(args.str("db"), 32, &db); !s.ok()) return fail(s.message(), exit_code_for(s));
  }
  const bool json = args.given("json");
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::pair<state::Address, state::Bytes32>, state::U256> written;  // by earlier blocks of the file
  if (!json)
    std::printf("%-8s %-7s %4s %12s %9s %8s %9s %9s %8s %8s %8s  %-18s %9s\n", "block", "tree", "txs", "gas", "calls",
                "accounts", "slots.rd", "slots.wr", "new", "updated", "deleted", "bal_hash", "bytes");
  uint64_t tot_txs = 0, tot_gas = 0, tot_calls = 0, tot_rd = 0, tot_wr = 0, tot_new = 0, tot_upd = 0, tot_del = 0;
  for (const state::Block& b : blocks) {
    const state::BalSummary s = state::summarize_bal(b.bal);
    uint64_t gas = 0, calls = 0;
    for (const state::TxInfo& t : b.header.txs) gas += t.gas_used, calls += t.calls;
    // new / updated / deleted
    std::vector<state::StateKey> keys;
    std::vector<std::pair<state::Address, state::Bytes32>> need;
    for (const state::AccountChanges& a : b.bal.accounts)
      for (const state::SlotChanges& c : a.storage_changes)
        if (!written.count({a.address, c.slot})) need.push_back({a.address, c.slot}), keys.push_back({a.address, c.slot});
    std::vector<persist::LookupAnswer> answers;
    if (db && !keys.empty()) {
      persist::LookupStats st;
      if (io::Status e = db->lookup(keys, &answers, &st, false); !e.ok()) return fail(e.message(), 1);
    }
    std::map<std::pair<state::Address, state::Bytes32>, bool> present;
    for (size_t i = 0; i < answers.size(); ++i)
      present[need[i]] = answers[i].slot_value && !is_zero(*answers[i].slot_value);
    uint64_t n_new = 0, n_upd = 0, n_del = 0;
    for (const state::AccountChanges& a : b.bal.accounts)
      for (const state::SlotChanges& c : a.storage_changes) {
        const auto key = std::make_pair(a.address, c.slot);
        const bool post_zero = is_zero(c.changes.back().value);
        bool pre_present = false;
        if (auto it = written.find(key); it != written.end()) pre_present = !is_zero(it->second);
        else pre_present = present[key];
        if (post_zero) n_del += 1;
        else if (db || written.count(key)) (pre_present ? n_upd : n_new) += 1;
        written[key] = c.changes.back().value;
      }
    const state::Bytes32 h = state::bal_hash(b.bal);
    const uint64_t block_bytes = state::encode_block(b).size();
    tot_txs += b.header.tx_count.value_or(uint32_t(b.header.txs.size())), tot_gas += gas, tot_calls += calls, tot_rd += s.slots_read, tot_wr += s.slots_written;
    tot_new += n_new, tot_upd += n_upd, tot_del += n_del;
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
                          {"slots_deleted", n_del},
                          {"balance_changes", s.balance_changes},
                          {"nonce_changes", s.nonce_changes},
                          {"code_changes", s.code_changes},
                          {"bal_hash", hex0x(h)},
                          {"bytes", block_bytes}};
    if (db) row["slots_new"] = n_new, row["slots_updated"] = n_upd;
    rows.push_back(row);
    if (!json) {
      const std::string nw = db ? std::to_string(n_new) : "-", up = db ? std::to_string(n_upd) : "-";
      std::printf("%-8llu %-7s %4s %12llu %9llu %8llu %9llu %9llu %8s %8s %8llu  %.18s %9llu\n",
                  (unsigned long long)b.header.number, b.header.tree == state::BalTree::any ? "any" : state::bal_tree_name(b.header.tree),
                  b.header.tx_count ? std::to_string(*b.header.tx_count).c_str() : "?", (unsigned long long)gas,
                  (unsigned long long)calls, (unsigned long long)s.accounts, (unsigned long long)s.slots_read,
                  (unsigned long long)s.slots_written, nw.c_str(), up.c_str(), (unsigned long long)n_del, hex0x(h).c_str(),
                  (unsigned long long)block_bytes);
    }
  }
  if (json) {
    nlohmann::json out = {{"command", "workload"}, {"file", args.str("show")}, {"file_bytes", bytes}, {"blocks", rows},
                          {"root", nullptr}, {"root_note", "a block file; statetree apply gives the roots"}};
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("%zu blocks, %llu bytes: %llu transactions, %llu gas, %llu calls, slots %llu read / %llu written",
              blocks.size(), (unsigned long long)bytes, (unsigned long long)tot_txs, (unsigned long long)tot_gas,
              (unsigned long long)tot_calls, (unsigned long long)tot_rd, (unsigned long long)tot_wr);
  if (db) std::printf(" (%llu new, %llu updated, %llu deleted)\n", (unsigned long long)tot_new, (unsigned long long)tot_upd, (unsigned long long)tot_del);
  else std::printf(" (%llu deleted; new vs updated: give --db)\n", (unsigned long long)tot_del);
  return 0;
}

std::optional<uint64_t> opt_u64(const Args& a, const char* name, std::string* err, bool* bad) {
  if (!a.given(name)) return std::nullopt;
  auto v = a.u64(name, err);
  if (!v) *bad = true;
  return v;
}

}  // namespace

int cmd_workload(int argc, char** argv) {
  Args args("statetree workload",
            "Writes the study's workloads (erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like) as\n"
            "EIP-7928 block access lists with gas by rule, or `commit`'s synthetic blocks (synthetic_writes), on the\n"
            "state of a database or of `build`'s options; --show FILE prints what a block file holds.");
  args.option("kind", "K", "erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like or synthetic_writes");
  args.option("db", "DIR", "the target database (built from a synthetic state); with --show: classify new vs updated");
  args.option("accounts", "N", "without --db: the synthetic state's accounts (as `build`)");
  args.option("contracts", "C", "without --db: its contracts", "0");
  args.option("slots-per-contract", "S", "without --db: its slots per contract", "0");
  args.option("state-seed", "X", "without --db: its seed (`build --seed`)", "1");
  args.option("tree", "T", "without --db: mpt or bintrie (the gas rules and the file's tree)", "mpt");
  args.option("hash", "H", "without --db, bintrie: sha256 or blake3 (stems for the witness charges)", "sha256");
  args.option("out", "FILE", "the block file to write");
  args.flag("force", "overwrite FILE");
  args.option("blocks", "B", "blocks", "1");
  args.option("calls", "N", "calls per transaction (default: as many as fit in --tx-gas)");
  args.option("loads", "N", "mixed: balanceOf calls per transaction");
  args.option("stores", "N", "mixed: approve calls per transaction");
  args.option("load-share", "P", "mixed: balanceOf's share of the gas, percent (10..90)", "50");
  args.option("txs", "T", "transactions per block (default: as many as fit in --block-gas; mainnet_like 200 per 36M)");
  args.option("tx-gas", "G", "per-transaction gas cap", "16777216");
  args.option("block-gas", "G", "block gas limit (default 100000000; mainnet_like 36000000)");
  args.option("start", "K", "first holder index / integer address", "1");
  args.option("contract", "C", "the token: contract index in the state", "0");
  args.option("slots", "M", "existing or empty (default: existing for balanceOf, empty for approve)");
  args.option("seed", "X", "workload seed (owner A, senders, mainnet_like draws; synthetic_writes: the block seed)", "1");
  args.option("writes", "W", "synthetic_writes: storage writes per block (default: the state's, else 4096)");
  args.option("zipf", "S", "mainnet_like: Zipf exponent of the contract draw", "1.8");
  args.option("other-slots", "N",
              "ERC20 kinds: the published cold-tail conditions: each transaction after a block's first also touches\n"
              "N distinct existing slots of the state's other contracts (never one slot twice in the file; seeded by\n"
              "--seed), gas by rule (per slot: its contract's account access, cold then warm, and a cold SLOAD or\n"
              "SSTORE)", "0");
  args.option("other-access", "M", "with --other-slots: read (SLOADs, read-only slots of the BAL) or write (each slot\n"
              "updated to a new non-zero value: a change at the transaction's index)", "read");
  args.option("evm-work-balanceof", "G", "EVM gas of one balanceOf call besides its slot access", "627");
  args.option("evm-work-approve", "G", "EVM gas of one approve call besides its slot access", "797");
  args.option("show", "FILE", "print a summary of a block file instead");
  args.flag("json", "print one JSON object on stdout (with --out: the blocks in their JSON form)");
  if (!args.parse(argc, argv)) return fail(args.error());
  if (args.help_requested()) { std::fputs(args.usage().c_str(), stdout); return 0; }
  if (args.given("show")) {
    for (const char* o : {"kind", "out", "accounts"})
      if (args.given(o)) return fail(std::string("--show and --") + o + " exclude each other");
    return show(args);
  }
  std::string err;
  bool bad = false;
  const std::string kind_name = args.str("kind");
  if (kind_name.empty()) return fail("--kind K (or --show FILE) is required");
  const auto kind = workloads::workload_kind_from_name(kind_name);
  if (!kind)
    return fail("unknown --kind '" + kind_name +
                "' (erc20_balanceof, erc20_approve, mixed_sload_sstore, mainnet_like, synthetic_writes)");
  const bool synthetic = *kind == workloads::WorkloadKind::synthetic_writes;
  if (synthetic) {
    for (const char* n : {"calls", "loads", "stores", "load-share", "txs", "tx-gas", "block-gas", "start", "contract",
                          "slots", "zipf", "evm-work-balanceof", "evm-work-approve", "other-slots", "other-access"})
      if (args.given(n)) return fail(std::string("--") + n + " does not apply to synthetic_writes (it takes --writes and --seed)");
  } else if (args.given("writes")) {
    return fail("--writes applies to synthetic_writes only");
  }
  const std::string out_path = args.str("out");
  if (out_path.empty()) return fail("--out FILE is required");
  std::error_code ec;
  if (std::filesystem::exists(out_path, ec) && !args.given("force"))
    return fail(out_path + " exists (give --force to overwrite it)");

  workloads::WorkloadOptions o;
  o.kind = *kind;
  const auto blocks = args.u64("blocks", &err);
  if (!blocks) return fail(err);
  if (*blocks < 1 || *blocks > 100000) return fail("--blocks must be in 1..100000");
  o.blocks = *blocks;
  o.calls = opt_u64(args, "calls", &err, &bad);
  o.loads = opt_u64(args, "loads", &err, &bad);
  o.stores = opt_u64(args, "stores", &err, &bad);
  o.txs = opt_u64(args, "txs", &err, &bad);
  o.block_gas = opt_u64(args, "block-gas", &err, &bad);
  if (bad) return fail(err);
  for (const char* n : {"tx-gas", "start", "contract", "seed", "evm-work-balanceof", "evm-work-approve", "load-share",
                        "other-slots"})
    if (!args.u64(n, &err)) return fail(err);
  o.other_slots = *args.u64("other-slots", &err);
  if (o.other_slots > 1000000) return fail("--other-slots must be at most 1000000");
  if (args.str("other-access") == "write") o.other_write = true;
  else if (args.str("other-access") != "read") return fail("--other-access must be read or write (got '" + args.str("other-access") + "')");
  if (args.given("other-access") && o.other_slots == 0) return fail("--other-access needs --other-slots N");
  o.tx_gas = *args.u64("tx-gas", &err);
  o.start = *args.u64("start", &err);
  o.contract = *args.u64("contract", &err);
  o.seed = *args.u64("seed", &err);
  o.evm_work_balance_of = *args.u64("evm-work-balanceof", &err);
  o.evm_work_approve = *args.u64("evm-work-approve", &err);
  o.load_share_percent = *args.u64("load-share", &err);
  if (o.load_share_percent < 1 || o.load_share_percent > 99) return fail("--load-share must be in 1..99");
  if (o.calls && (*o.calls < 1 || *o.calls > 10000000)) return fail("--calls must be in 1..10000000");
  if (o.txs && (*o.txs < 1 || *o.txs > 100000)) return fail("--txs must be in 1..100000");
  if (o.tx_gas < 21000) return fail("--tx-gas must be at least 21000");
  if (o.block_gas && *o.block_gas < 21000) return fail("--block-gas must be at least 21000");
  if ((o.calls) && o.kind == workloads::WorkloadKind::mixed_sload_sstore) return fail("mixed_sload_sstore takes --loads / --stores, not --calls");
  if ((o.loads || o.stores) && o.kind != workloads::WorkloadKind::mixed_sload_sstore)
    return fail("--loads / --stores apply to mixed_sload_sstore only");
  if (o.start > (1ull << 62)) return fail("--start is too large");
  if (args.given("slots")) {
    const std::string m = args.str("slots");
    if (m == "existing") o.slots = workloads::SlotsMode::existing;
    else if (m == "empty") o.slots = workloads::SlotsMode::empty;
    else return fail("--slots must be existing or empty (got '" + m + "')");
  }
  try {
    size_t used = 0;
    o.zipf = std::stod(args.str("zipf"), &used);
    if (used != args.str("zipf").size() || !(o.zipf > 0 && o.zipf < 10)) throw std::invalid_argument("");
  } catch (...) {
    return fail("--zipf must be a number in (0, 10)");
  }

  state::SyntheticSpec spec;
  if (args.given("db")) {
    for (const char* n : {"accounts", "contracts", "slots-per-contract", "state-seed", "tree", "hash"})
      if (args.given(n)) return fail(std::string("--db and --") + n + " exclude each other (the database names its state)");
    const std::string dir = args.str("db");
    std::unique_ptr<persist::TreeDb> db;
    if (io::Status s = persist::open_any_db(dir, 1, &db); !s.ok()) return fail(s.message(), exit_code_for(s));
    const io::Manifest& m = db->manifest();
    if (m.params.tree_kind == io::TreeKind::mpt) o.tree = workloads::gas::Tree::mpt;
    else if (m.params.tree_kind == io::TreeKind::bintrie) o.tree = workloads::gas::Tree::bintrie;
    else return fail(std::string("workloads need an MPT or binary-trie database, not ") + io::tree_kind_name(m.params.tree_kind));
    if (m.params.hash_kind == io::HashKind::blake3) o.bintrie_hash = bintrie::HashKind::blake3;
    o.pre_state_root = m.root_hash;
    auto parsed = state::parse_synthetic_spec(db->source_spec());
    if (auto* e = std::get_if<std::string>(&parsed))
      return fail("the database does not hold a synthetic state (" + *e + "); give the state's options instead of --db");
    spec = std::get<state::SyntheticSpec>(parsed);
  } else {
    if (!args.given("accounts")) return fail("--db DIR or --accounts N (the state's options) is required");
    for (const char* n : {"accounts", "contracts", "slots-per-contract", "state-seed"})
      if (!args.u64(n, &err)) return fail(err);
    spec.accounts = *args.u64("accounts", &err);
    spec.contracts = *args.u64("contracts", &err);
    spec.slots_per_contract = *args.u64("slots-per-contract", &err);
    spec.seed = *args.u64("state-seed", &err);
    if (spec.accounts < 1 || spec.contracts > spec.accounts) return fail("--contracts must be at most --accounts (and --accounts >= 1)");
    const std::string tree = args.str("tree");
    if (tree == "mpt") o.tree = workloads::gas::Tree::mpt;
    else if (tree == "bintrie") o.tree = workloads::gas::Tree::bintrie;
    else return fail("--tree must be mpt or bintrie (got '" + tree + "')");
    const std::string hash = args.str("hash");
    if (hash == "blake3") o.bintrie_hash = bintrie::HashKind::blake3;
    else if (hash != "sha256") return fail("--hash must be sha256 or blake3 (got '" + hash + "')");
  }
  if (synthetic) {  // continue the state's block sequence unless told otherwise
    if (!args.given("seed") && spec.blocks > 0) o.seed = spec.block_seed;
    if (args.given("writes")) {
      const auto w = args.u64("writes", &err);
      if (!w) return fail(err);
      o.writes = *w;
    } else if (spec.blocks > 0) {
      o.writes = spec.block_writes;
    }
  }
  const state::SyntheticState src(spec);
  auto gen = workloads::generate_workload(src, o);
  if (auto* e = std::get_if<std::string>(&gen)) return fail(*e);
  const std::vector<state::Block>& blocks_out = std::get<std::vector<state::Block>>(gen);
  if (auto e = workloads::write_block_file(out_path, blocks_out)) return fail(*e, 1);
  uint64_t txs = 0, gas = 0, calls = 0, rd = 0, wr = 0;
  for (const state::Block& b : blocks_out) {
    const state::BalSummary s = state::summarize_bal(b.bal);
    rd += s.slots_read, wr += s.slots_written, txs += b.header.tx_count.value_or(uint32_t(b.header.txs.size()));
    for (const state::TxInfo& t : b.header.txs) gas += t.gas_used, calls += t.calls;
  }
  const uint64_t bytes = std::filesystem::file_size(out_path, ec);
  if (args.given("json")) {
    nlohmann::json jb = nlohmann::json::array();
    for (const state::Block& b : blocks_out) jb.push_back(workloads::block_to_json(b));
    nlohmann::json out = {{"command", "workload"}, {"kind", workloads::workload_kind_name(o.kind)},
                          {"tree", o.tree == workloads::gas::Tree::mpt ? "mpt" : "bintrie"},
                          {"out", out_path}, {"bytes", bytes}, {"transactions", txs}, {"gas_used", gas},
                          {"calls", calls}, {"slots_read", rd}, {"slots_written", wr}, {"blocks", jb},
                          {"root", nullptr}, {"root_note", "a block file; statetree apply gives the roots"}};
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("%s (%s): %llu blocks, %llu transactions, %llu calls, %llu gas, slots %llu read / %llu written -> %s (%llu bytes)\n",
              workloads::workload_kind_name(o.kind), o.tree == workloads::gas::Tree::mpt ? "mpt" : "bintrie",
              (unsigned long long)blocks_out.size(), (unsigned long long)txs, (unsigned long long)calls,
              (unsigned long long)gas, (unsigned long long)rd, (unsigned long long)wr, out_path.c_str(),
              (unsigned long long)bytes);
  return 0;
}

}  // namespace st::cli
