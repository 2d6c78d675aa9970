// bal_apply_test: block access lists applied without execution give the root of the final
// state computed from scratch, on both trees, in memory and on disk: the generated
// workloads (new slots, updates, deletes, new accounts: the fee recipient) plus a block
// that creates a contract (code + storage on a new account) and replaces an existing
// contract's code. End to end through the CLI: `workload --db` -> `apply` ==
// `root --alloc --blocks` == the from-scratch root; and the refusals (another tree, a
// stale pre-state root, storage of a missing account, overwriting --out) leave the
// database unchanged.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "engine/bintrie/state_tree.h"
#include "engine/mpt/state.h"
#include "engine/state/bal_builder.h"
#include "engine/state/bal_derive.h"
#include "reference/bal_final_state.h"
#include "reference/run_command.h"
#include "workloads/block_file.h"
#include "workloads/generators.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"
#include "tests/workloads/cli_test_util.h"

using namespace st;
using st::reference::run_statetree;
using nlohmann::json;

namespace {

std::string tmp_path(const std::string& name) { return st::test::fresh_tmp_path("bal_apply", name); }

state::SyntheticSpec small_spec() {
  state::SyntheticSpec s;
  s.accounts = 300;
  s.contracts = 4;
  s.slots_per_contract = 400;
  s.seed = 3;
  return s;
}

bintrie::KeyScheme sha_ks() {
  bintrie::KeyScheme ks;
  ks.hasher = bintrie::make_hasher(bintrie::HashKind::sha256);
  return ks;
}

state::U256 u(uint64_t x) {
  state::U256 r{};
  for (int i = 31; i >= 24; --i, x >>= 8) r[size_t(i)] = uint8_t(x);
  return r;
}

// A block that creates a contract (nonce, code, storage on a new address), replaces the
// code of contract 1 (same length: every chunk rewritten), deletes two slots of contract 2
// and moves a balance to a new account.
state::Block creation_block(const state::SyntheticState& src, uint64_t number) {
  state::BalBuilder b;
  state::Address created{};
  created[0] = 0xcc;
  created[19] = 0x01;
  b.begin(1);
  b.set_nonce(created, 0, 1);
  b.set_code(created, {}, std::vector<uint8_t>{0x60, 0x01, 0x60, 0x00, 0x55, 0x00});
  b.write_slot(created, u(0), {}, u(1));
  b.write_slot(created, u(7), {}, u(0x77));
  b.end();
  b.begin(2);
  state::AccountRecord r;
  src.account(1, &r);
  std::vector<uint8_t> code(r.code.size(), 0x5b);
  b.set_code(r.address, r.code, code);
  const state::Address c2 = src.address(2);
  for (uint64_t j : {3u, 4u}) b.write_slot(c2, src.slot_key(2, j)->slot.value(), src.slot_value(2, j).value(), {});
  state::Address fresh{};
  fresh[19] = 0xfe;
  b.set_balance(fresh, {}, u(12345));
  b.end();
  state::Block blk;
  blk.header.number = number;
  blk.header.tx_count = 2;
  blk.bal = b.finish();
  REQUIRE(state::bal_check(blk.bal, 2) == "");
  return blk;
}

std::vector<state::Block> all_blocks(const state::SyntheticState& src, bool bt) {
  std::vector<state::Block> blocks;
  uint64_t number = 0;
  auto add = [&](workloads::WorkloadOptions o) {
    o.tree = bt ? workloads::gas::Tree::bintrie : workloads::gas::Tree::mpt;
    o.first_block_number = number;
    auto g = workloads::generate_workload(src, o);
    REQUIRE_MESSAGE(std::holds_alternative<std::vector<state::Block>>(g), std::get<std::string>(g));
    for (state::Block& b : std::get<std::vector<state::Block>>(g)) blocks.push_back(std::move(b)), ++number;
  };
  workloads::WorkloadOptions o;
  o.kind = workloads::WorkloadKind::erc20_approve;
  o.tx_gas = 600000, o.block_gas = 1500000, o.blocks = 2;
  add(o);
  o.kind = workloads::WorkloadKind::erc20_approve;
  o.slots = workloads::SlotsMode::existing;
  o.blocks = 1;
  add(o);
  o = {};
  o.kind = workloads::WorkloadKind::mainnet_like;
  o.blocks = 2;
  o.seed = 9;
  add(o);
  blocks.push_back(creation_block(src, number++));
  return blocks;
}

}  // namespace

