// bal_reference_test: the BAL codec against independent answers: the devnet-shaped vector
// (its RLP and bal_hash), and an independent encoder (tests/reference/bal_rlp_reference.py,
// python3-rlp) run on the JSON form of seeded random BALs and block files, whose hex must
// equal the C++ encoding byte for byte. The JSON form round-trips through the model.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

#include "engine/state/bal.h"
#include "workloads/bal_json.h"
#include "workloads/u256.h"
#include "test_paths.h"

using namespace st::state;
using st::workloads::bal_from_json;
using st::workloads::bal_to_json;
using st::workloads::block_to_json;
using nlohmann::json;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint8_t> unhex(const std::string& s) {
  auto v = st::workloads::parse_hex_bytes(s, true);
  REQUIRE(std::holds_alternative<std::vector<uint8_t>>(v));
  return std::get<std::vector<uint8_t>>(v);
}

// The Python interpreter that has python3-rlp (Debian's), else python3 on PATH.
std::string python() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

// Runs the reference encoder on a JSON document; returns its hex output (no newline).
std::string reference_hex(const json& doc) {
  const std::string base = "/tmp/statetree_bal_ref_" + std::to_string(getpid());
  {
    std::ofstream f(base + ".json");
    f << doc.dump();
  }
  const std::string script = std::string(STATETREE_VECTORS_DIR) + "/../reference/bal_rlp_reference.py";
  const std::string cmd = python() + " '" + script + "' " + base + ".json > " + base + ".hex";
  const int rc = std::system(cmd.c_str());
  REQUIRE_MESSAGE(rc == 0, "the reference encoder failed: " << cmd);
  std::string out = slurp(base + ".hex");
  std::remove((base + ".json").c_str());
  std::remove((base + ".hex").c_str());
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string hex(const std::vector<uint8_t>& b) { return st::workloads::bytes_to_hex(b.data(), b.size(), false); }

Hash32 rand_u256(std::mt19937_64& rng) {
  Hash32 v{};
  const int bytes = int(rng() % 33);  // 0..32 significant bytes: zero, small, full width
  for (int i = 32 - bytes; i < 32; ++i) v[size_t(i)] = uint8_t(rng());
  return v;
}

// A canonical random BAL: sorted unique accounts, slots, reads; strictly increasing indices.
BlockAccessList random_bal(std::mt19937_64& rng, uint32_t tx_count) {
  std::map<Address, AccountChanges> accs;
  const int n = int(rng() % 12);
  for (int k = 0; k < n; ++k) {
    Address a;
    for (auto& b : a) b = uint8_t(rng());
    if (rng() % 4 == 0) a.fill(0), a[19] = uint8_t(rng());  // leading zero bytes in addresses
    if (accs.count(a)) continue;
    AccountChanges& ac = accs[a];
    ac.address = a;
    std::map<Hash32, std::vector<StorageChange>> writes;
    std::set<Hash32> reads;
    for (int s = int(rng() % 5); s > 0; --s) {
      std::vector<StorageChange>& ch = writes[rand_u256(rng)];
      ch.clear();
      for (uint32_t i = 0; i <= tx_count + 1; ++i)
        if (rng() % 3 == 0 || (i == tx_count + 1 && ch.empty())) ch.push_back({i, rand_u256(rng)});
    }
    for (int s = int(rng() % 5); s > 0; --s) {
      const Hash32 r = rand_u256(rng);
      if (!writes.count(r)) reads.insert(r);
    }
    for (auto& [slot, ch] : writes) ac.storage_changes.push_back({slot, ch});
    ac.storage_reads.assign(reads.begin(), reads.end());
    for (uint32_t i = 0; i <= tx_count + 1; ++i) {
      if (rng() % 3 == 0) ac.balance_changes.push_back({i, rand_u256(rng)});
      if (rng() % 4 == 0) ac.nonce_changes.push_back({i, rng() >> (rng() % 64)});
      if (rng() % 6 == 0) {
        std::vector<uint8_t> code(size_t(rng() % 80));
        for (auto& b : code) b = uint8_t(rng());
        ac.code_changes.push_back({i, code});
      }
    }
  }
  BlockAccessList bal;
  for (auto& [a, ac] : accs) bal.accounts.push_back(std::move(ac));
  return bal;
}

}  // namespace

TEST_CASE("bal vector: the devnet-shaped block decodes, re-encodes byte-identically and hashes as given") {
  const json v = json::parse(slurp(std::string(STATETREE_VECTORS_DIR) + "/bal/devnet_shaped_block.json"));
  const std::vector<uint8_t> rlp = unhex(v["rlp"].get<std::string>());
  BlockAccessList bal;
  std::string err;
  REQUIRE_MESSAGE(decode_bal(rlp, std::nullopt, &bal, &err), err);
  CHECK(encode_bal(bal) == rlp);
  const Hash32 h = bal_hash(bal);
  CHECK(st::workloads::bytes_to_hex(h.data(), 32) == v["bal_hash"].get<std::string>());
  // The JSON form of the vector is the same model (addresses in any case).
  BlockAccessList from_json;
  REQUIRE_MESSAGE(bal_from_json(v, &from_json, &err), err);
  CHECK(from_json == bal);
  CHECK(bal_check(from_json, std::nullopt) == "");
  // And our JSON of it reads back to it.
  BlockAccessList again;
  REQUIRE(bal_from_json(bal_to_json(bal), &again, &err));
  CHECK(again == bal);
  // Empty list.
  CHECK(hex(encode_bal(BlockAccessList{})) == v["empty_bal_rlp"].get<std::string>().substr(2));
  const Hash32 e = bal_hash(BlockAccessList{});
  CHECK(st::workloads::bytes_to_hex(e.data(), 32) == v["empty_bal_hash"].get<std::string>());
  // The reference encoder agrees on the vector itself.
  CHECK(reference_hex(v) == v["rlp"].get<std::string>().substr(2));
}

TEST_CASE("bal codec vs the python3-rlp reference: random BALs and block files, byte for byte") {
  std::mt19937_64 rng(7928);
  json blocks = json::array();
  std::vector<Block> model;
  json bals = json::array();
  for (int k = 0; k < 24; ++k) {
    const uint32_t txs = uint32_t(rng() % 4);
    Block b;
    b.header.number = rng() % 3 == 0 ? (rng() >> 8) : uint64_t(k);
    b.header.tree = BalTree(rng() % 3);
    if (rng() % 2) b.header.pre_state_root = rand_u256(rng);
    if (rng() % 5) {
      b.header.tx_count = txs;
      if (rng() % 2)
        for (uint32_t t = 0; t < txs; ++t) b.header.txs.push_back({rng() >> (rng() % 64), rng() % 10000});
    }
    b.bal = random_bal(rng, txs);
    REQUIRE(bal_check(b.bal, b.header.tx_count) == "");
    // One BAL alone against the reference.
    CHECK(reference_hex(bal_to_json(b.bal)) == hex(encode_bal(b.bal)));
    blocks.push_back(block_to_json(b));
    model.push_back(std::move(b));
  }
  const std::vector<uint8_t> file = encode_blocks(model);
  CHECK(reference_hex(json{{"blocks", blocks}}) == hex(file));
  std::vector<Block> back;
  std::string err;
  REQUIRE_MESSAGE(decode_blocks(file, &back, &err), err);
  CHECK(back == model);
}
