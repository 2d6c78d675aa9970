// genesis_hostile_test: input that must end in a one-line error, not in a hang or the OOM
// killer (deep nesting, a directory, a FIFO, absurd sizes), for the genesis loader and the
// --alloc / --kv options of the CLI; and a large generated allocation that loads exactly
// (every account, in file order), which the old per-key rescan could not do in reasonable time.
#include <doctest/doctest.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reference/run_command.h"
#include "workloads/genesis.h"
#include "workloads/u256.h"

using namespace st::workloads;
using st::reference::run_statetree;

namespace {

// A fresh temporary directory, removed (with the files the test names) at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/statetree_loaders_XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// Holds a FIFO open for reading and writing with `text` in its buffer, and closes it after
// `ms`: a reader that opens it sees the text, then end of file (so a loader that reads FIFOs
// returns instead of hanging, and the test fails instead of blocking).
struct FifoFeeder {
  int fd = -1;
  std::thread closer;
  FifoFeeder(const std::string& path, const std::string& text, int ms) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, text.data(), text.size()) == ssize_t(text.size()));
    closer = std::thread([this, ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      ::close(fd);
    });
  }
  ~FifoFeeder() { closer.join(); }
};

std::string error_of(const std::string& text) {
  auto r = parse_genesis_json(text, "g.json");
  if (std::holds_alternative<GenesisFile>(r)) return "(no error)";
  return std::get<std::string>(r);
}

}  // namespace

TEST_CASE("genesis hostile: deep nesting is refused at depth 64, wherever it is") {
  const size_t depth = 2'000'000;  // 4 MB of brackets
  const std::string deep_array = std::string(depth, '[') + std::string(depth, ']');
  std::string e = error_of(R"({"alloc": {}, "config": )" + deep_array + "}");
  CHECK(e.find("nested deeper than 64 levels") != std::string::npos);
  CHECK(e.find('\n') == std::string::npos);
  std::string deep_object;
  for (int i = 0; i < 100000; ++i) deep_object += R"({"a":)";
  deep_object += "1" + std::string(100000, '}');
  e = error_of(R"({"config": )" + deep_object + R"(, "alloc": {}})");
  CHECK(e.find("nested deeper than 64 levels") != std::string::npos);
  e = error_of(deep_array);  // top level not an object: refused at the first byte
  CHECK(e.find("top level must be a JSON object") != std::string::npos);
  // 63 levels under the top object are fine (ignored keys may nest).
  const std::string ok = R"({"alloc": {}, "config": )" + std::string(63, '[') + std::string(63, ']') + "}";
  CHECK(error_of(ok) == "(no error)");
  CHECK(error_of(R"({"alloc": {}, "config": )" + std::string(64, '[') + std::string(64, ']') + "}")
            .find("nested deeper") != std::string::npos);
}

TEST_CASE("genesis hostile: a directory or a FIFO is refused, not read") {
  TempDir dir;
  auto r = load_genesis_file(dir.path);
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK(std::get<std::string>(r) == dir.path + ": is a directory");
  const std::string fifo = dir.path + "/genesis.fifo";
  FifoFeeder feed(fifo, R"({"alloc": {}})", 100);
  r = load_genesis_file(fifo);
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK(std::get<std::string>(r).find("is a FIFO, not a regular file") != std::string::npos);
}

