// synthetic_writes_test: `statetree commit`'s synthetic blocks as the synthetic_writes
// workload (workloads/generators.h). In memory: each generated block's post-state diff gives
// the same roots on both trees as the diff SyntheticState::next_block draws (what commit
// applied before it used the generator), block after block, and the BAL is canonical and
// round-trips; a slot added and deleted in one transfer stays a change to zero (on the
// binary trie a present zero leaf: the root differs without it). Through the CLI: commit's
// roots for fixed seeds are the ones it gave before (recorded below), the MPT's equal the
// from-scratch root of the synthetic state after the blocks, and `workload --kind
// synthetic_writes` + `apply` gives commit's roots, from a fresh database and continuing a
// database's block sequence.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bintrie/state_tree.h"
#include "engine/mpt/state.h"
#include "engine/state/bal_derive.h"
#include "reference/run_command.h"
#include "workloads/generators.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"
#include "tests/workloads/cli_test_util.h"

using namespace st;
using st::reference::run_statetree;
using nlohmann::json;

namespace {

std::string tmp_path(const std::string& name) { return st::test::fresh_tmp_path("synthetic_writes", name); }

bintrie::KeyScheme sha_ks() {
  bintrie::KeyScheme ks;
  ks.hasher = bintrie::make_hasher(bintrie::HashKind::sha256);
  return ks;
}

state::SyntheticSpec make_spec(uint64_t accounts, uint64_t contracts, uint64_t slots, uint64_t writes, uint64_t seed) {
  state::SyntheticSpec s;
  s.accounts = accounts;
  s.contracts = contracts;
  s.slots_per_contract = slots;
  s.seed = 3;
  s.block_writes = writes;
  s.block_seed = seed;
  return s;
}

std::string hex(const state::Hash32& h) { return workloads::bytes_to_hex(h.data(), 32); }

std::vector<std::string> roots_of(const json& j) {
  std::vector<std::string> r;
  for (const json& b : j["blocks"]) r.push_back(b["root"].get<std::string>());
  return r;
}

}  // namespace

TEST_CASE("synthetic_writes: the generated blocks give next_block's roots on both trees, canonical BALs") {
  // Small and odd shapes: no EOAs, no slots to start from, an odd write count.
  for (const state::SyntheticSpec& spec : {make_spec(300, 4, 200, 64, 5), make_spec(40, 1, 0, 301, 7),
                                           make_spec(2, 2, 3, 9, 2), make_spec(30, 0, 0, 11, 4)}) {
    CAPTURE(spec.accounts);
    state::SyntheticState direct(spec), generated(spec);
    const state::Allocation alloc = allocation_of(direct);
    mpt::MptState m1, m2;
    m1.load(alloc), m2.load(alloc);
    bintrie::StateTree t1(sha_ks()), t2(sha_ks());
    REQUIRE(t1.apply_allocation(alloc) == "");
    REQUIRE(t2.apply_allocation(alloc) == "");
    for (uint64_t b = 0; b < 5; ++b) {
      CAPTURE(b);
      state::StateDiff d;
      direct.next_block(&d);
      const state::Block blk = workloads::next_synthetic_writes_block(&generated, workloads::gas::Tree::mpt);
      CHECK(blk.header.number == b);
      CHECK(blk.header.tree == state::BalTree::mpt);
      REQUIRE(blk.header.tx_count);
      CHECK(*blk.header.tx_count == (spec.block_writes + 1) / 2);
      CHECK(blk.header.txs.empty());
      CHECK(state::bal_check(blk.bal, blk.header.tx_count) == "");
      std::vector<state::Block> back;
      std::string err;
      const std::vector<uint8_t> bytes = state::encode_block(blk);
      REQUIRE(state::decode_blocks(bytes, &back, &err));
      CHECK(back.size() == 1);
      CHECK(back[0] == blk);
      const state::StateDiff g = state::post_state_diff(blk.bal);
      m1.apply(d), m2.apply(g);
      REQUIRE(t1.apply_diff(d) == "");
      REQUIRE(t2.apply_diff(g) == "");
      CHECK(m1.root() == m2.root());
      CHECK(t1.commit() == t2.commit());
    }
    CHECK(generated.spec() == direct.spec());  // the generator advanced the state's sequence
  }
}

