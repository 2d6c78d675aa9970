// cli_consistency_test: what every statetree command does alike, end to end:
//   - build refuses an existing database (or a killed build's files) without --force, takes
//     it with --force, never deletes files that are not a database's, says "regular file"
//     for a file, and refuses a build too large for this machine before touching anything;
//   - --version / version;
//   - the option layer: unknown options named, --pin checked against the CPUs, ranges,
//     usage on stderr and exit 2 without arguments;
//   - every command's --json: a 0x root (or null with a root_note), the statetree version
//     and commit, the kernels, the tree / store / page size where they apply;
//   - read-bench on a database whose genesis file changed says the source differs.
// Plus unit tests of the option layer, the progress line's ETA and the noise warning.
#include <doctest/doctest.h>

#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"
#include "test_paths.h"
#include "workloads/cli_args.h"
#include "workloads/report.h"
#include "tests/workloads/cli_test_util.h"

using nlohmann::json;
using st::reference::run_statetree;

namespace {

std::string tmp_path(const std::string& name) { return st::test::fresh_tmp_path("cli_consistency", name); }

// "0x" + 64 lowercase hex digits.
bool root_format(const std::string& s) {
  if (s.size() != 66 || s.rfind("0x", 0) != 0) return false;
  for (size_t i = 2; i < s.size(); ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}

bool one_line(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

const std::string kAlloc = STATETREE_TEST_DATA_DIR "/bintrie/two_accounts_genesis.json";

// Every JSON result: a root (0x + 64 lowercase hex digits, or null with a root_note), and
// where it came from.
void check_provenance(const std::string& what, const json& j) {
  CAPTURE(what);
  REQUIRE(j.contains("root"));
  if (j["root"].is_null()) {
    CHECK(j["root_note"].is_string());
  } else {
    REQUIRE(j["root"].is_string());
    CHECK(root_format(j["root"].get<std::string>()));
  }
  REQUIRE(j.contains("statetree"));
  CHECK(j["statetree"]["version"].is_string());
  CHECK(j["statetree"]["commit"].is_string());
  CHECK(!j["statetree"]["commit"].get<std::string>().empty());
  REQUIRE(j.contains("kernels"));
  CHECK(j["kernels"]["sha256"].is_string());
  CHECK(j["kernels"]["keccak256"].is_string());
  REQUIRE(j.contains("allocator"));
  CHECK(j["allocator"]["name"].is_string());
  CHECK(j["allocator"]["large_os_pages"].is_boolean());
}

}  // namespace

TEST_CASE("build: an existing database is replaced only with --force") {
  const std::string d = tmp_path("force");
  auto r = run_statetree("build --tree mpt --accounts 50 --contracts 2 --slots-per-contract 10 --json --db " + d);
  REQUIRE(r.exit_code == 0);
  const std::string root50 = json::parse(r.out)["root"];

  // A smaller state over it: refused, one line, exit 2, the database untouched.
  r = run_statetree("build --tree mpt --accounts 10 --db " + d);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(one_line(r.err));
  CHECK(r.err.find("already holds a database") != std::string::npos);
  CHECK(r.err.find("--force") != std::string::npos);
  r = run_statetree("verify --json --db " + d);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["root"] == root50);
  CHECK(json::parse(r.out)["accounts"] == 50);

  // --force, same parameters: rebuilt in place.
  r = run_statetree("build --tree mpt --accounts 10 --force --json --db " + d);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["accounts"] == 10);
  CHECK(json::parse(r.out)["replaced"] == true);
  // --force, another tree and store: the old database is deleted first.
  r = run_statetree("build --tree bintrie --store rocksdb --accounts 10 --force --json --db " + d);
  REQUIRE(r.exit_code == 0);
  r = run_statetree("verify --json --db " + d);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["tree"] == "bintrie");
  CHECK(json::parse(r.out)["store"] == "rocksdb");
  // A RocksDB database is refused too, and taken with --force.
  CHECK(run_statetree("build --tree bintrie --store rocksdb --accounts 12 --db " + d).exit_code == 2);
  r = run_statetree("build --tree mpt --accounts 12 --force --json --db " + d);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["store"] == "arena");
  std::filesystem::remove_all(d);
}

