// cli_persist_test: `statetree build / verify / get / read-bench` end to end: --help, bad
// input (one line on stderr, exit 2), then for both trees (arena) and the MPT in RocksDB:
// build a small synthetic state, verify (exit 0), get accounts and slots and compare with
// what the source (SyntheticState) says, proofs verified, read-bench reports I/Os; a
// flipped byte in pages.arena makes verify exit 1 naming the page; an --alloc build.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"
#include "tests/workloads/cli_test_util.h"

using st::reference::run_statetree;
using nlohmann::json;

namespace {

std::string tmp_dir(const std::string& name) { return st::test::fresh_tmp_path("cli_persist", name); }

using st::test::hex0x;

using st::test::check_bad;

void flip_byte(const std::string& path, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  uint8_t b = 0;
  REQUIRE(::pread(fd, &b, 1, off_t(offset)) == 1);
  b ^= 0x5a;
  REQUIRE(::pwrite(fd, &b, 1, off_t(offset)) == 1);
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TEST_CASE("statetree build/verify/get/read-bench: --help") {
  for (const char* c : {"build", "verify", "get", "read-bench"}) {
    CAPTURE(c);
    auto r = run_statetree(std::string(c) + " --help");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("usage: statetree ") == 0);
    CHECK(r.out.find("--json") != std::string::npos);
  }
}

TEST_CASE("statetree build/verify/get/read-bench: bad input is one line on stderr and exit 2") {
  const std::string d = tmp_dir("bad");
  const std::string missing = tmp_dir("missing");
  const std::string empty = tmp_dir("empty");
  std::filesystem::create_directories(empty);
  const std::string cases[] = {
           "build --accounts 10 --db " + d,
           "build --tree avl --accounts 10 --db " + d,
           "build --tree mpt --gd 5 --accounts 10 --db " + d,
           "build --tree bintrie --gd 9 --accounts 10 --db " + d,
           "build --tree mpt --hash blake3 --accounts 10 --db " + d,
           "build --tree bintrie --hash md5 --accounts 10 --db " + d,
           "build --tree mpt --accounts 10 --contracts 11 --db " + d,
           "build --tree mpt --accounts 10 --slots-per-contract 5 --db " + d,
           "build --tree mpt --db " + d,
           "build --tree mpt --accounts 10 --store leveldb --db " + d,
           "build --tree mpt --accounts 10 --page-size 8192 --db " + d,
           "build --tree mpt --alloc /nonexistent/alloc.json --db " + d,
           "verify --db " + missing,
           "verify --db " + empty,
           "get --db " + d + " --address 0xzz00000000000000000000000000000000000000",
           "get --db " + missing + " --address 0x1200000000000000000000000000000000000000",
           "get --db " + d + " --address 0x1200000000000000000000000000000000000000 --slot 0x" + std::string(65, '1'),
           "read-bench --db " + d,
           "read-bench --db " + d + " --keys 8 --qd 0",
           "read-bench --db " + missing + " --keys 8",
  };
  for (const std::string& c : cases) check_bad(c);
  CHECK(!std::filesystem::exists(missing));
  std::filesystem::remove_all(empty);
}

namespace {

// Builds a small synthetic state and checks everything the commands say about it.
void round_trip(const std::string& tree, const std::string& store) {
  const bool full = store == "arena";  // RocksDB: the same path minus the repeated checks (test time)
  const st::state::SyntheticSpec spec{300, 6, 40, 7};
  const st::state::SyntheticState src(spec);
  const std::string d = tmp_dir(tree + "_" + store);
  auto r = run_statetree("build --tree " + tree + " --store " + store + " --accounts 300 --contracts 6 " +
                         "--slots-per-contract 40 --seed 7 --json --db " + d);
  REQUIRE(r.exit_code == 0);
  json b = json::parse(r.out);
  CHECK(b["accounts"] == 300);
  CHECK(b["slots"] == 240);
  CHECK(b["nodes"].get<uint64_t>() > 0);
  CHECK(b["disk_bytes"].get<uint64_t>() > 0);
  CHECK(b["source"]["kind"] == "synthetic");
  if (store == "arena") CHECK(b["pages"].get<uint64_t>() > 0);
  const std::string root = b["root"];

  r = run_statetree("verify --json --db " + d);
  REQUIRE(r.exit_code == 0);
  json v = json::parse(r.out);
  CHECK(v["ok"] == true);
  CHECK(v["recomputed_root"] == root);
  CHECK(v["manifest_root"] == root);
  CHECK(v["accounts"] == 300);
  CHECK(v["slots"] == 240);  // binary trie too: its leaves minus the accounts' fields and code chunks
  CHECK(v["leaves"].get<uint64_t>() >= 300 + 240);
  if (full) CHECK(run_statetree("verify --db " + d).out.rfind("ok: ", 0) == 0);

  // A slot of contract 2 and the contract itself.
  const auto key = *src.slot_key(2, 9);
  r = run_statetree("get --json --proof --db " + d + " --address " + hex0x(key.address) + " --slot " + hex0x(*key.slot));
  REQUIRE(r.exit_code == 0);
  json g = json::parse(r.out);
  CHECK(g["root"] == root);
  CHECK(g["exists"] == true);
  CHECK(g["nonce"] == 1);
  CHECK(g["value"] == hex0x(*src.slot_value(2, 9)));
  CHECK(g["proof"]["verified"] == true);
  if (tree == "mpt") CHECK(g["proof"]["account_proof"].size() >= 1);
  if (tree == "bintrie") CHECK(g["code_size"] == st::state::kStubCodeBytes);

  // An EOA: nonce and balance as the source says; an absent slot of it.
  if (!full) {
    r = run_statetree("read-bench --json --keys 32 --qd 4 --reps 1 --single 8 --warmup 2 --db " + d);
    REQUIRE(r.exit_code == 0);
    json rb = json::parse(r.out);
    CHECK(rb["batched"][0]["batched"]["page_reads_per_lookup"].get<double>() > 0);
    CHECK(!rb["batched"][0].contains("raw"));
    std::filesystem::remove_all(d);
    return;
  }
  st::state::AccountRecord eoa;
  src.account(150, &eoa);
  r = run_statetree("get --json --proof --db " + d + " --address " + hex0x(eoa.address) + " --slot 0x01");
  REQUIRE(r.exit_code == 0);
  g = json::parse(r.out);
  CHECK(g["nonce"] == eoa.nonce);
  CHECK(g["balance"] == st::workloads::u256_to_decimal(eoa.balance));
  CHECK(g["value"].is_null());
  CHECK(g["proof"]["verified"] == true);

  // An absent account (human output too).
  r = run_statetree("get --proof --db " + d + " --address 0x00000000000000000000000000000000000000ff");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("absent") != std::string::npos);
  CHECK(r.out.find("verified against the root") != std::string::npos);

