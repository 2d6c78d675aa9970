// cli_run_metrics_test: what `statetree run` measures beyond the slow-block columns, on both
// trees: the device read latencies (one sample per device read: the state read's count equals
// its device reads, the commit's its pages read; percentiles ordered), each stage's busy time
// and the overlap (<= 1 with one block in flight; > 1 when a test forces block k+1's prefetch
// to span block k's traverse and commit); --reps (every repetition on a fresh copy: the same
// roots and read digests, the source database unchanged, the scratch directory left empty;
// bad values are one line on stderr, exit 2); the copy refuses a database another writer holds;
// --raw-loop's ratios and the ceiling on any --inflight, each from the summary's own figures.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/pipeline/block_run.h"
#include "engine/pipeline/rep_copy.h"
#include "engine/pipeline/run_metrics.h"
#include "io/db_lock.h"
#include "reference/run_command.h"
#include "workloads/block_file.h"
#include "tests/workloads/run_json.h"

using namespace st;
using nlohmann::json;
using st::test::parse_run;
using st::test::RunOut;
using st::reference::run_statetree;

namespace {

std::string tmp_path(const std::string& name) {
  const std::string d = "/tmp/statetree_runm_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  return d;
}

const std::string kStateOpts = " --accounts 300 --contracts 4 --slots-per-contract 400 --seed 3";


std::string verified_root(const std::string& db) {
  auto v = run_statetree("verify --db " + db + " --json");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  return json::parse(v.out)["root"].get<std::string>();
}

void check_latency(const json& l, uint64_t want_count) {
  CHECK(l["count"].get<uint64_t>() == want_count);
  const double p50 = l["p50"], p90 = l["p90"], p99 = l["p99"], mx = l["max"];
  CHECK(p50 <= p90);
  CHECK(p90 <= p99);
  CHECK(p99 <= mx);
  if (want_count > 0) CHECK(mx > 0);
}

}  // namespace

TEST_CASE("statetree run: one latency sample per device read, busy time per stage, overlap <= 1 with --inflight 1") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db0 = tmp_path(std::string("lat0_") + tree);
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db0).exit_code == 0);
    for (const char* regime : {"--reader bal --qd 8", "--reader serial", "--reader geth --workers 2"}) {
      CAPTURE(regime);
      const std::string db = tmp_path(std::string("lat_") + tree);
      std::filesystem::copy(db0, db, std::filesystem::copy_options::recursive);
      // --no-page-reuse: the commit reads its dirty paths itself, so its latencies are sampled.
      auto r = run_statetree("run --db " + db + " --workload mainnet_like --block-count 3 --seed 5 " + regime +
                             " --inflight 1 --no-page-reuse --json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const RunOut ro = parse_run(r.out);
      REQUIRE(ro.blocks.size() == 3);
      uint64_t reads = 0, commit_reads = 0;
      for (const json& b : ro.blocks) {
        CHECK(b["rep"] == 0);
        const uint64_t dr = b["device_reads"].get<uint64_t>();
        CHECK(dr > 0);
        check_latency(b["device_read_latency_us"], dr);
        const uint64_t cr = b["commit"]["device_reads"].get<uint64_t>();
        CHECK(cr > 0);
        check_latency(b["commit_device_read_latency_us"], cr);
        reads += dr, commit_reads += cr;
        for (const char* stage : {"prefetch", "traverse", "commit"}) {
          CAPTURE(stage);
          CHECK(b[stage]["busy_ms"].get<double>() >= 0);
        }
        CHECK(b["commit"]["busy_ms"].get<double>() > 0);  // a commit always computes a root
        CHECK(b["geth"]["workers_busy_ms"].get<double>() >= 0);
        // One block at a time: its stages run one after another within its wall.
        CHECK(b["overlap"].get<double>() > 0);
        CHECK(b["overlap"].get<double>() <= 1.0 + 1e-9);
      }
      const json& s = ro.summary;
      check_latency(s["device_read_latency_us"]["state_read"], reads);
      check_latency(s["device_read_latency_us"]["commit"], commit_reads);
      CHECK(s["device_reads"].get<uint64_t>() == reads);
      CHECK(s["overlap"].get<double>() > 0);
      CHECK(s["overlap"].get<double>() <= 1.0 + 1e-9);
      CHECK(s["busy_ms"]["commit"].get<double>() > 0);
      if (std::string(regime).find("geth") == std::string::npos) CHECK(s["busy_ms"]["geth_workers"] == 0.0);
      std::filesystem::remove_all(db);
    }
    // The table's columns and the summary lines.
    const std::string db = tmp_path(std::string("lat_table_") + tree);
    std::filesystem::copy(db0, db, std::filesystem::copy_options::recursive);
    auto t = run_statetree("run --db " + db + " --workload mainnet_like --block-count 2 --seed 5");
    REQUIRE_MESSAGE(t.exit_code == 0, t.err);
    for (const char* col : {"rd.p99us", "c.p99us", "overlap", "device read latency, state read: p50",
                            "device read latency, commit: p50", "busy (thread CPU): prefetch"})
      CHECK(t.out.find(col) != std::string::npos);
    for (const std::string& d : {db0, db}) std::filesystem::remove_all(d);
  }
}

