// cli_args: implementation of the strict option layer (see cli_args.h).
#include "workloads/cli_args.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace st::cli {

namespace {
// "mpt or bintrie", "a, b or c".
std::string words_text(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return s;
}

// "4096 or 16384".
std::string one_of_text(const std::vector<uint64_t>& values) {
  std::vector<std::string> words;
  for (uint64_t v : values) words.push_back(std::to_string(v));
  return words_text(words);
}

// "must be in 1..4096", "must be at least 21000", "must be 4096 or 16384".
std::string allowed_text(uint64_t min, uint64_t max, const std::vector<uint64_t>& allowed) {
  if (!allowed.empty()) return "must be " + one_of_text(allowed);
  if (max == UINT64_MAX && min > 0) return "must be at least " + std::to_string(min);
  return "must be in " + std::to_string(min) + ".." + std::to_string(max);
}

// The help's note of a number range: " (1..4096)", " (at least 21000)", "" for any.
std::string range_note(uint64_t min, uint64_t max) {
  if (max != UINT64_MAX) return " (" + std::to_string(min) + ".." + std::to_string(max) + ")";
  return min == 0 ? "" : " (at least " + std::to_string(min) + ")";
}

bool accepts(uint64_t v, uint64_t min, uint64_t max, const std::vector<uint64_t>& allowed) {
  if (!allowed.empty()) return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
  return v >= min && v <= max;
}
}  // namespace

int cli_error(const std::string& prefix, const std::string& msg, int code) {
  std::string line = msg;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "%s: %s\n", prefix.c_str(), line.c_str());
  return code;
}

int Args::fail(const std::string& msg, int code) const { return cli_error(prefix(), msg, code); }

