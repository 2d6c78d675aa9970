// cli_args: a small, strict command-line option parser shared by every subcommand.
// Options are declared with a help line; `--name value` and `--name=value` both work;
// an unknown option, a missing value or a malformed number is an error (one line, caller
// exits non-zero). `--help` is always accepted and prints the usage.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace st::cli {

class Args {
 public:
  Args(std::string command, std::string summary);

  // Declarations (before parse). A flag takes no value; an option takes one.
  void flag(const std::string& name, const std::string& help);
  void option(const std::string& name, const std::string& value_name, const std::string& help,
              std::optional<std::string> default_value = std::nullopt);

  // Arguments without "--" are an error unless accepted here (then see positional()).
  void accept_positional(bool accept) { accept_positional_ = accept; }

  // Parses argv[first..argc). Returns false and sets error() on bad input.
  bool parse(int argc, char** argv, int first = 0);
  const std::string& error() const { return error_; }
  bool help_requested() const { return help_; }
  std::string usage() const;

  bool has(const std::string& name) const;  // flag given, or option given / defaulted
  bool given(const std::string& name) const;  // explicitly on the command line
  std::string str(const std::string& name) const;  // value or default ("" if neither)

  // Typed getters: nullopt + error message on malformed input.
  std::optional<uint64_t> u64(const std::string& name, std::string* err) const;
  std::optional<std::vector<uint64_t>> u64_list(const std::string& name, std::string* err) const;

  const std::vector<std::string>& positional() const { return positional_; }

 private:
  struct Spec {
    bool takes_value = false;
    std::string value_name, help;
    std::optional<std::string> default_value;
  };
  std::string command_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::string error_;
  bool help_ = false;
  bool accept_positional_ = false;
};

// Parses a decimal (or 0x-hex) unsigned 64-bit integer strictly (whole string).
std::optional<uint64_t> parse_u64(const std::string& s);

}  // namespace st::cli
