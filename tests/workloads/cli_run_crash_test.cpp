// cli_run_crash_test: a pipelined `statetree run` (two blocks in flight) SIGKILLed at random
// moments, on both trees and both stores (arena, RocksDB). Each kill starts from a copy of the same state and block file; the
// delays are seeded, one in each of K equal slices of 0.9 x an uninterrupted run's wall time (so
// they spread from before the first commit to near the last; more points in the first half when
// the machine's load changes under the test). After each kill: `verify`
// passes; the writer lock is free; the root is the initial root or one of the roots `apply`
// reports per block (the last published block, p); no block the killed run reported on
// stdout (its JSON lines up to the kill, each with apply's root) is lost (p >= reported),
// and stdout lags the published state by at most the one block whose line was being
// printed; a `run --inflight 2` of the file's blocks after p ends at apply's final root.
// A second case checks that the checker fails on a database off the reference roots and on
// a database behind what the killed run reported.
#include <doctest/doctest.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/db_lock.h"
#include "kernels/support/splitmix64.h"
#include "reference/run_command.h"
#include "workloads/block_file.h"

using st::reference::run_statetree;
using st::reference::wait_exit;
using nlohmann::json;

namespace {

std::string tmp_path(const std::string& name) {
  const std::string d = "/tmp/statetree_run_crash_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  return d;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string copy_db(const std::string& from, const std::string& name) {
  const std::string to = tmp_path(name);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  return to;
}

// Starts `statetree ARGS...` directly (a signal reaches it) with stdout in OUT and stderr in
// OUT.err.
pid_t spawn(const std::vector<std::string>& args, const std::string& out) {
  return st::reference::spawn_statetree(args, out, out + ".err");
}

// The reference: roots[0] is the initial root, roots[i + 1] the root after block i.
struct Reference {
  std::vector<std::string> roots;
  size_t blocks() const { return roots.size() - 1; }
};

// What one killed run left behind, judged against the reference. errors is empty when the
// database reopened at the last published block with nothing reported lost.
struct KillCheck {
  size_t reported = 0;                // complete block lines on stdout before the kill
  bool partial_line = false;          // a block line cut off by the kill
  std::optional<size_t> published;    // blocks in the reopened database's root
  std::vector<std::string> errors;
};

KillCheck check_killed(const std::string& db, const std::string& stdout_text, const Reference& ref) {
  KillCheck k;
  std::istringstream in(stdout_text);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof() && !stdout_text.empty() && stdout_text.back() != '\n') {
      k.partial_line = true;  // the kill cut this line: not reported
      break;
    }
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      k.errors.push_back("stdout line is not JSON: " + line.substr(0, 80));
      continue;
    }
    if (j.value("type", "") != "block") continue;
    const size_t i = j.value("index", size_t(0));
    if (i != k.reported) k.errors.push_back("block line " + std::to_string(k.reported) + " has index " + std::to_string(i));
    else if (i >= ref.blocks() || j.value("root", "") != ref.roots[i + 1])
      k.errors.push_back("block " + std::to_string(i) + " reported root " + j.value("root", "") + ", not apply's");
    ++k.reported;
  }
  auto v = run_statetree("verify --db " + db + " --json");
  if (v.exit_code != 0) {
    k.errors.push_back("verify failed (exit " + std::to_string(v.exit_code) + "): " + v.err);
    return k;
  }
  const json vj = json::parse(v.out, nullptr, false);
  const std::string root = vj.is_object() ? vj.value("root", "") : "";
  for (size_t p = 0; p < ref.roots.size(); ++p)
    if (ref.roots[p] == root) k.published = p;
  if (!k.published) {
    k.errors.push_back("reopened root " + root + " is not the initial root nor any block's root");
    return k;
  }
  if (*k.published < k.reported)
    k.errors.push_back("lost blocks: " + std::to_string(k.reported) + " reported committed, " +
                       std::to_string(*k.published) + " published");
  // Each block's line is printed (and flushed) before the next block's commit begins.
  if (*k.published > k.reported + 1 + (k.partial_line ? 1 : 0))
    k.errors.push_back("stdout " + std::to_string(k.reported) + " blocks behind the published " +
                       std::to_string(*k.published));
  std::unique_ptr<st::io::WriterLock> lock;
  if (st::io::Status s = st::io::WriterLock::acquire(db, &lock); !s.ok())
    k.errors.push_back("writer lock not free after the kill: " + s.message());
  return k;
}

const std::string kBuild = " --accounts 300 --contracts 4 --slots-per-contract 400 --seed 3 --db ";
constexpr size_t kBlocks = 12;

