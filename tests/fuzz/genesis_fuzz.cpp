// genesis_fuzz: the genesis-JSON loader (workloads/genesis.h) on arbitrary text. Never
// crashes, never reads outside the input; an accepted file holds unique addresses (also
// when spelled differently in the text), and every error is one line.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "workloads/genesis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = st::workloads::parse_genesis_json(text, "fuzz.json");
  if (auto* g = std::get_if<st::workloads::GenesisFile>(&r)) {
    std::vector<st::state::Address> addrs;
    addrs.reserve(g->alloc.accounts.size());
    for (const auto& [addr, account] : g->alloc.accounts) addrs.push_back(addr);
    std::sort(addrs.begin(), addrs.end());
    FUZZ_CHECK(std::adjacent_find(addrs.begin(), addrs.end()) == addrs.end());
    // Nothing is sized from the file: at most one account per 3 bytes of text ("a":0 is 5).
    FUZZ_CHECK(g->alloc.accounts.size() <= size / 3 + 1);
  } else {
    const std::string& err = std::get<std::string>(r);
    FUZZ_CHECK(!err.empty());
    FUZZ_CHECK(err.find('\n') == std::string::npos);
  }
  return 0;
}
