// cli_merkle_test: `statetree merkle` end to end: roots, JSON shape, proofs, baselines, and
// one-line errors with a non-zero exit for bad input.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "reference/merkle_reference.h"
#include "reference/run_command.h"

using st::reference::run_statetree;

namespace {
std::string hex(const std::array<uint8_t, 32>& d) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";  // roots print 0x-prefixed everywhere
  for (uint8_t b : d) { s += digits[b >> 4]; s += digits[b & 15]; }
  return s;
}
}  // namespace

TEST_CASE("statetree merkle --json reports the vector root and every figure") {
  const auto r = run_statetree("merkle --leaves 3 --reps 2 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["root"] == "0x57c18f197eec50ca58d6a40b85c7833da638f394689ad4fd8e86319f8aa507a8");
  for (const char* key : {"add_ns_per_leaf", "compute_ns_per_leaf", "total_ns_per_leaf"}) {
    REQUIRE(j.contains(key));
    CHECK(j[key]["median"].get<double>() > 0);
    CHECK(j[key]["min"].get<double>() <= j[key]["max"].get<double>());
  }
  CHECK(j["kernel"].is_string());
  CHECK(j["compressions"] == 3 + 2 * (2 + 1));
}

TEST_CASE("statetree merkle baselines agree and proofs verify, for every kernel on this CPU") {
  for (const char* kernel : {"portable", "shani", "avx2", "avx512"}) {
    const auto r = run_statetree(std::string("merkle --leaves 1037 --reps 1 --baseline --proof 1036 --threads 2 --json --kernel ") + kernel);
    if (r.exit_code == 2 && (r.err.find("lacks") != std::string::npos || r.err.find("not compiled") != std::string::npos)) { MESSAGE("skipped kernel " << kernel); continue; }
    CAPTURE(kernel);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["kernel"] == kernel);
    CHECK(j["baselines_agree"] == true);
    CHECK(j["proof"]["verified"] == true);
    CHECK(j["root"] == hex(st::reference::merkle_root(st::reference::synthetic_leaves(1037), false)));
  }
}

TEST_CASE("statetree merkle --input reads fixed-size records, --double is Bitcoin's tree") {
  const std::string path = "/tmp/statetree_merkle_input_test.bin";
  std::vector<std::vector<uint8_t>> leaves(21, std::vector<uint8_t>(80));
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < leaves.size(); ++i) {
      for (size_t b = 0; b < 80; ++b) leaves[i][b] = uint8_t(i * 31 + b * 7);
      out.write(reinterpret_cast<const char*>(leaves[i].data()), 80);
    }
  }
  for (bool twice : {false, true}) {
    const auto r = run_statetree("merkle --input " + path + " --leaf-size 80 --reps 1 --json" + (twice ? " --double" : ""));
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["root"] == hex(st::reference::merkle_root(leaves, twice)));
  }
  const auto bad = run_statetree("merkle --input " + path + " --leaf-size 64");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("not a multiple") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("statetree merkle rejects bad input with one line and exit 2") {
  for (const char* args : {"merkle --leaves 0", "merkle --leaves x", "merkle --leaves 4 --kernel sha3", "merkle",
                           "merkle --leaves 4 --proof 4", "merkle --input /nonexistent/file", "merkle --leaves 4 --bogus",
                           "merkle --leaves 4 --reps 0"}) {
    CAPTURE(args);
    const auto r = run_statetree(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(run_statetree("merkle --help").exit_code == 0);
  CHECK(run_statetree("nosuchcommand").exit_code == 2);
}

TEST_CASE("statetree merkle rejects directories, signed numbers and stray arguments without crashing") {
  for (const char* args : {"merkle --input /tmp", "merkle --leaves 0x-1", "merkle --leaves ' 5'", "merkle --leaves 5 extra",
                           "merkle --leaves 99999999999", "merkle --leaves 4 --leaf-hashes --baseline"}) {
    CAPTURE(args);
    const auto r = run_statetree(args);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("statetree merkle --leaf-hashes --double is Bitcoin's tree over the given txids") {
  const std::string path = "/tmp/statetree_merkle_txids_test.bin";
  std::vector<st::reference::Digest32> txids(7);
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < txids.size(); ++i) {
      for (size_t b = 0; b < 32; ++b) txids[i][b] = uint8_t(i * 13 + b * 101);
      out.write(reinterpret_cast<const char*>(txids[i].data()), 32);
    }
  }
  const auto r = run_statetree("merkle --input " + path + " --leaf-hashes --double --reps 1 --proof 6 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["root"] == hex(st::reference::merkle_root_from_hashes(txids, true)));
  CHECK(j["proof"]["verified"] == true);
  std::remove(path.c_str());
}

TEST_CASE("Bitcoin block 100,000: its four txids give its header's merkle root") {
  // Display order (byte-reversed), as block explorers print them.
  const char* txids[] = {"8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87",
                         "fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4",
                         "6359f0868171b1d194cbee1af2f16ea598ae8fad666d9b012c8ed2b79a236ec4",
                         "e9a66845e05d5abc0ad04ec80f774a7e585c6e8db975962d069a522137b80c1d"};
  const std::string header_root = "f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766";
  auto reversed_bytes = [](const std::string& display) {
    std::string bytes;
    for (size_t i = display.size(); i >= 2; i -= 2) bytes += char(std::stoi(display.substr(i - 2, 2), nullptr, 16));
    return bytes;
  };
  const std::string path = "/tmp/statetree_block100000.bin";
  {
    std::ofstream out(path, std::ios::binary);
    for (const char* t : txids) out << reversed_bytes(t);
  }
  const auto r = run_statetree("merkle --input " + path + " --leaf-hashes --double --reps 1 --json");
  REQUIRE(r.exit_code == 0);
  const std::string root0x = nlohmann::json::parse(r.out)["root"];
  REQUIRE(root0x.rfind("0x", 0) == 0);
  const std::string root = root0x.substr(2);
  std::string display;
  for (size_t i = root.size(); i >= 2; i -= 2) display += root.substr(i - 2, 2);
  CHECK(display == header_root);
  std::remove(path.c_str());
}
