// cli_run_test: the block pipeline (`statetree run`, engine/pipeline/block_run.h) on both
// trees: the roots equal `statetree apply`'s for the same blocks and the from-scratch root of
// the final state, with every reader model, queue depth and blocks-in-flight count, and the
// values the traversal reads are the same in all of them (its read digest); `verify` passes
// after a run; on RocksDB databases the same roots and reads as on the arena and as
// `apply` at --inflight 1, 2 and 3; --workload generates what `workload --out` writes; with two blocks in flight
// and a forced overlap, block k+1 reads block k's writes through the diff layer; --snapshot
// reads the same values from the flat snapshot (regime, fewer reads per slot, verify after);
// bad input is one line on stderr, exit 2, and leaves the database unchanged.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "engine/bintrie/state_tree.h"
#include "engine/mpt/state.h"
#include "engine/pipeline/block_run.h"
#include "engine/pipeline/cold_tail.h"
#include "engine/pipeline/diff_layer.h"
#include "engine/pipeline/parallel.h"
#include "engine/state/bal_builder.h"
#include "engine/state/bal_derive.h"
#include "reference/bal_final_state.h"
#include "reference/run_command.h"
#include "workloads/block_file.h"
#include "tests/workloads/run_json.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"

using namespace st;
using st::reference::run_statetree;
using nlohmann::json;
using st::test::parse_run;
using st::test::RunOut;

namespace {

std::string tmp_path(const std::string& name) {
  const std::string d = "/tmp/statetree_run_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  return d;
}

const std::string kStateOpts = " --accounts 300 --contracts 4 --slots-per-contract 400 --seed 3";

state::SyntheticSpec small_spec() {
  state::SyntheticSpec s;
  s.accounts = 300;
  s.contracts = 4;
  s.slots_per_contract = 400;
  s.seed = 3;
  return s;
}

std::string copy_db(const std::string& from, const std::string& name) {
  const std::string to = tmp_path(name);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  return to;
}


std::string scratch_root_hex(const std::vector<state::Block>& blocks, const state::Allocation& alloc, bool bt) {
  const state::Hash32 root = reference::bal_final_root(reference::bal_final_state(alloc, blocks), bt);
  return "0x" + workloads::bytes_to_hex(root.data(), 32, false);
}

std::string verified_root(const std::string& db) {
  auto v = run_statetree("verify --db " + db + " --json");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  return json::parse(v.out)["root"].get<std::string>();
}

state::U256 u(uint64_t x) {
  state::U256 r{};
  for (int i = 31; i >= 24; --i, x >>= 8) r[size_t(i)] = uint8_t(x);
  return r;
}

}  // namespace

