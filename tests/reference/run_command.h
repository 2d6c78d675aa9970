// run_command: runs the statetree binary with arguments (via /bin/sh) and captures its
// stdout and exit status, for end-to-end CLI tests; or starts it as a child process (no
// shell, so a signal sent to the child reaches the binary) and waits for it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

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

// Starts `statetree ARGS...` directly with stdout in out_path and stderr in err_path; as uid
// 65534 when unprivileged is set and this process is root. Requires the fork to succeed.
pid_t spawn_statetree(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path,
                      bool unprivileged = false);

// Waits for the child: its exit status, or 128 + the signal that ended it. Requires waitpid
// to succeed.
int wait_exit(pid_t pid);

}  // namespace st::reference
