// run_command: see run_command.h.
#include "run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace st::reference {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

std::string statetree_binary() {
  const char* env = std::getenv("STATETREE_BINARY");
  return env ? env : STATETREE_BINARY;
}

CommandResult run_statetree(const std::string& args) {
  const std::string bin = statetree_binary();
  const std::string base = "/tmp/statetree_cli_test_" + std::to_string(getpid());
  const std::string cmd = "'" + bin + "' " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

}  // namespace st::reference