TEST_CASE("build: a killed build's files need --force; other files are never deleted") {
  const std::string d = tmp_path("partial");
  // What a RocksDB build killed before its first commit leaves: the directory and its
  // RocksDB files, no MANIFEST yet.
  std::filesystem::create_directories(d + "/rocksdb");
  std::ofstream(d + "/rocksdb/000003.log") << "partial";
  auto r = run_statetree("build --tree mpt --store rocksdb --accounts 10 --db " + d);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("did not finish") != std::string::npos);
  r = run_statetree("build --tree mpt --store rocksdb --accounts 10 --force --db " + d);
  CHECK(r.exit_code == 0);
  CHECK(run_statetree("verify --db " + d).exit_code == 0);
  std::filesystem::remove_all(d);

  // A directory with someone else's file: refused even with --force, the file kept.
  std::filesystem::create_directories(d);
  std::ofstream(d + "/notes.txt") << "mine";
  r = run_statetree("build --tree mpt --accounts 10 --force --db " + d);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("notes.txt") != std::string::npos);
  CHECK(std::filesystem::exists(d + "/notes.txt"));
  std::filesystem::remove_all(d);

  // An empty directory is not a database: built into without --force.
  std::filesystem::create_directories(d);
  CHECK(run_statetree("build --tree mpt --accounts 10 --db " + d).exit_code == 0);
  std::filesystem::remove_all(d);
}

TEST_CASE("build: --db a regular file, and a build too large for this machine, are exit 2 before anything is written") {
  const std::string f = tmp_path("file");
  std::ofstream(f) << "x";
  auto r = run_statetree("build --tree mpt --accounts 10 --db " + f);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("regular file") != std::string::npos);
  std::filesystem::remove(f);

  const std::string d = tmp_path("huge");
  for (const std::string tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    r = run_statetree("build --tree " + tree + " --accounts 1099511627776 --db " + d);  // 2^40: in range
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("memory") != std::string::npos);
    CHECK(!std::filesystem::exists(d));
  }
  // Fits in memory (the MPT build holds one contract's slots at a time) but not on disk:
  // 100 B per entry (the estimate's lower bound) over more entries than /tmp has room for.
  struct statvfs vfs {};
  REQUIRE(statvfs("/tmp", &vfs) == 0);
  const uint64_t free_bytes = uint64_t(vfs.f_bavail) * vfs.f_frsize;
  const uint64_t slots_per_contract = 1u << 20, contracts = free_bytes / (100 * slots_per_contract) + 16;
  r = run_statetree("build --tree mpt --accounts " + std::to_string(contracts) + " --contracts " + std::to_string(contracts) +
                    " --slots-per-contract " + std::to_string(slots_per_contract) + " --db " + d);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("on disk") != std::string::npos);
  CHECK(!std::filesystem::exists(d));
  r = run_statetree("build --tree mpt --accounts 1099511627777 --db " + d);  // 2^40 + 1: out of range
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--accounts must be in 1..1099511627776") != std::string::npos);
}

TEST_CASE("statetree --version and statetree version") {
  for (const char* c : {"--version", "version"}) {
    CAPTURE(c);
    auto r = run_statetree(c);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("statetree ") == 0);
    CHECK(r.out.find("(git ") != std::string::npos);
    CHECK(r.out.find("kernels: sha256 ") != std::string::npos);
    CHECK(r.out.find("keccak256 ") != std::string::npos);
    CHECK(r.out.find("\nallocator: ") != std::string::npos);
  }
  CHECK(run_statetree("version --bogus").exit_code == 2);
}

