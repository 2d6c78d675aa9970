// cli_commit_test: `statetree commit` end to end: --help, bad input (one line on stderr,
// exit 2: no database, a --writes that breaks the database's block sequence), then blocks
// committed to a small synthetic MPT database: the JSON report, and verify / get /
// read-bench check their answers against the state after the blocks. RocksDB databases of
// both trees take the same blocks with the arena store's roots. A binary trie at GD 8 with
// 16 KiB pages keeps its full groups as single records of 256 children through blocks; a
// database of format version 1 is refused in one line naming the version.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/persist/bintrie/disk.h"
#include "engine/persist/db_files.h"
#include "io/manifest.h"
#include "reference/run_command.h"
#include "tests/engine/persist/bintrie_full_group.h"
#include "tests/workloads/cli_test_util.h"
#include "workloads/synthetic_state.h"

using st::reference::run_statetree;
using nlohmann::json;

namespace {

std::string tmp_dir(const std::string& name) { return st::test::fresh_tmp_path("cli_commit", name); }

using st::test::check_bad;

// `get` on db answers the newest slot of `contract` in the state after `blocks` blocks of
// 64 writes drawn from block seed 5 (what the cases below commit) on the state `built`.
void check_get_newest_slot(const std::string& db, st::state::SyntheticSpec built, uint64_t blocks, uint64_t contract) {
  built.blocks = blocks;
  built.block_seed = 5;
  built.block_writes = 64;
  const st::state::SyntheticState after(built);
  const auto key = *after.slot_key(contract, after.storage_size(contract) - 1);
  const auto want = *after.slot_value(contract, after.storage_size(contract) - 1);
  auto g = run_statetree("get --db " + db + " --address " + st::test::hex0x(key.address.data(), 20) + " --slot " +
                         st::test::hex0x(key.slot->data(), 32) + " --json");
  REQUIRE(g.exit_code == 0);
  CHECK(json::parse(g.out)["value"] == st::test::hex0x(want.data(), 32));
}

}  // namespace

TEST_CASE("statetree commit: help, bad input, blocks that verify, get and read-bench check") {
  auto h = run_statetree("commit --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("--json") != std::string::npos);
  const std::string db = tmp_dir("mpt"), bt = tmp_dir("bintrie");
  {
    // No arguments at all: the usage, then the one-line error, on stderr; exit 2.
    auto r = run_statetree("commit");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("usage: statetree commit") == 0);
    CHECK(r.err.find("statetree commit: --db DIR is required\n") != std::string::npos);
  }
  check_bad("commit --blocks 3", "--db DIR is required");
  check_bad("commit --db " + db, "no database");
  check_bad("commit --db " + db + " --blocks 0", "--blocks must be in");
  REQUIRE(run_statetree("build --tree bintrie --accounts 50 --store rocksdb --db " + bt).exit_code == 0);
  REQUIRE(run_statetree("build --tree mpt --accounts 300 --contracts 4 --slots-per-contract 200 --db " + db).exit_code == 0);

  auto r = run_statetree("commit --db " + db + " --blocks 3 --writes 64 --seed 5 --json");
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["blocks_applied"] == 3);
  REQUIRE(j["blocks"].size() == 3);
  for (const json& b : j["blocks"]) {
    CHECK(b["slot_writes"].get<uint64_t>() > 0);
    CHECK(b["records_read"].get<uint64_t>() > 0);
    CHECK(b["pages_written"].get<uint64_t>() > 0);
  }
  // Later runs continue the sequence; another --writes would break it.
  check_bad("commit --db " + db + " --writes 65", "would break its sequence");
  auto r2 = run_statetree("commit --db " + db + " --blocks 2 --json");
  REQUIRE(r2.exit_code == 0);
  CHECK(json::parse(r2.out)["first_block"] == 3);

  auto v = run_statetree("verify --db " + db + " --json");
  CHECK(v.exit_code == 0);
  CHECK(json::parse(v.out)["ok"] == true);
  auto rb = run_statetree("read-bench --db " + db + " --keys 256 --qd 4 --reps 1 --json");
  CHECK(rb.exit_code == 0);

  // get answers the value of the state after the five blocks.
  check_get_newest_slot(db, {300, 4, 200, 1}, 5, 2);
  std::filesystem::remove_all(db);
  std::filesystem::remove_all(bt);
}