TEST_CASE("statetree run: apply's roots and the from-scratch root with every reader, qd and inflight; verify passes") {
  const state::SyntheticState src(small_spec());
  const state::Allocation alloc = allocation_of(src);
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const bool bt = std::string(tree) == "bintrie";
    const std::string db0 = tmp_path(std::string("db0_") + tree), file = tmp_path(std::string("w_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    auto w = run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 4 --seed 4 --out " + file);
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    std::vector<state::Block> blocks;
    REQUIRE(!workloads::read_block_file(file, &blocks));
    const std::string want_final = scratch_root_hex(blocks, alloc, bt);

    const std::string db_apply = copy_db(db0, std::string("apply_") + tree);
    auto ap = run_statetree("apply --db " + db_apply + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
    const json aj = json::parse(ap.out);
    REQUIRE(aj["blocks"].size() == 4);
    CHECK(aj["root"] == want_final);

    std::vector<std::string> digests;
    for (const char* regime : {"--reader bal --qd 32 --inflight 1", "--reader serial --qd 1 --inflight 1",
                               "--reader bal --qd 2 --inflight 2", "--reader bal --qd 32 --inflight 2 --no-prefetch-overlap",
                               "--reader serial --qd 8 --inflight 2",
                               "--reader bal --qd 1 --inflight 3", "--reader geth --workers 2 --inflight 1",
                               "--reader geth --workers 1 --inflight 2"}) {
      CAPTURE(regime);
      const std::string db = copy_db(db0, std::string("run_") + tree);
      auto r = run_statetree("run --db " + db + " --blocks " + file + " " + regime + " --json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const RunOut ro = parse_run(r.out);
      REQUIRE(ro.blocks.size() == 4);
      // bal with blocks in flight overlaps the prefetches unless told not to (arena).
      const std::string rg(regime);
      const bool overlap = rg.find("bal") != std::string::npos && rg.find("--inflight 1") == std::string::npos &&
                           rg.find("--no-prefetch-overlap") == std::string::npos;
      CHECK(ro.summary["regime"]["prefetch_overlap"] == overlap);
      std::string digest;
      for (size_t i = 0; i < 4; ++i) {
        const json& b = ro.blocks[i];
        CHECK(b["index"] == i);
        CHECK(b["prefetch"]["shared_queue"] == overlap);
        CHECK(b["root"] == aj["blocks"][i]["root"]);
        digest += b["read_digest"].get<std::string>();
        // The counts add up.
        CHECK(b["cache_hits"].get<uint64_t>() + b["cache_misses"].get<uint64_t>() == b["accesses"].get<uint64_t>());
        uint64_t tx_accesses = 0, tx_misses = 0, tx_reads = 0;
        for (const json& t : b["per_tx"])
          tx_accesses += t["accesses"].get<uint64_t>(), tx_misses += t["misses"].get<uint64_t>(), tx_reads += t["device_reads"].get<uint64_t>();
        CHECK(tx_accesses == b["accesses"].get<uint64_t>());
        CHECK(tx_misses == b["cache_misses"].get<uint64_t>());
        CHECK(tx_reads == b["traverse"]["device_reads"].get<uint64_t>());
        CHECK(b["slots_read"].get<uint64_t>() >= b["slots_written"].get<uint64_t>());
        CHECK(b["slots_written"].get<uint64_t>() > 0);
        CHECK(b["gas_used"].get<uint64_t>() > 0);
        CHECK(b["device_reads"].get<uint64_t>() > 0);
        if (std::string(regime).find("serial") != std::string::npos) {
          CHECK(b["prefetch"]["device_reads"] == 0);
          CHECK(b["traverse"]["lookups"] == b["cache_misses"]);  // every miss is one blocking lookup
        } else if (std::string(regime).find("geth") != std::string::npos) {
          // Every miss is read by the main traversal or was read ahead by a worker.
          CHECK(b["prefetch"]["device_reads"] == 0);
          CHECK(b["traverse"]["lookups"].get<uint64_t>() + b["geth"]["warm_hits"].get<uint64_t>() ==
                b["cache_misses"].get<uint64_t>());
          CHECK(b["geth"]["workers"].get<uint64_t>() >= 1);
        } else {
          CHECK(b["prefetch"]["keys"].get<uint64_t>() >= b["slots_read"].get<uint64_t>());
          CHECK(b["traverse"]["device_reads"] == 0);
        }
        if (std::string(regime).find("--inflight 1") != std::string::npos) {
          CHECK(b["reader_blocks_visible"] == i);  // no overlap: the reader sees every earlier block
          CHECK(b["diff_layer_hits"] == 0);
        }
      }
      digests.push_back(digest);
      // The cold tail by transaction count covers every block and every miss.
      uint64_t tail_blocks = 0, tail_misses = 0, misses = 0;
      for (const json& c : ro.summary["cold_tail"]["by_tx_count"])
        tail_blocks += c["blocks"].get<uint64_t>(), tail_misses += c["misses"].get<uint64_t>();
      for (const json& b : ro.blocks) misses += b["cache_misses"].get<uint64_t>();
      CHECK(tail_blocks == 4);
      CHECK(tail_misses == misses);
      CHECK(ro.summary["root"] == want_final);
      CHECK(ro.summary["blocks"] == 4);
      CHECK(verified_root(db) == want_final);
      std::filesystem::remove_all(db);
    }
    for (const std::string& d : digests) CHECK(d == digests[0]);  // the same values read in every regime
    // The human table: a header, a row per block, the summary naming the root.
    const std::string db = copy_db(db0, std::string("table_") + tree);
    auto t = run_statetree("run --db " + db + " --blocks " + file);
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find("\"type\"") == std::string::npos);  // no JSON
    CHECK(t.out.find("cold tail by transaction count") != std::string::npos);
    CHECK(t.out.find("ms/miss") != std::string::npos);
    CHECK(t.out.find("root " + want_final) != std::string::npos);
    for (const std::string& d : {db0, db_apply, db}) std::filesystem::remove_all(d);
    std::filesystem::remove(file);
  }
}

TEST_CASE("statetree run on RocksDB: the arena run's and apply's roots and reads per block, --inflight 1, 2 and 3") {
  const state::SyntheticState src(small_spec());
  const state::Allocation alloc = allocation_of(src);
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const bool bt = std::string(tree) == "bintrie";
    const std::string arena0 = tmp_path(std::string("ra0_") + tree), rocks0 = tmp_path(std::string("rr0_") + tree),
                      file = tmp_path(std::string("rw_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + arena0).exit_code == 0);
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --store rocksdb --db " + rocks0).exit_code == 0);
    const std::string root0 = verified_root(rocks0);
    REQUIRE(root0 == verified_root(arena0));
    auto w = run_statetree("workload --kind mainnet_like --db " + arena0 + " --blocks 4 --seed 4 --out " + file);
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    std::vector<state::Block> blocks;
    REQUIRE(!workloads::read_block_file(file, &blocks));
    const std::string want_final = scratch_root_hex(blocks, alloc, bt);

    const std::string rocks_apply = copy_db(rocks0, std::string("rapply_") + tree);
    auto ap = run_statetree("apply --db " + rocks_apply + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
    const json aj = json::parse(ap.out);
    REQUIRE(aj["blocks"].size() == 4);
    CHECK(aj["root"] == want_final);

    for (const std::string regime : {"--reader bal --qd 32 --inflight 1", "--reader serial --qd 1 --inflight 1",
                                     "--reader geth --workers 2 --inflight 1", "--reader bal --qd 32 --inflight 2",
                                     "--reader serial --qd 1 --inflight 2", "--reader geth --workers 2 --inflight 3"}) {
      CAPTURE(regime);
      const bool k1 = regime.find("--inflight 1") != std::string::npos;
      const std::string adb = copy_db(arena0, std::string("rarena_") + tree), rdb = copy_db(rocks0, std::string("rrocks_") + tree);
      auto a = run_statetree("run --db " + adb + " --blocks " + file + " " + regime + " --json");
      REQUIRE_MESSAGE(a.exit_code == 0, a.err);
      auto r = run_statetree("run --db " + rdb + " --blocks " + file + " " + regime + " --json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const RunOut ao = parse_run(a.out), ro = parse_run(r.out);
      REQUIRE(ao.blocks.size() == 4);
      REQUIRE(ro.blocks.size() == 4);
      for (size_t i = 0; i < 4; ++i) {
        const json& b = ro.blocks[i];
        CHECK(b["index"] == i);
        CHECK(b["root"] == aj["blocks"][i]["root"]);
        CHECK(b["root"] == ao.blocks[i]["root"]);
        // K = 1: the reader showed exactly the last committed block. Any K: it showed a
        // committed state no later than that, the diff layer the rest, and the block read
        // the arena run's values.
        if (k1) CHECK(b["reader_blocks_visible"] == i);
        if (k1) CHECK(b["diff_layer_hits"] == 0);
        CHECK(b["reader_blocks_visible"].get<uint64_t>() <= i);
        CHECK(b["read_digest"] == ao.blocks[i]["read_digest"]);
        if (b["reader_blocks_visible"] == ao.blocks[i]["reader_blocks_visible"])  // K > 1: the same state, the same misses
          CHECK(b["cache_misses"] == ao.blocks[i]["cache_misses"]);
        CHECK(b["device_reads"].get<uint64_t>() > 0);
        CHECK(b["regime"]["store"] == "rocksdb");
        CHECK(b["regime"]["rocksdb"]["bloom_bits_per_key"].get<int>() == 10);
        CHECK(b["regime"]["rocksdb"].contains("block_cache_bytes"));
        CHECK(ao.blocks[i]["regime"]["store"] == "arena");
      }
      CHECK(ro.summary["root"] == want_final);
      CHECK(ro.summary["regime"]["store"] == "rocksdb");
      CHECK(verified_root(rdb) == want_final);
      for (const std::string& d : {adb, rdb}) std::filesystem::remove_all(d);
    }
    for (const std::string& d : {arena0, rocks0, rocks_apply}) std::filesystem::remove_all(d);
    std::filesystem::remove(file);
  }
}

TEST_CASE("statetree run --workload: the blocks `workload --out` writes, the same roots as apply, gas per block") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("g0_") + tree), file = tmp_path(std::string("g_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    const std::string gen = " --calls 30 --txs 3 --seed 5";
    auto w = run_statetree("workload --kind erc20_approve --db " + db0 + " --blocks 3" + gen + " --out " + file + " --json");
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    const json wj = json::parse(w.out);
    const std::string db_apply = copy_db(db0, std::string("gapply_") + tree), db_run = copy_db(db0, std::string("grun_") + tree);
    auto ap = run_statetree("apply --db " + db_apply + " --blocks " + file + " --json");
    REQUIRE(ap.exit_code == 0);
    const json aj = json::parse(ap.out);
    auto r = run_statetree("run --db " + db_run + " --workload erc20_approve --block-count 3" + gen + " --inflight 2 --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const RunOut ro = parse_run(r.out);
    REQUIRE(ro.blocks.size() == 3);
    uint64_t gas = 0;
    for (size_t i = 0; i < 3; ++i) {
      CHECK(ro.blocks[i]["root"] == aj["blocks"][i]["root"]);
      CHECK(ro.blocks[i]["slots_written"] == 90);
      CHECK(ro.blocks[i]["txs"] == 3);
      CHECK(ro.blocks[i]["mgas_per_sec"].get<double>() > 0);
      gas += ro.blocks[i]["gas_used"].get<uint64_t>();
    }
    CHECK(gas == wj["gas_used"].get<uint64_t>());
    CHECK(ro.summary["gas_used"] == gas);
    CHECK(ro.summary["root"] == aj["root"]);
    // The database now holds the blocks' state, no longer the synthetic one: --workload is refused.
    auto again = run_statetree("run --db " + db_run + " --workload erc20_approve");
    CHECK(again.exit_code == 2);
    CHECK(again.err.find("synthetic state") != std::string::npos);
    for (const std::string& d : {db0, db_apply, db_run}) std::filesystem::remove_all(d);
    std::filesystem::remove(file);
  }
}

TEST_CASE("statetree run --snapshot: the regime says so, the same roots and reads as from the tree, fewer reads per slot") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("snap0_") + tree);
    REQUIRE(run_statetree(std::string("build --snapshot --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    const std::string gen = " --workload erc20_balanceof --block-count 2 --calls 40 --txs 2 --seed 7";
    RunOut out[2];
    for (bool snap : {false, true}) {
      CAPTURE(snap);
      const std::string db = copy_db(db0, std::string("snap_") + tree);
      auto r = run_statetree("run --db " + db + gen + " --reader serial --json" + (snap ? " --snapshot" : ""));
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      out[snap] = parse_run(r.out);
      REQUIRE(out[snap].blocks.size() == 2);
      CHECK(out[snap].summary["regime"]["snapshot"] == snap);
      CHECK((out[snap].summary["snapshot_index_device_reads"].get<uint64_t>() > 0) == snap);
      auto v = run_statetree("verify --json --db " + db);
      CHECK_MESSAGE(v.exit_code == 0, v.err);
      CHECK(json::parse(v.out)["snapshot"]["ok"] == true);
      auto text = run_statetree("run --db " + copy_db(db0, std::string("snapt_") + tree) + gen + (snap ? " --snapshot" : ""));
      CHECK(text.exit_code == 0);
      CHECK(text.out.find(snap ? "reads from the snapshot" : "reads from the tree") != std::string::npos);
      std::filesystem::remove_all(tmp_path(std::string("snapt_") + tree));
      std::filesystem::remove_all(db);
    }
    for (size_t i = 0; i < 2; ++i) {
      CHECK(out[1].blocks[i]["root"] == out[0].blocks[i]["root"]);
      CHECK(out[1].blocks[i]["read_digest"] == out[0].blocks[i]["read_digest"]);
      CHECK(out[1].blocks[i]["device_reads_per_slot"].get<double>() <= out[0].blocks[i]["device_reads_per_slot"].get<double>());
    }
    CHECK(out[1].summary["device_reads_per_slot"].get<double>() <= 1.0);
    std::filesystem::remove_all(db0);
  }
}

TEST_CASE("block pipeline: with two blocks in flight, block k+1 reads block k's writes through the diff layer (arena, RocksDB)") {
  // Block 0 writes a slot and a balance; block 1 reads them (and writes the slot again);
  // block 2 reads the slot. The commit of block k waits until block k+1 is traversed, so
  // block k+1's reader pins the state before block k: only the diff layer shows its writes.
  const state::SyntheticState src(small_spec());
  const state::Address c = src.address(1), eoa = src.address(10);
  const state::Hash32 s = src.slot_key(1, 5)->slot.value();
  const state::U256 pre = src.slot_value(1, 5).value();
  state::AccountRecord er;
  src.account(10, &er);
  std::vector<state::Block> blocks(3);
  {
    state::BalBuilder b;
    b.begin(1);
    b.write_slot(c, s, pre, u(0x55));
    b.set_balance(eoa, er.balance, u(777));
    b.end();
    blocks[0].bal = b.finish();
    blocks[0].header.tx_count = 1;
  }
  {
    state::BalBuilder b;
    b.begin(1);
    b.read_slot(c, s, u(0x55));
    b.touch(eoa);
    b.end();
    b.begin(2);
    b.write_slot(c, s, u(0x55), u(0x66));
    b.end();
    blocks[1].bal = b.finish();
    blocks[1].header.number = 1;
    blocks[1].header.tx_count = 2;
  }
  {
    state::BalBuilder b;
    b.begin(1);
    b.read_slot(c, s, u(0x66));
    b.set_nonce(eoa, er.nonce, er.nonce + 1);
    b.end();
    blocks[2].bal = b.finish();
    blocks[2].header.number = 2;
    blocks[2].header.tx_count = 1;
  }
  const std::pair<std::string, std::string> kinds[] = {{"mpt", "arena"}, {"bintrie", "arena"}, {"mpt", "rocksdb"}, {"bintrie", "rocksdb"}};
  for (const auto& kind : kinds) {
    const std::string &tree = kind.first, &store = kind.second;
    CAPTURE(tree);
    CAPTURE(store);
    const std::string db0 = tmp_path(std::string("ov0_") + tree);
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --store " + store + " --db " + db0).exit_code == 0);
    std::vector<pipeline::RunResult> results;
    for (uint32_t k : {1u, 2u}) {
      CAPTURE(k);
      const std::string db = copy_db(db0, std::string("ov_") + tree);
      pipeline::RunOptions o;
      o.dir = db;
      o.reader = k == 1 ? pipeline::ReaderModel::serial : pipeline::ReaderModel::bal;
      o.inflight = k;
      std::mutex mu;
      std::condition_variable cv;
      std::set<size_t> traversed;
      bool timed_out = false;
      if (k == 2) {
        o.after_traverse = [&](size_t i) {
          std::lock_guard<std::mutex> g(mu);
          traversed.insert(i);
          cv.notify_all();
        };
        o.before_commit = [&](size_t i) {
          if (i + 1 >= blocks.size()) return;
          std::unique_lock<std::mutex> g(mu);
          if (!cv.wait_for(g, std::chrono::seconds(20), [&] { return traversed.count(i + 1) > 0; })) timed_out = true;
        };
      }
      pipeline::RunResult res;
      const io::Status st = pipeline::run_blocks(o, blocks, &res);
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(!timed_out);
      REQUIRE(res.blocks.size() == 3);
      if (k == 2) {
        // Forced overlap: blocks 1 and 2 read a state one block behind, through the layer.
        CHECK(res.blocks[1].reader_blocks_visible == 0);
        CHECK(res.blocks[2].reader_blocks_visible == 1);
        // Block 1: the slot, the EOA's balance and the contract (its storage) of block 0.
        CHECK(res.blocks[1].layer_hits == 3);
        // Block 2: the slot block 1 wrote (block 0's EOA balance is on disk for its reader).
        CHECK(res.blocks[2].layer_hits == 1);
      } else {
        for (const pipeline::BlockResult& b : res.blocks) CHECK(b.layer_hits == 0);
      }
      CHECK(verified_root(db) == "0x" + workloads::bytes_to_hex(res.root.data(), 32, false));
      results.push_back(res);
      std::filesystem::remove_all(db);
    }
    for (size_t i = 0; i < 3; ++i) {
      CHECK(results[0].blocks[i].read_digest == results[1].blocks[i].read_digest);
      CHECK(results[0].blocks[i].commit_stats.root == results[1].blocks[i].commit_stats.root);
    }
    std::filesystem::remove_all(db0);
  }
}

TEST_CASE("statetree run --inflight 2: freed pages are reused while the next block's reader is open; the arena grows no more than at K = 1") {
  // At K = 2 a block's reader is always open while the previous block commits: the pages a
  // commit frees must come back once no reader can reach them, not only at a moment without
  // readers (which never comes while blocks overlap).
  for (const std::string tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path("grow0_" + tree);
    REQUIRE(run_statetree("build --tree " + tree + " --accounts 300 --contracts 1 --slots-per-contract 20000 --seed 3 --db " + db0)
                .exit_code == 0);
    std::vector<json> last;
    uint64_t most_written = 0;
    for (const char* k : {"1", "2"}) {
      const std::string db = copy_db(db0, "grow_" + tree + k);
      auto r = run_statetree("run --db " + db + " --workload mixed_sload_sstore --block-count 24 --loads 60 --stores 40"
                             " --txs 1 --seed 9 --reader bal --inflight " + k + " --json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const RunOut ro = parse_run(r.out);
      REQUIRE(ro.blocks.size() == 24);
      for (const json& b : ro.blocks) most_written = std::max(most_written, b["commit"]["pages_written"].get<uint64_t>());
      last.push_back(ro.blocks.back());
      std::filesystem::remove_all(db);
    }
    CHECK(last[1]["root"] == last[0]["root"]);
    const uint64_t k1 = last[0]["commit"]["disk_bytes"], k2 = last[1]["commit"]["disk_bytes"];
    CAPTURE(k1);
    CAPTURE(k2);
    CAPTURE(most_written);
    // Two blocks' pages of slack (the states the open readers hold), not 24 blocks' worth.
    CHECK(k2 <= k1 + 3 * most_written * 4096);
    std::filesystem::remove_all(db0);
  }
}

TEST_CASE("cold tail: sums over sums by transaction count and by transaction index (1..n only)") {
  std::vector<pipeline::BlockResult> b(3);
  auto set = [](pipeline::BlockResult& r, uint32_t txs, uint64_t read_ms, uint64_t misses, uint64_t slots, uint64_t reads) {
    r.tx_count = txs;
    r.prefetch.start_ns = 0, r.prefetch.end_ns = read_ms * 500000;
    r.traverse.start_ns = 10, r.traverse.end_ns = 10 + read_ms * 500000;
    r.misses = misses, r.slots_read = slots, r.prefetch_page_reads = reads;
    for (uint32_t i = 0; i <= txs + 1; ++i) r.txs.push_back({i, 2, 1, 3, 0, 1000000});
  };
  set(b[0], 1, 4, 2, 4, 8);
  set(b[1], 3, 10, 10, 5, 5);
  set(b[2], 1, 2, 2, 4, 0);
  const auto c = pipeline::cold_tail_by_tx_count(b);
  REQUIRE(c.size() == 2);
  CHECK(c[0].key == 1);
  CHECK(c[0].count == 2);
  CHECK(c[0].misses == 4);
  CHECK(c[0].ms_per_miss() == doctest::Approx(6.0 / 4));
  CHECK(c[0].ms_per_slot() == doctest::Approx(6.0 / 8));
  CHECK(c[0].ms_per_device_read() == doctest::Approx(6.0 / 8));
  CHECK(c[1].key == 3);
  CHECK(c[1].ms_per_miss() == doctest::Approx(1.0));
  const auto x = pipeline::cold_tail_by_tx_index(b);
  REQUIRE(x.size() == 3);  // indices 1, 2, 3 (0 and n+1 left out)
  CHECK(x[0].key == 1);
  CHECK(x[0].count == 3);
  CHECK(x[0].misses == 3);
  CHECK(x[0].ms_per_miss() == doctest::Approx(1.0));
  CHECK(x[2].key == 3);
  CHECK(x[2].count == 1);
}

TEST_CASE("diff layer: the latest write of the blocks in the range, fields merged, dropped blocks gone") {
  pipeline::DiffLayer l;
  state::Address a{};
  a[0] = 1;
  const state::Hash32 s = u(9);
  state::StateDiff d0, d2;
  d0.accounts.push_back({});
  d0.accounts[0].address = a;
  d0.accounts[0].balance = u(5);
  d0.accounts[0].storage_writes.push_back({s, u(1)});
  d2.accounts.push_back({});
  d2.accounts[0].address = a;
  d2.accounts[0].nonce = 3;
  d2.accounts[0].storage_writes.push_back({s, u(2)});
  l.add(0, d0);
  l.add(2, d2);
  CHECK(l.slot(a, s, 0, 1) == u(1));
  CHECK(l.slot(a, s, 0, 2) == u(1));
  CHECK(l.slot(a, s, 0, 3) == u(2));
  CHECK(!l.slot(a, s, 1, 2));
  CHECK(!l.slot(a, u(8), 0, 3));
  auto f = l.account(a, 0, 3);
  REQUIRE(f);
  CHECK(f->balance == u(5));
  CHECK(f->nonce == 3u);
  CHECK(!l.account(a, 1, 2));
  CHECK(l.entries() == 4);
  l.drop_before(1);
  CHECK(l.entries() == 2);
  CHECK(!l.slot(a, s, 0, 1));
  CHECK(l.slot(a, s, 1, 3) == u(2));
  l.drop_before(3);
  CHECK(l.entries() == 0);
}

// The cells of one CSV line (no quoting: `run --csv` writes none).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> v;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) v.push_back(cell);
  if (!line.empty() && line.back() == ',') v.push_back("");
  return v;
}

TEST_CASE("statetree run --csv: the JSON block objects' columns, one row per block, the same roots and counts; the summary line") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("csv0_") + tree), file = tmp_path(std::string("csv_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 3 --seed 5 --out " + file).exit_code == 0);
    const std::string dj = copy_db(db0, std::string("csvj_") + tree), dc = copy_db(db0, std::string("csvc_") + tree);
    auto j = run_statetree("run --db " + dj + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(j.exit_code == 0, j.err);
    auto c = run_statetree("run --db " + dc + " --blocks " + file + " --csv");
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    const RunOut ro = parse_run(j.out);
    REQUIRE(ro.blocks.size() == 3);
    std::vector<std::string> lines;
    {
      std::istringstream in(c.out);
      std::string l;
      while (std::getline(in, l)) lines.push_back(l);
    }
    REQUIRE(lines.size() == 1 + 3 + 1);
    // The header: the block object's fields (nested as stage.field), without per_tx and regime.
    std::vector<std::string> want_header;
    for (auto it = ro.blocks[0].begin(); it != ro.blocks[0].end(); ++it) {
      if (it.key() == "per_tx" || it.key() == "regime") continue;
      if (it->is_object())
        for (auto f = it->begin(); f != it->end(); ++f) want_header.push_back(it.key() + "." + f.key());
      else want_header.push_back(it.key());
    }
    const std::vector<std::string> header = csv_cells(lines[0]);
    CHECK(header == want_header);
    for (size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      const std::vector<std::string> row = csv_cells(lines[1 + i]);
      REQUIRE(row.size() == header.size());
      std::map<std::string, std::string> cell;
      for (size_t k = 0; k < row.size(); ++k) cell[header[k]] = row[k];
      const json& b = ro.blocks[i];
      CHECK(cell["type"] == "block");
      CHECK(cell["root"] == b["root"].get<std::string>());
      CHECK(cell["read_digest"] == b["read_digest"].get<std::string>());
      for (const char* n : {"index", "number", "txs", "gas_used", "accounts", "slots_read", "slots_written", "accesses",
                            "cache_hits", "cache_misses", "diff_layer_hits", "reader_blocks_visible"})
        CHECK_MESSAGE(cell[n] == b[n].dump(), n);
      CHECK(cell["prefetch.keys"] == b["prefetch"]["keys"].dump());
      CHECK(cell["commit.records_written"] == b["commit"]["records_written"].dump());
    }
    REQUIRE(lines.back().rfind("# ", 0) == 0);
    const json sum = json::parse(lines.back().substr(2));
    CHECK(sum["type"] == "summary");
    CHECK(sum["root"] == ro.summary["root"]);
    CHECK(sum["blocks"] == 3);
    CHECK(sum["slots_read"] == ro.summary["slots_read"]);
    CHECK(verified_root(dc) == ro.summary["root"].get<std::string>());
    for (const std::string& p : {db0, dj, dc}) std::filesystem::remove_all(p);
    std::filesystem::remove(file);
  }
}

TEST_CASE("statetree run --cold: the page cache dropped before the run, the protocol in the regime, the same roots") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("cold0_") + tree), file = tmp_path(std::string("cold_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 3 --seed 6 --out " + file).exit_code == 0);
    const std::string dw = copy_db(db0, std::string("coldw_") + tree), dc = copy_db(db0, std::string("coldc_") + tree);
    auto w = run_statetree("run --db " + dw + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    auto c = run_statetree("run --db " + dc + " --blocks " + file + " --cold --json");
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    const RunOut rw = parse_run(w.out), rc = parse_run(c.out);
    REQUIRE(rw.blocks.size() == 3);
    REQUIRE(rc.blocks.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(rc.blocks[i]["root"] == rw.blocks[i]["root"]);
      CHECK(rc.blocks[i]["read_digest"] == rw.blocks[i]["read_digest"]);
    }
    CHECK(rc.summary["root"] == rw.summary["root"]);
    const json& pc = rc.summary["regime"]["page_cache"];
    CHECK(pc["dropped"] == true);
    const std::string protocol = pc["protocol"].get<std::string>();
    CHECK((protocol == "drop_caches" || protocol == "fadvise_dontneed"));
    if (protocol == "fadvise_dontneed") CHECK(!pc["detail"].get<std::string>().empty());  // why not drop_caches
    CHECK(rc.blocks[0]["regime"]["page_cache"] == pc);
    CHECK(rw.summary["regime"]["page_cache"]["dropped"] == false);
    auto t = run_statetree("run --db " + copy_db(db0, std::string("coldt_") + tree) + " --blocks " + file + " --cold");
    REQUIRE_MESSAGE(t.exit_code == 0, t.err);
    CHECK(t.out.find("page cache dropped before the run: " + protocol) != std::string::npos);
    for (const std::string& p : {db0, dw, dc, tmp_path(std::string("coldt_") + tree)}) std::filesystem::remove_all(p);
    std::filesystem::remove(file);
  }
}

