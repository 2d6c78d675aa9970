// cli_db_lock_test: one writer per database and readers that see one published state, end
// to end: while `statetree commit` runs, a second commit and a rebuild are refused at once
// (exit 2, one line naming the holder's pid and command) and verify still passes; after the
// holder is SIGKILLed the next commit takes the lock over; verify / read-bench / get --proof
// run in a loop beside a committing writer report nothing wrong; a read-only database
// (write permission removed; run as an unprivileged uid when the tests run as root, where
// permissions do not bind) verifies and answers.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "reference/run_command.h"
#include "tests/workloads/cli_test_util.h"
#include "workloads/synthetic_state.h"

using st::reference::run_statetree;
using st::reference::wait_exit;

namespace {

std::string tmp_dir(const std::string& name) { return st::test::fresh_tmp_path("cli_lock", name); }


// Starts `statetree ARGS...` with stdout / stderr in base.out / base.err; as uid 65534 when
// unprivileged is set and this process is root.
pid_t spawn(const std::vector<std::string>& args, const std::string& base, bool unprivileged = false) {
  return st::reference::spawn_statetree(args, base + ".out", base + ".err", unprivileged);
}

using st::test::hex0x;

const char* kBuild = "build --tree mpt --accounts 2000 --contracts 8 --slots-per-contract 400 --seed 3 --db ";

}  // namespace

TEST_CASE("statetree commit: a second writer is refused at once naming the holder; a SIGKILLed holder's lock is taken over") {
  const std::string db = tmp_dir("two_writers"), base = db + "_holder";
  REQUIRE(run_statetree(kBuild + db).exit_code == 0);
  const pid_t holder = spawn({"commit", "--db", db, "--blocks", "1000000", "--writes", "64"}, base);
  // The holder writes "PID CMDLINE" into DIR/LOCK once it holds the lock.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (st::test::read_text(db + "/LOCK").rfind(std::to_string(holder) + " ", 0) != 0) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string holder_says = "database " + db + " is locked by pid " + std::to_string(holder) + " (";
  // a second commit, a rebuild in place, and a --force build of another tree (which would
  // delete the database's files first): each refused, nothing touched
  for (const std::string& cmd : {"commit --db " + db + " --blocks 1", std::string(kBuild) + db + " --force",
                                 "build --tree bintrie --accounts 100 --force --db " + db}) {
    CAPTURE(cmd);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_statetree(cmd);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));  // refused, never waits for the holder
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    REQUIRE(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.find(holder_says) != std::string::npos);
    CHECK(r.err.find("statetree commit --db " + db + " --blocks 1000000 --writes 64)") != std::string::npos);
  }
  CHECK(run_statetree("verify --db " + db).exit_code == 0);  // readers do not need the lock

  ::kill(holder, SIGKILL);
  CHECK(wait_exit(holder) == 128 + SIGKILL);
  CHECK(st::test::read_text(db + "/LOCK").rfind(std::to_string(holder) + " ", 0) == 0);  // its text stays behind
  const auto c = run_statetree("commit --db " + db + " --blocks 2");
  CHECK(c.err == "");
  CHECK(c.exit_code == 0);
  CHECK(run_statetree("verify --db " + db).exit_code == 0);
  std::filesystem::remove_all(db);
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
}

TEST_CASE("statetree verify / read-bench / get beside a committing writer: no false corruption, no wrong answer") {
  const std::string db = tmp_dir("readers"), base = db + "_writer", rbase = db + "_reader";
  REQUIRE(run_statetree(kBuild + db).exit_code == 0);
  st::state::SyntheticSpec spec{2000, 8, 400, 3};
  st::state::SyntheticState state(spec);
  const auto key = *state.slot_key(1, 0);  // exists in every state (writes never delete it)
  const pid_t writer = spawn({"commit", "--db", db, "--blocks", "40", "--writes", "512"}, base);
  const std::vector<std::vector<std::string>> readers = {
      {"verify", "--db", db},
      {"read-bench", "--db", db, "--keys", "64", "--qd", "1,4", "--reps", "1", "--single", "8"},
      {"get", "--db", db, "--address", hex0x(key.address.data(), 20), "--slot", hex0x(key.slot->data(), 32), "--proof"},
  };
  int rounds = 0, status = 0;
  while (::waitpid(writer, &status, WNOHANG) == 0) {
    for (const auto& args : readers) {
      const int rc = wait_exit(spawn(args, rbase));
      CAPTURE(args[0]);
      CAPTURE(st::test::read_text(rbase + ".err"));
      CHECK(rc == 0);
    }
    ++rounds;
  }
  REQUIRE(WIFEXITED(status));
  CAPTURE(st::test::read_text(base + ".err"));
  CHECK(WEXITSTATUS(status) == 0);
  MESSAGE(rounds << " reader rounds beside 40 commits");
  CHECK(rounds >= 1);
  CHECK(run_statetree("verify --db " + db).exit_code == 0);
  std::filesystem::remove_all(db);
  for (const std::string& b : {base, rbase}) {
    std::filesystem::remove(b + ".out");
    std::filesystem::remove(b + ".err");
  }
}

TEST_CASE("statetree verify / get / read-bench on a read-only database") {
  const std::string db = tmp_dir("read_only"), base = db + "_reader";
  REQUIRE(run_statetree(kBuild + db).exit_code == 0);
  REQUIRE(run_statetree("commit --db " + db + " --blocks 2 --writes 64").exit_code == 0);
  std::filesystem::remove(db + "/READERS");  // as a database copied without it
  for (const auto& e : std::filesystem::directory_iterator(db)) REQUIRE(::chmod(e.path().c_str(), 0444) == 0);
  REQUIRE(::chmod(db.c_str(), 0555) == 0);
  st::state::SyntheticSpec spec{2000, 8, 400, 3};
  st::state::SyntheticState state(spec);
  const auto key = *state.slot_key(1, 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"verify", "--db", db},
        std::vector<std::string>{"get", "--db", db, "--address", hex0x(key.address.data(), 20), "--proof"},
        std::vector<std::string>{"read-bench", "--db", db, "--keys", "64", "--qd", "2", "--reps", "1", "--single", "4"}}) {
    CAPTURE(args[0]);
    const int rc = wait_exit(spawn(args, base, true));
    CAPTURE(st::test::read_text(base + ".err"));
    REQUIRE(rc != 125);  // could not drop privileges
    CHECK(rc == 0);
  }
  // A writer cannot lock it: one line, no crash.
  const int rc = wait_exit(spawn({"commit", "--db", db, "--blocks", "1"}, base, true));
  CHECK(rc != 0);
  CHECK(rc < 128);
  const std::string err = st::test::read_text(base + ".err");
  CHECK(err.find('\n') == err.size() - 1);
  CHECK(!std::filesystem::exists(db + "/READERS"));
  REQUIRE(::chmod(db.c_str(), 0755) == 0);
  std::filesystem::remove_all(db);
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
}
