// large_alloc_test: the alignment large_alloc promises, and the huge-page advice it gives a
// block from 4 MiB on, read back from the kernel's own record of the mapping
// (/proc/self/smaps VmFlags: "hg" for MADV_HUGEPAGE, "nh" for MADV_NOHUGEPAGE). The advice
// never changes contents: a block written through is read back whole.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "kernels/support/large_alloc.h"

namespace {

// The VmFlags of the mapping holding address p ("" when none is found).
std::string vm_flags_at(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

}  // namespace

TEST_CASE("large_alloc: alignment by size, huge-page advice asked or refused from 4 MiB on") {
  const size_t small = 4096, big = size_t(8) << 20;
  void* s = st::large_alloc(small);
  CHECK(reinterpret_cast<uintptr_t>(s) % 64 == 0);
  st::large_free(s, small);

  for (bool huge : {true, false}) {
    CAPTURE(huge);
    auto* p = static_cast<uint8_t*>(st::large_alloc(big, huge));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % st::kHugePageBytes == 0);
    const std::string flags = vm_flags_at(p + big / 2);
    CAPTURE(flags);
    REQUIRE(!flags.empty());
    CHECK((flags.find(" hg ") != std::string::npos) == huge);
    CHECK((flags.find(" nh ") != std::string::npos) == !huge);
    for (size_t i = 0; i < big; ++i) p[i] = uint8_t(i * 7 + 1);
    bool same = true;
    for (size_t i = 0; i < big; ++i) same = same && p[i] == uint8_t(i * 7 + 1);
    CHECK(same);
    st::large_free(p, big);
  }
}