  r = run_statetree("read-bench --json --keys 64 --qd 1,8 --reps 1 --single 16 --warmup 2 --db " + d);
  REQUIRE(r.exit_code == 0);
  json rb = json::parse(r.out);
  CHECK(rb["keys"] == 64);
  REQUIRE(rb["batched"].size() == 2);
  for (const auto& row : rb["batched"]) {
    CHECK(row["batched"]["page_reads_per_lookup"].get<double>() > 0);
    CHECK(row["batched"]["rounds"].get<uint64_t>() > 0);
    CHECK(row["batched"]["bytes_per_lookup"].get<double>() > 0);
    CHECK(row.contains("raw") == (store == "arena"));
  }
  CHECK(rb["single"]["page_reads_per_lookup"]["median"].get<double>() > 0);
  // Every answer was checked; the MPT's slot answers carry the account, checked field by field.
  CHECK(rb["checked"] == (tree == "mpt" ? "every slot value and its account's fields equal the source's"
                                        : "every slot value equals the source's"));
  if (tree == "bintrie") {
    r = run_statetree("read-bench --json --keys 32 --qd 8 --reps 1 --single 4 --warmup 1 --slot-accounts --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["checked"] == "every slot value and its account's fields equal the source's");
  }
  r = run_statetree("read-bench --keys 8 --qd 4 --reps 1 --single 4 --warmup 1 --accounts-only --db " + d);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(store == "arena" ? "batched, streamed" : "batched, level by level") != std::string::npos);
  check_bad("read-bench --keys 241 --db " + d);  // more slots than the state holds

  // Another tree over this directory: a parameter mismatch.
  check_bad("build --tree " + std::string(tree == "mpt" ? "bintrie" : "mpt") + " --accounts 10 --db " + d);