TEST_CASE("genesis hostile: --alloc and --kv refuse a directory and a FIFO (exit 2, one line)") {
  TempDir dir;
  const std::string commands[] = {
      "root --tree mpt --alloc ",
      "root --tree bintrie --alloc ",
      "root --tree mpt --kv ",
  };
  for (const std::string& c : commands) {
    CAPTURE(c);
    auto r = run_statetree(c + dir.path);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is a directory") != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    const std::string fifo = dir.path + "/in" + std::to_string(&c - commands) + ".fifo";
    FifoFeeder feed(fifo, c.find("--kv") != std::string::npos ? "00 01\n" : R"({"alloc": {}})", 200);
    r = run_statetree(c + fifo);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is a FIFO") != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

TEST_CASE("genesis hostile: numbers from the file size nothing") {
  // An "accounts" count of 2^64-1 is compared, not reserved.
  std::string e = error_of(R"({"accounts": 18446744073709551615, "alloc": {}})");
  CHECK(e.find("\"accounts\" says 18446744073709551615 but alloc holds 0") != std::string::npos);
  e = error_of(R"({"accounts": 1e300, "alloc": {}})");
  CHECK(e.find("\"accounts\" must be a non-negative integer") != std::string::npos);
  // An 8 MB balance string is one error message of bounded length.
  e = error_of(R"({"alloc": {"0x00000000000000000000000000000000000000aa": {"balance": "0x)" + std::string(1 << 23, 'f') + "\"}}}");
  CHECK(e.find("over 2^256-1") != std::string::npos);
  CHECK(e.size() < 400);
}

TEST_CASE("genesis: a generated allocation of 200k accounts loads exactly, in file order") {
  // Account i: address = i (big-endian, spelled in mixed forms), balance = i * 10^18 (decimal
  // or hex), nonce = i % 7, every 100th with code and two storage slots. Keys are written in a
  // shuffled order (i * 7919 mod n), so file order differs from address order.
  const size_t n = 200'000;
  std::string text = R"({"network": "gen", "accounts": )" + std::to_string(n) + R"(, "alloc": {)";
  auto addr_of = [](size_t i) {
    char buf[41];
    std::snprintf(buf, sizeof buf, "%040zx", i);
    return std::string(buf);
  };
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (k * 7919) % n;
    if (k) text += ',';
    text += '"';
    text += (k % 3 == 0) ? "0x" : (k % 3 == 1) ? "0X" : "";
    text += addr_of(i) + "\": ";
    const std::string bal = std::to_string(i) + "000000000000000000";
    if (i % 100 == 0) {
      text += R"({"balance": ")" + bal + R"(", "nonce": )" + std::to_string(i % 7) + R"(, "code": "0x60016000",)" +
              R"( "storage": {"0x01": "0x)" + addr_of(i).substr(24) + R"(", "0x02": "0x"}})";
    } else if (i % 2) {
      text += R"({"nonce": ")" + std::to_string(i % 7) + R"(", "balance": ")" + bal + "\"}";
    } else {
      text += "\"" + bal + "\"";
    }
  }
  text += "}}";
  auto r = parse_genesis_json(text, "gen.json");
  if (auto* e = std::get_if<std::string>(&r)) FAIL(*e);
  const GenesisFile& g = std::get<GenesisFile>(r);
  CHECK(g.network == "gen");
  REQUIRE(g.alloc.accounts.size() == n);
  size_t mismatches = 0, with_code = 0, slots = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (k * 7919) % n;
    const auto& [addr, acc] = g.alloc.accounts[k];
    mismatches += bytes_to_hex(addr.data(), 20, false) != addr_of(i);
    mismatches += u256_to_decimal(acc.balance) != (i ? std::to_string(i) + "000000000000000000" : "0");
    mismatches += acc.nonce != ((i % 2 || i % 100 == 0) ? i % 7 : 0);
    with_code += !acc.code.empty();
    slots += acc.storage.size();
  }
  CHECK(mismatches == 0);
  CHECK(with_code == n / 100);
  CHECK(slots == 2 * (n / 100));
  // The same text with one address repeated at the very end, in upper case (all earlier
  // spellings are lower case): the duplicate is found and named as written.
  std::string upper = addr_of(0xabc);
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  text.insert(text.size() - 2, R"(, "0x)" + upper + R"(": "1")");
  const std::string e = error_of(text);
  CHECK(e == "g.json: account \"0x" + upper + "\": duplicate address (the same 20 bytes appear earlier, spelled differently)");
}
