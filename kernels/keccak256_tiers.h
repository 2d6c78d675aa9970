// keccak256_tiers: internal declarations shared by the Keccak-256 tiers (portable in
// keccak256.cpp, avx512x8 in keccak256_avx512.cpp). Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/support/byte_order.h"

namespace st::kernels::keccak_detail {

using BatchFn = void (*)(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);
using SingleFn = void (*)(const uint8_t* data, size_t len, uint8_t* out32);
using PullFn = void (*)(Keccak256Next next, void* ctx);
using Batch32Fn = void (*)(const uint8_t* const* msgs, uint8_t* out, size_t n);

void keccak256_portable(const uint8_t* data, size_t len, uint8_t* out32);
void keccak256_batch_portable(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);
void keccak256_pull_portable(Keccak256Next next, void* ctx);
void keccak256_batch32_portable(const uint8_t* const* msgs, uint8_t* out, size_t n);
#if defined(STATETREE_HAVE_KECCAK256_AVX512)
// Requires a CPU with AVX-512 F/BW/VL/DQ (check cpu_features() first).
void keccak256_batch_avx512(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);
void keccak256_avx512vl(const uint8_t* data, size_t len, uint8_t* out32);
void keccak256_pull_avx512(Keccak256Next next, void* ctx);
void keccak256_batch32_avx512(const uint8_t* const* msgs, uint8_t* out, size_t n);
#endif

// Known-answer + cross-check against the portable kernel; true when the tier is correct.
bool keccak256_self_test(SingleFn single, BatchFn batch, PullFn pull, Batch32Fn batch32);

static inline void store_le64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

// Keccak-256 sponge over one message with a given single-state permutation (header
// template: each tier instantiates it with its own permutation and flags).
template <class Permute>
static inline void keccak256_sponge(const uint8_t* data, size_t len, uint8_t* out32, Permute permute) {
  constexpr size_t kRate = 136;
  uint64_t state[25] = {};
  while (len >= kRate) {
    for (size_t i = 0; i < kRate / 8; ++i) state[i] ^= load_le64(data + 8 * i);
    permute(state);
    data += kRate;
    len -= kRate;
  }
  uint8_t last[kRate] = {};
  if (len) std::memcpy(last, data, len);
  last[len] ^= 0x01;
  last[kRate - 1] ^= 0x80;
  for (size_t i = 0; i < kRate / 8; ++i) state[i] ^= load_le64(last + 8 * i);
  permute(state);
  for (size_t i = 0; i < 4; ++i) store_le64(out32 + 8 * i, state[i]);
}

}  // namespace st::kernels::keccak_detail
