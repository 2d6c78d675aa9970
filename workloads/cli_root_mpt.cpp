// cli_root_mpt: `statetree root --tree mpt` -- the Ethereum MPT state root of a genesis
// allocation (--alloc FILE, the format of workloads/data/genesis, docs/genesis.md), or the root of a plain
// trie over raw key/value pairs (--kv FILE, read by kv_file.h: one `hexkey hexvalue` per
// line; blank lines and lines starting with '#' are skipped; a later line for the same key
// wins; an empty value "0x" deletes; --secure hashes every key with keccak256 first).
//
// Output: the root as 0x-hex on stdout, or one JSON object with --json. When the genesis
// file carries "expected_state_root", the result is compared: a mismatch exits 1. Bad input
// (unreadable file, malformed line, bad hex, conflicting options) is one line on stderr and
// exit 2.
#include <cstdio>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/mpt/builder.h"
#include "engine/mpt/state.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/genesis.h"
#include "workloads/kv_file.h"
#include "workloads/report.h"

namespace st::cli {

namespace {

int fail(const std::string& msg, int code = 2) { return cli_error("statetree root", msg, code); }

}  // namespace

void root_mpt_options(Args& args) {
  args.option("tree", "mpt", "the tree (this handler: mpt)");
  args.option("alloc", "FILE", "genesis allocation JSON (format: docs/genesis.md)");
  args.option("kv", "FILE", "key/value pairs: one 'hexkey hexvalue' per line");
  args.flag("secure", "with --kv: the path of each key is keccak256(key)");
  args.option_u64("threads", "N", "threads for the batch builder (0 = all)", 0, 1024, 1);
  args.pin_option("threads");
  add_json(args, "print one JSON object");
}

namespace {

// The root of the source --alloc or --kv names, timed (load, then root); the source's fields
// into *j. nullopt = go on, else the exit status.
std::optional<int> compute_root(const Args& args, const mpt::BuildOptions& opt, nlohmann::json* j, mpt::Hash32* root,
                                std::optional<st::state::Hash32>* expected) {
  const uint64_t t0 = report::now_ns();
  uint64_t t1 = t0;
  if (args.given("alloc")) {
    auto r = st::workloads::load_genesis_file(args.str("alloc"));
    if (auto* e = std::get_if<std::string>(&r)) return fail(*e);
    const auto& g = std::get<st::workloads::GenesisFile>(r);
    t1 = report::now_ns();
    *root = mpt::allocation_root(g.alloc, opt);
    *expected = g.expected_state_root;
    (*j)["source"] = "alloc";
    (*j)["file"] = args.str("alloc");
    (*j)["accounts"] = g.alloc.accounts.size();
    if (!g.network.empty()) (*j)["network"] = g.network;
  } else {
    auto r = st::workloads::read_kv_file(args.str("kv"), args.given("secure"));
    if (auto* e = std::get_if<std::string>(&r)) return fail(*e);
    const auto& pairs = std::get<st::workloads::KvFile>(r).pairs;
    t1 = report::now_ns();
    *root = args.given("secure") ? mpt::build_secure_root(pairs, opt) : mpt::build_root(pairs, opt);
    (*j)["source"] = "kv";
    (*j)["file"] = args.str("kv");
    (*j)["secure"] = args.given("secure");
    (*j)["entries"] = pairs.size();
  }
  const uint64_t t2 = report::now_ns();
  (*j)["load_seconds"] = double(t1 - t0) * 1e-9;
  (*j)["root_seconds"] = double(t2 - t1) * 1e-9;
  return std::nullopt;
}

}  // namespace

int root_mpt(int argc, char** argv) {
  Args args("statetree root --tree mpt", "State root of a genesis allocation, or root of a plain/secure trie over key/value pairs.");
  root_mpt_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  if (args.given("alloc") == args.given("kv")) return fail("give exactly one of --alloc FILE or --kv FILE");
  if (args.given("secure") && !args.given("kv")) return fail("--secure applies to --kv only");
  const uint64_t threads = args.get_u64("threads");
  mpt::BuildOptions opt;
  opt.threads = unsigned(threads);
  nlohmann::json j;
  j["tree"] = "mpt";
  mpt::Hash32 root;
  std::optional<st::state::Hash32> expected;
  if (auto rc = compute_root(args, opt, &j, &root, &expected)) return *rc;
  const std::string root_hex = "0x" + report::hex(root);
  j["root"] = root_hex;
  j["threads"] = threads;
  j["hash"] = "keccak256";
  j["pinned_cpus"] = args.pin_cpus();
  report::stamp(j);
  int rc = 0;
  if (expected) {
    const bool match = std::equal(expected->begin(), expected->end(), root.begin());
    j["expected_root"] = "0x" + report::hex(*expected);
    j["match"] = match;
    if (!match) rc = 1;
  }
  if (args.given("json")) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s\n", root_hex.c_str());
    if (expected && rc) std::fprintf(stderr, "statetree root: MISMATCH: expected %s\n", j["expected_root"].get<std::string>().c_str());
  }
  return rc;
}

}  // namespace st::cli
