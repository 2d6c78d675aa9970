// run_command: runs the statetree binary with arguments (via /bin/sh) and captures its
// stdout and exit status, for end-to-end CLI tests.
#pragma once

#include <string>

namespace st::reference {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// args is appended to the binary path verbatim (shell syntax).
CommandResult run_statetree(const std::string& args);

}  // namespace st::reference