TEST_CASE("statetree commit: binary-trie arena database; verify and read-bench check the state after the blocks") {
  const std::string bt = tmp_dir("bintrie_arena");
  REQUIRE(run_statetree("build --tree bintrie --gd 5 --accounts 300 --contracts 4 --slots-per-contract 200 --db " + bt).exit_code == 0);
  auto r = run_statetree("commit --db " + bt + " --blocks 3 --writes 64 --seed 5 --json");
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["blocks"].size() == 3);
  for (const json& b : j["blocks"]) {
    CHECK(b["records_read"].get<uint64_t>() > 0);
    CHECK(b["pages_written"].get<uint64_t>() > 0);
  }
  CHECK(run_statetree("verify --db " + bt).exit_code == 0);
  CHECK(run_statetree("read-bench --db " + bt + " --keys 256 --reps 1").exit_code == 0);
  // --slot-accounts: every slot key's account is fetched too (and checked as found)
  for (const char* flag : {"", " --slot-accounts"}) {
    const auto rb = run_statetree("read-bench --db " + bt + " --keys 256 --qd 4 --reps 1 --single 8 --json" + flag);
    REQUIRE(rb.exit_code == 0);
    CHECK(json::parse(rb.out)["slot_key_accounts"].get<bool>() == (flag[0] != 0));
  }
  std::filesystem::remove_all(bt);
}

// The database at dir as the census reads it (buffered I/O).
st::persist::DbOptions probed(const std::string& dir) {
  st::persist::DbOptions o;
  REQUIRE(st::persist::DbFiles::probe(dir, &o).message() == "");
  o.direct_io = false;
  return o;
}

TEST_CASE("statetree commit: binary trie at GD 8, 16 KiB pages: full groups are one record through blocks, verify, get, read-bench") {
  const std::string bt = tmp_dir("bintrie_gd8");
  REQUIRE(run_statetree("build --tree bintrie --gd 8 --page-size 16384 --accounts 3000 --contracts 4 --slots-per-contract 200 --db " + bt)
              .exit_code == 0);
  st::persist::test::RecordCensus c = st::persist::test::record_census(probed(bt));
  CHECK(c.root_kind == st::persist::bintrie_disk::kGroup);
  CHECK(c.root_children == 256);
  auto r = run_statetree("commit --db " + bt + " --blocks 3 --writes 64 --seed 5 --json");
  REQUIRE(r.exit_code == 0);
  c = st::persist::test::record_census(probed(bt));
  CHECK(c.root_children == 256);
  auto v = run_statetree("verify --db " + bt + " --json");
  REQUIRE(v.exit_code == 0);
  const json vj = json::parse(v.out);
  CHECK(vj["ok"] == true);
  CHECK(vj["nodes"].get<uint64_t>() == c.records);  // one record per node
  check_get_newest_slot(bt, {3000, 4, 200, 1}, 3, 1);
  auto rb = run_statetree("read-bench --db " + bt + " --keys 256 --qd 1,32 --reps 1 --single 16 --cold --json");
  CHECK(rb.exit_code == 0);
  std::filesystem::remove_all(bt);
}

TEST_CASE("statetree: a database of format version 1 is refused in one line naming the version; build --force replaces it") {
  const std::string bt = tmp_dir("bintrie_v1");
  REQUIRE(run_statetree("build --tree bintrie --gd 8 --page-size 16384 --accounts 300 --db " + bt).exit_code == 0);
  {  // The MANIFEST rewritten as version 1 wrote it (8-bit record child counts), checksum valid.
    st::io::FileManifestSlot slot(bt);
    st::io::Manifest m;
    REQUIRE(slot.load(&m).message() == "");
    m.params.format_version = 1;
    REQUIRE(slot.publish(m).message() == "");
  }
  const std::string want = "format version mismatch: database built with 1, opened with 2 (this build)";
  for (const std::string& cmd : {"verify --db " + bt, "read-bench --keys 16 --db " + bt,
                                "commit --blocks 1 --db " + bt, "get --address 0x" + std::string(40, '1') + " --db " + bt}) {
    CAPTURE(cmd);
    auto r = run_statetree(cmd);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(want) != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  }
  auto b = run_statetree("build --tree bintrie --gd 8 --page-size 16384 --accounts 300 --db " + bt);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find(want) != std::string::npos);
  REQUIRE(run_statetree("build --tree bintrie --gd 8 --page-size 16384 --accounts 300 --force --db " + bt).exit_code == 0);
  CHECK(run_statetree("verify --db " + bt).exit_code == 0);
  std::filesystem::remove_all(bt);
}

