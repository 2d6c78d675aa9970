// table: the one printer of the commands' row output. A command describes its rows once,
// as JSON objects (what --json prints), and its human table once, as columns that each
// render one cell of a row; the same rows then print as
//   - the human table: a header line and one line per row, every cell padded to its
//     column's width (left or right aligned), cells separated by one space, every line
//     after an optional indent;
//   - JSON: the rows themselves (an array, or one object per line);
//   - CSV: a header line of field names and one line per row, nested objects' fields
//     flattened as "outer.inner", null as an empty cell, strings unquoted.
// Rows print as they land (row_line / csv_line) or all at once (text / csv).
//
// Invariants: a cell wider than its column is printed whole (as printf's %Ns does); a
// header and its rows use the same widths, so columns line up whenever cells fit; no line
// ends in blanks (a left-aligned or empty last cell is not padded).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace st::report {

enum class Align { left, right };

struct Column {
  std::string header;
  int width = 0;
  Align align = Align::right;
  std::function<std::string(const nlohmann::json& row)> cell;
};

// Cell renderers for the common cases: row[key] as an unsigned integer, as a number with
// `decimals` digits after the point (scaled by `scale` first), as text cut to max_chars,
// and a summary ({median, min, max}) as "median [min..max]" with the printf format `fmt`
// of one number. A key starting with '/' is a JSON pointer into nested objects
// ("/batched/rounds"); a field the row lacks, or holds as null, prints as "-".
std::function<std::string(const nlohmann::json&)> u64_cell(std::string key);
std::function<std::string(const nlohmann::json&)> fixed_cell(std::string key, int decimals, double scale = 1.0);
std::function<std::string(const nlohmann::json&)> text_cell(std::string key, size_t max_chars = std::string::npos);
std::function<std::string(const nlohmann::json&)> range_cell(std::string key, const char* fmt = "%.1f");
// row[key] (or the pointer) rendered by `render`; "-" when the row lacks it or it is null. For the formats
// the cells above do not cover.
std::function<std::string(const nlohmann::json&)> field_cell(std::string key,
                                                            std::function<std::string(const nlohmann::json&)> render);
// Right-aligned columns of the common cells: row[key] as an unsigned integer, or as a number
// with `decimals` digits after the point (scaled by `scale` first).
Column count_column(std::string header, int width, std::string key);
Column number_column(std::string header, int width, std::string key, int decimals, double scale = 1.0);
// printf of one double with `fmt` (e.g. "%.2f").
std::string format_double(const char* fmt, double v);
// A summary {median, min, max} as "median [min..max]", each number printed with `fmt`.
std::string range_text(const nlohmann::json& summary, const char* fmt = "%.1f");

class Table;
// Figures as a table: one row per figure (figure_row: its name, a summary {median, min, max,
// stddev} as report::summary_json writes it, the digits after the point, the unit), columns
// figure (left, figure_width wide), median, [+-stddev,] min, max, unit.
nlohmann::json figure_row(const std::string& name, const nlohmann::json& summary, int decimals, const std::string& unit);
Table figure_table(const std::string& indent, int figure_width, bool with_stddev = false);

class Table {
 public:
  explicit Table(std::vector<Column> columns, std::string indent = "")
      : columns_(std::move(columns)), indent_(std::move(indent)) {}
  // The human table: the header line and a row's line, each ending in '\n'.
  std::string header_line() const;
  std::string row_line(const nlohmann::json& row) const;
  // Keeps a row for text() / rows().
  void add(nlohmann::json row) { rows_.push_back(std::move(row)); }
  const nlohmann::json& rows() const { return rows_; }
  std::string text() const;  // header_line() and every row_line()

 private:
  // The indent, then cell(column) for every column, padded to its width, one space apart.
  std::string line(const std::function<std::string(const Column&)>& cell) const;
  std::vector<Column> columns_;
  std::string indent_;  // before every line
  nlohmann::json rows_ = nlohmann::json::array();
};

// CSV of JSON rows: the fields of a row flattened (nested objects as "outer.inner"), top-level
// fields named in `skip` left out.
std::vector<std::pair<std::string, std::string>> csv_cells(const nlohmann::json& row, const std::set<std::string>& skip = {});
std::string csv_header(const std::vector<std::pair<std::string, std::string>>& cells);  // with '\n'
std::string csv_line(const std::vector<std::pair<std::string, std::string>>& cells);    // with '\n'

}  // namespace st::report