TEST_CASE("block pipeline: the run's overlap exceeds 1 when block k+1's prefetch spans block k's traverse and commit") {
  const std::string db0 = tmp_path("ovl0"), file = tmp_path("ovl.bal");
  REQUIRE(run_statetree("build --tree mpt" + kStateOpts + " --db " + db0).exit_code == 0);
  REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 4 --seed 6 --out " + file).exit_code == 0);
  std::vector<state::Block> blocks;
  REQUIRE(!workloads::read_block_file(file, &blocks));
  std::vector<pipeline::RunResult> results;
  for (uint32_t k : {1u, 2u}) {
    CAPTURE(k);
    const std::string db = tmp_path("ovl");
    std::filesystem::copy(db0, db, std::filesystem::copy_options::recursive);
    pipeline::RunOptions o;
    o.dir = db;
    o.inflight = k;
    std::mutex mu;
    std::condition_variable cv;
    std::set<size_t> committed;
    bool timed_out = false;
    if (k == 2)  // block i's prefetch (inside its wall) waits until block i - 1 is committed
      o.during_prefetch = [&](size_t i) {
        if (i == 0) return;
        std::unique_lock<std::mutex> g(mu);
        if (!cv.wait_for(g, std::chrono::seconds(20), [&] { return committed.count(i - 1) > 0; })) timed_out = true;
      };
    pipeline::RunResult res;
    const io::Status st = pipeline::run_blocks(o, blocks, &res, [&](const pipeline::BlockResult& b) {
      std::lock_guard<std::mutex> g(mu);
      committed.insert(b.index);
      cv.notify_all();
    });
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(!timed_out);
    REQUIRE(res.blocks.size() == blocks.size());
    const double overlap = pipeline::run_overlap(res.blocks, res.wall_ns);
    if (k == 1) {
      CHECK(overlap > 0);
      CHECK(overlap <= 1.0 + 1e-9);
    } else {
      CHECK(overlap > 1.0);
    }
    // The latency histograms hold one sample per device read, per block and over the run.
    uint64_t reads = 0, commit_reads = 0;
    for (const pipeline::BlockResult& b : res.blocks) {
      const uint64_t dr = b.prefetch_page_reads + b.traverse_page_reads + b.ahead_page_reads;
      CHECK(b.state_read_latency_us.count == dr);
      CHECK(b.commit_read_latency_us.count == b.commit_stats.pages_read);
      CHECK(b.commit.busy_ns > 0);
      reads += dr, commit_reads += b.commit_stats.pages_read;
    }
    CHECK(res.state_read_latency_ns.count() == reads);
    CHECK(res.commit_read_latency_ns.count() == commit_reads);
    results.push_back(res);
    std::filesystem::remove_all(db);
  }
  for (size_t i = 0; i < blocks.size(); ++i) CHECK(results[0].blocks[i].commit_stats.root == results[1].blocks[i].commit_stats.root);
  std::filesystem::remove_all(db0);
  std::filesystem::remove(file);
}

