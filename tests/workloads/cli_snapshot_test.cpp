// cli_snapshot_test: `--snapshot` end to end on both trees: build --snapshot reports the
// table, verify checks it (exit 0; a resealed changed entry: exit 1 naming the key), get
// --snapshot answers what get answers (one page read per key), read-bench --snapshot reads
// one page per lookup alone and checks every answer; commit keeps it equal to the tree;
// bad input exits 2 with one line. The same on RocksDB (the snapshot's column family; a
// changed and a missing entry: verify exits 1).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"
#include "tests/engine/persist/snapshot_test_util.h"
#include "tests/workloads/cli_test_util.h"
#include "workloads/synthetic_state.h"

using st::reference::run_statetree;
using nlohmann::json;

namespace {

std::string tmp_dir(const std::string& name) { return st::test::fresh_tmp_path("cli_snapshot", name); }

using st::test::hex0x;

using st::test::check_bad;

}  // namespace

TEST_CASE("cli snapshot: build, verify, get and read-bench with --snapshot on both trees") {
  const st::state::SyntheticState src(st::state::SyntheticSpec{300, 6, 40, 7});
  for (const std::string tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string d = tmp_dir(tree);
    const std::string plain = tmp_dir(tree + "_plain");
    auto r = run_statetree("build --tree " + tree + " --accounts 300 --contracts 6 --slots-per-contract 40 --seed 7 "
                           "--snapshot --json --db " + d);
    REQUIRE(r.exit_code == 0);
    json b = json::parse(r.out);
    CHECK(b["snapshot"]["entries"].get<uint64_t>() >= 540);
    CHECK(b["snapshot"]["pages"].get<uint64_t>() > 0);

    r = run_statetree("verify --json --db " + d);
    REQUIRE(r.exit_code == 0);
    json v = json::parse(r.out);
    CHECK(v["ok"] == true);
    CHECK(v["snapshot"]["ok"] == true);
    CHECK(v["snapshot"]["entries"] == b["snapshot"]["entries"]);
    r = run_statetree("verify --db " + d);
    CHECK(r.out.find("snapshot equals the tree") != std::string::npos);

    // get: the same answer from the tree and the snapshot (a slot with its account, an EOA).
    const auto key = *src.slot_key(2, 9);
    st::state::AccountRecord eoa;
    src.account(150, &eoa);
    for (const std::string& args : {"--address " + hex0x(key.address) + " --slot " + hex0x(*key.slot),
                                    "--address " + hex0x(eoa.address) + " --slot 0x01"}) {
      CAPTURE(args);
      auto t = run_statetree("get --json --proof --db " + d + " " + args);
      auto s = run_statetree("get --json --proof --snapshot --db " + d + " " + args);
      REQUIRE(t.exit_code == 0);
      REQUIRE(s.exit_code == 0);
      json tj = json::parse(t.out), sj = json::parse(s.out);
      CHECK(sj["read_from"] == "snapshot");
      CHECK(sj["proof"]["verified"] == true);  // the proof agrees with the snapshot's answer
      for (const char* f : {"exists", "nonce", "balance", "code_hash", "value", "storage_root", "code_size"}) {
        CAPTURE(f);
        CHECK(tj.contains(f) == sj.contains(f));
        if (tj.contains(f)) CHECK(tj[f] == sj[f]);
      }
      CHECK(sj["io"]["page_reads"].get<uint64_t>() <= 2);  // the account's page and the slot's
    }
    CHECK(json::parse(run_statetree("get --json --snapshot --db " + d + " --address " + hex0x(key.address)).out)["io"]
              ["page_reads"] == 1);

    // read-bench: every answer checked against the source; one read per key alone.
    r = run_statetree("read-bench --json --snapshot --keys 64 --qd 1,8 --reps 1 --single 16 --warmup 2 --db " + d);
    REQUIRE(r.exit_code == 0);
    json rb = json::parse(r.out);
    CHECK(rb["read_from"] == "snapshot");
    CHECK(rb["single"]["page_reads_per_lookup"]["median"].get<double>() == 1.0);
    CHECK(rb["batched"][1]["batched"]["page_reads_per_lookup"].get<double>() <= 1.0);
    r = run_statetree("read-bench --json --snapshot --accounts-only --keys 64 --qd 4 --reps 1 --single 16 --warmup 2 --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["single"]["page_reads_per_lookup"]["median"].get<double>() == 1.0);

    // A changed entry (page resealed): verify exits 1 naming the key; restored, 0 again.
    const st::persist::test::SnapshotPages sp = st::persist::test::snapshot_pages(d);
    const uint64_t page = sp.pages[0];
    const std::vector<uint8_t> original = st::persist::test::read_page(d, page, sp.page_size);
    std::vector<uint8_t> changed = original;
    st::persist::RecordPage rp;
    REQUIRE(st::persist::decode_record_page(page, {changed.data(), st::io::page_payload_bytes(sp.page_size)}, &rp).empty());
    changed[size_t(rp.records[0].body.data() + rp.records[0].body.size() - 1 - changed.data())] ^= 0x10;
    st::persist::test::write_page(d, page, changed);
    r = run_statetree("verify --db " + d);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("snapshot: entry 0x") != std::string::npos);
    st::persist::test::write_page(d, page, original, false);
    CHECK(run_statetree("verify --db " + d).exit_code == 0);

    // Block commits carry the snapshot along: verify compares it with the new tree.
    r = run_statetree("commit --db " + d + " --blocks 3 --writes 64 --seed 5");
    REQUIRE(r.exit_code == 0);
    r = run_statetree("verify --json --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["snapshot"]["ok"] == true);
    r = run_statetree("read-bench --json --snapshot --keys 64 --qd 8 --reps 1 --single 8 --warmup 2 --db " + d);
    CHECK(r.exit_code == 0);

    // Bad input: no snapshot in the database, --snapshot on RocksDB.
    REQUIRE(run_statetree("build --tree " + tree + " --accounts 20 --db " + plain).exit_code == 0);
    check_bad("get --snapshot --db " + plain + " --address " + hex0x(eoa.address));
    check_bad("read-bench --snapshot --keys 4 --accounts-only --db " + plain);
    std::filesystem::remove_all(d);
    std::filesystem::remove_all(plain);
  }
}

TEST_CASE("cli snapshot on RocksDB: build, verify (a changed and a missing entry: exit 1), get, read-bench and commit") {
  const st::state::SyntheticState src(st::state::SyntheticSpec{300, 6, 40, 7});
  for (const std::string tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string d = tmp_dir(tree + "_rocks");
    auto r = run_statetree("build --tree " + tree + " --accounts 300 --contracts 6 --slots-per-contract 40 --seed 7 "
                           "--store rocksdb --snapshot --json --db " + d);
    REQUIRE(r.exit_code == 0);
    const json b = json::parse(r.out);
    CHECK(b["snapshot"]["entries"].get<uint64_t>() >= 540);
    r = run_statetree("verify --json --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["snapshot"]["ok"] == true);
    CHECK(json::parse(r.out)["snapshot"]["entries"] == b["snapshot"]["entries"]);

    const auto key = *src.slot_key(2, 9);
    const std::string args = "--address " + hex0x(key.address) + " --slot " + hex0x(*key.slot);
    auto t = run_statetree("get --json --db " + d + " " + args);
    auto s = run_statetree("get --json --snapshot --db " + d + " " + args);
    REQUIRE(t.exit_code == 0);
    REQUIRE(s.exit_code == 0);
    json tj = json::parse(t.out), sj = json::parse(s.out);
    CHECK(sj["read_from"] == "snapshot");
    for (const char* f : {"exists", "nonce", "balance", "code_hash", "value", "storage_root", "code_size"}) {
      CAPTURE(f);
      CHECK(tj.contains(f) == sj.contains(f));
      if (tj.contains(f)) CHECK(tj[f] == sj[f]);
    }
    r = run_statetree("read-bench --json --snapshot --keys 64 --qd 1,8 --reps 1 --single 16 --warmup 2 --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["read_from"] == "snapshot");

    // A changed entry, then a missing one: verify exits 1 naming the key; restored, 0.
    const auto [k, v] = st::persist::test::RocksSurgery(d).entry(5);
    std::string changed = v;
    changed.back() = char(changed.back() ^ 0x10);
    st::persist::test::RocksSurgery(d).put(k, changed);
    r = run_statetree("verify --db " + d);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("snapshot: entry 0x") != std::string::npos);
    st::persist::test::RocksSurgery(d).erase(k);
    r = run_statetree("verify --db " + d);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("missing from the snapshot") != std::string::npos);
    st::persist::test::RocksSurgery(d).put(k, v);
    CHECK(run_statetree("verify --db " + d).exit_code == 0);

    // Block commits carry the snapshot along in their one WriteBatch.
    r = run_statetree("commit --db " + d + " --blocks 3 --writes 64 --seed 5");
    REQUIRE(r.exit_code == 0);
    r = run_statetree("verify --json --db " + d);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["snapshot"]["ok"] == true);
    std::filesystem::remove_all(d);
  }
}
