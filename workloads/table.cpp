// table: the rows printer (see table.h).
#include "workloads/table.h"

#include <cstdio>

namespace st::report {
namespace {

std::string pad(const std::string& s, int width, Align align) {
  if (int(s.size()) >= width) return s;
  const std::string fill(size_t(width) - s.size(), ' ');
  return align == Align::left ? s + fill : fill + s;
}

void flatten(const nlohmann::json& j, const std::string& prefix, const std::set<std::string>& skip,
             std::vector<std::pair<std::string, std::string>>* out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (prefix.empty() && skip.count(it.key())) continue;
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten(*it, name, {}, out);
    else if (it->is_null()) out->push_back({name, ""});
    else if (it->is_string()) out->push_back({name, it->get<std::string>()});
    else out->push_back({name, it->dump()});
  }
}

// A line without its trailing blanks (a last column padded left or empty), ended by '\n'.
std::string ended(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

std::string joined(const std::vector<std::pair<std::string, std::string>>& cells, bool names) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + (names ? cells[i].first : cells[i].second);
  return line + "\n";
}

// row[key], or row at the JSON pointer key; nullptr when absent.
const nlohmann::json* field(const nlohmann::json& row, const std::string& key) {
  if (!key.empty() && key[0] == '/') {
    const nlohmann::json::json_pointer ptr(key);
    return row.contains(ptr) ? &row.at(ptr) : nullptr;
  }
  return row.contains(key) ? &row.at(key) : nullptr;
}

}  // namespace

std::function<std::string(const nlohmann::json&)> field_cell(std::string key,
                                                            std::function<std::string(const nlohmann::json&)> render) {
  return [key = std::move(key), render = std::move(render)](const nlohmann::json& row) {
    const nlohmann::json* v = field(row, key);
    return v && !v->is_null() ? render(*v) : std::string("-");
  };
}

std::string format_double(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string range_text(const nlohmann::json& summary, const char* fmt) {
  return format_double(fmt, summary["median"].get<double>()) + " [" + format_double(fmt, summary["min"].get<double>()) +
         ".." + format_double(fmt, summary["max"].get<double>()) + "]";
}

std::function<std::string(const nlohmann::json&)> u64_cell(std::string key) {
  return field_cell(std::move(key), [](const nlohmann::json& v) { return std::to_string(v.get<uint64_t>()); });
}

std::function<std::string(const nlohmann::json&)> fixed_cell(std::string key, int decimals, double scale) {
  return field_cell(std::move(key), [decimals, scale](const nlohmann::json& v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v.get<double>() * scale);
    return std::string(b);
  });
}

std::function<std::string(const nlohmann::json&)> text_cell(std::string key, size_t max_chars) {
  return field_cell(std::move(key), [max_chars](const nlohmann::json& v) { return v.get<std::string>().substr(0, max_chars); });
}

std::function<std::string(const nlohmann::json&)> range_cell(std::string key, const char* fmt) {
  return field_cell(std::move(key), [f = std::string(fmt)](const nlohmann::json& v) { return range_text(v, f.c_str()); });
}

Column count_column(std::string header, int width, std::string key) {
  return {std::move(header), width, Align::right, u64_cell(std::move(key))};
}

Column number_column(std::string header, int width, std::string key, int decimals, double scale) {
  return {std::move(header), width, Align::right, fixed_cell(std::move(key), decimals, scale)};
}

nlohmann::json figure_row(const std::string& name, const nlohmann::json& summary, int decimals, const std::string& unit) {
  return {{"figure", name}, {"summary", summary}, {"decimals", decimals}, {"unit", unit}};
}

Table figure_table(const std::string& indent, int figure_width, bool with_stddev) {
  auto number = [](const char* header, const char* key) {
    return Column{header, 10, Align::right, [k = std::string(key)](const nlohmann::json& row) {
                    return format_double(("%." + std::to_string(row["decimals"].get<int>()) + "f").c_str(),
                                         row["summary"][k].get<double>());
                  }};
  };
  std::vector<Column> columns = {{"figure", figure_width, Align::left, text_cell("figure")}, number("median", "median")};
  if (with_stddev) columns.push_back(number("+-stddev", "stddev"));
  columns.push_back(number("min", "min"));
  columns.push_back(number("max", "max"));
  columns.push_back({"", 0, Align::left, text_cell("unit")});
  return Table(std::move(columns), indent);
}

std::string Table::line(const std::function<std::string(const Column&)>& cell) const {
  std::string out = indent_;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i) out += ' ';
    out += pad(cell(columns_[i]), columns_[i].width, columns_[i].align);
  }
  return ended(std::move(out));
}

std::string Table::header_line() const {
  return line([](const Column& c) { return c.header; });
}

std::string Table::row_line(const nlohmann::json& row) const {
  return line([&row](const Column& c) { return c.cell(row); });
}

std::string Table::text() const {
  std::string out = header_line();
  for (const auto& row : rows_) out += row_line(row);
  return out;
}

std::vector<std::pair<std::string, std::string>> csv_cells(const nlohmann::json& row, const std::set<std::string>& skip) {
  std::vector<std::pair<std::string, std::string>> cells;
  flatten(row, "", skip, &cells);
  return cells;
}

std::string csv_header(const std::vector<std::pair<std::string, std::string>>& cells) { return joined(cells, true); }

std::string csv_line(const std::vector<std::pair<std::string, std::string>>& cells) { return joined(cells, false); }

}  // namespace st::report
