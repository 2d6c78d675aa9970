// other_slots_test: the published cold-tail conditions as a generator option
// (`--other-slots N`, workloads/generators.h): in every block, each transaction after the
// first also touches N distinct existing slots of the state's other contracts, never one
// slot twice in the file; read (read-only slots of the BAL) or write (a change at the
// transaction's index); gas by rule (an account access per slot: cold the first time in the
// transaction, then warm; a cold SLOAD or SSTORE per slot); deterministic for a seed. End to
// end: `statetree run --workload ... --other-slots N` commits apply's roots for the blocks
// `workload --out` writes with the same options, on both trees; the refusals are one line,
// exit 2.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bintrie/keys.h"
#include "engine/state/bal_derive.h"
#include "reference/run_command.h"
#include "workloads/generators.h"
#include "tests/workloads/cli_test_util.h"
#include "workloads/synthetic_state.h"

using namespace st;
using nlohmann::json;
using st::reference::run_statetree;

namespace {

state::SyntheticSpec spec4() {
  state::SyntheticSpec s;
  s.accounts = 300;
  s.contracts = 4;
  s.slots_per_contract = 400;
  s.seed = 3;
  return s;
}

std::string tmp_path(const std::string& name) { return st::test::fresh_tmp_path("other", name); }

using SlotKey = std::pair<state::Address, state::Hash32>;

// Every present slot of the contracts other than `token`, with its value.
std::map<SlotKey, state::U256> other_slots_of(const state::SyntheticState& src, uint64_t token) {
  std::map<SlotKey, state::U256> m;
  for (uint64_t c = 0; c < src.spec().contracts; ++c) {
    if (c == token) continue;
    for (uint64_t j = 0; j < src.storage_size(c); ++j)
      m[{src.address(c), src.slot_key(c, j)->slot.value()}] = src.slot_value(c, j).value();
  }
  return m;
}

state::U256 plus_one(state::U256 v) {
  for (int i = 31; i >= 0; --i)
    if (++v[size_t(i)] != 0) break;
  return v;
}

std::vector<state::Block> gen(const state::SyntheticState& src, const workloads::WorkloadOptions& o) {
  auto g = workloads::generate_workload(src, o);
  if (auto* e = std::get_if<std::string>(&g)) FAIL(*e);
  return std::get<std::vector<state::Block>>(g);
}

}  // namespace

