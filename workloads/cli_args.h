// cli_args: the strict command-line option layer every subcommand uses. Options are declared
// with a help line; `--name value` and `--name=value` both work. parse() checks everything it
// can know before the command runs, in one place:
//   - an unknown option, a missing value, an unexpected argument: an error naming it;
//   - a number option declared with option_u64 / option_u64_list: a whole unsigned integer
//     (decimal or 0x-hex) inside its declared range [min, max] (given or defaulted), or, with
//     option_u64_one_of, one of its declared values; a word option declared with
//     option_one_of: one of its declared words;
//   - a required option (require()) that is missing;
//   - --pin (pin_option()): every CPU exists and this process may run on it
//     (sched_getaffinity), and the command's thread count does not exceed the CPUs given.
// parse_or_exit() wraps parse() with the exit convention: --help prints the usage on stdout
// (exit 0); bad input is one line "statetree CMD: ..." on stderr (exit 2), preceded by the
// usage when no argument was given at all; on success it applies --pin. Every command's
// later errors go the same way: fail() / cli_error(), one line, the command named.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace st::cli {

class Args {
 public:
  // command: "statetree CMD" (the error prefix is its first two words).
  Args(std::string command, std::string summary);

  // Declarations (before parse). A flag takes no value; an option takes one.
  void flag(const std::string& name, const std::string& help);
  void option(const std::string& name, const std::string& value_name, const std::string& help,
              std::optional<std::string> default_value = std::nullopt);
  // An unsigned integer in [min, max]; parse() rejects anything else, naming the option.
  void option_u64(const std::string& name, const std::string& value_name, const std::string& help, uint64_t min,
                  uint64_t max, std::optional<uint64_t> default_value = std::nullopt);
  // An unsigned integer that is one of `allowed` (e.g. a page size: 4096 or 16384).
  void option_u64_one_of(const std::string& name, const std::string& value_name, const std::string& help,
                         const std::vector<uint64_t>& allowed, std::optional<uint64_t> default_value = std::nullopt);
  // A word that is one of `allowed` (e.g. --tree mpt|bintrie).
  void option_one_of(const std::string& name, const std::string& value_name, const std::string& help,
                     const std::vector<std::string>& allowed, std::optional<std::string> default_value = std::nullopt);
  // A comma-separated list of one or more unsigned integers, each in [min, max].
  void option_u64_list(const std::string& name, const std::string& value_name, const std::string& help, uint64_t min,
                       uint64_t max, std::optional<std::string> default_value = std::nullopt);
  // The command cannot run without this option (declared before).
  void require(const std::string& name);
  // Declares --pin CPU[,CPU...]. threads_option: the option holding the command's thread
  // count (0 = one per CPU available), or "" for a command that times on one thread.
  void pin_option(const std::string& threads_option = "");

  // Arguments without "--" are an error unless accepted here (then see positional()).
  void accept_positional(bool accept) { accept_positional_ = accept; }

  // Parses argv[first..argc). Returns false and sets error() on bad input.
  bool parse(int argc, char** argv, int first = 0);
  // parse() with the exit convention (header comment): nullopt = go on, else the exit status.
  std::optional<int> parse_or_exit(int argc, char** argv);
  const std::string& error() const { return error_; }
  // The command's error path after parsing: "statetree CMD: msg" on stderr (one line), returns code.
  int fail(const std::string& msg, int code = 2) const;
  bool help_requested() const { return help_; }
  std::string usage() const;
  // "statetree CMD".
  std::string prefix() const;

  bool has(const std::string& name) const;  // flag given, or option given / defaulted
  bool given(const std::string& name) const;  // explicitly on the command line
  std::string str(const std::string& name) const;  // value or default ("" if neither)

  // Values of option_u64 / option_u64_list options after a successful parse (checked there).
  uint64_t get_u64(const std::string& name) const;
  std::optional<uint64_t> get_u64_opt(const std::string& name) const;  // nullopt: not given, no default
  std::vector<uint64_t> get_u64_list(const std::string& name) const;

  // Typed getters for plain options: nullopt + error message on malformed input.
  std::optional<uint64_t> u64(const std::string& name, std::string* err) const;
  std::optional<std::vector<uint64_t>> u64_list(const std::string& name, std::string* err) const;

  // The CPUs of --pin (empty when not given), after a successful parse.
  const std::vector<int>& pin_cpus() const { return pin_cpus_; }
  // Applies --pin to the calling thread: a one-thread command's thread runs on the first CPU
  // given; a command with more threads has its calling thread, and every thread it starts
  // later, confined to the CPUs given (as taskset -c). "" on success, else the error.
  std::string apply_pin() const;

  const std::vector<std::string>& positional() const { return positional_; }

 private:
  enum class Kind { flag, text, word, u64, u64_list };
  struct Spec {
    Kind kind = Kind::text;
    std::string value_name, help;
    std::optional<std::string> default_value;
    uint64_t min = 0, max = UINT64_MAX;
    std::vector<uint64_t> allowed;  // option_u64_one_of: the values accepted (else the range)
    std::vector<std::string> words;  // option_one_of: the words accepted
    bool required = false;
  };
  bool check_values();
  bool check_pin();
  std::string command_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::string error_;
  bool help_ = false;
  bool accept_positional_ = false;
  bool pin_declared_ = false;
  std::string threads_option_;
  std::vector<int> pin_cpus_;
  unsigned pin_threads_ = 1;  // the thread count --pin was checked against (0 = all)
};

// The one error line of every command: "PREFIX: msg" on stderr, line breaks in msg turned
// into spaces; returns code (2 bad input, 1 a failed check, 70 internal).
int cli_error(const std::string& prefix, const std::string& msg, int code = 2);

// Parses a decimal (or 0x-hex) unsigned 64-bit integer strictly (whole string).
std::optional<uint64_t> parse_u64(const std::string& s);

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> available_cpu_list();
// "0-3,6" for a CPU list.
std::string cpu_list_string(const std::vector<int>& cpus);

}  // namespace st::cli