TEST_CASE("synthetic_writes: a slot added and deleted within one transfer is a change to zero") {
  // One contract without slots, two writes per block: write 0 adds a slot, write 1 deletes
  // it 2 % of the time (the only live slot). commit wrote the zero, so the binary trie holds
  // a present zero leaf; a client's BAL would list the slot as read only, leaving no leaf.
  uint64_t seen = 0;
  for (uint64_t seed = 1; seed <= 600 && seen < 3; ++seed) {
    state::SyntheticState direct(make_spec(3, 1, 0, 2, seed)), generated(make_spec(3, 1, 0, 2, seed));
    state::StateDiff d;
    direct.next_block(&d);
    const state::Block blk = workloads::next_synthetic_writes_block(&generated, workloads::gas::Tree::bintrie);
    const state::AccountChanges* token = nullptr;
    for (const state::AccountChanges& a : blk.bal.accounts)
      if (a.address == direct.address(0)) token = &a;
    REQUIRE(token);
    if (token->storage_changes.size() != 1 || token->storage_changes[0].changes.size() != 1) continue;
    const state::StorageChange& c = token->storage_changes[0].changes[0];
    if (c.value != state::Hash32{}) continue;
    ++seen;
    CAPTURE(seed);
    CHECK(c.index == 1);
    const state::Allocation alloc = allocation_of(state::SyntheticState(make_spec(3, 1, 0, 2, seed)));
    bintrie::StateTree t1(sha_ks()), t2(sha_ks()), without(sha_ks());
    for (bintrie::StateTree* t : {&t1, &t2, &without}) REQUIRE(t->apply_allocation(alloc) == "");
    REQUIRE(t1.apply_diff(d) == "");
    REQUIRE(t2.apply_diff(state::post_state_diff(blk.bal)) == "");
    state::StateDiff no_zero = state::post_state_diff(blk.bal);
    for (state::AccountDiff& a : no_zero.accounts) a.storage_writes.clear();
    REQUIRE(without.apply_diff(no_zero) == "");
    const auto r1 = t1.commit();
    CHECK(r1 == t2.commit());
    CHECK(r1 != without.commit());
  }
  CHECK(seen >= 1);
}

