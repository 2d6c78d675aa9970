// result_samples: result files -> JSON objects -> one metric's samples (see result_samples.h).
#include "workloads/result_samples.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace st::workloads {

namespace {

constexpr size_t kMaxResultFileBytes = size_t(1) << 30;

const nlohmann::json* resolve(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* cur = &j;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) return nullptr;
    if (cur->is_object()) {
      auto it = cur->find(part);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               part.size() < 10) {
      const size_t i = std::stoul(part);
      if (i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

bool append_numbers(const nlohmann::json& arr, std::vector<double>* out) {
  for (const auto& v : arr) {
    if (!v.is_number()) return false;
    out->push_back(v.get<double>());
  }
  return true;
}

void collect_sampled(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>* out) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) {
      auto s = v.find("samples");
      if (s != v.end() && s->is_array()) {
        if (std::find(out->begin(), out->end(), path) == out->end()) out->push_back(path);
      } else {
        collect_sampled(v, path, out);
      }
    }
  }
}

}  // namespace

std::variant<std::vector<nlohmann::json>, std::string> load_result_objects(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) return "cannot open '" + path + "'";
  if (!S_ISREG(sb.st_mode)) return "'" + path + "' is not a regular file";
  if (uint64_t(sb.st_size) > kMaxResultFileBytes) return "'" + path + "' is larger than 1 GiB";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open '" + path + "'";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<nlohmann::json> objects;
  // One JSON document (an object, or an array of objects) ...
  nlohmann::json whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded()) {
    if (whole.is_object()) objects.push_back(std::move(whole));
    else if (whole.is_array() && std::all_of(whole.begin(), whole.end(), [](const auto& o) { return o.is_object(); }))
      for (auto& o : whole) objects.push_back(std::move(o));
    else return "'" + path + "': expected a JSON object, an array of objects or JSON lines";
    return objects;
  }
  // ... or JSON lines.
  std::istringstream lines(text);
  std::string line;
  size_t line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return "'" + path + "' line " + std::to_string(line_no) + ": not a JSON object";
    objects.push_back(std::move(j));
  }
  if (objects.empty()) return "'" + path + "' holds no JSON object";
  return objects;
}

std::variant<std::vector<double>, std::string> metric_samples(const std::vector<nlohmann::json>& objects,
                                                              const std::string& metric) {
  std::vector<double> out;
  for (const auto& o : objects) {
    const nlohmann::json* v = resolve(o, metric);
    if (!v) continue;
    if (v->is_number()) {
      out.push_back(v->get<double>());
    } else if (v->is_array()) {
      if (!append_numbers(*v, &out)) return "metric '" + metric + "' is an array with non-numbers";
    } else if (v->is_object() && v->contains("samples") && (*v)["samples"].is_array()) {
      if (!append_numbers((*v)["samples"], &out)) return "metric '" + metric + "': samples hold non-numbers";
    } else if (v->is_object() && v->contains("median") && (*v)["median"].is_number()) {
      out.push_back((*v)["median"].get<double>());
    } else {
      return "metric '" + metric + "' is neither a number, an array of numbers nor a summary";
    }
  }
  return out;
}

std::vector<std::string> sampled_metrics(const std::vector<nlohmann::json>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) collect_sampled(o, "", &out);
  return out;
}

}  // namespace st::workloads