TEST_CASE("statetree commit: RocksDB databases of both trees: the arena store's roots per block; verify and read-bench check") {
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const std::string arena = tmp_dir(std::string("rocks_vs_arena_a_") + tree), rocks = tmp_dir(std::string("rocks_vs_arena_r_") + tree);
    const std::string state = std::string(" --tree ") + tree + " --accounts 300 --contracts 4 --slots-per-contract 200";
    REQUIRE(run_statetree("build" + state + " --db " + arena).exit_code == 0);
    REQUIRE(run_statetree("build" + state + " --store rocksdb --db " + rocks).exit_code == 0);
    const auto ra = run_statetree("commit --db " + arena + " --blocks 3 --writes 64 --seed 5 --json");
    const auto rr = run_statetree("commit --db " + rocks + " --blocks 3 --writes 64 --seed 5 --json");
    REQUIRE_MESSAGE(ra.exit_code == 0, ra.err);
    REQUIRE_MESSAGE(rr.exit_code == 0, rr.err);
    const json ja = json::parse(ra.out), jr = json::parse(rr.out);
    CHECK(ja["store"] == "arena");
    CHECK(jr["store"] == "rocksdb");
    CHECK(jr["rocksdb"]["bloom_bits_per_key"].get<int>() == 10);
    CHECK(jr["rocksdb"].contains("block_cache_bytes"));
    CHECK(jr["rocksdb"].contains("direct_reads"));
    CHECK(jr["rocksdb"]["read_threads"].get<int>() == 32);  // --qd's default
    REQUIRE(jr["blocks"].size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(jr["blocks"][i]["root"] == ja["blocks"][i]["root"]);
      CHECK(jr["blocks"][i]["records_read"] == ja["blocks"][i]["records_read"]);
    }
    // A second run continues the sequence on both; RocksDB with 4 MultiGets at once and no
    // block cache (the cold protocol), recorded in the regime, reaches the same roots.
    const auto ra2 = run_statetree("commit --db " + arena + " --blocks 2 --json");
    const auto rr2 = run_statetree("commit --db " + rocks + " --blocks 2 --qd 4 --block-cache 0 --json");
    REQUIRE(ra2.exit_code == 0);
    REQUIRE_MESSAGE(rr2.exit_code == 0, rr2.err);
    const json jr2 = json::parse(rr2.out);
    CHECK(jr2["root"] == json::parse(ra2.out)["root"]);
    CHECK(jr2["rocksdb"]["read_threads"].get<int>() == 4);
    CHECK(jr2["rocksdb"]["block_cache_bytes"].get<uint64_t>() == 0);
    CHECK(run_statetree("verify --db " + rocks).exit_code == 0);
    CHECK(run_statetree("read-bench --db " + rocks + " --keys 256 --reps 1").exit_code == 0);
    std::filesystem::remove_all(arena);
    std::filesystem::remove_all(rocks);
  }
}

