// merkle_baselines: see merkle_baselines.h. SHA256_Init/Update/Final are deprecated in
// OpenSSL 3 but are exactly the baseline the published study measured.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "workloads/merkle_baselines.h"

#include <openssl/sha.h>

#include <cstring>

namespace st::workloads {

namespace {

inline void hash_once(MerkleBaseline kind, const uint8_t* in, size_t len, uint8_t* out) {
  if (kind == MerkleBaseline::oneshot) {
    SHA256(in, len, out);
  } else {
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, in, len);
    SHA256_Final(out, &ctx);
  }
}

inline void hash_node(MerkleBaseline kind, const uint8_t* in, size_t len, uint8_t* out, bool twice) {
  hash_once(kind, in, len, out);
  if (twice) {
    uint8_t tmp[32];
    std::memcpy(tmp, out, 32);
    hash_once(kind, tmp, 32, out);
  }
}

size_t pow2_at_least(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

MerkleBaselineTree::MerkleBaselineTree(size_t leaf_count)
    : n_(leaf_count), nodes_(((pow2_at_least(leaf_count) - 1) * 2 + 1) * 32 + 32) {}

void MerkleBaselineTree::add(MerkleBaseline kind, const uint8_t* data, size_t leaf_size, bool twice) {
  uint8_t* out = nodes_.data();
  for (size_t i = 0; i < n_; ++i) hash_node(kind, data + i * leaf_size, leaf_size, out + 32 * i, twice);
}

void MerkleBaselineTree::compute(MerkleBaseline kind, bool twice) {
  uint8_t* level = nodes_.data();
  size_t count = n_;
  while (count > 1) {
    if (count % 2) { std::memcpy(level + 32 * count, level + 32 * (count - 1), 32); ++count; }
    uint8_t* next = level + 32 * count;
    for (size_t i = 0; i < count / 2; ++i) hash_node(kind, level + 64 * i, 64, next + 32 * i, twice);
    level = next;
    count /= 2;
  }
  std::memcpy(root_.data(), level, 32);
}

}  // namespace st::workloads
