// bintrie_reference: recursive oracle (see bintrie_reference.h). Deliberately naive.
#include "tests/reference/bintrie_reference.h"

#include <openssl/sha.h>

#include <cstring>

namespace st::reference {
namespace {

using Stem = std::array<uint8_t, 31>;
using StemValues = std::map<uint8_t, RefBytes32>;

int bit(const Stem& s, unsigned d) { return (s[d / 8] >> (7 - d % 8)) & 1; }

RefBytes32 hash_node(RefHashFn H, const RefBytes32& l, const RefBytes32& r) {
  uint8_t m[64];
  std::memcpy(m, l.data(), 32);
  std::memcpy(m + 32, r.data(), 32);
  RefBytes32 out{};
  bool zero = true;
  for (uint8_t b : m) zero = zero && b == 0;
  if (!zero) H(m, 64, out.data());
  return out;
}

RefBytes32 stem_hash(RefHashFn H, const Stem& stem, const StemValues& values) {
  std::vector<RefBytes32> level(256, RefBytes32{});
  for (const auto& [sub, v] : values) H(v.data(), 32, level[sub].data());
  while (level.size() > 1) {
    std::vector<RefBytes32> up(level.size() / 2);
    for (size_t i = 0; i < up.size(); ++i) up[i] = hash_node(H, level[2 * i], level[2 * i + 1]);
    level = up;
  }
  uint8_t m[64];
  std::memcpy(m, stem.data(), 31);
  m[31] = 0;
  std::memcpy(m + 32, level[0].data(), 32);
  RefBytes32 out;
  H(m, 64, out.data());
  return out;
}

RefBytes32 node(RefHashFn H, const std::vector<std::pair<Stem, const StemValues*>>& stems, unsigned depth) {
  if (stems.empty()) return RefBytes32{};
  if (stems.size() == 1) return stem_hash(H, stems[0].first, *stems[0].second);
  std::vector<std::pair<Stem, const StemValues*>> left, right;
  for (const auto& s : stems) (bit(s.first, depth) ? right : left).push_back(s);
  return hash_node(H, node(H, left, depth + 1), node(H, right, depth + 1));
}

}  // namespace

void ref_sha256_openssl(const uint8_t* data, size_t len, uint8_t* out32) { SHA256(data, len, out32); }

RefBytes32 bintrie_reference_root(const std::map<RefBytes32, RefBytes32>& kv, RefHashFn H) {
  std::map<Stem, StemValues> by_stem;
  for (const auto& [k, v] : kv) {
    Stem s;
    std::memcpy(s.data(), k.data(), 31);
    by_stem[s][k[31]] = v;
  }
  std::vector<std::pair<Stem, const StemValues*>> stems;
  for (const auto& [s, vals] : by_stem) stems.push_back({s, &vals});
  return node(H, stems, 0);
}

RefBytes32 bintrie_reference_root(const std::vector<std::pair<RefBytes32, RefBytes32>>& writes, RefHashFn H) {
  std::map<RefBytes32, RefBytes32> kv;
  for (const auto& [k, v] : writes) kv[k] = v;
  return bintrie_reference_root(kv, H);
}

}  // namespace st::reference
