// merkle_reference: see merkle_reference.h.
#include "merkle_reference.h"

#include <openssl/evp.h>

namespace st::reference {

Digest32 sha256_openssl(const uint8_t* data, size_t len) {
  Digest32 d{};
  unsigned int out_len = 0;
  EVP_Digest(data, len, d.data(), &out_len, EVP_sha256(), nullptr);
  return d;
}

namespace {
Digest32 h(const uint8_t* data, size_t len, bool twice) {
  Digest32 d = sha256_openssl(data, len);
  return twice ? sha256_openssl(d.data(), 32) : d;
}
}  // namespace

Digest32 merkle_root(const std::vector<std::vector<uint8_t>>& leaves, bool twice, bool* mutated) {
  std::vector<Digest32> level;
  for (const auto& leaf : leaves) level.push_back(h(leaf.data(), leaf.size(), twice));
  bool m = false;
  while (level.size() > 1) {
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      if (level[i] == level[i + 1]) m = true;
    if (level.size() % 2) level.push_back(level.back());
    std::vector<Digest32> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      std::vector<uint8_t> pair(level[i].begin(), level[i].end());
      pair.insert(pair.end(), level[i + 1].begin(), level[i + 1].end());
      next.push_back(h(pair.data(), pair.size(), twice));
    }
    level = std::move(next);
  }
  if (mutated) *mutated = m;
  return level.at(0);
}

std::vector<std::vector<uint8_t>> synthetic_leaves(size_t n) {
  std::vector<std::vector<uint8_t>> leaves(n);
  for (size_t i = 0; i < n; ++i) leaves[i].assign(32, uint8_t(i % 256));
  return leaves;
}

}  // namespace st::reference
