// cli_compare_test: `statetree compare` end to end on small result files: JSON lines and a
// single object, metrics by path, summaries with samples, bad input.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"

using st::reference::run_statetree;

namespace {
std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/statetree_cli_compare_" + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("statetree compare: JSON lines vs a summary with samples, ratio and exact p") {
  // A: 5 runs, one per line; B: one object whose summary holds the raw samples
  const std::string a = write_tmp("a.jsonl",
                                  "{\"ms\": 19}\n{\"ms\": 22}\n\n{\"ms\": 16}\n{\"ms\": 29}\n{\"ms\": 24}\n");
  const std::string b = write_tmp("b.json", R"({"ms": {"median": 14.5, "samples": [20, 11, 17, 12]}})");
  auto r = run_statetree("compare " + a + " " + b + " --metric ms --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 1);
  const auto& row = j["rows"][0];
  CHECK(row["a"]["n"] == 5);
  CHECK(row["b"]["n"] == 4);
  CHECK(row["a"]["median"] == 22.0);
  CHECK(row["b"]["median"] == 14.5);
  CHECK(row["ratio_b_over_a"]["median_ratio"].get<double>() == doctest::Approx(14.5 / 22.0));
  CHECK(row["mann_whitney"]["method"] == "exact");
  CHECK(row["mann_whitney"]["u_a"] == 17.0);
  CHECK(row["mann_whitney"]["p_two_sided"].get<double>() == doctest::Approx(0.1111111111111111));
  const double lo = row["ratio_b_over_a"]["ci95"][0], hi = row["ratio_b_over_a"]["ci95"][1];
  CHECK(lo <= 14.5 / 22.0);
  CHECK(hi >= 14.5 / 22.0);

  // the human table names the metric and the ratio
  r = run_statetree("compare " + a + " " + b + " --metric ms");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("ms") != std::string::npos);
  CHECK(r.out.find("0.659") != std::string::npos);
}

TEST_CASE("statetree compare: without --metric, every sampled summary both files have") {
  const std::string a = write_tmp("c.json", R"({"x": {"t": {"median": 2, "samples": [1, 2, 3]}}, "y": {"samples": [5, 6]}})");
  const std::string b = write_tmp("d.json", R"({"x": {"t": {"median": 4, "samples": [3, 4, 5]}}, "z": {"samples": [1]}})");
  auto r = run_statetree("compare " + a + " " + b + " --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["metric"] == "x.t");
  CHECK(j["rows"][0]["ratio_b_over_a"]["median_ratio"] == 2.0);
}

TEST_CASE("statetree compare: bad input is one line and exit 2") {
  const std::string a = write_tmp("e.json", R"({"ms": 1})");
  const std::string bad = write_tmp("f.json", "{\"ms\": 1}\nnot json\n");
  CHECK(run_statetree("compare " + a).exit_code == 2);
  CHECK(run_statetree("compare " + a + " /nonexistent/x.json --metric ms").exit_code == 2);
  auto r = run_statetree("compare " + a + " " + bad + " --metric ms");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("line 2") != std::string::npos);
  r = run_statetree("compare " + a + " " + a + " --metric nope");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("nope") != std::string::npos);
  CHECK(run_statetree("compare " + a + " " + a).exit_code == 2);  // no sampled summaries to pick
  CHECK(run_statetree("compare " + a + " /tmp --metric ms").exit_code == 2);  // a directory
  CHECK(run_statetree("compare --help").exit_code == 0);
}
