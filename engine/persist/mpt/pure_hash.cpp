// mpt/pure_hash: the MPT commit's records hashed again by level, one keccak256_batch per
// level, under the pure-hash protocol (see the header).
#include "engine/persist/mpt/pure_hash.h"

#include <cstring>
#include <string>

#include "kernels/keccak256.h"

namespace st::persist {

void KeccakLevels::prepare(const std::vector<uint32_t>& counts, size_t n) {
  level_end.resize(counts.size());
  uint32_t end = 0;
  for (size_t l = 0; l < counts.size(); ++l) level_end[l] = end += counts[l];
  msgs.resize(n);
  lens.resize(n);
  expect.resize(n);
  out.assign(n * 32, 0);
}

void KeccakLevels::gather_bytes() {
  size_t total = 0;
  for (size_t len : lens) total += len;
  bytes.resize(total);
  size_t at = 0;
  for (size_t i = 0; i < msgs.size(); ++i) {
    std::memcpy(bytes.data() + at, msgs[i], lens[i]);
    msgs[i] = bytes.data() + at;
    at += lens[i];
  }
}

io::Status mpt_pure_hash(KeccakLevels& lv, PureHashCount* out) {
  *out = {};
  const size_t n = lv.msgs.size();
  if (lv.lens.size() != n || lv.expect.size() != n || lv.out.size() != n * 32 || lv.level_end.empty() ||
      lv.level_end.back() != n)
    return {io::Errc::bad_argument, "mpt pure hash: the level arrays disagree in size"};
  uint64_t calls = 0;
  out->ns = time_pure_passes([&] {
    calls = 0;
    for (size_t l = 1; l < lv.level_end.size(); ++l) {
      const uint32_t b = lv.level_end[l - 1], e = lv.level_end[l];
      if (b == e) continue;
      kernels::keccak256_batch(lv.msgs.data() + b, lv.lens.data() + b, lv.out.data() + size_t(b) * 32, e - b);
      ++calls;
    }
  });
  out->calls = calls;
  out->nodes = n;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(lv.out.data() + i * 32, lv.expect[i], 32) == 0) continue;
    size_t level = 1;
    while (lv.level_end[level] <= i) ++level;
    return {io::Errc::corrupt_page, "mpt commit: the pure hash of a new node (level " + std::to_string(level) + ", " +
                                        std::to_string(lv.lens[i]) + " bytes) differs from the committed hash"};
  }
  return {};
}

}  // namespace st::persist
