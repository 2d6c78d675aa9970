// table_test: the rows printer (workloads/table.h): cells padded to their column's width and
// alignment as printf's %-Ns / %Ns would, nested fields by JSON pointer, "-" for a field a
// row lacks, summaries as "median [min..max]", CSV of nested rows; and the shared --qd range
// (workloads/cli_options.h) enforced by parse().
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/table.h"

using nlohmann::json;
using namespace st::report;

namespace {

std::string printf_line(const char* fmt, unsigned long long block, const char* root, double ms) {
  char b[256];
  std::snprintf(b, sizeof b, fmt, block, root, ms);
  return b;
}

}  // namespace

TEST_CASE("table: rows print as the printf format they replace") {
  const Table t({{"block", 6, Align::left, u64_cell("block")},
                 {"root", 18, Align::left, text_cell("root", 18)},
                 {"ms", 9, Align::right, fixed_cell("ms", 1)}});
  const json row = {{"block", 7}, {"root", "0x0123456789abcdef0123456789"}, {"ms", 12.345}};
  CHECK(t.header_line() == "block  root                      ms\n");
  CHECK(t.row_line(row) == printf_line("%-6llu %.18s %9.1f\n", 7, "0x0123456789abcdef0123456789", 12.345));
  // A cell wider than its column is printed whole.
  const json wide = {{"block", 12345678}, {"root", "0x"}, {"ms", 1e9}};
  CHECK(t.row_line(wide) == "12345678 0x                 1000000000.0\n");
}

TEST_CASE("table: indent, custom cells, no trailing blanks") {
  const Table t({{"name", 8, Align::left, text_cell("name")},
                 {"x", 4, Align::right, field_cell("x", [](const json& v) { return std::to_string(v.get<int>()) + "!"; })},
                 {"note", 10, Align::left, text_cell("note")}},
                "  ");
  CHECK(t.header_line() == "  name        x note\n");
  CHECK(t.row_line({{"name", "a"}, {"x", 7}, {"note", "hi"}}) == "  a          7! hi\n");
  CHECK(t.row_line({{"name", "b"}, {"note", ""}}) == "  b           -\n");
}

TEST_CASE("table: nested fields, absent fields, summaries, scaling") {
  const Table t({{"QD", 3, Align::right, u64_cell("qd")},
                 {"us", 20, Align::right, range_cell("/batched/us", "%.2f")},
                 {"raw", 6, Align::right, range_cell("/raw/us")},
                 {"KiB", 6, Align::right, fixed_cell("/batched/bytes", 2, 1.0 / 1024.0)}});
  const json row = {{"qd", 8}, {"batched", {{"us", {{"median", 1.5}, {"min", 1.25}, {"max", 2.0}}}, {"bytes", 3072}}}};
  CHECK(t.row_line(row) == "  8    1.50 [1.25..2.00]      -   3.00\n");
  CHECK(range_text({{"median", 10.0}, {"min", 9.96}, {"max", 11.04}}) == "10.0 [10.0..11.0]");
}

TEST_CASE("table: CSV flattens nested objects, skips the fields asked, prints null as empty") {
  const json row = {{"block", 1}, {"hash", {{"ms", 2.5}, {"calls", 3}}}, {"note", "x"}, {"none", nullptr},
                    {"per_tx", {1, 2}}};
  const auto cells = csv_cells(row, {"per_tx"});
  CHECK(csv_header(cells) == "block,hash.calls,hash.ms,none,note\n");
  CHECK(csv_line(cells) == "1,3,2.5,,x\n");
}

TEST_CASE("cli_options: --qd is one range everywhere it is declared") {
  for (const char* qd : {"0", "4097"}) {
    st::cli::Args a("statetree t", "t");
    st::cli::add_queue_depth(a, "q");
    const std::string arg = std::string("--qd=") + qd;
    char* argv[] = {const_cast<char*>(arg.c_str())};
    CHECK_FALSE(a.parse(1, argv));
    CHECK(a.error().find("--qd") != std::string::npos);
  }
  st::cli::Args list("statetree t", "t");
  st::cli::add_queue_depth_list(list, "q", "1,8");
  std::string arg = "--qd=1,4096";
  char* argv[] = {arg.data()};
  REQUIRE(list.parse(1, argv));
  CHECK(st::cli::queue_depths(list) == std::vector<uint32_t>{1, 4096});
  st::cli::Args one("statetree t", "t");
  st::cli::add_queue_depth(one, "q");
  REQUIRE(one.parse(0, argv));
  CHECK(st::cli::queue_depth(one) == st::cli::kQueueDepthDefault);
}
