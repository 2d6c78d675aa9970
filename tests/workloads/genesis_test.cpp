// genesis_test: the four network genesis files load with the account counts, expected roots
// and totals that an independent Python reading of the same files gives (sum of balances,
// storage slots, code bytes, max nonce); inline allocations check file order, both accepted
// top-level shapes, and that every malformed case is rejected with a one-line error naming
// the account as written.
#include <doctest/doctest.h>

#include <string>

#include "workloads/genesis.h"
#include "workloads/u256.h"
#include "test_paths.h"

using namespace st::workloads;
using st::state::Allocation;
using st::state::U256;

namespace {

std::string vec(const char* name) { return std::string(STATETREE_GENESIS_DIR) + "/" + name; }

// a + b; carry set when the sum overflows 256 bits.
U256 add(const U256& a, const U256& b, bool& carry_out) {
  U256 r{};
  unsigned carry = 0;
  for (int i = 31; i >= 0; --i) {
    const unsigned s = unsigned(a[i]) + b[i] + carry;
    r[i] = uint8_t(s);
    carry = s >> 8;
  }
  carry_out |= carry != 0;
  return r;
}

struct Totals {
  size_t accounts = 0, slots = 0, code_bytes = 0, with_code = 0;
  uint64_t max_nonce = 0;
  std::string balance_sum;
};

Totals totals(const Allocation& a) {
  Totals t;
  U256 sum{};
  bool overflow = false;
  for (const auto& [addr, acc] : a.accounts) {
    ++t.accounts;
    sum = add(sum, acc.balance, overflow);
    t.slots += acc.storage.size();
    t.code_bytes += acc.code.size();
    t.with_code += !acc.code.empty();
    t.max_nonce = std::max(t.max_nonce, acc.nonce);
  }
  t.balance_sum = overflow ? "overflow" : u256_to_decimal(sum);
  return t;
}

GenesisFile load_ok(const std::string& path) {
  auto r = load_genesis_file(path);
  if (auto* e = std::get_if<std::string>(&r)) FAIL(*e);
  return std::get<GenesisFile>(std::move(r));
}

std::string parse_err(const std::string& text) {
  auto r = parse_genesis_json(text, "t.json");
  if (std::holds_alternative<GenesisFile>(r)) return "(no error)";
  const std::string& e = std::get<std::string>(r);
  CHECK(e.find('\n') == std::string::npos);
  return e;
}

const std::string kA = "0x00000000000000000000000000000000000000aa";
const std::string kB = "0x00000000000000000000000000000000000000bb";

std::string wrap(const std::string& account_json, const std::string& addr = kA) {
  return R"({"alloc": {")" + addr + R"(": )" + account_json + "}}";
}

}  // namespace

TEST_CASE("genesis: the four network files load (totals from an independent Python reading)") {
  struct Expect {
    const char* file;
    const char* network;
    size_t accounts, slots, code_bytes, with_code;
    uint64_t max_nonce;
    const char* balance_sum;
    const char* root;
    const char* first;
    const char* last;
  };
  const Expect cases[] = {
      {"mainnet_genesis_alloc.json", "mainnet", 8893, 0, 0, 0, 0, "72009990499480000000000000",
       "0xd7f8974fb5ac78d9ac099b9ad5018bedc2ce0a72dad1827a1709da30580f0544",
       "0x000d836201318ec6899a67540690382780743280", "0xfff7ac99c8e4feb60c9750054bdc14ce1857f181"},
      {"sepolia_genesis_alloc.json", "sepolia", 15, 0, 0, 0, 0, "320000001000000000000000000",
       "0x5eb6e371a698b8d68f665192350ffcecbbbf322916f4b51bd79bb6887da3f494",
       "0x0000006916a87b82333f4245046623b23794c65c", "0xf47cae1cf79ca6758bfc787dbd21e6bdbe7112b8"},
      {"holesky_genesis_alloc.json", "holesky", 317, 31, 6358, 1, 0, "2748000000000000000000000256",
       "0x69d8c9d72f6fa4ad42d4702b433707212f90db395eb54dc20bc85de253788783",
       "0x0000000000000000000000000000000000000000", "0xfbfd6fa9f73ac6a058e01259034c28001bef8247"},
      {"hoodi_genesis_alloc.json", "hoodi", 335, 33, 7456, 5, 1, "2789000000000000000000000256",
       "0xda87d7f5f91c51508791bbcbd4aa5baf04917830b86985eeb9ad3d5bfb657576",
       "0x0000000000000000000000000000000000000000", "0xfc7af49b80acf041744366b02272019723c94f9c"},
  };
  for (const Expect& e : cases) {
    CAPTURE(e.file);
    const GenesisFile g = load_ok(vec(e.file));
    const Totals t = totals(g.alloc);
    CHECK(g.network == e.network);
    CHECK(t.accounts == e.accounts);
    CHECK(t.slots == e.slots);
    CHECK(t.code_bytes == e.code_bytes);
    CHECK(t.with_code == e.with_code);
    CHECK(t.max_nonce == e.max_nonce);
    CHECK(t.balance_sum == e.balance_sum);
    REQUIRE(g.expected_state_root.has_value());
    CHECK(bytes_to_hex(g.expected_state_root->data(), 32) == e.root);
    CHECK(g.expected_genesis_block_hash.has_value());
    CHECK(bytes_to_hex(g.alloc.accounts.front().first.data(), 20) == e.first);
    CHECK(bytes_to_hex(g.alloc.accounts.back().first.data(), 20) == e.last);
  }
  auto alloc = load_genesis_alloc(vec("mainnet_genesis_alloc.json"));
  REQUIRE(std::holds_alternative<Allocation>(alloc));
  CHECK(std::get<Allocation>(alloc).accounts.size() == 8893);
}