TEST_CASE("bal apply: in memory, both trees, the blocks' diffs give the from-scratch root of the final state") {
  const state::SyntheticState src(small_spec());
  const state::Allocation alloc = allocation_of(src);
  for (bool bt : {false, true}) {
    CAPTURE(bt);
    const std::vector<state::Block> blocks = all_blocks(src, bt);
    // The workloads hold what the test needs: deletes, new slots, updates, new accounts.
    uint64_t zeroed = 0, written = 0;
    for (const state::Block& b : blocks) {
      const state::BalSummary s = state::summarize_bal(b.bal);
      zeroed += s.slots_zeroed, written += s.slots_written;
    }
    CHECK(zeroed >= 2);
    CHECK(written > 100);
    const reference::BalFinalState f = reference::bal_final_state(alloc, blocks);
    CHECK(f.alloc.accounts.size() > alloc.accounts.size());  // the fee recipient, the created contract
    state::Hash32 root;
    if (bt) {
      bintrie::StateTree t(sha_ks());
      REQUIRE(t.apply_allocation(alloc) == "");
      for (const state::Block& b : blocks) REQUIRE(t.apply_diff(state::post_state_diff(b.bal)) == "");
      root = t.commit();
    } else {
      mpt::MptState m;
      m.load(alloc);
      for (const state::Block& b : blocks) m.apply(state::post_state_diff(b.bal));
      root = m.root();
    }
    CHECK(root == reference::bal_final_root(f, bt));
  }
}