TEST_CASE("statetree run --reps: each repetition on a fresh copy, the same roots and reads, the source unchanged") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string db = tmp_path(std::string("reps_") + tree), scratch = tmp_path(std::string("scratch_") + tree);
    REQUIRE(run_statetree(std::string("build --tree ") + tree + kStateOpts + " --db " + db).exit_code == 0);
    const std::string root0 = verified_root(db);
    auto r = run_statetree("run --db " + db + " --workload mainnet_like --block-count 3 --seed 7 --reps 2 --scratch " +
                           scratch + " --inflight 2 --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const RunOut ro = parse_run(r.out);
    REQUIRE(ro.blocks.size() == 6);
    for (size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      const json &a = ro.blocks[i], &b = ro.blocks[3 + i];
      CHECK(a["rep"] == 0);
      CHECK(b["rep"] == 1);
      CHECK(a["index"] == i);
      CHECK(b["index"] == i);
      CHECK(a["root"] == b["root"]);
      CHECK(a["read_digest"] == b["read_digest"]);
      CHECK(a["slots_read"] == b["slots_read"]);
    }
    CHECK(ro.blocks[0]["root"] != root0);
    // The source database is never written; every copy is gone.
    CHECK(verified_root(db) == root0);
    CHECK(std::filesystem::is_directory(scratch));
    CHECK(std::filesystem::is_empty(scratch));
    // The summary: over both repetitions, with the median and spread of each figure.
    const json& s = ro.summary;
    CHECK(s["blocks"] == 6);
    CHECK(s["root"] == ro.blocks[5]["root"]);
    CHECK(s["reps"]["count"] == 2);
    CHECK(s["reps"]["roots_identical"] == true);
    CHECK(s["reps"]["read_digests_identical"] == true);
    // Blocks per second over both repetitions: all 6 blocks over the summed wall time.
    CHECK(s["blocks_per_sec"].get<double>() ==
          doctest::Approx(6.0 / (s["wall_ms"].get<double>() * 1e-3)).epsilon(1e-9));
    // In the steady state: per repetition, the blocks after the first over the time from the
    // first block's commit end to the last one's (each repetition's stamps from its own start).
    double steady_blocks = 0, steady_ms = 0;
    for (size_t rep = 0; rep < 2; ++rep) {
      auto commit_end = [&](size_t i) {
        const json& c = ro.blocks[rep * 3 + i]["commit"];
        return c["start_ms"].get<double>() + c["wall_ms"].get<double>();
      };
      REQUIRE(commit_end(2) > commit_end(0));
      steady_blocks += 2, steady_ms += commit_end(2) - commit_end(0);
      const double rate = 2.0 / ((commit_end(2) - commit_end(0)) * 1e-3);
      const json& x = s["reps"]["figures"]["steady_blocks_per_sec"];
      CHECK((rate == doctest::Approx(x["min"].get<double>()).epsilon(1e-6) ||
             rate == doctest::Approx(x["max"].get<double>()).epsilon(1e-6)));
    }
    CHECK(s["steady_blocks_per_sec"].get<double>() == doctest::Approx(steady_blocks / (steady_ms * 1e-3)).epsilon(1e-6));
    for (const char* f : {"total_ms", "state_read_ms", "state_hash_ms", "commit_ms", "ms_per_slot_read", "ms_per_miss",
                          "blocks_per_sec", "steady_blocks_per_sec"}) {
      CAPTURE(f);
      const json& x = s["reps"]["figures"][f];
      REQUIRE(x["samples"].size() == 2);
      CHECK(x["min"].get<double>() <= x["median"].get<double>());
      CHECK(x["median"].get<double>() <= x["max"].get<double>());
      CHECK(x["min"].get<double>() > 0);
    }
    // The same copy and blocks as one plain run on a copy: the same roots.
    const std::string plain = tmp_path(std::string("plain_") + tree);
    std::filesystem::copy(db, plain, std::filesystem::copy_options::recursive);
    auto p = run_statetree("run --db " + plain + " --workload mainnet_like --block-count 3 --seed 7 --json");
    REQUIRE_MESSAGE(p.exit_code == 0, p.err);
    const RunOut po = parse_run(p.out);
    REQUIRE(po.blocks.size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(po.blocks[i]["root"] == ro.blocks[i]["root"]);
    // --csv: one header for all repetitions, a row per block of each.
    std::filesystem::remove_all(scratch);
    auto c = run_statetree("run --db " + db + " --workload mainnet_like --block-count 3 --seed 7 --reps 2 --scratch " +
                           scratch + " --csv");
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    std::istringstream in(c.out);
    std::string line;
    size_t headers = 0, rows = 0, summaries = 0;
    while (std::getline(in, line)) {
      if (line.find(",rep,") != std::string::npos && line.rfind("accesses,", 0) == 0) ++headers;  // the keys, sorted
      else if (line.rfind("# ", 0) == 0) ++summaries;
      else ++rows;
    }
    CHECK(headers == 1);
    CHECK(rows == 6);
    CHECK(summaries == 1);
    CHECK(verified_root(db) == root0);
    for (const std::string& d : {db, scratch, plain}) std::filesystem::remove_all(d);
  }
}

