// sha256_portable: scalar FIPS 180-4 SHA-256, the portable tier, and the generic
// sliced-block adapters other tiers may reuse.
#include "kernels/sha256_portable.h"

#include <cstring>

#include "kernels/sha256.h"

namespace st::kernels::sha256_detail {

namespace {
inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

void compress_portable(uint32_t state[8], const uint8_t* blocks, size_t nblocks) {
  for (size_t blk = 0; blk < nblocks; ++blk, blocks += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) w[i] = load_be32(blocks + 4 * i);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
  }
}

void hash_with(CompressFn compress, const uint8_t* data, size_t len, uint8_t* out) {
  uint32_t state[8];
  std::memcpy(state, kInit, sizeof state);
  const size_t full = len / 64;
  if (full) compress(state, data, full);
  uint8_t tail[128] = {};
  const size_t rem = len - full * 64;
  if (rem) std::memcpy(tail, data + full * 64, rem);
  tail[rem] = 0x80;
  const size_t tail_blocks = rem + 9 <= 64 ? 1 : 2;
  const uint64_t bits = uint64_t(len) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_blocks * 64 - 1 - i] = uint8_t(bits >> (8 * i));
  compress(state, tail, tail_blocks);
  for (int i = 0; i < 8; ++i) store_be32(out + 4 * i, state[i]);
}

void unslice_block(const uint32_t* block, uint8_t* digests) {
  for (size_t j = 0; j < kSlicedLanes; ++j)
    for (size_t w = 0; w < 8; ++w) store_be32(digests + 32 * j + 4 * w, block[w * kSlicedLanes + j]);
}

void slice_block(const uint8_t* digests, uint32_t* block) {
  for (size_t j = 0; j < kSlicedLanes; ++j)
    for (size_t w = 0; w < 8; ++w) block[w * kSlicedLanes + j] = load_be32(digests + 32 * j + 4 * w);
}

void leaves32_sliced_via(Batch32Fn h32, const uint8_t* leaves, uint32_t* out, size_t nblocks) {
  uint8_t digests[kSlicedLanes * 32];
  for (size_t b = 0; b < nblocks; ++b) {
    h32(leaves + b * kSlicedLanes * 32, digests, kSlicedLanes);
    slice_block(digests, out + b * kSlicedBlockWords);
  }
}

void parents_sliced_via(Batch64Fn h64, const uint32_t* children, uint32_t* parents, size_t nblocks) {
  uint8_t pairs[2 * kSlicedLanes * 32];
  uint8_t digests[kSlicedLanes * 32];
  for (size_t b = 0; b < nblocks; ++b) {
    unslice_block(children + (2 * b) * kSlicedBlockWords, pairs);
    unslice_block(children + (2 * b + 1) * kSlicedBlockWords, pairs + kSlicedLanes * 32);
    h64(pairs, digests, kSlicedLanes);
    slice_block(digests, parents + b * kSlicedBlockWords);
  }
}

void digests_sliced_via(Batch32Fn h32, const uint32_t* in, uint32_t* out, size_t nblocks) {
  uint8_t digests[kSlicedLanes * 32];
  for (size_t b = 0; b < nblocks; ++b) {
    unslice_block(in + b * kSlicedBlockWords, digests);
    h32(digests, digests, kSlicedLanes);
    slice_block(digests, out + b * kSlicedBlockWords);
  }
}

namespace {

void hash_portable(const uint8_t* data, size_t len, uint8_t* out) { hash_with(compress_portable, data, len, out); }

void hash32_batch_portable(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint8_t digest[32];
    hash_portable(in + 32 * i, 32, digest);
    std::memcpy(out + 32 * i, digest, 32);
  }
}

void hash64_batch_portable(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint8_t digest[32];
    hash_portable(in + 64 * i, 64, digest);
    std::memcpy(out + 32 * i, digest, 32);
  }
}

void hash_batch_portable(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) hash_portable(msgs[i], lens[i], out + 32 * i);
}

void leaves32_sliced_portable(const uint8_t* leaves, uint32_t* out, size_t nblocks) {
  leaves32_sliced_via(hash32_batch_portable, leaves, out, nblocks);
}
void parents_sliced_portable(const uint32_t* children, uint32_t* parents, size_t nblocks) {
  parents_sliced_via(hash64_batch_portable, children, parents, nblocks);
}
void digests_sliced_portable(const uint32_t* in, uint32_t* out, size_t nblocks) {
  digests_sliced_via(hash32_batch_portable, in, out, nblocks);
}

}  // namespace

extern const Sha256Kernel kSha256Portable;
const Sha256Kernel kSha256Portable = {
    "portable",           Sha256Tier::portable,      hash_portable,           hash32_batch_portable,
    hash64_batch_portable, hash_batch_portable,       leaves32_sliced_portable, parents_sliced_portable,
    digests_sliced_portable};

}  // namespace st::kernels::sha256_detail