TEST_CASE("--other-slots: per transaction after the first, N distinct slots of other contracts, gas by rule, seeded") {
  const state::SyntheticState src(spec4());
  const auto others = other_slots_of(src, 0);
  REQUIRE(others.size() > 400);
  const state::Address token = src.address(0);
  constexpr uint64_t kN = 25, kTxs = 3;
  for (const auto tree : {workloads::gas::Tree::mpt, workloads::gas::Tree::bintrie}) {
    for (const bool write : {false, true}) {
      CAPTURE(int(tree));
      CAPTURE(write);
      workloads::WorkloadOptions base;
      base.kind = workloads::WorkloadKind::erc20_balanceof;
      base.tree = tree;
      base.calls = 5;
      base.txs = kTxs;
      base.blocks = 2;
      base.seed = 7;
      workloads::WorkloadOptions o = base;
      o.other_slots = kN;
      o.other_write = write;
      const auto plain = gen(src, base), blocks = gen(src, o);
      CHECK(blocks == gen(src, o));  // deterministic
      REQUIRE(blocks.size() == 2);
      std::set<SlotKey> seen;  // over the file: never one slot twice
      bintrie::KeyScheme ks;
      ks.hasher = bintrie::make_hasher(bintrie::HashKind::sha256);
      for (size_t bi = 0; bi < blocks.size(); ++bi) {
        const state::Block& b = blocks[bi];
        REQUIRE(b.header.txs.size() == kTxs);
        // The other contracts' slots in the BAL, as reads or as writes.
        std::vector<SlotKey> reads, writes;
        for (const state::AccountChanges& a : b.bal.accounts) {
          if (a.address == token) continue;
          for (const state::Hash32& s : a.storage_reads) reads.push_back({a.address, s});
          for (const state::SlotChanges& s : a.storage_changes) {
            writes.push_back({a.address, s.slot});
            REQUIRE(s.changes.size() == 1);
            const auto it = others.find({a.address, s.slot});
            REQUIRE(it != others.end());
            CHECK(s.changes[0].value == plus_one(it->second));
          }
        }
        const std::vector<SlotKey>& mine = write ? writes : reads;
        CHECK((write ? reads : writes).empty());
        CHECK(mine.size() == kN * (kTxs - 1));
        for (const SlotKey& k : mine) {
          CHECK(others.count(k));            // an existing slot of another contract
          CHECK(seen.insert(k).second);      // distinct in the file
        }
        // Per transaction index (writes are indexed exactly): none at 1, N at each later one.
        if (write) {
          const auto by = state::access_by_index(b.bal, kTxs, {});
          for (uint32_t t = 1; t <= kTxs; ++t) {
            uint64_t n = 0;
            for (const state::SlotRef& s : by[t].slots_written) n += s.address != token;
            CHECK(n == (t == 1 ? 0 : kN));
          }
        }
        // Gas: the plain transaction's plus, per other slot, the account access (cold the first
        // time in the transaction) and the cold slot access, by the tree's rules. The slots of
        // a transaction are recovered by its index for writes; for reads the BAL keeps no
        // index, so the per-transaction figure is checked on the writes and the block's sum
        // on both.
        uint64_t extra_gas = 0;
        for (uint32_t t = 0; t < kTxs; ++t) extra_gas += b.header.txs[t].gas_used - plain[bi].header.txs[t].gas_used;
        CHECK(b.header.txs[0].gas_used == plain[bi].header.txs[0].gas_used);
        CHECK(b.header.txs[0].calls == 5);
        uint64_t want = 0;
        if (write) {
          const auto by = state::access_by_index(b.bal, kTxs, {});
          for (uint32_t t = 2; t <= kTxs; ++t) {
            std::set<state::Address> warm;
            workloads::gas::WitnessCharges w;
            uint64_t tx_gas = 0;
            for (const state::SlotRef& s : by[t].slots_written) {
              if (s.address == token) continue;
              const state::U256 orig = others.at({s.address, s.slot});
              if (tree == workloads::gas::Tree::mpt) {
                tx_gas += workloads::gas::mpt_account_access(!warm.insert(s.address).second) +
                          workloads::gas::mpt_sstore(false, orig, orig, plus_one(orig)).gas;
              } else {
                tx_gas += workloads::gas::WitnessCharges::or_warm(w.read(bintrie::basic_data_key(ks, s.address))) +
                          workloads::gas::WitnessCharges::or_warm(w.write(bintrie::storage_slot_key(ks, s.address, s.slot)));
              }
            }
            CHECK(b.header.txs[t - 1].gas_used == plain[bi].header.txs[t - 1].gas_used + tx_gas);
            want += tx_gas;
          }
          CHECK(extra_gas == want);
        } else if (tree == workloads::gas::Tree::mpt) {
          // Each slot: cold SLOAD 2,100 and an account access of 100 or 2,600; with 3 other
          // contracts, between 1 and 3 cold accesses per transaction.
          const uint64_t lo = 2 * (kN * 2100 + 2600 + (kN - 1) * 100), hi = 2 * (kN * 2100 + 3 * 2600 + (kN - 3) * 100);
          CHECK(extra_gas >= lo);
          CHECK(extra_gas <= hi);
        }
      }
      // Another seed draws other slots.
      workloads::WorkloadOptions o2 = o;
      o2.seed = 8;
      auto others_in = [&](const state::Block& b) {
        std::set<SlotKey> m;
        for (const state::AccountChanges& a : b.bal.accounts)
          if (a.address != token) {
            for (const state::Hash32& s : a.storage_reads) m.insert({a.address, s});
            for (const state::SlotChanges& s : a.storage_changes) m.insert({a.address, s.slot});
          }
        return m;
      };
      const auto seed8 = others_in(gen(src, o2)[0]), seed7 = others_in(blocks[0]);
      CHECK(seed8.size() == kN * (kTxs - 1));
      CHECK(seed8 != seed7);
    }
  }
  // Refused: mainnet_like, a state whose only contract is the token, more than half of the
  // other contracts' slots over the file.
  workloads::WorkloadOptions o;
  o.other_slots = 10;
  o.txs = 2;
  o.calls = 2;
  o.kind = workloads::WorkloadKind::mainnet_like;
  CHECK(std::holds_alternative<std::string>(workloads::generate_workload(src, o)));
  o.kind = workloads::WorkloadKind::erc20_approve;
  state::SyntheticSpec one = spec4();
  one.contracts = 1;
  CHECK(std::holds_alternative<std::string>(workloads::generate_workload(state::SyntheticState(one), o)));
  o.other_slots = others.size() / 2 + 1;
  CHECK(std::holds_alternative<std::string>(workloads::generate_workload(src, o)));
}