TEST_CASE("block pipeline: each stage's body runs on its stage's CPUs, and the caller's affinity is given back") {
  const std::vector<int> all = pipeline::current_thread_cpus();
  REQUIRE(!all.empty());
  const int a = all.front(), b = all.back();  // two CPUs where the machine has them
  const std::string db0 = tmp_path("pin0"), file = tmp_path("pin.bal");
  REQUIRE(run_statetree(std::string("build --tree mpt") + kStateOpts + " --db " + db0).exit_code == 0);
  REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 3 --seed 7 --out " + file).exit_code == 0);
  std::vector<state::Block> blocks;
  REQUIRE(!workloads::read_block_file(file, &blocks));
  const std::string db_free = copy_db(db0, "pin_free"), db_pinned = copy_db(db0, "pin_pinned");
  pipeline::RunResult free_res, pinned_res;
  {
    pipeline::RunOptions o;
    o.dir = db_free;
    REQUIRE(pipeline::run_blocks(o, blocks, &free_res).ok());
  }
  for (pipeline::ReaderModel reader : {pipeline::ReaderModel::bal, pipeline::ReaderModel::geth}) {
    CAPTURE(pipeline::reader_model_name(reader));
    const std::string db = copy_db(db0, "pin_loop");
    pipeline::RunOptions o;
    o.dir = db;
    o.reader = reader;
    o.geth_workers = 2;
    o.inflight = 2;
    o.stage_cpus.prefetch = {b};
    o.stage_cpus.traverse = {a};
    o.stage_cpus.commit = {b};
    std::mutex mu;
    std::vector<std::string> wrong;
    auto expect = [&](const char* stage, size_t i, int cpu) {
      if (pipeline::current_thread_cpus() != std::vector<int>{cpu}) {
        std::lock_guard<std::mutex> g(mu);
        wrong.push_back(std::string(stage) + " of block " + std::to_string(i));
      }
    };
    o.after_prefetch = [&](size_t i) { expect("prefetch", i, b); };
    o.after_traverse = [&](size_t i) { expect("traverse", i, a); };
    o.before_commit = [&](size_t i) { expect("commit", i, b); };
    size_t seen = 0;
    const io::Status st = pipeline::run_blocks(o, blocks, &pinned_res, [&](const pipeline::BlockResult&) {
      expect("commit", seen++, b);
    });
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(seen == 3);
    CHECK_MESSAGE(wrong.empty(), (wrong.empty() ? std::string() : wrong.front()));
    CHECK(pipeline::current_thread_cpus() == all);  // the caller's affinity is back
    REQUIRE(pinned_res.blocks.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(pinned_res.blocks[i].commit_stats.root == free_res.blocks[i].commit_stats.root);
      CHECK(pinned_res.blocks[i].read_digest == free_res.blocks[i].read_digest);
    }
    std::filesystem::remove_all(db);
  }
  // A CPU this process may not run on: refused before anything is read.
  {
    pipeline::RunOptions o;
    o.dir = db_pinned;
    o.stage_cpus.traverse = {all.back() + 1000};
    pipeline::RunResult r;
    const io::Status st = pipeline::run_blocks(o, blocks, &r);
    CHECK(st.code() == io::Errc::bad_argument);
    CHECK(r.blocks.empty());
    CHECK(verified_root(db_pinned) == verified_root(db0));
  }
  for (const std::string& p : {db0, db_free, db_pinned}) std::filesystem::remove_all(p);
  std::filesystem::remove(file);
}