TEST_CASE("genesis: spot values (holesky deposit contract, mainnet last account)") {
  const GenesisFile h = load_ok(vec("holesky_genesis_alloc.json"));
  const st::state::Account* dep = nullptr;
  for (const auto& [addr, acc] : h.alloc.accounts)
    if (bytes_to_hex(addr.data(), 20) == "0x4242424242424242424242424242424242424242") dep = &acc;
  REQUIRE(dep != nullptr);
  CHECK(dep->code.size() == 6358);
  CHECK(dep->storage.size() == 31);
  st::state::Hash32 slot{};
  slot[31] = 0x22;
  REQUIRE(dep->storage.count(slot) == 1);
  CHECK(bytes_to_hex(dep->storage.at(slot).data(), 32) ==
        "0xf5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
  const GenesisFile m = load_ok(vec("mainnet_genesis_alloc.json"));
  CHECK(u256_to_decimal(m.alloc.accounts.back().second.balance) == "1000000000000000000000");
  CHECK(m.alloc.accounts.back().second.nonce == 0);
  CHECK(m.alloc.accounts.back().second.code.empty());
}

TEST_CASE("genesis: bare alloc object, file order kept, all field spellings") {
  const std::string text = R"({
    "BB00000000000000000000000000000000000000": "0x10",
    "0xAA000000000000000000000000000000000000Aa": {"balance": 5, "nonce": "0x7", "code": "0x6001",
        "storage": {"0x01": "0x02", "03": "0x00000000000000000000000000000000000000000000000000000000000000ff",
                    "0x04": "0x00"}},
    "0x0000000000000000000000000000000000000001": {"balance": "0", "nonce": 18446744073709551615}
  })";
  auto r = parse_genesis_json(text);
  if (auto* e = std::get_if<std::string>(&r)) FAIL(*e);
  const GenesisFile& g = std::get<GenesisFile>(r);
  CHECK_FALSE(g.expected_state_root.has_value());
  REQUIRE(g.alloc.accounts.size() == 3);
  CHECK(bytes_to_hex(g.alloc.accounts[0].first.data(), 20) == "0xbb00000000000000000000000000000000000000");
  CHECK(bytes_to_hex(g.alloc.accounts[1].first.data(), 20) == "0xaa000000000000000000000000000000000000aa");
  CHECK(bytes_to_hex(g.alloc.accounts[2].first.data(), 20) == "0x0000000000000000000000000000000000000001");
  CHECK(u256_to_decimal(g.alloc.accounts[0].second.balance) == "16");
  const auto& a = g.alloc.accounts[1].second;
  CHECK(u256_to_decimal(a.balance) == "5");
  CHECK(a.nonce == 7);
  CHECK(a.code == std::vector<uint8_t>{0x60, 0x01});
  REQUIRE(a.storage.size() == 3);  // zero value kept as written
  st::state::Hash32 s1{}, s3{}, s4{};
  s1[31] = 1; s3[31] = 3; s4[31] = 4;
  CHECK(a.storage.at(s1)[31] == 2);
  CHECK(a.storage.at(s3)[31] == 0xff);
  CHECK(a.storage.at(s4) == st::state::Hash32{});
  CHECK(g.alloc.accounts[2].second.nonce == ~uint64_t(0));
}

TEST_CASE("genesis: wrapped form ignores unknown top-level keys, checks the account count") {
  auto r = parse_genesis_json(R"({"config": {"chainId": 1}, "gasLimit": "0x1", "alloc": {")" + kA + R"(": "1"}})");
  REQUIRE(std::holds_alternative<GenesisFile>(r));
  CHECK(parse_err(R"({"accounts": 2, "alloc": {")" + kA + R"(": "1"}})").find("\"accounts\" says 2 but alloc holds 1") !=
        std::string::npos);
  CHECK(parse_err(R"({"expected_state_root": "0x1234", "alloc": {}})").find("expected_state_root") != std::string::npos);
  CHECK(parse_err(R"({"alloc": []})").find("\"alloc\" must be an object") != std::string::npos);
  CHECK(parse_err(R"([1, 2])").find("top level must be a JSON object") != std::string::npos);
}