TEST_CASE("statetree run --workload --other-slots: apply's roots for `workload --out`'s blocks, both trees, read and write") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("db_") + tree);
    REQUIRE(run_statetree(std::string("build --tree ") + tree +
                          " --accounts 300 --contracts 4 --slots-per-contract 400 --seed 3 --db " + db0)
                .exit_code == 0);
    for (const char* access : {"read", "write"}) {
      CAPTURE(access);
      const std::string gen = std::string(" --calls 4 --txs 3 --seed 5 --other-slots 20 --other-access ") + access;
      const std::string file = tmp_path(std::string("f_") + tree + access), da = tmp_path(std::string("a_") + tree + access),
                        dr = tmp_path(std::string("r_") + tree + access);
      auto w = run_statetree("workload --kind erc20_balanceof --db " + db0 + " --blocks 2" + gen + " --out " + file);
      REQUIRE_MESSAGE(w.exit_code == 0, w.err);
      std::filesystem::copy(db0, da, std::filesystem::copy_options::recursive);
      std::filesystem::copy(db0, dr, std::filesystem::copy_options::recursive);
      auto ap = run_statetree("apply --db " + da + " --blocks " + file + " --json");
      REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
      const json aj = json::parse(ap.out);
      auto r = run_statetree("run --db " + dr + " --workload erc20_balanceof --block-count 2" + gen +
                             " --reader geth --workers 2 --json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      std::istringstream in(r.out);
      std::string line;
      std::vector<json> blocks;
      json summary;
      while (std::getline(in, line)) {
        json j = json::parse(line);
        if (j["type"] == "block") blocks.push_back(j);
        else summary = j;
      }
      REQUIRE(blocks.size() == 2);
      for (size_t i = 0; i < 2; ++i) {
        CHECK(blocks[i]["root"] == aj["blocks"][i]["root"]);
        // 12 token slots read + 40 other slots, each a distinct cold slot of the block.
        CHECK(blocks[i]["slots_read"] == 12 + 40);
        CHECK(blocks[i]["slots_written"] == (std::string(access) == "write" ? 40 : 0));
      }
      CHECK(summary["root"] == aj["root"]);
      for (const std::string& d : {file, da, dr}) std::filesystem::remove_all(d);
    }
    std::filesystem::remove_all(db0);
  }
}

TEST_CASE("statetree workload / run --other-slots: bad input is one line on stderr, exit 2") {
  const std::string db = tmp_path("bad");
  REQUIRE(run_statetree("build --tree mpt --accounts 100 --contracts 1 --slots-per-contract 50 --db " + db).exit_code == 0);
  const std::string f = tmp_path("bad.bal");
  for (const std::string& cmd :
       {"workload --kind erc20_balanceof --db " + db + " --other-slots 5 --txs 2 --calls 2 --out " + f,  // no other contract
        "workload --kind mainnet_like --db " + db + " --other-slots 5 --out " + f,
        "workload --kind erc20_balanceof --db " + db + " --other-slots 5 --other-access maybe --out " + f,
        "workload --kind erc20_balanceof --db " + db + " --other-access write --out " + f,
        "workload --kind synthetic_writes --db " + db + " --other-slots 5 --out " + f,
        "run --db " + db + " --workload erc20_balanceof --other-slots 5 --txs 2 --calls 2",
        "run --db " + db + " --workload erc20_balanceof --other-slots x",
        "run --db " + db + " --workload erc20_balanceof --other-slots 5 --other-access maybe"}) {
    CAPTURE(cmd);
    auto r = run_statetree(cmd);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(!std::filesystem::exists(f));
  }
  std::filesystem::remove_all(db);
}