TEST_CASE("statetree run --pin: the same roots as an unpinned run, the pins in the regime") {
  const std::vector<int> all = pipeline::current_thread_cpus();
  REQUIRE(!all.empty());
  const std::string a = std::to_string(all.front()), b = std::to_string(all.back());
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("cpin0_") + tree), file = tmp_path(std::string("cpin_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 3 --seed 8 --out " + file).exit_code == 0);
    const std::string dw = copy_db(db0, std::string("cpinw_") + tree), dp = copy_db(db0, std::string("cpinp_") + tree);
    auto w = run_statetree("run --db " + dw + " --blocks " + file + " --json");
    REQUIRE_MESSAGE(w.exit_code == 0, w.err);
    auto p = run_statetree("run --db " + dp + " --blocks " + file + " --reader geth --workers 2 --inflight 2 --pin prefetch=" + b +
                           ",traverse=" + a + ",commit=" + b + " --json");
    REQUIRE_MESSAGE(p.exit_code == 0, p.err);
    const RunOut rw = parse_run(w.out), rp = parse_run(p.out);
    REQUIRE(rw.blocks.size() == 3);
    REQUIRE(rp.blocks.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(rp.blocks[i]["root"] == rw.blocks[i]["root"]);
      CHECK(rp.blocks[i]["read_digest"] == rw.blocks[i]["read_digest"]);
    }
    CHECK(rp.summary["regime"]["pin"] == json{{"prefetch", all.back()}, {"traverse", all.front()}, {"commit", all.back()}});
    CHECK(rw.summary["regime"]["pin"] == json::object());
    CHECK(verified_root(dp) == rw.summary["root"].get<std::string>());
    for (const std::string& d : {db0, dw, dp}) std::filesystem::remove_all(d);
    std::filesystem::remove(file);
  }
}