TEST_CASE("genesis: malformed JSON reports nlohmann's position") {
  const std::string e = parse_err("{\"alloc\": {\n  \"" + kA + "\": \"1\",\n}}");
  CHECK(e.find("t.json: malformed JSON") != std::string::npos);
  CHECK(e.find("line 3") != std::string::npos);
  CHECK(parse_err("").find("malformed JSON") != std::string::npos);
  CHECK(parse_err(R"({"alloc": {")" + kA + R"(": "1"})").find("malformed JSON") != std::string::npos);
}

TEST_CASE("genesis: every malformed account is rejected with an error naming it") {
  struct Bad {
    std::string account_json;
    const char* must_contain;
  };
  const Bad cases[] = {
      {R"("115792089237316195423570985008687907853269984665640564039457584007913129639936")", "over 2^256-1"},
      {R"({"balance": "0x1)" + std::string(64, '0') + R"("})", "over 2^256-1"},
      {R"("+1")", "not a decimal number"},
      {R"(" 1")", "not a decimal number"},
      {R"("")", "empty number"},
      {R"({"balance": -1})", "balance: negative"},
      {R"({"balance": 1.5})", "JSON float"},
      {R"({"balance": 1e30})", "JSON float"},
      {R"({"balance": null})", "balance: must be a string or an integer"},
      {R"({"nonce": 1})", "missing balance"},
      {R"({"balance": "1", "nonce": "18446744073709551616"})", "over 2^64-1"},
      {R"({"balance": "1", "nonce": 18446744073709551616})", "nonce: not an integer, or over 2^64-1"},
      {R"({"balance": "1", "nonce": -1})", "nonce: negative"},
      {R"({"balance": "1", "nonce": "0x"})", "nonce"},
      {R"({"balance": "1", "code": "0x600"})", "odd length"},
      {R"({"balance": "1", "code": "6000"})", "without 0x prefix"},
      {R"({"balance": "1", "code": "0x60zz"})", "not a hex string"},
      {R"({"balance": "1", "code": 96})", "code must be a 0x-hex string"},
      {R"({"balance": "1", "storage": {"0x1)" + std::string(64, '0') + R"(": "0x1"}})", "more than 32 bytes"},
      {R"({"balance": "1", "storage": {"0x01": "0x1)" + std::string(64, '0') + R"("}})", "more than 32 bytes"},
      {R"({"balance": "1", "storage": {"0x01": "0xqq"}})", "not a hex number"},
      {R"({"balance": "1", "storage": {"": "0x1"}})", "storage slot"},
      {R"({"balance": "1", "storage": {"0x01": 1}})", "value must be a hex string"},
      {R"({"balance": "1", "storage": {"0x01": "0x01", "0x0001": "0x02"}})", "duplicate storage slot"},
      {R"({"balance": "1", "storage": {"0x01": "0x01", "0x01": "0x02"}})", "duplicate JSON key"},
      {R"({"balance": "1", "storage": []})", "storage must be an object"},
      {R"({"balance": "1", "nounce": 1})", "unknown field \"nounce\""},
      {R"(12)", "must be a balance string or an object"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.account_json);
    const std::string e = parse_err(wrap(b.account_json));
    CAPTURE(e);
    CHECK(e.find(b.must_contain) != std::string::npos);
    const bool names_account = e.find("account \"" + kA + "\"") != std::string::npos ||
                               e.find("alloc." + kA) != std::string::npos;
    CHECK(names_account);
  }
}

TEST_CASE("genesis: bad and duplicate addresses") {
  const std::string bad_addrs[] = {
      "0x00000000000000000000000000000000000000a",     // 39 digits
      "0x00000000000000000000000000000000000000aaa",   // 41 digits
      "0x00000000000000000000000000000000000000gg",    // not hex
      "0x",                                            // empty
      "x00000000000000000000000000000000000000aa0",    // bad prefix
  };
  for (const std::string& a : bad_addrs) {
    CAPTURE(a);
    const std::string e = parse_err(wrap("\"1\"", a));
    CHECK(e.find("account \"" + a + "\"") != std::string::npos);
    CHECK(e.find("address") != std::string::npos);
  }
  // Exactly the same key twice: nlohmann would keep one silently; we reject it.
  std::string e = parse_err(R"({"alloc": {")" + kA + R"(": "1", ")" + kB + R"(": "2", ")" + kA + R"(": "3"}})");
  CHECK(e.find("duplicate JSON key \"" + kA + "\" in alloc") != std::string::npos);
  // The same 20 bytes spelled differently: case, and with/without 0x.
  e = parse_err(R"({"alloc": {")" + kA + R"(": "1", "0x00000000000000000000000000000000000000AA": "2"}})");
  CHECK(e.find("account \"0x00000000000000000000000000000000000000AA\": duplicate address") != std::string::npos);
  e = parse_err(R"({"alloc": {")" + kA + R"(": "1", "00000000000000000000000000000000000000aa": "2"}})");
  CHECK(e.find("duplicate address") != std::string::npos);
}

TEST_CASE("genesis: missing file") {
  auto r = load_genesis_file("/nonexistent/genesis.json");
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK(std::get<std::string>(r).find("cannot open /nonexistent/genesis.json") != std::string::npos);
}