  if (store == "arena") {
    // Flip a byte inside the tree's last-written pages, one page at a time, until verify
    // fails: the failure names a page and says corrupt.
    const std::string arena = d + "/pages.arena";
    const uint64_t pages = v["pages"].get<uint64_t>();
    REQUIRE(pages > 0);
    flip_byte(arena, 0 * 4096 + 100);
    r = run_statetree("verify --db " + d);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("page") != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    r = run_statetree("verify --json --db " + d);
    CHECK(r.exit_code == 1);
    CHECK(json::parse(r.out)["ok"] == false);
  }
  std::filesystem::remove_all(d);
}

}  // namespace

TEST_CASE("statetree build -> verify -> get -> read-bench: mpt, arena") { round_trip("mpt", "arena"); }
TEST_CASE("statetree build -> verify -> get -> read-bench: bintrie, arena") { round_trip("bintrie", "arena"); }
TEST_CASE("statetree build -> verify -> get -> read-bench: mpt, rocksdb") { round_trip("mpt", "rocksdb"); }
TEST_CASE("statetree build -> verify -> get -> read-bench: bintrie, rocksdb") { round_trip("bintrie", "rocksdb"); }

TEST_CASE("statetree build --alloc: the allocation file is the source") {
  const std::string d = tmp_dir("alloc");
  const std::string path = d + ".json";
  std::ofstream(path) << R"({"alloc": {
    "0x1000000000000000000000000000000000000001": {"balance": "5", "nonce": 3,
      "storage": {"0x01": "0x2a", "0x02": "0x00", "0x03": "0x07"}},
    "0x2000000000000000000000000000000000000002": "0x10"}})";
  auto r = run_statetree("build --tree bintrie --gd 4 --json --alloc " + path + " --db " + d);
  REQUIRE(r.exit_code == 0);
  json b = json::parse(r.out);
  CHECK(b["accounts"] == 2);
  CHECK(b["slots"] == 2);  // the zero value is absent state
  CHECK(b["source"]["kind"] == "alloc");
  r = run_statetree("get --json --db " + d + " --address 0x1000000000000000000000000000000000000001 --slot 3");
  REQUIRE(r.exit_code == 0);
  json g = json::parse(r.out);
  CHECK(g["nonce"] == 3);
  CHECK(g["balance"] == "5");
  CHECK(g["value"] == "0x0000000000000000000000000000000000000000000000000000000000000007");
  r = run_statetree("read-bench --json --keys 2 --qd 2 --reps 1 --warmup 1 --db " + d);
  CHECK(r.exit_code == 0);
  CHECK(run_statetree("verify --db " + d).exit_code == 0);
  std::filesystem::remove_all(d);
  std::filesystem::remove(path);
}

TEST_CASE("statetree build: the synthetic state's root equals the in-memory root of the same state") {
  // The synthetic state written out as a genesis allocation: `statetree root` (in memory)
  // and `statetree build` (on disk, synthetic source and --alloc source) agree, both trees.
  const st::state::SyntheticSpec spec{60, 3, 21, 5};
  const st::state::SyntheticState src(spec);
  json alloc = json::object();
  st::state::AccountRecord r;
  for (uint64_t i = 0; i < spec.accounts; ++i) {
    src.account(i, &r);
    json a = {{"balance", st::workloads::u256_to_hex(r.balance)}, {"nonce", r.nonce}};
    if (!r.code.empty()) a["code"] = hex0x(r.code);
    if (!r.storage.empty()) {
      json s = json::object();
      for (const auto& [k, v] : r.storage) s[hex0x(k)] = hex0x(v);
      a["storage"] = s;
    }
    alloc[hex0x(r.address)] = a;
  }
  const std::string d = tmp_dir("roots");
  const std::string path = d + ".json";
  std::ofstream(path) << json{{"alloc", alloc}}.dump();
  for (const std::string tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    auto r0 = run_statetree("root --json --tree " + tree + " --alloc " + path);
    REQUIRE(r0.exit_code == 0);
    std::string want = json::parse(r0.out)["root"];
    if (want.rfind("0x", 0) != 0) want = "0x" + want;  // root --tree bintrie prints no prefix
    auto r1 = run_statetree("build --json --tree " + tree + " --accounts 60 --contracts 3 --slots-per-contract 21 --seed 5 --db " + d);
    REQUIRE(r1.exit_code == 0);
    CHECK(json::parse(r1.out)["root"] == want);
    std::filesystem::remove_all(d);
    auto r2 = run_statetree("build --json --tree " + tree + " --alloc " + path + " --db " + d);
    REQUIRE(r2.exit_code == 0);
    CHECK(json::parse(r2.out)["root"] == want);
    std::filesystem::remove_all(d);
  }
  std::filesystem::remove(path);
}