// The release binary runs on mimalloc: freed memory kept mapped, 4 KiB pages, unless the
// environment says otherwise; a sanitizer build runs on the system allocator and says so.
TEST_CASE("statetree version: the allocator policy, and the environment overrides it") {
  unsetenv("MIMALLOC_ALLOW_DECOMMIT");
  unsetenv("MIMALLOC_LARGE_OS_PAGES");
  auto r = run_statetree("version");
  REQUIRE(r.exit_code == 0);
  const size_t at = r.out.find("allocator: ");
  REQUIRE(at != std::string::npos);
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  CAPTURE(line);
  auto json_of_build = [] {
    auto b = run_statetree("build --tree mpt --accounts 5 --json --db " + tmp_path("allocator"));
    REQUIRE(b.exit_code == 0);
    return json::parse(b.out)["allocator"];
  };
  if (line.find("mimalloc") == std::string::npos) {
    CHECK(line == "allocator: system");
    CHECK(json_of_build()["name"] == "system");
    return;
  }
  CHECK(line.find(", freed memory kept mapped") != std::string::npos);
  CHECK(line.find("2 MiB pages") == std::string::npos);
  json a = json_of_build();
  CHECK(a["name"] == "mimalloc");
  CHECK(a["keeps_freed_memory"] == true);
  CHECK(a["large_os_pages"] == false);

  setenv("MIMALLOC_ALLOW_DECOMMIT", "1", 1);
  setenv("MIMALLOC_LARGE_OS_PAGES", "1", 1);
  r = run_statetree("version");
  a = json_of_build();
  unsetenv("MIMALLOC_ALLOW_DECOMMIT");
  unsetenv("MIMALLOC_LARGE_OS_PAGES");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("allocator: mimalloc") != std::string::npos);
  CHECK(r.out.find("freed memory kept mapped") == std::string::npos);
  CHECK(r.out.find(", 2 MiB pages") != std::string::npos);
  CHECK(a["keeps_freed_memory"] == false);
  CHECK(a["large_os_pages"] == true);
}

namespace {
// Each command with the options it needs to get past its required ones.
const std::vector<std::string> kCommands = {
    "merkle --leaves 4",
    "hash-bench",
    "mpt-bench",
    "bintrie-bench",
    "root --tree mpt --alloc " + kAlloc,
    "root --tree bintrie --alloc " + kAlloc,
    "io-bench --file /nonexistent/io.arena",
    "build --tree mpt --accounts 10 --db /nonexistent/db",
    "verify --db /nonexistent/db",
    "get --db /nonexistent/db --address 0x1000000000000000000000000000000000000001",
    "read-bench --db /nonexistent/db --keys 1",
    "commit --db /nonexistent/db",
};
}  // namespace

TEST_CASE("every command names an unknown option") {
  for (const std::string& c : kCommands) {
    CAPTURE(c);
    auto r = run_statetree(c + " --no-such-flag");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(one_line(r.err));
    CHECK(r.err.find("--no-such-flag") != std::string::npos);
  }
  auto r = run_statetree("root --no-such-flag");  // before the tree is known
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("--no-such-flag") != std::string::npos);
}

TEST_CASE("--pin is checked against the CPUs that exist, and against the thread count") {
  const unsigned cpus = std::thread::hardware_concurrency();
  const std::string absent = std::to_string(std::max(cpus, 1u) + 64);  // no such CPU here
  for (const std::string& c : kCommands) {
    if (c.rfind("get ", 0) == 0) continue;  // get times nothing: no --pin
    CAPTURE(c);
    auto r = run_statetree(c + " --pin " + absent);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("--pin: CPU " + absent) != std::string::npos);
  }
  // More threads than CPUs to pin them to.
  for (const std::string& c : std::vector<std::string>{"merkle --leaves 4 --threads 2 --pin 0", "mpt-bench --threads 3 --pin 0",
                                                      "bintrie-bench --threads 2 --pin 0",
                                                      "root --tree mpt --alloc " + kAlloc + " --threads 2 --pin 0"}) {
    CAPTURE(c);
    auto r = run_statetree(c);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("--pin") != std::string::npos);
    CHECK(r.err.find("--threads") != std::string::npos);
  }
  // mpt-bench's default --threads is 2: one CPU is not enough for it either.
  CHECK(run_statetree("mpt-bench --pin 0").err.find("(its default)") != std::string::npos);
  CHECK(run_statetree("merkle --pin x --leaves 4").exit_code == 2);
  CHECK(run_statetree("merkle --pin 0,0 --leaves 4 --threads 2").exit_code == 2);
  // A CPU that exists: runs.
  auto ok = run_statetree("merkle --leaves 4 --reps 1 --pin 0 --json");
  REQUIRE(ok.exit_code == 0);
  CHECK(json::parse(ok.out)["pinned_cpus"] == json::array({0}));
}

TEST_CASE("without arguments, a command with required options prints its usage on stderr and exits 2") {
  for (const char* c : {"root", "build", "verify", "get", "read-bench", "commit", "io-bench"}) {
    CAPTURE(c);
    auto r = run_statetree(c);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("usage: statetree " + std::string(c)) == 0);
  }
  auto r = run_statetree("root --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("usage: statetree root") == 0);
}

