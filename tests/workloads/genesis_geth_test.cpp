// genesis_geth_test: the account fields of a genesis file are read as go-ethereum reads them
// (core/types/account.go: HexOrDecimal256 balance, HexOrDecimal64 nonce, hexutil.Bytes code,
// storageJSON storage keys and values): each spelling go-ethereum accepts loads with the value
// it gives, each one it refuses is a one-line error naming the account. The statetree
// extras (short form, duplicate and unknown keys, negative balances) are in genesis_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "workloads/genesis.h"
#include "workloads/genesis_values.h"
#include "workloads/u256.h"

using namespace st::workloads;

namespace {

const std::string kA = "0x00000000000000000000000000000000000000aa";

std::variant<st::state::Account, std::string> one_account(const std::string& account_json) {
  auto r = parse_genesis_json(R"({"alloc": {")" + kA + R"(": )" + account_json + "}}", "g.json");
  if (auto* e = std::get_if<std::string>(&r)) return *e;
  const auto& g = std::get<GenesisFile>(r);
  REQUIRE(g.alloc.accounts.size() == 1);
  return g.alloc.accounts[0].second;
}

st::state::Hash32 word(unsigned low_byte) {
  st::state::Hash32 w{};
  w[31] = uint8_t(low_byte);
  return w;
}

const std::string kMax256 = "115792089237316195423570985008687907853269984665640564039457584007913129639935";

}  // namespace

TEST_CASE("genesis (go-ethereum rules): spellings go-ethereum accepts load with its values") {
  struct Good {
    std::string account_json;
    std::string balance;  // decimal
    uint64_t nonce;
    std::vector<uint8_t> code;
    std::map<st::state::Hash32, st::state::Hash32> storage;
  };
  const Good cases[] = {
      {R"({"balance": "1", "storage": {"0x01": "0x"}})", "1", 0, {}, {{word(1), word(0)}}},
      {R"({"balance": "1", "storage": {"0x01": ""}})", "1", 0, {}, {{word(1), word(0)}}},
      {R"({"balance": "1", "storage": {"0x01": null}})", "1", 0, {}, {{word(1), word(0)}}},
      {R"({"balance": "1", "storage": {"": "0x02"}})", "1", 0, {}, {{word(0), word(2)}}},
      {R"({"balance": "1", "storage": {"0x": "0x02"}})", "1", 0, {}, {{word(0), word(2)}}},
      {R"({"balance": "1", "storage": {"0a": "0b"}})", "1", 0, {}, {{word(10), word(11)}}},
      {R"({"balance": "1", "storage": null})", "1", 0, {}, {}},
      {R"({"balance": "1", "code": ""})", "1", 0, {}, {}},
      {R"({"balance": "1", "code": "0x"})", "1", 0, {}, {}},
      {R"({"balance": "1", "code": null})", "1", 0, {}, {}},
      {R"({"balance": "1", "code": "0X60aB"})", "1", 0, {0x60, 0xab}, {}},
      {R"({"balance": ""})", "0", 0, {}, {}},
      {R"({"balance": "+5"})", "5", 0, {}, {}},
      {R"({"balance": "0x+a"})", "10", 0, {}, {}},
      {R"({"balance": "0X1F"})", "31", 0, {}, {}},
      {R"({"balance": "007"})", "7", 0, {}, {}},
      {R"({"balance": )" + kMax256 + "}", kMax256, 0, {}, {}},
      {R"({"balance": "1", "nonce": ""})", "1", 0, {}, {}},
      {R"({"balance": "1", "nonce": null})", "1", 0, {}, {}},
      {R"({"balance": "1", "nonce": "0X10"})", "1", 16, {}, {}},
      {R"({"balance": "1", "nonce": "0010"})", "1", 10, {}, {}},
  };
  for (const Good& g : cases) {
    CAPTURE(g.account_json);
    auto r = one_account(g.account_json);
    if (auto* e = std::get_if<std::string>(&r)) FAIL(*e);
    const auto& a = std::get<st::state::Account>(r);
    CHECK(u256_to_decimal(a.balance) == g.balance);
    CHECK(a.nonce == g.nonce);
    CHECK(a.code == g.code);
    CHECK(a.storage == g.storage);
  }
}

