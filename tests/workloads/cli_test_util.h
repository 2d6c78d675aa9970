// cli_test_util: the small helpers the statetree CLI tests share: a fresh temporary path
// per test process, a file's text, and bytes as 0x-prefixed lowercase hex.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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

}  // namespace st::test
