// cli_compare: `statetree compare A.json B.json [--metric M[,M...]] [--resamples N]
// [--seed S] [--json]` — two result files (what a command wrote with --json, or bench.sh's
// JSON lines) side by side, one row per metric: each side's sample count, median and
// coefficient of variation, the ratio of medians B/A with its bootstrap 95 % CI, and the
// Mann-Whitney U test's two-sided p (exact or normal approximation, as engine/stats says).
// Without --metric every summary with raw samples found in both files is compared.
#include <algorithm>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stats/bootstrap.h"
#include "engine/stats/mann_whitney.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/report.h"
#include "workloads/result_samples.h"
#include "workloads/table.h"

namespace st::cli {
namespace {

int fail(const std::string& msg) { return cli_error("statetree compare", msg, 2); }

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

struct Row {
  std::string metric;
  std::vector<double> a, b;
  stats::RatioCi ci;
  stats::MannWhitney mw;
};

nlohmann::json side_json(const std::vector<double>& v) {
  return {{"n", v.size()}, {"median", stats::median_of(v)}, {"cv", stats::coefficient_of_variation(v)}};
}

// The metrics to compare: --metric's, else every summary with samples in both files.
// "" or the error.
std::string pick_metrics(const Args& args, const std::vector<nlohmann::json>& objs_a,
                         const std::vector<nlohmann::json>& objs_b, std::vector<std::string>* metrics) {
  if (args.given("metric")) {
    *metrics = split_commas(args.str("metric"));
    return "";
  }
  const auto in_b = workloads::sampled_metrics(objs_b);
  for (const auto& m : workloads::sampled_metrics(objs_a))
    if (std::find(in_b.begin(), in_b.end(), m) != in_b.end()) metrics->push_back(m);
  if (metrics->empty()) return "no summary with samples in both files: name the metric with --metric PATH";
  return "";
}

// One metric's samples in both files and their statistics; "" or the error.
std::string compare_metric(const std::string& m, const std::string& path_a, const std::vector<nlohmann::json>& objs_a,
                           const std::string& path_b, const std::vector<nlohmann::json>& objs_b, uint64_t resamples,
                           uint64_t seed, Row* r) {
  if (m.empty()) return "--metric: empty metric name";
  r->metric = m;
  auto sa = workloads::metric_samples(objs_a, m);
  if (auto* e = std::get_if<std::string>(&sa)) return path_a + ": " + *e;
  auto sb = workloads::metric_samples(objs_b, m);
  if (auto* e = std::get_if<std::string>(&sb)) return path_b + ": " + *e;
  r->a = std::move(std::get<std::vector<double>>(sa));
  r->b = std::move(std::get<std::vector<double>>(sb));
  if (r->a.empty()) return path_a + ": no metric '" + m + "'";
  if (r->b.empty()) return path_b + ": no metric '" + m + "'";
  r->ci = stats::bootstrap_median_ratio(r->a, r->b, resamples, seed);
  r->mw = stats::mann_whitney_u(r->a, r->b);
  return "";
}

nlohmann::json compare_json(const std::string& path_a, const std::string& path_b, uint64_t resamples, uint64_t seed,
                            const std::vector<Row>& rows) {
  nlohmann::json j;
  j["command"] = "compare";
  j["root"] = nullptr;
  j["root_note"] = "compare reads result files; it computes no tree";
  report::stamp(j);
  j["a"] = path_a;
  j["b"] = path_b;
  j["resamples"] = resamples;
  j["seed"] = seed;
  for (const Row& r : rows) {
    nlohmann::json row = {{"metric", r.metric}, {"a", side_json(r.a)}, {"b", side_json(r.b)}};
    if (r.ci.ok) row["ratio_b_over_a"] = {{"median_ratio", r.ci.ratio}, {"ci95", {r.ci.lo, r.ci.hi}}};
    else row["ratio_b_over_a"] = nullptr;  // a zero median of A: no ratio
    row["mann_whitney"] = {{"u_a", r.mw.u_x}, {"p_two_sided", r.mw.p_two_sided},
                           {"method", r.mw.exact ? "exact" : "normal"}, {"ties", r.mw.ties}};
    j["rows"].push_back(row);
  }
  return j;
}

// The human table of compare_json()'s rows.
report::Table compare_table() {
  using report::Align;
  using report::format_double;
  // One side's columns: k the JSON key ("a"), name the header's ("A").
  auto side = [](const char* k, const std::string& name) {
    return std::vector<report::Column>{
        {"n " + name, 5, Align::right, report::u64_cell(std::string("/") + k + "/n")},
        {"median " + name, 12, Align::right,
         [k](const nlohmann::json& r) { return format_double("%.4g", r[k]["median"].get<double>()); }},
        {"cv " + name, 6, Align::right,
         [k](const nlohmann::json& r) { return format_double("%5.1f", 100 * r[k]["cv"].get<double>()) + "%"; }}};
  };
  std::vector<report::Column> cols = {{"metric", 32, Align::left, report::text_cell("metric")}};
  for (report::Column& c : side("a", "A")) cols.push_back(std::move(c));
  for (report::Column& c : side("b", "B")) cols.push_back(std::move(c));
  cols.push_back({"B/A", 8, Align::right, report::fixed_cell("/ratio_b_over_a/median_ratio", 3)});
  cols.push_back({"95% CI (bootstrap)", 21, Align::right, [](const nlohmann::json& r) {
                    const nlohmann::json& q = r["ratio_b_over_a"];
                    if (q.is_null()) return std::string("-");
                    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on
                    // "literal" + std::string&&, the operator+ that inserts into the temporary.
                    std::string ci = "[";
                    ci += format_double("%.3f", q["ci95"][0].get<double>());
                    ci += ", ";
                    ci += format_double("%.3f", q["ci95"][1].get<double>());
                    ci += "]";
                    return ci;
                  }});
  cols.push_back({"p (MWU)", 9, Align::right, [](const nlohmann::json& r) {
                    const nlohmann::json& mw = r["mann_whitney"];
                    return format_double("%9.3g", mw["p_two_sided"].get<double>()) + (mw["method"] == "exact" ? "" : "*");
                  }});
  return report::Table(std::move(cols));
}

void print_compare(const nlohmann::json& j, uint64_t resamples, uint64_t seed) {
  std::printf("A: %s\nB: %s\n", j["a"].get<std::string>().c_str(), j["b"].get<std::string>().c_str());
  const report::Table table = compare_table();
  std::fputs(table.header_line().c_str(), stdout);
  for (const nlohmann::json& row : j["rows"]) std::fputs(table.row_line(row).c_str(), stdout);
  std::printf("p: Mann-Whitney U, two-sided; * = normal approximation with tie correction (else exact). CI: %llu "
              "resamples, seed %llu.\n",
              (unsigned long long)resamples, (unsigned long long)seed);
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  Args args("statetree compare",
            "Compare two result files (--json output or JSON lines): medians, ratio B/A with a bootstrap 95 % CI, "
            "Mann-Whitney U p, coefficient of variation.\nusage: statetree compare A.json B.json [options]");
  args.accept_positional(true);
  args.option("metric", "M[,M...]", "dot path(s) of the metric in each JSON object; default: every summary with samples in both");
  args.option_u64("resamples", "N", "bootstrap resamples", 100, 1000000, 10000);
  add_seed(args, "bootstrap seed", 1, "S");
  add_json(args, "one JSON object on stdout");
  if (auto code = args.parse_or_exit(argc, argv)) return *code;
  if (args.positional().size() != 2) return fail("give two result files: statetree compare A.json B.json");
  const uint64_t resamples = args.get_u64("resamples"), seed = args.get_u64("seed");
  const std::string path_a = args.positional()[0], path_b = args.positional()[1];
  auto la = workloads::load_result_objects(path_a);
  if (auto* e = std::get_if<std::string>(&la)) return fail(*e);
  auto lb = workloads::load_result_objects(path_b);
  if (auto* e = std::get_if<std::string>(&lb)) return fail(*e);
  const auto& objs_a = std::get<std::vector<nlohmann::json>>(la);
  const auto& objs_b = std::get<std::vector<nlohmann::json>>(lb);
  std::vector<std::string> metrics;
  if (std::string e = pick_metrics(args, objs_a, objs_b, &metrics); !e.empty()) return fail(e);
  std::vector<Row> rows;
  for (const auto& m : metrics) {
    Row r;
    if (std::string e = compare_metric(m, path_a, objs_a, path_b, objs_b, resamples, seed, &r); !e.empty()) return fail(e);
    rows.push_back(std::move(r));
  }
  const nlohmann::json j = compare_json(path_a, path_b, resamples, seed, rows);
  if (args.given("json")) std::printf("%s\n", j.dump(2).c_str());
  else print_compare(j, resamples, seed);
  return 0;
}

}  // namespace st::cli
