// kill_child: the crash harness of the persist tests. run_killed() forks, runs `child` in
// the child process (its bool result becomes exit code 0 or 3), sends SIGKILL after
// delay_us and reaps it. A child that finished before the kill must have exited 0
// (checked). Returns true when the kill landed first.
#pragma once

#include <csignal>
#include <cstdint>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

namespace st::test {

template <class Child>
bool run_killed(uint64_t delay_us, Child&& child) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(child() ? 0 : 3);
  ::usleep(useconds_t(delay_us));
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (!WIFEXITED(status)) return true;
  CHECK(WEXITSTATUS(status) == 0);
  return false;
}

}  // namespace st::test
