// bintrie_cli_test: `statetree root --tree bintrie` end to end on genesis files built from
// the vectors (go-ethereum's TestBinaryGenesisCommit, the two-account case) for both hashes,
// and one-line errors with exit 2 for bad input; `statetree bintrie-bench` on a small tree.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/run_command.h"
#include "test_paths.h"

using st::reference::run_statetree;

namespace {
const std::string kData = STATETREE_TEST_DATA_DIR "/bintrie/";
}

TEST_CASE("statetree root --tree bintrie: go-ethereum's binary genesis root") {
  const auto r = run_statetree("root --tree bintrie --alloc " + kData + "geth_binary_genesis.json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "0x0870fd587c41dc778019de8c5cb3193fe4ef1f417976461952d3712ba39163f5\n");
}

TEST_CASE("statetree root --tree bintrie --json: two accounts, both hashes, 1 and 2 threads") {
  const std::pair<const char*, const char*> cases[] = {
      {"sha256", "0xebad0f9060a91930048af358c5ffbe5f2940056b097fd71c3b67762c1c9dcd56"},
      {"blake3", "0x36dffbbe7f80c4c58e34aabb5deae4d5486f2789a8b3a2b85cf1f29687b7e3b5"}};
  for (const auto& [hash, root] : cases) {
    for (const char* threads : {"1", "2"}) {
      const auto r = run_statetree(std::string("root --tree bintrie --json --threads ") + threads + " --hash " + hash +
                                   " --alloc " + kData + "two_accounts_genesis.json");
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j["root"] == root);
      CHECK(j["hash"] == hash);
      CHECK(j["accounts"] == 2);
      CHECK(j["leaves"] == 2 + 2 + 130 + 9);
    }
  }
}

TEST_CASE("statetree root --tree bintrie: bad input is a one-line error, exit 2") {
  for (const std::string& args : std::vector<std::string>{"root --tree bintrie", "root --tree bintrie --alloc /nonexistent.json",
                                 "root --tree bintrie --alloc " + kData + "geth_binary_genesis.json --hash md5",
                                 "root --tree bintrie --alloc " + kData + "geth_binary_genesis.json --bogus"}) {
    CAPTURE(args);
    const auto r = run_statetree(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("statetree root") == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  // A balance over 128 bits does not fit the basic-data leaf.
  const std::string big = "/tmp/statetree_bintrie_big_balance.json";
  std::FILE* f = std::fopen(big.c_str(), "w");
  REQUIRE(f);
  std::fputs("{\"0x00000000000000000000000000000000000000aa\": {\"balance\": \"0x1000000000000000000000000000000000\"}}", f);
  std::fclose(f);
  const auto r = run_statetree("root --tree bintrie --alloc " + big);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("128 bits") != std::string::npos);
  std::remove(big.c_str());
}

TEST_CASE("statetree bintrie-bench --json on a small tree") {
  const auto r = run_statetree("bintrie-bench --keys 3000 --writes 64 --reps 2 --gd 4,5 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["from_scratch"]["stems"] == 3000);
  CHECK(j["from_scratch"]["hash32_messages"] == 3000);
  CHECK(j["blobs"].size() == 2);
  CHECK(j["blobs"][1]["full_blob_bytes"] == 1042);
  CHECK(j["incremental_update"]["leaf_hashes"].get<int>() <= 64);
  CHECK(j["key_proof_bytes"]["median"].get<double>() > 300);
  const auto bad = run_statetree("bintrie-bench --keys 1");
  CHECK(bad.exit_code == 2);
}
