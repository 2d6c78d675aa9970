// cli_test_util: the small helpers the statetree CLI tests share: a fresh temporary path
// per test process, a file's text, bytes as 0x-prefixed lowercase hex, and the check of a
// usage error.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include "reference/run_command.h"

namespace st::test {

// "/tmp/statetree_<group>_<pid>_<name>", removed first (a file or a whole directory): each
// test starts from nothing, and test processes running at once never share a path.
inline std::string fresh_tmp_path(const std::string& group, const std::string& name) {
  const std::string p = "/tmp/statetree_" + group + "_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(p);
  return p;
}

// The whole text of a file ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "0x" + two lowercase hex digits per byte: the CLI's format of roots and hashes.
inline std::string hex0x(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) s += digits[p[i] >> 4], s += digits[p[i] & 15];
  return s;
}
template <class Bytes>
std::string hex0x(const Bytes& b) {
  return hex0x(b.data(), b.size());
}

// Runs `statetree CMD` and checks that it is refused as bad input: exit status 2, nothing
// on stdout, exactly one line on stderr, holding `want` when one is given.
inline void check_bad(const std::string& cmd, const std::string& want = {}) {
  CAPTURE(cmd);
  auto r = st::reference::run_statetree(cmd);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  REQUIRE(!r.err.empty());
  CHECK(r.err.find('\n') == r.err.size() - 1);
  if (!want.empty()) CHECK(r.err.find(want) != std::string::npos);
}

}  // namespace st::test