// Compaction (--compact-pages, on by default): the same roots as without it, block by
// block; the live records of the pages a commit reads move to new pages and the emptied
// pages are released, so the bytes the state holds per live key stay within 1.5x of the
// build's over 40 small blocks (in two runs, so the second starts with a fresh ledger),
// where without compaction they grow several fold; the compacted database verifies.
TEST_CASE("statetree commit: compaction keeps the bytes in use per key bounded, with the roots unchanged") {
  for (const std::string tree : {"mpt", "bintrie --gd 5"}) {
    CAPTURE(tree);
    const std::string on = tmp_dir("compact_on"), off = tmp_dir("compact_off");
    const std::string state = " --tree " + tree + " --accounts 300 --contracts 4 --slots-per-contract 200";
    REQUIRE(run_statetree("build" + state + " --db " + on).exit_code == 0);
    REQUIRE(run_statetree("build" + state + " --db " + off).exit_code == 0);
    std::vector<json> blocks_on, blocks_off;
    double per_key_built = 0;
    for (int run = 0; run < 2; ++run) {
      const auto ron = run_statetree("commit --db " + on + " --blocks 20 --writes 64 --seed 5 --json");
      const auto roff = run_statetree("commit --db " + off + " --blocks 20 --writes 64 --seed 5 --compact-pages 0 --json");
      REQUIRE(ron.exit_code == 0);
      REQUIRE(roff.exit_code == 0);
      const json jon = json::parse(ron.out), joff = json::parse(roff.out);
      if (run == 0)
        per_key_built = double(jon["in_use_bytes_before"].get<uint64_t>()) /
                        double(jon["blocks"][0]["live_keys"].get<uint64_t>() - jon["blocks"][0]["keys_delta"].get<int64_t>());
      for (const json& b : jon["blocks"]) blocks_on.push_back(b);
      for (const json& b : joff["blocks"]) blocks_off.push_back(b);
    }
    REQUIRE(blocks_on.size() == 40);
    REQUIRE(blocks_off.size() == 40);
    uint64_t relocated = 0, released = 0;
    for (size_t i = 0; i < 40; ++i) {
      CHECK(blocks_on[i]["root"] == blocks_off[i]["root"]);
      CHECK(blocks_off[i]["records_relocated"].get<uint64_t>() == 0);
      relocated += blocks_on[i]["records_relocated"].get<uint64_t>();
      released += blocks_on[i]["pages_released"].get<uint64_t>();
    }
    CHECK(relocated > 0);
    CHECK(released > 40);
    const double per_key_on = blocks_on.back()["in_use_bytes_per_key"].get<double>();
    const double per_key_off = blocks_off.back()["in_use_bytes_per_key"].get<double>();
    MESSAGE(tree << ": bytes in use per key: built " << per_key_built << ", after 40 blocks " << per_key_on
                 << " (compaction off: " << per_key_off << ")");
    CHECK(per_key_on <= 1.5 * per_key_built);
    CHECK(per_key_off > 1.5 * per_key_built);  // what compaction is for (the bound above is not trivial)
    CHECK(run_statetree("verify --db " + on).exit_code == 0);
    std::filesystem::remove_all(on);
    std::filesystem::remove_all(off);
  }
}

// Compaction of pages the blocks do not read: storage tries of 625 slots (level-1 branches
// whose children overflow into pages shared with their cousins) and blocks of 24 writes,
// which reach few of those parents per block, so records left on partly dead pages hang
// under parents no block rewrites. Copying only below rewritten parents held 1.58x the
// build's bytes per key after 60 blocks here; the chains (the emptiest partly dead pages and
// their ancestors' pages, through the cross-page parents) hold 1.33x. The roots are those of
// the same blocks without compaction, and the database verifies.
TEST_CASE("statetree commit: compaction moves records whose parents no block rewrites (chains)") {
  const std::string on = tmp_dir("compact_chain_on"), off = tmp_dir("compact_chain_off");
  const std::string state = " --tree mpt --accounts 500 --contracts 8 --slots-per-contract 625";
  REQUIRE(run_statetree("build" + state + " --db " + on).exit_code == 0);
  REQUIRE(run_statetree("build" + state + " --db " + off).exit_code == 0);
  const auto ron = run_statetree("commit --db " + on + " --blocks 60 --writes 24 --seed 1 --compact-chains --json");
  const auto roff = run_statetree("commit --db " + off + " --blocks 60 --writes 24 --seed 1 --compact-pages 0 --json");
  REQUIRE_MESSAGE(ron.exit_code == 0, ron.err);
  REQUIRE_MESSAGE(roff.exit_code == 0, roff.err);
  const json jon = json::parse(ron.out), joff = json::parse(roff.out);
  CHECK(jon["root"] == joff["root"]);
  const json& first = jon["blocks"][0];
  const double per_key_built = double(jon["in_use_bytes_before"].get<uint64_t>()) /
                               double(first["live_keys"].get<uint64_t>() - first["keys_delta"].get<int64_t>());
  uint64_t chain_pages = 0;
  for (const json& b : jon["blocks"]) chain_pages += b["chain_pages"].get<uint64_t>();
  const double per_key_on = jon["blocks"].back()["in_use_bytes_per_key"].get<double>();
  MESSAGE("bytes in use per key: built " << per_key_built << ", after 60 blocks " << per_key_on << ", chain pages "
                                         << chain_pages);
  CHECK(chain_pages > 0);
  CHECK(per_key_on <= 1.45 * per_key_built);
  CHECK(run_statetree("verify --db " + on).exit_code == 0);
  std::filesystem::remove_all(on);
  std::filesystem::remove_all(off);
}
