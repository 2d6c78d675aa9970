// cli_root_mpt_test: `statetree root --tree mpt` end to end: genesis roots (text and JSON,
// expected-root check), --kv plain and --secure, and one-line errors with exit 2.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"
#include "test_paths.h"

using st::reference::run_statetree;

namespace {
const std::string kVec = std::string(STATETREE_GENESIS_DIR) + "/";
const std::string kData = std::string(STATETREE_TEST_DATA_DIR) + "/mpt/";

std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/statetree_cli_root_mpt_" + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("statetree root --tree mpt --alloc: genesis roots") {
  auto r = run_statetree("root --tree mpt --alloc " + kVec + "sepolia_genesis_alloc.json");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0x5eb6e371a698b8d68f665192350ffcecbbbf322916f4b51bd79bb6887da3f494\n");
  r = run_statetree("root --tree mpt --threads 2 --json --alloc " + kVec + "hoodi_genesis_alloc.json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["root"] == "0xda87d7f5f91c51508791bbcbd4aa5baf04917830b86985eeb9ad3d5bfb657576");
  CHECK(j["match"] == true);
  CHECK(j["accounts"] == 335);
  // a changed expected root is reported as a failed check (exit 1)
  std::ifstream in(kVec + "sepolia_genesis_alloc.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t p = text.find("5eb6e371");
  REQUIRE(p != std::string::npos);
  text[p] = '6';
  r = run_statetree("root --tree mpt --json --alloc " + write_tmp("bad_expected.json", text));
  CHECK(r.exit_code == 1);
  CHECK(nlohmann::json::parse(r.out)["match"] == false);
}

TEST_CASE("statetree root --tree mpt --kv: plain and secure") {
  auto r = run_statetree("root --tree mpt --kv " + kData + "family16.kv");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0xb97a477880c8e7df56c58bad768a4d6bdcc1ba4ae8a635c0f5ac7f28b7bd945c\n");
  r = run_statetree("root --tree mpt --json --kv " + kData + "dogs_unordered.kv");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["root"] == "0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3");  // trieanyorder "dogs"
  CHECK(j["entries"] == 3);
  r = run_statetree("root --tree mpt --secure --kv " + kData + "dogs_unordered.kv");
  CHECK(r.out == "0xd4cd937e4a4368d7931a9cf51686b7e10abb3dce38a39000fd7902a092b64585\n");  // its secure twin
  r = run_statetree("root --tree mpt --kv " + write_tmp("empty.kv", "# nothing\n\n"));
  CHECK(r.out == "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421\n");
}

TEST_CASE("statetree root --tree mpt: bad input is one line on stderr and exit 2") {
  const std::string cases[] = {
      "root --tree mpt",
      "root --tree mpt --kv a --alloc b",
      "root --tree mpt --alloc /nonexistent/file.json",
      "root --tree mpt --kv /nonexistent/file.kv",
      "root --tree mpt --secure --alloc " + kVec + "sepolia_genesis_alloc.json",
      "root --tree mpt --kv " + write_tmp("odd.kv", "abc 01\n"),
      "root --tree mpt --kv " + write_tmp("bad.kv", "0011 zz\n"),
      "root --tree mpt --kv " + write_tmp("three.kv", "00 11 22\n"),
      "root --tree mpt --kv " + write_tmp("one.kv", "00\n"),
      "root --tree mpt --threads x --kv " + kData + "family16.kv",
      "root --tree mpt --alloc " + write_tmp("broken.json", "{\"alloc\": {\"0x12\": \"1\"}}"),
      "root --tree mpt --bogus",
  };
  for (const auto& c : cases) {
    CAPTURE(c);
    auto r = run_statetree(c);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  auto r = run_statetree("root --tree mpt --kv " + write_tmp("line.kv", "00 11\n0x0g 11\n"));
  CHECK(r.err.find(":2:") != std::string::npos);
  CHECK(run_statetree("root --tree mpt --help").exit_code == 0);
}