TEST_CASE("bal workloads: deterministic, gas by rule, sequential counter, slots as the spec says") {
  const state::SyntheticState src(small_spec());
  workloads::WorkloadOptions o;
  o.kind = workloads::WorkloadKind::erc20_balanceof;
  o.slots = workloads::SlotsMode::empty;
  o.calls = 10;
  o.txs = 2;
  auto g1 = workloads::generate_workload(src, o), g2 = workloads::generate_workload(src, o);
  REQUIRE(std::holds_alternative<std::vector<state::Block>>(g1));
  const auto& b = std::get<std::vector<state::Block>>(g1);
  CHECK(b == std::get<std::vector<state::Block>>(g2));
  REQUIRE(b.size() == 1);
  REQUIRE(b[0].header.txs.size() == 2);
  // The token's reads are balance(1) .. balance(20) (integer holders, mapping slot 2).
  const state::Address token = src.address(0);
  const state::AccountChanges* t = nullptr;
  for (const auto& a : b[0].bal.accounts)
    if (a.address == token) t = &a;
  REQUIRE(t);
  CHECK(t->storage_reads.size() == 20);
  CHECK(t->storage_changes.empty());
  const state::Hash32 b1 = workloads::erc20_balance_slot(workloads::integer_address(1));
  CHECK(workloads::bytes_to_hex(b1.data(), 32, false) == "e90b7bceb6e7df5418fb78d8ee546e97c83a08bbccc01a0644d599ccd2a7c2e0");
  CHECK(std::find(t->storage_reads.begin(), t->storage_reads.end(), b1) != t->storage_reads.end());
  CHECK(std::find(t->storage_reads.begin(), t->storage_reads.end(),
                  workloads::erc20_balance_slot(workloads::integer_address(20))) != t->storage_reads.end());
  // Gas: intrinsic + 10 calls at 2,727 (MPT).
  const std::vector<uint8_t> cd1 = workloads::gas::attack_calldata(1, 10), cd2 = workloads::gas::attack_calldata(11, 10);
  CHECK(b[0].header.txs[0].gas_used == workloads::gas::intrinsic_gas(cd1, 1, 0) + 10 * 2727);
  CHECK(b[0].header.txs[1].gas_used == workloads::gas::intrinsic_gas(cd2, 1, 0) + 10 * 2727);
  CHECK(b[0].header.txs[0].calls == 10);
  // Binary trie: + 2,000 CALL witness + 14 code chunks at 200 per transaction.
  o.tree = workloads::gas::Tree::bintrie;
  auto g3 = workloads::generate_workload(src, o);
  const auto& b3 = std::get<std::vector<state::Block>>(g3);
  CHECK(b3[0].header.txs[0].gas_used == workloads::gas::intrinsic_gas(cd1, 1, 0) + 10 * 2727 + 2000 + 14 * 200);
  // approve: allowance(A, 1) .. = 1 .., every slot empty -> non-zero; filling a 2^24 transaction.
  o = {};
  o.kind = workloads::WorkloadKind::erc20_approve;
  o.txs = 1;
  auto g4 = workloads::generate_workload(src, o);
  const auto& b4 = std::get<std::vector<state::Block>>(g4);
  const uint64_t calls = b4[0].header.txs[0].calls;
  const uint64_t gas = b4[0].header.txs[0].gas_used;
  CHECK(gas <= (1u << 24));
  CHECK(gas + 22897 > (1u << 24));  // one more call would not fit
  CHECK(gas == workloads::gas::intrinsic_gas(workloads::gas::attack_calldata(1, calls), 1, 0) + calls * 22897);
  for (const auto& a : b4[0].bal.accounts)
    if (a.address == token) CHECK(a.storage_changes.size() == calls);
  // mixed: the load share splits the budget; loads then stores continue the counter.
  o = {};
  o.kind = workloads::WorkloadKind::mixed_sload_sstore;
  o.txs = 1;
  o.load_share_percent = 50;
  o.slots = workloads::SlotsMode::empty;
  auto g5 = workloads::generate_workload(src, o);
  const auto& b5 = std::get<std::vector<state::Block>>(g5);
  for (const auto& a : b5[0].bal.accounts)
    if (a.address == token) {
      CHECK(a.storage_reads.size() > 2000);
      CHECK(a.storage_changes.size() > 300);
      CHECK(b5[0].header.txs[0].calls == a.storage_reads.size() + a.storage_changes.size());
    }
  CHECK(b5[0].header.txs[0].gas_used <= (1u << 24));
}

