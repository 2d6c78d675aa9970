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

// The statetree binary under test: $STATETREE_BINARY, else the one this build made.
std::string statetree_binary();

// args is appended to the binary path verbatim (shell syntax).
CommandResult run_statetree(const std::string& args);

}  // namespace st::reference
