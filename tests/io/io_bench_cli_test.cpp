// io_bench_cli_test: `statetree io-bench` end to end on a tiny file: one JSON object with a
// result per queue depth, the file it created removed; bad input exits 2 with one line on
// stderr. Also the random_reads loop on the memory store (counts, first error named).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/persist/cold_reads.h"
#include "io/memory_store.h"
#include "io/random_reads.h"
#include "io/rocksdb_store.h"
#include "tests/io/io_test_util.h"
#include "reference/run_command.h"

using namespace st::io;

namespace {

struct Run {
  int exit_code;
  std::string out;
};

Run run_cmd(const std::string& cmd) {
  Run r{-1, {}};
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string binary() { return st::reference::statetree_binary(); }

}  // namespace

TEST_CASE("io-bench: JSON per queue depth, temp file removed, bad input exits 2") {
  REQUIRE_MESSAGE(std::filesystem::exists(binary()), "statetree binary not built at " << binary());
  st::io::test::TempDir dir;
  const std::string file = dir.file("bench.arena");
  Run r = run_cmd(binary() + " io-bench --file " + file +
                  " --size-mib 2 --page-size 16384 --qd 1,4 --reads 64 --reps 2 --warmup 4 --json 2>/dev/null");
  if (r.exit_code == 1 && r.out.empty()) {
    MESSAGE("skipped: io-bench could not run here (io_uring unavailable?)");
    return;
  }
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["command"] == "io-bench");
  CHECK(j["page_size"] == 16384);
  CHECK(j["pages"] == 128);
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][0]["qd"] == 1);
  CHECK(j["results"][1]["qd"] == 4);
  for (const auto& q : j["results"]) {
    CHECK(q["iops"]["median"].get<double>() > 0);
    CHECK(q["raw"]["iops"]["median"].get<double>() > 0);
    CHECK(q["store_over_raw_us_per_read"]["median"].get<double>() > 0);
    CHECK(q["iops"]["min"].get<double>() <= q["iops"]["max"].get<double>());
    CHECK(q["latency_us_p50"]["median"].get<double>() <= q["latency_us_p99"]["median"].get<double>());
  }
  CHECK(!std::filesystem::exists(file));

  // --keep leaves the file; --reuse reads it again; --no-raw drops the baseline.
  r = run_cmd(binary() + " io-bench --file " + file + " --size-mib 1 --qd 2 --reads 16 --reps 1 --keep --json 2>/dev/null");
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(file));
  r = run_cmd(binary() + " io-bench --file " + file + " --reuse --qd 2 --reads 16 --reps 1 --no-raw --json 2>/dev/null");
  REQUIRE(r.exit_code == 0);
  const auto k = nlohmann::json::parse(r.out);
  CHECK(k["results"][0].count("raw") == 0);
  CHECK(k["regime_note"] == "file reused: host-cache state unknown");
  CHECK(std::filesystem::exists(file));  // --reuse never deletes what it did not create
  r = run_cmd(binary() + " io-bench --file " + file + " --size-mib 1 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.out == "statetree io-bench: " + file + " exists; remove it or pass --reuse\n");
  std::filesystem::remove(file);

  if (st::io::rocksdb_available()) {
    r = run_cmd(binary() + " io-bench --file " + file + " --size-mib 1 --qd 4 --reads 32 --reps 1 --rocksdb --json 2>/dev/null");
    REQUIRE(r.exit_code == 0);
    const auto rj = nlohmann::json::parse(r.out);
    CHECK(rj["rocksdb"]["values"] == 256);
    CHECK(rj["rocksdb"]["disk_bytes"].get<uint64_t>() > 256 * 4000);
    CHECK(rj["results"][0]["rocksdb"]["iops"]["median"].get<double>() > 0);
    CHECK(!std::filesystem::exists(file + ".rocksdb"));
  }

  for (const std::string bad : {" --page-size 8192", " --qd 1,x", " --size-mib 0", " --bogus 1"}) {
    CAPTURE(bad);
    Run b = run_cmd(binary() + " io-bench --file " + file + bad + " 2>&1");
    CHECK(b.exit_code == 2);
    CHECK(b.out.rfind("statetree io-bench: ", 0) == 0);
    CHECK(b.out.find('\n') == b.out.size() - 1);
  }
  Run missing = run_cmd(binary() + " io-bench --file " + file + " --reuse 2>&1");
  CHECK(missing.exit_code == 2);
  CHECK(!std::filesystem::exists(file));
}

TEST_CASE("random_reads: counts every read, keeps the window, stops at the first bad page") {
  MemoryStore store(kPageSize4K, 32);
  std::vector<unsigned char> buf(store.payload_bytes(), 3);
  std::vector<PageOp> ops;
  for (uint64_t p = 0; p < 32; ++p) ops.push_back({PageOpKind::write, p, buf.data(), p});
  // submit never blocks: everything is outstanding until reaped.
  store.submit(ops);
  CHECK(store.outstanding() == 32);
  std::vector<PageCompletion> c(32);
  CHECK(store.reap(c, 32) == 32);
  RandomReadResult r;
  REQUIRE(random_reads(store, 1000, 8, 5, &r).ok());
  CHECK(r.reads == 1000);
  CHECK(r.latency_ns.size() == 1000);
  CHECK(store.counters().reads == 1000);
  store.raw_page(17)[5] ^= 1;
  Status s = random_reads(store, 1000, 8, 5, &r);
  CHECK(s.code() == Errc::corrupt_page);
  CHECK(s.message() == "read page 17: corrupt page (checksum mismatch)");
  CHECK(st::persist::percentile_ns({5, 1, 4, 2, 3}, 0.5) == 3);
  CHECK(st::persist::percentile_ns({5, 1, 4, 2, 3}, 0.99) == 5);
  CHECK(st::persist::percentile_ns({}, 0.5) == 0);
}