TEST_CASE("counts have upper bounds, written once in the option layer") {
  const std::pair<std::string, std::string> cases[] = {
      {"merkle --leaves 4 --reps 100001", "--reps must be in 1..100000"},
      {"io-bench --file /nonexistent/x --warmup 100001", "--warmup must be in 0..100000"},
      {"io-bench --file /nonexistent/x --qd 1,4097", "--qd values must be in 1..4096"},
      {"verify --db /nonexistent --qd 0", "--qd must be in 1..4096"},
      {"hash-bench --reps 10001", "--reps must be in 1..10000"},
      {"bintrie-bench --gd 9", "--gd values must be in 1..8"},
      {"read-bench --db /nonexistent --keys 0", "--keys must be in 1..10000000"},
      {"commit --db /nonexistent --writes 0", "--writes must be in 1..16777216"},
      {"build --tree mpt --accounts 4 --db /nonexistent/x --page-size 8192", "--page-size must be 4096 or 16384 (got 8192)"},
      {"io-bench --file /nonexistent/x --page-size 8192", "--page-size must be 4096 or 16384 (got 8192)"},
      {"build --tree verkle --accounts 4 --db /nonexistent/x", "--tree must be mpt or bintrie (got 'verkle')"},
      {"bintrie-bench --clock tsc", "--clock must be wall or cpu (got 'tsc')"},
      {"workload --kind erc20_balanceof --blocks 0", "--blocks must be in 1..100000 (got 0)"},
      {"workload --kind erc20_balanceof --tx-gas 20999", "--tx-gas must be at least 21000 (got 20999)"},
      {"workload --kind erc20_balanceof --start 4611686018427387905", "--start must be in 0..4611686018427387904"},
      {"merkle --leaves 4 --reps -1", "--reps: '-1' is not a non-negative integer"},
  };
  for (const auto& [c, want] : cases) {
    CAPTURE(c);
    auto r = run_statetree(c);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find(want) != std::string::npos);
  }
}

TEST_CASE("every command's --json carries a 0x root, the statetree commit and the kernels") {
  const std::string d = tmp_path("json");
  const std::string io_file = tmp_path("io.arena");
  std::vector<std::pair<std::string, std::string>> runs = {
      {"merkle", "merkle --leaves 5 --reps 1 --json"},
      {"hash-bench", "hash-bench --kernel portable --messages 16 --reps 1 --json"},
      {"mpt-bench", "mpt-bench --entries 64 --slots 128 --writes 8 --reps 1 --threads 1 --json"},
      {"mpt-bench --skip-scratch", "mpt-bench --skip-scratch --slots 128 --writes 8 --reps 1 --threads 1 --json"},
      {"bintrie-bench", "bintrie-bench --keys 64 --writes 8 --reps 1 --threads 1 --gd 2 --dense-stems 0 --json"},
      {"root mpt", "root --tree mpt --json --alloc " + kAlloc},
      {"root bintrie", "root --tree bintrie --json --alloc " + kAlloc},
      {"io-bench", "io-bench --file " + io_file + " --size-mib 1 --reads 16 --reps 1 --qd 1 --warmup 1 --no-raw --json"},
      {"build", "build --tree mpt --accounts 40 --contracts 2 --slots-per-contract 8 --json --db " + d},
      {"verify", "verify --json --db " + d},
      {"get", "get --json --db " + d + " --address 0x1000000000000000000000000000000000000001"},
      {"read-bench", "read-bench --json --keys 4 --qd 2 --reps 1 --single 2 --warmup 1 --db " + d},
      {"commit", "commit --json --blocks 1 --writes 4 --db " + d},
  };
  std::string build_root;
  for (const auto& [what, args] : runs) {
    CAPTURE(args);
    auto r = run_statetree(args);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    check_provenance(what, j);
    if (what == "build") build_root = j["root"];
    if (what == "verify") {
      CHECK(j["manifest_root"] == build_root);  // both roots, same format
      CHECK(j["recomputed_root"] == build_root);
    }
    if (what == "get" || what == "read-bench") CHECK(j["root"] == build_root);
    const bool db = what == "build" || what == "verify" || what == "get" || what == "read-bench" || what == "commit";
    if (db) {
      CHECK(j["tree"] == "mpt");
      CHECK(j["store"] == "arena");
      CHECK(j["page_size"] == 4096);
    }
    if (what.rfind("root", 0) == 0 || what == "mpt-bench" || what == "bintrie-bench" || what == "merkle")
      CHECK(j["tree"].is_string());
  }
  // The mpt root of the genesis file: the same in `root` text output, with the 0x prefix.
  auto t = run_statetree("root --tree bintrie --alloc " + kAlloc);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.rfind("0x", 0) == 0);
  std::filesystem::remove_all(d);
  std::filesystem::remove(io_file);
}