// A state of TREE in DB0, a block file of kBlocks mainnet-like blocks, and apply's roots.
Reference prepare(const std::string& tree, const std::string& store, const std::string& db0, const std::string& file,
                  std::vector<st::state::Block>* blocks) {
  REQUIRE(run_statetree("build --tree " + tree + " --store " + store + kBuild + db0).exit_code == 0);
  auto w = run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks " + std::to_string(kBlocks) +
                         " --seed 4 --out " + file);
  REQUIRE_MESSAGE(w.exit_code == 0, w.err);
  REQUIRE(!st::workloads::read_block_file(file, blocks));
  REQUIRE(blocks->size() == kBlocks);
  Reference ref;
  auto v = run_statetree("verify --db " + db0 + " --json");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  ref.roots.push_back(json::parse(v.out)["root"].get<std::string>());
  const std::string db = copy_db(db0, "apply_" + tree);
  auto ap = run_statetree("apply --db " + db + " --blocks " + file + " --json");
  REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
  const json aj = json::parse(ap.out);
  for (const json& b : aj["blocks"]) ref.roots.push_back(b["root"].get<std::string>());
  REQUIRE(ref.blocks() == kBlocks);
  std::filesystem::remove_all(db);
  return ref;
}

}  // namespace

TEST_CASE("statetree run --inflight 2: SIGKILL at random moments reopens at the last published block") {
  constexpr int kKills = 10;
  const std::pair<std::string, std::string> kinds[] = {{"mpt", "arena"}, {"bintrie", "arena"}, {"mpt", "rocksdb"}, {"bintrie", "rocksdb"}};
  for (const auto& kind : kinds) {
    const std::string &tree = kind.first, &store = kind.second;
    CAPTURE(tree);
    CAPTURE(store);
    const std::string db0 = tmp_path("db0_" + tree), file = tmp_path("w_" + tree + ".bal"),
                      out = tmp_path("out_" + tree), rest = tmp_path("rest_" + tree + ".bal");
    std::vector<st::state::Block> blocks;
    const Reference ref = prepare(tree, store, db0, file, &blocks);

    // Uninterrupted runs: each must end at apply's root; the shorter wall time of two (the
    // first may pay for a cold page cache) spreads the kills.
    long run_us = 0;
    for (int rep = 0; rep < 2; ++rep) {
      const std::string db = copy_db(db0, "full_" + tree);
      const auto t0 = std::chrono::steady_clock::now();
      const pid_t pid = spawn({"run", "--db", db, "--blocks", file, "--inflight", "2", "--json"}, out);
      REQUIRE(wait_exit(pid) == 0);
      const long us = long(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
      run_us = rep == 0 ? us : std::min(run_us, us);
      const KillCheck k = check_killed(db, read_text(out), ref);
      CHECK(k.errors.empty());
      CHECK(k.reported == kBlocks);
      CHECK(k.published == kBlocks);
      std::filesystem::remove_all(db);
    }

    uint64_t rng = (tree == "mpt" ? 15 : 16) + (store == "arena" ? 0 : 2);
    int killed = 0, finished_first = 0, reopen_failures = 0, lost = 0, mid_run = 0;
    std::ostringstream published_list;
    // kKills points, one in each of kKills slices of 0.9 x the run's wall time; on a machine
    // whose load changes under the test (runs faster than the reference ones, so kills land
    // after the end), more points, drawn in the first half of the run, until half of kKills
    // really killed a run and one landed mid-run (at most 3 x kKills points).
    int points = 0;
    for (int i = 0; i < kKills || ((killed < kKills / 2 || mid_run < 1) && i < 3 * kKills); ++i, ++points) {
      CAPTURE(i);
      const std::string db = copy_db(db0, "kill_" + tree);
      const long slice_us = i < kKills ? run_us * 9 / 10 / kKills : run_us / 2;
      const long delay_us = (i < kKills ? slice_us * i : 0) + long(st::splitmix64(rng) % uint64_t(std::max(slice_us, 1L)));
      CAPTURE(delay_us);
      // The child opens its stdout after the fork: a kill before that must not leave the
      // previous run's lines there to be judged.
      std::filesystem::remove(out);
      const pid_t pid = spawn({"run", "--db", db, "--blocks", file, "--inflight", "2", "--json"}, out);
      timespec ts{delay_us / 1000000, (delay_us % 1000000) * 1000};
      ::nanosleep(&ts, nullptr);
      ::kill(pid, SIGKILL);
      const int rc = wait_exit(pid);
      if (rc == 128 + SIGKILL) ++killed;
      else if (rc == 0) ++finished_first;
      else FAIL_CHECK("run exited " << rc << " before the kill: " << read_text(out + ".err"));

      const KillCheck k = check_killed(db, read_text(out), ref);
      for (const std::string& e : k.errors) FAIL_CHECK(e);
      if (!k.published) ++reopen_failures;
      else if (*k.published < k.reported) ++lost;
      if (!k.published) {
        std::filesystem::remove_all(db);
        continue;
      }
      const size_t p = *k.published;
      published_list << ' ' << p << '(' << k.reported << ')';
      if (p > 0 && p < kBlocks) ++mid_run;
      // The blocks after p, pipelined again, end at apply's final root.
      if (p < kBlocks) {
        REQUIRE(!st::workloads::write_block_file(rest, std::vector<st::state::Block>(blocks.begin() + long(p), blocks.end())));
        auto r = run_statetree("run --db " + db + " --blocks " + rest + " --inflight 2 --json");
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        size_t n = 0;
        std::istringstream lines(r.out);
        std::string line;
        while (std::getline(lines, line)) {
          const json j = json::parse(line);
          if (j["type"] == "block") CHECK(j["root"] == ref.roots[p + 1 + n++]);
          else CHECK(j["root"] == ref.roots.back());
        }
        CHECK(n == kBlocks - p);
      }
      auto v = run_statetree("verify --db " + db + " --json");
      REQUIRE_MESSAGE(v.exit_code == 0, v.err);
      CHECK(json::parse(v.out)["root"] == ref.roots.back());
      std::filesystem::remove_all(db);
    }
    MESSAGE(tree << " (" << store << "): " << points << " kill points over a " << run_us / 1000 << " ms run: " << killed << " killed, "
                 << finished_first << " finished first, " << mid_run << " mid-run; reopen failures " << reopen_failures
                 << ", runs with lost blocks " << lost << "; published (reported):" << published_list.str());
    CHECK(reopen_failures == 0);
    CHECK(lost == 0);
    CHECK(killed >= kKills / 2);
    CHECK(mid_run >= 1);
    for (const std::string& p : {db0, out, out + ".err"}) std::filesystem::remove_all(p);
    for (const std::string& p : {file, rest}) std::filesystem::remove(p);
  }
}

TEST_CASE("run crash checker: a root off the reference chain and a block lost behind stdout both fail") {
  const std::string tree = "mpt";
  const std::string db0 = tmp_path("neg0"), file = tmp_path("neg.bal"), other = tmp_path("neg_other.bal");
  std::vector<st::state::Block> blocks;
  const Reference ref = prepare(tree, "arena", db0, file, &blocks);
  // A database one block past the initial state along another block file: not a reference root.
  REQUIRE(run_statetree("workload --kind mainnet_like --db " + db0 + " --blocks 1 --seed 99 --out " + other).exit_code == 0);
  const std::string off = copy_db(db0, "neg_off");
  REQUIRE(run_statetree("run --db " + off + " --blocks " + other + " --inflight 2").exit_code == 0);
  KillCheck k = check_killed(off, "", ref);
  CHECK(!k.published);
  REQUIRE(k.errors.size() == 1);
  CHECK(k.errors[0].find("is not the initial root nor any block's root") != std::string::npos);
  // The initial database, but stdout says two blocks were committed: lost blocks.
  std::string said;
  for (size_t i = 0; i < 2; ++i) said += json{{"type", "block"}, {"index", i}, {"root", ref.roots[i + 1]}}.dump() + "\n";
  k = check_killed(db0, said, ref);
  CHECK(k.published == 0u);
  CHECK(k.reported == 2);
  REQUIRE(k.errors.size() == 1);
  CHECK(k.errors[0] == "lost blocks: 2 reported committed, 0 published");
  // A database three blocks ahead of stdout's one block: stdout lags by more than one line.
  const std::string ahead = copy_db(db0, "neg_ahead");
  REQUIRE(!st::workloads::write_block_file(other, std::vector<st::state::Block>(blocks.begin(), blocks.begin() + 3)));
  REQUIRE(run_statetree("run --db " + ahead + " --blocks " + other).exit_code == 0);
  k = check_killed(ahead, json{{"type", "block"}, {"index", 0}, {"root", ref.roots[1]}}.dump() + "\n", ref);
  CHECK(k.published == 3u);
  REQUIRE(k.errors.size() == 1);
  CHECK(k.errors[0].find("stdout 1 blocks behind the published 3") != std::string::npos);
  // A held writer lock is named.
  {
    std::unique_ptr<st::io::WriterLock> held;
    REQUIRE(st::io::WriterLock::acquire(db0, &held).ok());
    k = check_killed(db0, "", ref);
    REQUIRE(k.errors.size() == 1);
    CHECK(k.errors[0].find("writer lock not free") != std::string::npos);
  }
  for (const std::string& p : {db0, off, ahead}) std::filesystem::remove_all(p);
  for (const std::string& p : {file, other}) std::filesystem::remove(p);
}