TEST_CASE("statetree run: --help; bad input is one line on stderr, exit 2, and the database is unchanged") {
  auto h = run_statetree("run --help");
  CHECK(h.exit_code == 0);
  for (const char* o : {"--reader", "--qd", "--inflight", "--workload", "--blocks", "--json", "--csv", "--cold", "--pin", "--snapshot"}) CHECK(h.out.find(o) != std::string::npos);
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const bool bt = std::string(tree) == "bintrie";
    const std::string db = tmp_path(std::string("bad_") + tree), file = tmp_path(std::string("bad_") + tree + ".bal"),
                      other = tmp_path(std::string("other_") + tree + ".bal");
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db).exit_code == 0);
    const std::string root0 = verified_root(db);
    REQUIRE(run_statetree("workload --kind erc20_approve --calls 5 --txs 1 --db " + db + " --out " + file).exit_code == 0);
    REQUIRE(run_statetree(std::string("workload --kind erc20_balanceof --calls 3 --txs 1 --accounts 300 --contracts 4 "
                                      "--slots-per-contract 400 --state-seed 3 --tree ") +
                          (bt ? "mpt" : "bintrie") + " --out " + other)
                .exit_code == 0);
    // A block writing storage of an account that does not exist (a bare BAL).
    const std::string mfile = tmp_path(std::string("missing_") + tree + ".bal");
    {
      state::BlockAccessList bal;
      bal.accounts.resize(1);
      bal.accounts[0].address[0] = 0xde;
      bal.accounts[0].storage_changes.push_back({u(1), {{1, u(2)}}});
      const std::vector<uint8_t> bytes = state::encode_bal(bal);
      std::ofstream(mfile, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
    // A database whose first block already went in (for the stale root).
    const std::string db_done = copy_db(db, std::string("done_") + tree);
    REQUIRE(run_statetree("run --db " + db_done + " --blocks " + file).exit_code == 0);
    struct Bad {
      std::string args, want, dir;
    };
    const std::string d = " --db " + db;
    const std::vector<Bad> bad = {
        {"run --blocks " + file, "--db", db},
        {"run" + d, "exactly one of --blocks FILE and --workload K", db},
        {"run" + d + " --blocks " + file + " --workload erc20_approve", "exactly one of", db},
        {"run" + d + " --blocks " + file + " --calls 3", "--calls applies to --workload only", db},
        {"run" + d + " --blocks " + file + " --reader nope", "--reader must be serial, bal or geth", db},
        {"run" + d + " --blocks " + file + " --workers 2", "--workers applies to --reader geth only", db},
        {"run" + d + " --blocks " + file + " --inflight 0", "--inflight", db},
        {"run" + d + " --blocks " + file + " --inflight 17", "--inflight", db},
        {"run" + d + " --blocks " + file + " --qd 0", "--qd", db},
        {"run" + d + " --blocks " + file + " --snapshot", "has no flat snapshot", db},
        {"run" + d + " --blocks " + file + " --json --csv", "at most one of --json and --csv", db},
        {"run" + d + " --blocks " + file + " --pin prefetch", "--pin takes STAGE=CPU", db},
        {"run" + d + " --blocks " + file + " --pin publish=0", "unknown stage 'publish'", db},
        {"run" + d + " --blocks " + file + " --pin commit=x", "bad CPU", db},
        {"run" + d + " --blocks " + file + " --pin commit=-1", "bad CPU", db},
        {"run" + d + " --blocks " + file + " --pin commit=0,", "--pin takes STAGE=CPU", db},
        {"run" + d + " --blocks " + file + " --pin commit=0,commit=0", "--pin names commit twice", db},
        {"run" + d + " --blocks " + file + " --pin traverse=100000", "is not one this process may run on", db},
        {"run" + d + " --workload erc20_nothing", "unknown --workload", db},
        {"run" + d + " --workload mixed_sload_sstore --calls 3", "--loads / --stores", db},
        {"run" + d + " --blocks " + other, "was written for the", db},
        {"run" + d + " --blocks " + mfile, "storage written to an account that does not exist", db},
        {"run" + d + " --blocks " + db + "/MANIFEST", "byte offset", db},
        {"run" + d + " --blocks " + tmp_path("none.bal"), "", db},
        {"run --db " + tmp_path("no_db") + " --blocks " + file, "", db},
        {"run --db " + db_done + " --blocks " + file, "is not the state's root", db_done},
    };
    const std::string root_done = verified_root(db_done);
    for (const Bad& b : bad) {
      CAPTURE(b.args);
      auto r = run_statetree(b.args);
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.rfind("statetree run: ", 0) == 0);
      CHECK(r.err.find(b.want) != std::string::npos);
      CHECK(r.out.empty());
      CHECK(verified_root(b.dir) == (b.dir == db ? root0 : root_done));
    }
    for (const std::string& p : {db, db_done}) std::filesystem::remove_all(p);
    for (const std::string& p : {file, other, mfile}) std::filesystem::remove(p);
  }
}