TEST_CASE("timing summaries in JSON: mean, stddev and the raw samples beside median / min / max") {
  auto r = run_statetree("merkle --leaves 64 --reps 3 --json");
  REQUIRE(r.exit_code == 0);
  const json t = json::parse(r.out)["total_ns_per_leaf"];
  for (const char* k : {"median", "mean", "stddev", "cv", "min", "max", "count", "samples"}) CHECK(t.contains(k));
  REQUIRE(t["samples"].size() == 3);
  std::vector<double> v = t["samples"].get<std::vector<double>>();
  std::sort(v.begin(), v.end());
  CHECK(t["median"].get<double>() == v[1]);
  CHECK(t["min"].get<double>() == v[0]);
  CHECK(t["max"].get<double>() == v[2]);
  const std::string io_file = tmp_path("io2.arena");
  r = run_statetree("io-bench --file " + io_file + " --size-mib 1 --reads 32 --reps 1 --qd 2 --warmup 1 --json");
  REQUIRE(r.exit_code == 0);
  const json row = json::parse(r.out)["results"][0];
  for (const char* k : {"latency_us_p50", "latency_us_p90", "latency_us_p99", "latency_us_p99_9", "mb_per_s", "iops"})
    CHECK(row.contains(k));
  CHECK(row["latency_us_p50"]["median"].get<double>() <= row["latency_us_p99_9"]["median"].get<double>());
  CHECK(row["mb_per_s"]["median"].get<double>() > 0);
  std::filesystem::remove(io_file);
}

TEST_CASE("read-bench: a changed genesis file is reported as a changed source, not as wrong answers") {
  const std::string d = tmp_path("src");
  const std::string path = d + ".json";
  auto write = [&](const char* balance) {
    std::ofstream(path) << R"({"alloc": {"0x1000000000000000000000000000000000000001": {"balance": ")" << balance
                        << R"(", "storage": {"0x01": "0x2a", "0x03": "0x07"}},
      "0x2000000000000000000000000000000000000002": {"balance": "0x10"}}})";
  };
  write("5");
  REQUIRE(run_statetree("build --tree mpt --json --alloc " + path + " --db " + d).exit_code == 0);
  CHECK(run_statetree("read-bench --keys 2 --qd 1 --reps 1 --warmup 1 --accounts-only --db " + d).exit_code == 0);
  write("6");  // same accounts and slots, another balance
  auto r = run_statetree("read-bench --keys 2 --qd 1 --reps 1 --warmup 1 --accounts-only --db " + d);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK(r.err.find("the source differs from the one the database was built from") != std::string::npos);
  CHECK(r.err.find("wrong answer") == std::string::npos);
  std::filesystem::remove_all(d);
  std::filesystem::remove(path);
}

