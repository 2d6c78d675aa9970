// cli_root_mpt: `statetree root --tree mpt` -- the Ethereum MPT state root of a genesis
// allocation (--alloc FILE, the format of workloads/data/genesis, docs/genesis.md), or the root of a plain
// trie over raw key/value pairs (--kv FILE: one `hexkey hexvalue` per line; blank lines and
// lines starting with '#' are skipped; a later line for the same key wins; an empty value
// "0x" deletes; --secure hashes every key with keccak256 first).
//
// Output: the root as 0x-hex on stdout, or one JSON object with --json. When the genesis
// file carries "expected_state_root", the result is compared: a mismatch exits 1. Bad input
// (unreadable file, malformed line, bad hex, conflicting options) is one line on stderr and
// exit 2.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/mpt/builder.h"
#include "engine/mpt/state.h"
#include "workloads/cli_args.h"
#include "workloads/genesis.h"
#include "workloads/report.h"

namespace st::cli {

namespace {

// Byte-order key comparison for the --kv map (std::less of std::vector<uint8_t> would do the
// same, but GCC 12 warns on its memcmp: a known -Wstringop-overread false positive).
struct BytesLess {
  bool operator()(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) const {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
    return c != 0 ? c < 0 : a.size() < b.size();
  }
};
using KvMap = std::map<std::vector<uint8_t>, std::vector<uint8_t>, BytesLess>;

int fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "statetree root: %s\n", msg.c_str());
  return code;
}

bool parse_hex(const std::string& s0, std::vector<uint8_t>* out) {
  std::string_view s = s0;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.size() % 2) return false;
  out->clear();
  auto v = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = v(s[i]), lo = v(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(uint8_t(hi * 16 + lo));
  }
  return true;
}

// Reads the --kv file into a key-ordered map (last write wins, empty value = delete).
bool read_kv(const std::string& path, bool secure, KvMap* kv,
             std::string* err) {
  std::ifstream in(path);
  if (!in) { *err = "cannot open --kv file '" + path + "'"; return false; }
  std::string line;
  size_t lineno = 0;
  std::vector<uint8_t> key, value;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    std::vector<std::string> fields;
    size_t p = b;
    while (p < line.size()) {
      const size_t e = line.find_first_of(" \t", p);
      fields.push_back(line.substr(p, e == std::string::npos ? std::string::npos : e - p));
      if (e == std::string::npos) break;
      p = line.find_first_not_of(" \t", e);
      if (p == std::string::npos) break;
    }
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (fields.size() != 2) { *err = where + "expected 'hexkey hexvalue', got " + std::to_string(fields.size()) + " fields"; return false; }
    if (!parse_hex(fields[0], &key)) { *err = where + "bad hex key '" + fields[0] + "'"; return false; }
    if (!parse_hex(fields[1], &value)) { *err = where + "bad hex value '" + fields[1] + "'"; return false; }
    if (secure) {
      std::vector<uint8_t> h(32);
      st::kernels::keccak256(key.data(), key.size(), h.data());
      key.swap(h);
    } else if (key.size() > (1u << 20)) {
      *err = where + "key longer than 1 MiB";
      return false;
    }
    if (value.size() > (1u << 30)) { *err = where + "value longer than 1 GiB"; return false; }
    if (value.empty()) kv->erase(key);
    else (*kv)[key] = value;
  }
  if (in.bad()) { *err = "error reading --kv file '" + path + "'"; return false; }
  return true;
}

}  // namespace

void root_mpt_options(Args& args) {
  args.option("tree", "mpt", "the tree (this handler: mpt)");
  args.option("alloc", "FILE", "genesis allocation JSON (format: docs/genesis.md)");
  args.option("kv", "FILE", "key/value pairs: one 'hexkey hexvalue' per line");
  args.flag("secure", "with --kv: the path of each key is keccak256(key)");
  args.option_u64("threads", "N", "threads for the batch builder (0 = all)", 0, 1024, 1);
  args.pin_option("threads");
  args.flag("json", "print one JSON object");
}

int root_mpt(int argc, char** argv) {
  Args args("statetree root --tree mpt", "State root of a genesis allocation, or root of a plain/secure trie over key/value pairs.");
  root_mpt_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  if (args.given("alloc") == args.given("kv")) return fail("give exactly one of --alloc FILE or --kv FILE");
  if (args.given("secure") && !args.given("kv")) return fail("--secure applies to --kv only");
  std::string err;
  const uint64_t threads = args.get_u64("threads");
  mpt::BuildOptions opt;
  opt.threads = unsigned(threads);

  nlohmann::json j;
  j["tree"] = "mpt";
  mpt::Hash32 root;
  std::optional<st::state::Bytes32> expected;
  const uint64_t t0 = report::now_ns();
  uint64_t t1 = t0;
  if (args.given("alloc")) {
    auto r = st::workloads::load_genesis_file(args.str("alloc"));
    if (auto* e = std::get_if<std::string>(&r)) return fail(*e);
    const auto& g = std::get<st::workloads::GenesisFile>(r);
    t1 = report::now_ns();
    root = mpt::allocation_root(g.alloc, opt);
    expected = g.expected_state_root;
    j["source"] = "alloc";
    j["file"] = args.str("alloc");
    j["accounts"] = g.alloc.accounts.size();
    if (!g.network.empty()) j["network"] = g.network;
  } else {
    KvMap kv;
    if (!read_kv(args.str("kv"), args.given("secure"), &kv, &err)) return fail(err);
    std::vector<mpt::KeyValue> pairs;
    pairs.reserve(kv.size());
    for (const auto& [k, v] : kv) pairs.push_back({k.data(), uint32_t(k.size()), v.data(), uint32_t(v.size())});
    t1 = report::now_ns();
    root = mpt::build_root(pairs, opt);
    j["source"] = "kv";
    j["file"] = args.str("kv");
    j["secure"] = args.given("secure");
    j["entries"] = pairs.size();
  }
  const uint64_t t2 = report::now_ns();
  const std::string root_hex = "0x" + report::hex(root);
  j["root"] = root_hex;
  j["load_seconds"] = double(t1 - t0) * 1e-9;
  j["root_seconds"] = double(t2 - t1) * 1e-9;
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