TEST_CASE("genesis (go-ethereum rules): spellings go-ethereum refuses are one-line errors") {
  struct Bad {
    std::string account_json;
    const char* must_contain;
  };
  const Bad cases[] = {
      {R"({"balance": "1", "storage": {"0x1": "0x01"}})", "odd length"},
      {R"({"balance": "1", "storage": {"0x01": "0x123"}})", "odd length"},
      {R"({"balance": "1", "storage": {"0X01": "0x01"}})", "not a hex number"},
      {R"({"balance": "1", "storage": {"0x01": "0X01"}})", "not a hex number"},
      {R"({"balance": "1", "storage": {"0x01": true}})", "value must be a hex string"},
      {R"({"balance": "1", "storage": {"0x01": {}}})", "value must be a hex string"},
      {R"({"balance": "1", "storage": {"0x)" + std::string(66, '0') + R"(": "0x01"}})", "more than 32 bytes"},
      {R"({"balance": "1", "storage": "0x"})", "storage must be an object"},
      {R"({"balance": "-1"})", "negative"},
      {R"({"balance": "0x-1"})", "negative"},
      {R"({"balance": "0x"})", "balance"},
      {R"({"balance": "+"})", "balance"},
      {R"({"balance": "++1"})", "balance"},
      {R"({"balance": "1_000"})", "balance"},
      {R"({"balance": 1.0})", "JSON float"},
      {R"({"balance": 1e3})", "JSON float"},
      {R"({"balance": true})", "balance: must be a string or an integer"},
      {R"({"balance": []})", "balance: must be a string or an integer"},
      {R"({"balance": null})", "balance"},
      {R"({"balance": 115792089237316195423570985008687907853269984665640564039457584007913129639936})", "over 2^256-1"},
      {R"({"balance": "1", "nonce": "+1"})", "nonce"},
      {R"({"balance": "1", "nonce": "0x"})", "nonce"},
      {R"({"balance": "1", "nonce": "0x+1"})", "nonce"},
      {R"({"balance": "1", "nonce": 1.0})", "nonce"},
      {R"({"balance": "1", "nonce": true})", "nonce"},
      {R"({"balance": "1", "code": "0x6"})", "odd length"},
      {R"({"balance": "1", "code": "60"})", "without 0x prefix"},
      {R"({"balance": "1", "code": {}})", "code must be a 0x-hex string"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.account_json);
    auto r = one_account(b.account_json);
    REQUIRE(std::holds_alternative<std::string>(r));
    const std::string& e = std::get<std::string>(r);
    CAPTURE(e);
    CHECK(e.find(b.must_contain) != std::string::npos);
    CHECK(e.find("account \"" + kA + "\"") != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("genesis_values: the value functions on their own") {
  CHECK(std::get<st::state::Hash32>(geth_storage_word("")) == word(0));
  CHECK(std::get<st::state::Hash32>(geth_storage_word("0x" + std::string(62, '0') + "ff")) == word(0xff));
  CHECK(std::holds_alternative<std::string>(geth_storage_word("0x" + std::string(62, '0') + "f")));
  CHECK(std::get<uint64_t>(geth_nonce("18446744073709551615")) == ~uint64_t(0));
  CHECK(std::holds_alternative<std::string>(geth_nonce("18446744073709551616")));
  CHECK(std::holds_alternative<std::string>(geth_nonce("-0")));
  CHECK(u256_to_decimal(std::get<st::state::U256>(geth_balance("0x" + std::string(64, 'f')))) == kMax256);
  CHECK(std::holds_alternative<std::string>(geth_balance("-0")));
  CHECK(std::get<std::vector<uint8_t>>(geth_code("0x00ff")) == std::vector<uint8_t>{0x00, 0xff});
}