TEST_CASE("option layer: ranges, required options and --pin checked by parse()") {
  auto parse = [](st::cli::Args& a, std::vector<std::string> argv) {
    std::vector<char*> p;
    for (auto& s : argv) p.push_back(s.data());
    return a.parse(int(p.size()), p.data());
  };
  {
    st::cli::Args a("statetree t", "");
    a.option_u64("reps", "R", "reps", 1, 10, 3);
    a.option_u64_list("qd", "Q", "qds", 1, 64, "1,8");
    CHECK(parse(a, {}));
    CHECK(a.get_u64("reps") == 3);
    CHECK(a.get_u64_list("qd") == std::vector<uint64_t>{1, 8});
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64("reps", "R", "reps", 1, 10, 3);
    CHECK_FALSE(parse(a, {"--reps=11"}));
    CHECK(a.error() == "--reps must be in 1..10 (got 11)");
    CHECK(a.prefix() == "statetree t");
  }
  {
    st::cli::Args a("statetree t", "");
    a.option("db", "DIR", "db");
    a.require("db");
    CHECK_FALSE(parse(a, {}));
    CHECK(a.error() == "--db DIR is required");
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64("threads", "T", "threads", 0, 64, 1);
    a.pin_option("threads");
    CHECK(parse(a, {"--pin", "0", "--threads", "1"}));
    CHECK(a.pin_cpus() == std::vector<int>{0});
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64("threads", "T", "threads", 0, 64, 1);
    a.pin_option("threads");
    CHECK_FALSE(parse(a, {"--pin", "0", "--threads", "2"}));
    CHECK(a.error().find("--pin") == 0);
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64_one_of("page-size", "B", "page size", {4096, 16384}, 4096);
    a.option_one_of("tree", "T", "tree", {"mpt", "bintrie"});
    a.option_u64("gas", "G", "gas", 21000, UINT64_MAX, 30000);
    CHECK(parse(a, {"--page-size", "16384", "--tree=bintrie"}));
    CHECK(a.get_u64("page-size") == 16384);
    CHECK(a.str("tree") == "bintrie");
    CHECK(a.usage().find("(4096 or 16384)") != std::string::npos);
    CHECK(a.usage().find("(mpt or bintrie)") != std::string::npos);
    CHECK(a.usage().find("(at least 21000)") != std::string::npos);
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64_one_of("page-size", "B", "page size", {4096, 16384}, 4096);
    CHECK_FALSE(parse(a, {"--page-size", "8192"}));
    CHECK(a.error() == "--page-size must be 4096 or 16384 (got 8192)");
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_one_of("tree", "T", "tree", {"mpt", "bintrie"});
    CHECK(parse(a, {}));  // no default: not checked unless given
    st::cli::Args b("statetree t", "");
    b.option_one_of("tree", "T", "tree", {"mpt", "bintrie"});
    CHECK_FALSE(parse(b, {"--tree", "verkle"}));
    CHECK(b.error() == "--tree must be mpt or bintrie (got 'verkle')");
  }
  {
    st::cli::Args a("statetree t", "");
    a.option_u64("gas", "G", "gas", 21000, UINT64_MAX, 30000);
    CHECK_FALSE(parse(a, {"--gas", "20999"}));
    CHECK(a.error() == "--gas must be at least 21000 (got 20999)");
  }
  CHECK(st::cli::cpu_list_string({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(root_format("0x" + std::string(64, 'a')));
  CHECK_FALSE(root_format(std::string(64, 'a')));
  CHECK_FALSE(root_format("0x" + std::string(64, 'A')));
}

TEST_CASE("progress line: elapsed time and ETA") {
  const std::string l = st::report::Progress::line("build", 25, 100, 10.0);
  CHECK(l.find(" 25%") != std::string::npos);
  CHECK(l.find("10.0s") != std::string::npos);
  CHECK(l.find("ETA 30s") != std::string::npos);  // 10 s for a quarter: 30 s for the rest
  CHECK(st::report::Progress::line("x", 1, 1000, 10.0).find("ETA 2h46m") != std::string::npos);
  CHECK(st::report::Progress::line("x", 100, 100, 10.0).find("ETA") == std::string::npos);
  CHECK(st::report::Progress::line("x", 0, 100, 10.0).find("ETA") == std::string::npos);
}

TEST_CASE("noise warning: one line naming the noisy timings") {
  st::report::clear_noise();
  st::report::timing("steady", {10, 10.1, 9.9});
  CHECK(st::report::noise_warning().empty());
  st::report::timing("spiky", {10, 10, 10, 30});
  const std::string w = st::report::noise_warning();
  CHECK(w.find("spiky (max 3.00x the median)") != std::string::npos);
  CHECK(w.find("steady") == std::string::npos);
  CHECK(w.find('\n') == std::string::npos);
  const auto j = st::report::summary_json(st::stats::summarize({1, 2, 3}));
  CHECK(j["samples"] == json::array({1.0, 2.0, 3.0}));
  CHECK(j["stddev"].get<double>() == doctest::Approx(1.0));
  st::report::clear_noise();
}