TEST_CASE("statetree run --reps: bad values are one line on stderr, exit 2, nothing written") {
  auto h = run_statetree("run --help");
  CHECK(h.exit_code == 0);
  for (const char* o : {"--reps", "--scratch", "never written"}) CHECK(h.out.find(o) != std::string::npos);
  const std::string db = tmp_path("repsbad"), full = tmp_path("repsbad_full"), afile = tmp_path("repsbad_file");
  REQUIRE(run_statetree("build --tree mpt" + kStateOpts + " --db " + db).exit_code == 0);
  const std::string root0 = verified_root(db);
  std::filesystem::create_directories(full);
  std::ofstream(full + "/x") << "keep";
  std::ofstream(afile) << "a file";
  const std::string w = "run --db " + db + " --workload erc20_approve --calls 3 --txs 1";
  struct Bad {
    std::string args, want;
  };
  for (const Bad& b : std::vector<Bad>{{w + " --reps 0", "--reps"},
                                       {w + " --reps 2", "--reps 2 needs --scratch DIR"},
                                       {w + " --reps 2 --scratch " + full, "is not empty"},
                                       {w + " --reps 1 --scratch " + full, "is not empty"},
                                       {w + " --reps 2 --scratch " + afile, "is not a directory"},
                                       {w + " --reps 2 --scratch " + db + "/scr", "inside the database directory"},
                                       {w + " --reps x --scratch " + full, "--reps"}}) {
    CAPTURE(b.args);
    auto r = run_statetree(b.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(b.want) != std::string::npos);
  }
  CHECK(verified_root(db) == root0);
  CHECK(!std::filesystem::exists(db + "/scr"));
  {
    std::ifstream in(full + "/x");
    std::string s;
    in >> s;
    CHECK(s == "keep");
  }
  for (const std::string& d : {db, full, afile}) std::filesystem::remove_all(d);
}

TEST_CASE("copy_database: every file but the lock files; refused while another writer holds the database") {
  const std::string db = tmp_path("copy_src"), to = tmp_path("copy_dst"), to2 = tmp_path("copy_dst2");
  REQUIRE(run_statetree("build --tree bintrie" + kStateOpts + " --db " + db).exit_code == 0);
  const std::string root0 = verified_root(db);
  REQUIRE(pipeline::copy_database(db, to).ok());
  CHECK(verified_root(to) == root0);
  for (const auto& e : std::filesystem::directory_iterator(db)) {
    const std::string name = e.path().filename().string();
    if (name == io::kLockFileName || name == io::kReadersFileName) continue;
    CAPTURE(name);
    CHECK(std::filesystem::exists(to + "/" + name));
  }
  // An existing destination is refused (nothing of it overwritten).
  CHECK(!pipeline::copy_database(db, to).ok());
  // A destination inside the database is refused (it would copy itself).
  CHECK(pipeline::copy_database(db, db + "/scratch/rep-0").code() == io::Errc::bad_argument);
  CHECK(!std::filesystem::exists(db + "/scratch"));
  {
    std::unique_ptr<io::WriterLock> lock;
    REQUIRE(io::WriterLock::acquire(db, &lock).ok());
    const io::Status s = pipeline::copy_database(db, to2);
    CHECK(s.code() == io::Errc::locked);
    CHECK(!std::filesystem::exists(to2));
  }
  CHECK(pipeline::prepare_scratch(to2, db).ok());  // absent: created
  CHECK(std::filesystem::is_directory(to2));
  CHECK(pipeline::prepare_scratch(to2, db).ok());  // empty: fine
  CHECK(pipeline::prepare_scratch(to, db).code() == io::Errc::bad_argument);  // not empty
  CHECK(pipeline::prepare_scratch(db + "/scratch", db).code() == io::Errc::bad_argument);  // inside the database
  CHECK(!std::filesystem::exists(db + "/scratch"));
  for (const std::string& d : {db, to, to2}) std::filesystem::remove_all(d);
}