TEST_CASE("statetree workload / apply / root --blocks: end to end on both trees, and the refusals") {
  const state::SyntheticSpec spec = small_spec();
  const state::SyntheticState src(spec);
  const state::Allocation alloc = allocation_of(src);
  // The state as a genesis file for `root --alloc`.
  const std::string gen = tmp_path("genesis.json");
  {
    json j = json::object();
    for (const auto& [a, acc] : alloc.accounts) {
      json st = json::object();
      for (const auto& [k, v] : acc.storage) st[workloads::bytes_to_hex(k.data(), 32)] = workloads::bytes_to_hex(v.data(), 32);
      j[workloads::bytes_to_hex(a.data(), 20)] = {{"balance", workloads::u256_to_hex(acc.balance)}, {"nonce", acc.nonce},
                                                  {"code", workloads::bytes_to_hex(acc.code.data(), acc.code.size())},
                                                  {"storage", st}};
    }
    std::ofstream(gen) << json{{"alloc", j}}.dump();
  }
  const std::string state_opts = " --accounts 300 --contracts 4 --slots-per-contract 400 --seed 3";
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const bool bt = std::string(tree) == "bintrie";
    const std::string db = tmp_path(std::string("db_") + tree), file = tmp_path(std::string("w_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + state_opts + " --db " + db).exit_code == 0);
    auto w = run_statetree("workload --kind mainnet_like --db " + db + " --blocks 3 --seed 4 --out " + file);
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    // Overwriting needs --force.
    auto again = run_statetree("workload --kind mainnet_like --db " + db + " --out " + file);
    CHECK(again.exit_code == 2);
    CHECK(again.err.find("--force") != std::string::npos);
    auto show = run_statetree("workload --show " + file + " --db " + db + " --json");
    REQUIRE_MESSAGE(show.exit_code == 0, show.err);
    const json sj = json::parse(show.out);
    REQUIRE(sj["blocks"].size() == 3);
    uint64_t n_new = 0, n_upd = 0;
    for (const json& b : sj["blocks"]) n_new += b["slots_new"].get<uint64_t>(), n_upd += b["slots_updated"].get<uint64_t>();
    CHECK(n_new > 0);
    CHECK(n_upd > 0);

    // The in-memory trees from the genesis file.
    auto mem = run_statetree(std::string("root --tree ") + tree + " --alloc " + gen + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(mem.exit_code == 0, mem.err);
    // The database.
    auto ap = run_statetree("apply --db " + db + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
    const json aj = json::parse(ap.out), mj = json::parse(mem.out);
    REQUIRE(aj["blocks"].size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(aj["blocks"][i]["root"] == mj["blocks"][i]["root"]);
    // From scratch.
    std::vector<state::Block> blocks;
    REQUIRE(!workloads::read_block_file(file, &blocks));
    const state::Hash32 want = reference::bal_final_root(reference::bal_final_state(alloc, blocks), bt);
    CHECK(aj["root"].get<std::string>() == workloads::bytes_to_hex(want.data(), 32));
    auto v = run_statetree("verify --db " + db);
    CHECK(v.exit_code == 0);
    // The same blocks applied to a RocksDB database of the same state: the same root per
    // block (one WriteBatch each); it verifies; the report records the RocksDB options.
    const std::string rdb = tmp_path(std::string("rdb_") + tree);
    REQUIRE(run_statetree(std::string("build --tree ") + tree + state_opts + " --store rocksdb --db " + rdb).exit_code == 0);
    auto rap = run_statetree("apply --db " + rdb + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(rap.exit_code == 0, rap.err);
    const json rj = json::parse(rap.out);
    CHECK(rj["store"] == "rocksdb");
    CHECK(rj["rocksdb"]["block_size_bytes"].get<uint64_t>() == 4096);
    CHECK(rj["rocksdb"]["sync_writes"] == true);
    REQUIRE(rj["blocks"].size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(rj["blocks"][i]["root"] == aj["blocks"][i]["root"]);
    CHECK(rj["root"] == aj["root"]);
    CHECK(run_statetree("verify --db " + rdb).exit_code == 0);

    // Refusals, database unchanged: the same file again (stale root), another tree's file,
    // storage of an account that does not exist.
    auto stale = run_statetree("apply --db " + db + " --blocks " + file);
    CHECK(stale.exit_code == 2);
    CHECK(stale.err.find("is not the state's root") != std::string::npos);
    CHECK(stale.err.find("nothing applied") != std::string::npos);
    const std::string other = tmp_path(std::string("other_") + tree + ".bal");
    REQUIRE(run_statetree("workload --kind erc20_balanceof --calls 3 --txs 1" + state_opts.substr(0, state_opts.find(" --seed")) +
                          " --state-seed 3 --tree " + (bt ? "mpt" : "bintrie") + " --out " + other).exit_code == 0);
    auto wrong_tree = run_statetree("apply --db " + db + " --blocks " + other);
    CHECK(wrong_tree.exit_code == 2);
    CHECK(wrong_tree.err.find("was written for the") != std::string::npos);
    state::Block missing;
    missing.bal.accounts.resize(1);
    missing.bal.accounts[0].address[0] = 0xde;
    missing.bal.accounts[0].storage_changes.push_back({u(1), {{1, u(2)}}});
    const std::string mfile = tmp_path("missing.bal");
    {
      const std::vector<uint8_t> bytes = state::encode_bal(missing.bal);  // a bare BAL
      std::ofstream(mfile, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
    auto miss = run_statetree("apply --db " + db + " --blocks " + mfile);
    CHECK(miss.exit_code == 2);
    CHECK(miss.err.find("account 0xde00000000000000000000000000000000000000: storage written to an account that does not exist") !=
          std::string::npos);
    auto miss_mem = run_statetree(std::string("root --tree ") + tree + " --alloc " + gen + " --blocks " + mfile);
    CHECK(miss_mem.exit_code == 2);
    auto v2 = run_statetree("verify --db " + db + " --json");
    REQUIRE(v2.exit_code == 0);
    CHECK(v2.out.find(aj["root"].get<std::string>()) != std::string::npos);  // the root is unchanged
    auto bad = run_statetree("apply --db " + db + " --blocks " + gen);  // not a block file
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("byte offset") != std::string::npos);
    std::filesystem::remove_all(db);
    std::filesystem::remove(file);
    std::filesystem::remove(other);
    std::filesystem::remove(mfile);
  }
  std::filesystem::remove(gen);
}

TEST_CASE("bal apply: a new account by a balance change gets the empty code hash, as from scratch (binary trie)") {
  // Without it the in-memory tree disagreed with the on-disk committer and with genesis.
  bintrie::StateTree t(sha_ks());
  state::StateDiff d;
  state::AccountDiff a;
  a.address[19] = 0xfe;
  a.balance = u(9);
  d.accounts.push_back(a);
  REQUIRE(t.apply_diff(d) == "");
  state::Allocation g;
  state::Account acc;
  acc.balance = u(9);
  g.accounts.push_back({a.address, acc});
  bintrie::StateTree s(sha_ks());
  REQUIRE(s.apply_allocation(g) == "");
  CHECK(t.commit() == s.commit());
  // An existing account's code hash is left alone (a second balance change changes nothing else).
  state::StateDiff d2 = d;
  d2.accounts[0].balance = u(10);
  REQUIRE(t.apply_diff(d2) == "");
  g.accounts[0].second.balance = u(10);
  bintrie::StateTree s2(sha_ks());
  REQUIRE(s2.apply_allocation(g) == "");
  CHECK(t.commit() == s2.commit());
}

TEST_CASE("statetree workload / apply: --help, bad input is one line and exit 2") {
  for (const char* c : {"workload --help", "apply --help", "root --tree mpt --blocks x --help"}) {
    auto h = run_statetree(c);
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("--json") != std::string::npos);
  }
  const std::string out = tmp_path("bad.bal");
  const std::string st = " --accounts 300 --contracts 4 --slots-per-contract 400 --state-seed 3 --out " + out;
  struct Bad {
    std::string cmd, want;
  };
  const std::vector<Bad> bad = {
      {"workload", "--kind K (or --show FILE) is required"},
      {"workload --kind nope" + st, "unknown --kind 'nope'"},
      {"workload --kind erc20_balanceof --accounts 300", "--out FILE is required"},
      {"workload --kind erc20_balanceof --out " + out, "--db DIR or --accounts N"},
      {"workload --kind erc20_balanceof --slots some" + st, "--slots must be existing or empty"},
      {"workload --kind erc20_balanceof --loads 3" + st, "--loads / --stores apply to mixed_sload_sstore only"},
      {"workload --kind mixed_sload_sstore --calls 3" + st, "takes --loads / --stores"},
      {"workload --kind erc20_balanceof --contract 9" + st, "--contract 9: the state has 4 contracts"},
      {"workload --kind erc20_balanceof --calls 400" + st, "needs storage entry 400 of contract 0, which holds 400 slots"},
      {"workload --kind erc20_approve --calls 1000" + st, "needs more than 16777216 gas"},
      {"workload --kind erc20_balanceof --zipf x" + st, "--zipf must be a number"},
      {"workload --show /nonexistent/file.bal", "cannot open"},
      {"apply --blocks x", "--db DIR is required"},
      {"apply --db /nonexistent --blocks /nonexistent", "cannot open"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.cmd);
    auto r = run_statetree(b.cmd);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    REQUIRE(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.find(b.want) != std::string::npos);
  }
  CHECK(!std::filesystem::exists(out));
}
