// cli_args: implementation of the strict option parser.
#include "workloads/cli_args.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace st::cli {

Args::Args(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

void Args::flag(const std::string& name, const std::string& help) {
  specs_[name] = Spec{false, "", help, std::nullopt};
  order_.push_back(name);
}

void Args::option(const std::string& name, const std::string& value_name, const std::string& help,
                  std::optional<std::string> default_value) {
  specs_[name] = Spec{true, value_name, help, std::move(default_value)};
  order_.push_back(name);
}

bool Args::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") { help_ = true; continue; }
    if (a.rfind("--", 0) != 0) {
      if (!accept_positional_) { error_ = "unexpected argument '" + a + "' (see " + command_ + " --help)"; return false; }
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    auto it = specs_.find(name);
    if (it == specs_.end()) { error_ = "unknown option --" + name + " (see " + command_ + " --help)"; return false; }
    if (!it->second.takes_value) {
      if (inline_value) { error_ = "option --" + name + " takes no value"; return false; }
      values_[name] = std::string(1, '1');  // (GCC 12 -Wrestrict false positive on assigning a literal: bug 105329)
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) { error_ = "option --" + name + " needs a value (" + it->second.value_name + ")"; return false; }
      value = argv[++i];
    }
    values_[name] = value;
  }
  return true;
}

std::string Args::usage() const {
  std::string s = "usage: " + command_ + " [options]\n" + summary_ + "\n\noptions:\n";
  for (const auto& name : order_) {
    const Spec& sp = specs_.at(name);
    std::string left = "  --" + name + (sp.takes_value ? " " + sp.value_name : "");
    if (left.size() < 28) left.resize(28, ' '); else left += "  ";
    s += left + sp.help;
    if (sp.default_value) s += " [default: " + *sp.default_value + "]";
    s += "\n";
  }
  s += "  --help                    show this help\n";
  return s;
}

bool Args::given(const std::string& name) const { return values_.count(name) != 0; }

bool Args::has(const std::string& name) const {
  if (given(name)) return true;
  auto it = specs_.find(name);
  return it != specs_.end() && it->second.default_value.has_value();
}

std::string Args::str(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto it = specs_.find(name); it != specs_.end() && it->second.default_value) return *it->second.default_value;
  return {};
}

std::optional<uint64_t> parse_u64(const std::string& s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  if (digits.empty()) return std::nullopt;
  for (char c : digits)  // strtoull alone would accept signs and spaces
    if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c)))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(digits.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end == nullptr || *end != '\0') return std::nullopt;
  return uint64_t(v);
}

std::optional<uint64_t> Args::u64(const std::string& name, std::string* err) const {
  const std::string v = str(name);
  auto r = parse_u64(v);
  if (!r && err) *err = "option --" + name + ": '" + v + "' is not a non-negative integer";
  return r;
}

std::optional<std::vector<uint64_t>> Args::u64_list(const std::string& name, std::string* err) const {
  std::vector<uint64_t> out;
  const std::string v = str(name);
  size_t start = 0;
  while (start <= v.size()) {
    const size_t comma = v.find(',', start);
    const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto r = parse_u64(item);
    if (!r) {
      if (err) *err = "option --" + name + ": '" + v + "' is not a comma-separated list of integers";
      return std::nullopt;
    }
    out.push_back(*r);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace st::cli