// The summary's ceiling from its own figures: the device's bound from the raw loop's us per
// read (raw_us 0: not measured, null), the CPU's from the process's CPU time over its CPUs,
// which is at least the stages' own thread CPU time.
namespace {
void check_ceiling(const RunOut& ro, double raw_us) {
  const json& s = ro.summary;
  const json& c = s["ceiling"];
  REQUIRE(c.is_object());
  const double blocks = double(s["blocks"].get<uint64_t>());
  const uint32_t cpus = c["cpus"].get<uint32_t>();
  CHECK(cpus >= 1);
  const double cpu = c["cpu_ms_per_block"].get<double>();
  double stages_ms = 0;
  for (auto it = s["busy_ms"].begin(); it != s["busy_ms"].end(); ++it) stages_ms += it->get<double>();
  CHECK(stages_ms > 0);
  CHECK(cpu * blocks >= stages_ms * 0.999);
  CHECK(c["cpu_bound_ms"].get<double>() == doctest::Approx(cpu / cpus));
  double period = cpu / cpus;
  if (raw_us > 0) {
    const double device = double(s["device_reads"].get<uint64_t>()) / blocks * raw_us * 1e-3;
    CHECK(c["device_ms_per_block"].get<double>() == doctest::Approx(device));
    period = std::max(period, device);
    CHECK(c["bound_by"] == (device >= cpu / cpus ? "device" : "cpu"));
  } else {
    CHECK(c["device_ms_per_block"].is_null());
    CHECK(c["bound_by"] == "cpu");
  }
  CHECK(c["blocks_per_sec"].get<double>() == doctest::Approx(1e3 / period));
  CHECK(c["reached"].get<double>() == doctest::Approx(s["blocks_per_sec"].get<double>() / (1e3 / period)));
}
}  // namespace

TEST_CASE("statetree run --raw-loop: the raw loop's cost per read beside the blocks', the ratios from the summary's own figures; RocksDB refused") {
  const std::string db0 = tmp_path("raw0");
  REQUIRE(run_statetree(std::string("build --tree mpt") + kStateOpts + " --db " + db0).exit_code == 0);
  const std::string db = tmp_path("raw");
  std::filesystem::copy(db0, db, std::filesystem::copy_options::recursive);
  auto r = run_statetree("run --db " + db + " --workload erc20_balanceof --block-count 2 --calls 40 --txs 1 --seed 5 --qd 8 --raw-loop --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const RunOut ro = parse_run(r.out);
  const json& raw = ro.summary["raw_loop"];
  REQUIRE(raw.is_object());
  CHECK(raw["qd"] == 8);
  CHECK(raw["reads"].get<uint64_t>() >= 1024);  // at least 1,024, else a block's mean device reads
  const double us = raw["us_per_read"]["median"].get<double>();
  CHECK(us > 0);
  CHECK(raw["us_per_read"]["samples"].size() == 1);
  const double per_slot = ro.summary["device_reads_per_slot"].get<double>() * us * 1e-3;
  CHECK(raw["device_ms_per_slot"].get<double>() == doctest::Approx(per_slot));
  CHECK(raw["state_read_over_raw"].get<double>() == doctest::Approx(ro.summary["ms_per_slot_read"].get<double>() / per_slot));
  CHECK(raw["total_over_raw"].get<double>() == doctest::Approx(ro.summary["ms_per_slot_total"].get<double>() / per_slot));
  check_ceiling(ro, us);
  // Without the flag the summary's raw_loop is null, and the ceiling is the CPU's alone.
  const std::string db2 = tmp_path("raw2");
  std::filesystem::copy(db0, db2, std::filesystem::copy_options::recursive);
  auto plain = run_statetree("run --db " + db2 + " --workload erc20_balanceof --block-count 1 --calls 40 --txs 1 --seed 5 --json");
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
  const RunOut po = parse_run(plain.out);
  CHECK(po.summary["raw_loop"].is_null());
  check_ceiling(po, 0);
  const std::string db3 = tmp_path("raw3");
  std::filesystem::copy(db0, db3, std::filesystem::copy_options::recursive);
  auto human = run_statetree("run --db " + db3 + " --workload erc20_balanceof --block-count 2 --calls 40 --txs 1 --seed 5 --raw-loop");
  REQUIRE_MESSAGE(human.exit_code == 0, human.err);
  CHECK(human.out.find("ceiling for any --inflight: ") != std::string::npos);
  CHECK(human.out.find("its reads at the raw loop's cost") != std::string::npos);
  std::filesystem::remove_all(db3);

  const std::string rocks = tmp_path("raw_rocks");
  REQUIRE(run_statetree(std::string("build --tree mpt") + kStateOpts + " --store rocksdb --db " + rocks).exit_code == 0);
  auto rr = run_statetree("run --db " + rocks + " --workload erc20_balanceof --block-count 2 --calls 40 --txs 1 --seed 5 --raw-loop");
  CHECK(rr.exit_code == 2);
  CHECK(rr.out.empty());  // refused before any block ran
  CHECK(rr.err.find("--raw-loop needs an arena database") != std::string::npos);
  CHECK(std::count(rr.err.begin(), rr.err.end(), '\n') == 1);
  for (const std::string& d : {db0, db, db2, rocks}) std::filesystem::remove_all(d);
}
