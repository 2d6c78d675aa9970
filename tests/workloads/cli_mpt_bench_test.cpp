// cli_mpt_bench_test: `statetree mpt-bench` end to end at tiny sizes: its input is the spec's
// key family (root of N = 1,000 equals specs/mpt.md), the JSON carries every figure with
// median <= max, and bad options are one line on stderr with exit 2.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"

using st::reference::run_statetree;

TEST_CASE("statetree mpt-bench --json: spec root and every figure") {
  auto r = run_statetree("mpt-bench --entries 1000 --slots 3000 --writes 64 --reps 2 --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["from_scratch"];
  CHECK(s["root"] == "0xd142b1186b151f2e42b63819581b8cad5d3d91c6668ad19e4ac2f4a961da4eaa");
  CHECK(s["leaves"] == 1000);
  CHECK(s["keccak_calls"].get<uint64_t>() > 1000);
  for (const char* k : {"build_1t_ms", "bare_keccak_ms", "build_over_keccak", "build_nt_ms", "speedup_nt_over_1t"}) {
    CAPTURE(k);
    CHECK(s[k]["median"].get<double>() > 0);
    CHECK(s[k]["median"].get<double>() <= s[k]["max"].get<double>());
  }
  const auto& inc = j["incremental"];
  CHECK(inc["writes"] == 64);
  CHECK(inc["dirty_nodes"]["median"].get<double>() >= 64);
  CHECK(inc["block_over_keccak"]["median"].get<double>() > 0);
  CHECK(inc["timed_block_paths"] == "cold");
  // --warm times the block after the capture block instead: the same slots, so the same
  // dirty nodes are counted and bare-hashed.
  r = run_statetree("mpt-bench --skip-scratch --slots 3000 --writes 64 --reps 2 --json --warm");
  REQUIRE(r.exit_code == 0);
  const auto w = nlohmann::json::parse(r.out)["incremental"];
  CHECK(w["timed_block_paths"] == "warm");
  CHECK(w["dirty_nodes"] == inc["dirty_nodes"]);
  CHECK(w["dirty_keccak_calls"] == inc["dirty_keccak_calls"]);
}

TEST_CASE("statetree mpt-bench: bad options exit 2 with one line") {
  for (const char* c : {"mpt-bench --writes 0", "mpt-bench --entries x", "mpt-bench --reps 0", "mpt-bench --bogus",
                        "mpt-bench extra"}) {
    CAPTURE(c);
    auto r = run_statetree(c);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  CHECK(run_statetree("mpt-bench --help").exit_code == 0);
}
