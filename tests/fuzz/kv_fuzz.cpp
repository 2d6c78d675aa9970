// kv_fuzz: the --kv text parser (workloads/kv_file.h) on arbitrary text, both key limits.
// An accepted file's pairs lie inside its arena, keys strictly ascending (last write wins,
// empty values dropped), at most one pair per data line; every error is one line that
// names the source and a line number.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "tests/fuzz/fuzz_util.h"
#include "workloads/kv_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool secure = data[0] & 1;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = st::workloads::parse_kv_text(text, "fuzz.kv", secure);
  if (auto* kv = std::get_if<st::workloads::KvFile>(&r)) {
    FUZZ_CHECK(kv->pairs.size() <= kv->data_lines);
    FUZZ_CHECK(st::mpt::is_sorted_unique(std::span<const st::mpt::KeyValue>(kv->pairs)));
    const uint8_t* lo = kv->arena.data();
    const uint8_t* hi = lo + kv->arena.size();
    for (const auto& p : kv->pairs) {
      FUZZ_CHECK(p.value_len > 0);
      FUZZ_CHECK(p.key_len == 0 || (p.key >= lo && p.key + p.key_len <= hi));
      FUZZ_CHECK(p.value >= lo && p.value + p.value_len <= hi);
    }
  } else {
    const std::string& err = std::get<std::string>(r);
    FUZZ_CHECK(err.rfind("fuzz.kv:", 0) == 0);
    FUZZ_CHECK(err.find('\n') == std::string::npos);
  }
  return 0;
}