Args::Args(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

std::string Args::prefix() const {
  const size_t first = command_.find(' ');
  if (first == std::string::npos) return command_;
  const size_t second = command_.find(' ', first + 1);
  return second == std::string::npos ? command_ : command_.substr(0, second);
}

void Args::flag(const std::string& name, const std::string& help) {
  Spec s;
  s.kind = Kind::flag;
  s.help = help;
  specs_[name] = s;
  order_.push_back(name);
}

void Args::option(const std::string& name, const std::string& value_name, const std::string& help,
                  std::optional<std::string> default_value) {
  Spec s;
  s.kind = Kind::text;
  s.value_name = value_name;
  s.help = help;
  s.default_value = std::move(default_value);
  specs_[name] = s;
  order_.push_back(name);
}

void Args::option_u64(const std::string& name, const std::string& value_name, const std::string& help, uint64_t min,
                      uint64_t max, std::optional<uint64_t> default_value) {
  option(name, value_name, help + range_note(min, max),
         default_value ? std::optional<std::string>(std::to_string(*default_value)) : std::nullopt);
  Spec& s = specs_[name];
  s.kind = Kind::u64;
  s.min = min;
  s.max = max;
}

void Args::option_u64_one_of(const std::string& name, const std::string& value_name, const std::string& help,
                             const std::vector<uint64_t>& allowed, std::optional<uint64_t> default_value) {
  option(name, value_name, help + " (" + one_of_text(allowed) + ")",
         default_value ? std::optional<std::string>(std::to_string(*default_value)) : std::nullopt);
  Spec& s = specs_[name];
  s.kind = Kind::u64;
  s.allowed = allowed;
}

void Args::option_one_of(const std::string& name, const std::string& value_name, const std::string& help,
                         const std::vector<std::string>& allowed, std::optional<std::string> default_value) {
  option(name, value_name, help + " (" + words_text(allowed) + ")", std::move(default_value));
  Spec& s = specs_[name];
  s.kind = Kind::word;
  s.words = allowed;
}

void Args::option_u64_list(const std::string& name, const std::string& value_name, const std::string& help,
                           uint64_t min, uint64_t max, std::optional<std::string> default_value) {
  option(name, value_name, help + " (each " + std::to_string(min) + ".." + std::to_string(max) + ")",
         std::move(default_value));
  Spec& s = specs_[name];
  s.kind = Kind::u64_list;
  s.min = min;
  s.max = max;
}

void Args::require(const std::string& name) {
  auto it = specs_.find(name);
  if (it != specs_.end()) it->second.required = true;
}

void Args::pin_option(const std::string& threads_option) {
  option("pin", "CPU[,CPU...]",
         threads_option.empty() ? "run the timed thread on this CPU (sched_setaffinity)"
                                : "run the threads on these CPUs, one per thread (at least --" + threads_option + " of them)");
  pin_declared_ = true;
  threads_option_ = threads_option;
}

bool Args::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") { help_ = true; continue; }
    if (a.rfind("--", 0) != 0 || a == "--") {
      if (!accept_positional_) {
        error_ = (a.size() > 1 && a[0] == '-' ? "unknown option " : "unexpected argument ") + std::string("'") + a +
                 "' (see " + command_ + " --help)";
        return false;
      }
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
    if (it->second.kind == Kind::flag) {
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
  if (help_) return true;  // --help wins over everything else
  for (const auto& name : order_) {
    const Spec& sp = specs_.at(name);
    if (sp.required && !given(name)) {
      error_ = "--" + name + (sp.value_name.empty() ? "" : " " + sp.value_name) + " is required";
      return false;
    }
  }
  return check_values() && check_pin();
}

bool Args::check_values() {
  for (const auto& name : order_) {
    const Spec& sp = specs_.at(name);
    if (!has(name)) continue;
    if (sp.kind == Kind::word && std::find(sp.words.begin(), sp.words.end(), str(name)) == sp.words.end()) {
      error_ = "--" + name + " must be " + words_text(sp.words) + " (got '" + str(name) + "')";
      return false;
    }
    if (sp.kind != Kind::u64 && sp.kind != Kind::u64_list) continue;
    std::string err;
    std::vector<uint64_t> vals;
    if (sp.kind == Kind::u64) {
      auto v = u64(name, &err);
      if (!v) { error_ = err; return false; }
      vals.push_back(*v);
    } else {
      auto v = u64_list(name, &err);
      if (!v) { error_ = err; return false; }
      vals = *v;
    }
    for (uint64_t v : vals)
      if (!accepts(v, sp.min, sp.max, sp.allowed)) {
        error_ = "--" + name + (sp.kind == Kind::u64_list ? " values " : " ") + allowed_text(sp.min, sp.max, sp.allowed) +
                 " (got " + std::to_string(v) + ")";
        return false;
      }
  }
  return true;
}

std::vector<int> available_cpu_list() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::string cpu_list_string(const std::vector<int>& cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus[i]);
    if (j > i) s += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s.empty() ? "none" : s;
}

bool Args::check_pin() {
  if (!pin_declared_ || !given("pin")) return true;
  std::string err;
  auto list = u64_list("pin", &err);
  if (!list) { error_ = err; return false; }
  const std::vector<int> avail = available_cpu_list();
  const std::set<int> avail_set(avail.begin(), avail.end());
  std::set<int> seen;
  for (uint64_t c : *list) {
    if (c >= CPU_SETSIZE || !avail_set.count(int(c))) {
      error_ = "--pin: CPU " + std::to_string(c) + " does not exist or is not available to this process (CPUs: " +
               cpu_list_string(avail) + ")";
      return false;
    }
    if (!seen.insert(int(c)).second) {
      error_ = "--pin: CPU " + std::to_string(c) + " is listed twice";
      return false;
    }
    pin_cpus_.push_back(int(c));
  }
  pin_threads_ = 1;
  if (threads_option_.empty() && pin_cpus_.size() > 1) {
    error_ = "--pin: this command times one thread: give one CPU (got " + std::to_string(pin_cpus_.size()) + ")";
    return false;
  }
  if (!threads_option_.empty()) {
    auto t = u64(threads_option_, &err);
    if (!t) { error_ = err; return false; }
    pin_threads_ = unsigned(*t);
    if (*t > pin_cpus_.size()) {
      error_ = "--pin: " + std::to_string(pin_cpus_.size()) + " CPU(s) for --" + threads_option_ + " " +
               std::to_string(*t) + (given(threads_option_) ? "" : " (its default)") + ": give one CPU per thread";
      return false;
    }
  }
  return true;
}

std::string Args::apply_pin() const {
  if (pin_cpus_.empty()) return "";
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pin_threads_ == 1) CPU_SET(pin_cpus_[0], &set);
  else
    for (int c : pin_cpus_) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "--pin: sched_setaffinity failed: " + std::string(std::strerror(errno));
  return "";
}

std::optional<int> Args::parse_or_exit(int argc, char** argv) {
  const bool ok = parse(argc, argv);
  if (ok && help_) { std::fputs(usage().c_str(), stdout); return 0; }
  if (!ok) {
    if (argc == 0) std::fputs(usage().c_str(), stderr);
    return fail(error_);
  }
  if (std::string e = apply_pin(); !e.empty()) return fail(e);
  return std::nullopt;
}

std::string Args::usage() const {
  std::string s = "usage: " + command_ + " [options]\n" + summary_ + "\n\noptions:\n";
  for (const auto& name : order_) {
    const Spec& sp = specs_.at(name);
    std::string left = "  --" + name + (sp.kind != Kind::flag ? " " + sp.value_name : "");
    if (left.size() < 28) left.resize(28, ' '); else left += "  ";
    s += left + (sp.required ? "(required) " : "") + sp.help;
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

uint64_t Args::get_u64(const std::string& name) const { return parse_u64(str(name)).value_or(0); }

std::optional<uint64_t> Args::get_u64_opt(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return parse_u64(str(name));
}

std::vector<uint64_t> Args::get_u64_list(const std::string& name) const {
  auto v = u64_list(name, nullptr);
  return v ? *v : std::vector<uint64_t>{};
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