TEST_CASE("synthetic_writes: commit's roots unchanged; workload --kind synthetic_writes + apply gives them") {
  // The roots `statetree commit` printed before its blocks came from the generator (the same
  // commands, 2026-12-01): the random stream and the diff it commits are unchanged.
  struct Case {
    const char* tree;
    const char* state;
    const char* blocks;
    std::vector<std::string> roots;
    uint64_t accounts, contracts, slots, writes, seed;  // the same as numbers
  };
  const std::vector<Case> cases = {
      {"mpt", "--accounts 300 --contracts 4 --slots-per-contract 200", "--blocks 3 --writes 64 --seed 5",
       {"0x33127b5fb3be454984032ba479a3a882bfeed30cc15c5045bfc8e6b2f4a3e14e",
        "0x4c53f0838b0e458156e470309d8b21a5afbb26a30d88a94db90b59a0a862779d",
        "0x6efbc8879144617f8f0a2d34b836fb5b991567134606d1e97ca7bb2168352318"},
       300, 4, 200, 64, 5},
      {"bintrie", "--accounts 300 --contracts 4 --slots-per-contract 200", "--blocks 3 --writes 64 --seed 5",
       {"0x6e74f0187e645ead37d54343345a9c28374de69faef8f277495e4657eb016c82",
        "0x48267294a76d391077af887a0fbdf0f827627415858b38e4b46291b1293f806d",
        "0x98cd17267a3305d648e5f4bd49db8b61dc0ba17b21ea9db2121459d6b9e9f0f0"},
       300, 4, 200, 64, 5},
      {"mpt", "--accounts 40 --contracts 1 --slots-per-contract 0", "--blocks 3 --writes 301 --seed 7",
       {"0x25d8bfb859bbeb228c9fd4317e3efd5c7ab72a723add2b8dcb56dc6d66419b74",
        "0xc56526212a670f841f5c31a2168198c64ea53aa5235f7a77731dce3f8c5b4a1c",
        "0x81af3cbfc84e2f390902910fc403796c86d2b8483f6aa94a1edc12eeea4ffc15"},
       40, 1, 0, 301, 7},
      {"bintrie", "--accounts 40 --contracts 1 --slots-per-contract 0", "--blocks 3 --writes 301 --seed 7",
       {"0x1a283747eadc6d13fc3e4444588f16f17ddb7b4bf4f3f1ba28048a9ba65c0df8",
        "0xeb1a9d041bcd5acc6172330f936a72efb3333d3a6957ab9a7898ec047d863f96",
        "0x3b9c6e743e24abd826fe05adff82a121375c61a5bc02dbbe84093d2ae05ac050"},
       40, 1, 0, 301, 7},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tree);
    CAPTURE(c.state);
    const std::string a = tmp_path("a"), b = tmp_path("b"), f = tmp_path("f.bal"), f2 = tmp_path("f2.bal");
    const std::string build = std::string("build --tree ") + c.tree + " " + c.state + " --db ";
    REQUIRE(run_statetree(build + a).exit_code == 0);
    REQUIRE(run_statetree(build + b).exit_code == 0);
    auto commit = run_statetree("commit --db " + a + " " + c.blocks + " --json");
    REQUIRE_MESSAGE(commit.exit_code == 0, commit.err);
    const std::vector<std::string> committed = roots_of(json::parse(commit.out));
    CHECK(committed == c.roots);
    if (std::string(c.tree) == "mpt") {  // from scratch: the synthetic state after k + 1 blocks
      for (size_t k = 0; k < committed.size(); ++k) {
        state::SyntheticSpec s;
        s.accounts = c.accounts, s.contracts = c.contracts, s.slots_per_contract = c.slots, s.seed = 1;
        s.blocks = k + 1, s.block_writes = c.writes, s.block_seed = c.seed;
        CHECK(committed[k] == hex(mpt::allocation_root(allocation_of(state::SyntheticState(s)))));
      }
    }

    // The same blocks as a file, applied to a second database built the same way.
    auto w = run_statetree("workload --kind synthetic_writes --db " + b + " " + c.blocks + " --out " + f + " --json");
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    auto ap = run_statetree("apply --db " + b + " --blocks " + f + " --json");
    REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
    CHECK(roots_of(json::parse(ap.out)) == committed);
    CHECK(run_statetree("verify --db " + b).exit_code == 0);

    // Continuing: the next two blocks of database a's sequence (its seed and writes by
    // default), applied to b, are the ones commit then applies to a.
    auto w2 = run_statetree("workload --kind synthetic_writes --db " + a + " --blocks 2 --out " + f2);
    REQUIRE_MESSAGE(w2.exit_code == 0, w2.err);
    auto ap2 = run_statetree("apply --db " + b + " --blocks " + f2 + " --json");
    REQUIRE_MESSAGE(ap2.exit_code == 0, ap2.err);
    const json aj2 = json::parse(ap2.out);
    CHECK(aj2["blocks"][0]["number"] == 3);
    auto commit2 = run_statetree("commit --db " + a + " --blocks 2 --json");
    REQUIRE_MESSAGE(commit2.exit_code == 0, commit2.err);
    CHECK(roots_of(aj2) == roots_of(json::parse(commit2.out)));
    // The file's first block names a's root before them: b, now past it, refuses it.
    auto stale = run_statetree("apply --db " + b + " --blocks " + f2);
    CHECK(stale.exit_code == 2);
    CHECK(stale.err.find("is not the state's root") != std::string::npos);
    std::filesystem::remove_all(a);
    std::filesystem::remove_all(b);
    std::filesystem::remove(f);
    std::filesystem::remove(f2);
  }
}

TEST_CASE("workload --kind synthetic_writes: bad input is one line and exit 2") {
  const std::string db = tmp_path("bad_db"), out = tmp_path("bad.bal");
  REQUIRE(run_statetree("build --tree mpt --accounts 50 --contracts 2 --slots-per-contract 20 --db " + db).exit_code == 0);
  REQUIRE(run_statetree("commit --db " + db + " --blocks 1 --writes 8 --seed 3").exit_code == 0);
  const std::string st = " --accounts 50 --contracts 2 --slots-per-contract 20 --out " + out;
  struct Bad {
    std::string cmd, want;
  };
  const std::vector<Bad> bad = {
      {"workload --kind synthetic_writes --calls 3" + st, "--calls does not apply to synthetic_writes"},
      {"workload --kind synthetic_writes --txs 3" + st, "--txs does not apply to synthetic_writes"},
      {"workload --kind erc20_approve --writes 3" + st, "--writes applies to synthetic_writes only"},
      {"workload --kind synthetic_writes --writes 0" + st, "--writes must be in 1..16777216"},
      {"workload --kind synthetic_writes --writes x" + st, "--writes"},
      {"workload --kind synthetic_writes --db " + db + " --writes 9 --out " + out, "--writes 9 would break its sequence"},
      {"workload --kind synthetic_writes --db " + db + " --seed 4 --out " + out, "--seed 4 would break its sequence"},
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
  // The database's own seed and writes, given explicitly, continue its sequence.
  auto ok = run_statetree("workload --kind synthetic_writes --db " + db + " --writes 8 --seed 3 --out " + out);
  CHECK_MESSAGE(ok.exit_code == 0, ok.err);
  std::filesystem::remove_all(db);
  std::filesystem::remove(out);
}
