// sha256_avx2: the 8-lane multi-buffer tier (compiled with -mavx2, used only when the CPU
// and OS support AVX2). Lane j of a ymm holds message j of a group of 8; the rounds are the
// shared compress<V, Shape>() of sha256_simd.h over a ymm policy (rotates as shift pairs,
// Ch and Maj as and/andnot/xor).
//
// Sliced entry points are native: a sliced block of 16 digests is two 8-lane halves
//   half h of a sliced block = words block[w * 16 + 8h .. + 8)  (one ymm per word w)
//   leaves32_sliced  half h <- leaves 8h..8h+7: 8 row loads, bswap, 8x8 transpose
//   parents_sliced   half h <- child block 2b+h: left_w = even lanes of its word w,
//                    right_w = odd lanes (shuffle_ps + permute4x64 per vector); no bswap
//   digests_sliced   half h <- words of half h, constant words 8..15
// Byte batches: 8 messages per group (8x8 transposes in and out, bswap); a partial last
// group goes through a zero-padded stack copy; hash_batch uses the lane-refilling scheduler.
//
// Invariants: no allocation; unaligned pointers accepted; in == out allowed for
// hash32_batch, hash64_batch and digests_sliced (each group is loaded before it is stored).
#include <immintrin.h>

#include <cstring>

#include "kernels/sha256.h"
#include "kernels/sha256_simd.h"
#include "kernels/sha256_tiers.h"

namespace st::kernels::sha256_detail {

namespace {

using vec = __m256i;
constexpr size_t L = 8;
// A partial last group of at most this many messages is hashed one by one with SHA-NI
// (when present) instead of a full 8-lane pass over zero padding.
constexpr size_t kTailSingles = 3;
// hash_batch: when at most this many lanes are still busy and no message is left to start,
// the rest is finished with single-stream SHA-NI (if present).
constexpr size_t kStragglerLanes = 3;
bool single_stream_is_fast() {
  static const bool fast = sha256_tier_available(Sha256Tier::shani);
  return fast;
}

template <int N>
ST_SHA_INLINE vec ror(vec x) { return _mm256_or_si256(_mm256_srli_epi32(x, N), _mm256_slli_epi32(x, 32 - N)); }
ST_SHA_INLINE vec xor3(vec a, vec b, vec c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }

struct V256 {
  using vec = __m256i;
  static ST_SHA_INLINE vec set1(uint32_t x) { return _mm256_set1_epi32(int(x)); }
  static ST_SHA_INLINE vec add(vec a, vec b) { return _mm256_add_epi32(a, b); }
  static ST_SHA_INLINE vec bsig0(vec x) { return xor3(ror<2>(x), ror<13>(x), ror<22>(x)); }
  static ST_SHA_INLINE vec bsig1(vec x) { return xor3(ror<6>(x), ror<11>(x), ror<25>(x)); }
  static ST_SHA_INLINE vec ssig0(vec x) { return xor3(ror<7>(x), ror<18>(x), _mm256_srli_epi32(x, 3)); }
  static ST_SHA_INLINE vec ssig1(vec x) { return xor3(ror<17>(x), ror<19>(x), _mm256_srli_epi32(x, 10)); }
  // g ^ (e & (f ^ g))
  static ST_SHA_INLINE vec ch(vec e, vec f, vec g) { return _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g))); }
  // (a & b) | (c & (a | b))
  static ST_SHA_INLINE vec maj(vec a, vec b, vec c) {
    return _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(c, _mm256_or_si256(a, b)));
  }
};

ST_SHA_INLINE vec bswap32(vec x) {
  const vec mask = _mm256_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
                                   12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  return _mm256_shuffle_epi8(x, mask);
}
ST_SHA_INLINE vec loadu(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
ST_SHA_INLINE void storeu(void* p, vec v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }

// In-place 8x8 transpose of 32-bit words (rows r[0..8) -> columns).
ST_SHA_INLINE void transpose8(vec* r) {
  const vec t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
  const vec t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
  const vec t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
  const vec t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
  const vec u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const vec u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  const vec u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
  const vec u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
  r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
  r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
  r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
  r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
  r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
  r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
  r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
  r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

ST_SHA_INLINE void init_state(vec* s) {
  for (int i = 0; i < 8; ++i) s[i] = V256::set1(simd::kIV[i]);
}

// 8 messages of 32 bytes at p -> message words 0..7 (lane j = message j).
ST_SHA_INLINE void load_msgs32(const uint8_t* p, vec* w) {
  for (int m = 0; m < 8; ++m) w[m] = bswap32(loadu(p + 32 * m));
  transpose8(w);
}

ST_SHA_INLINE void store_digests(vec* s, uint8_t* out) {
  transpose8(s);
  for (int m = 0; m < 8; ++m) storeu(out + 32 * m, bswap32(s[m]));
}

// 8 blocks of 64 bytes -> 16 message words.
ST_SHA_INLINE void load_blocks(const uint8_t* const* rows, vec* w) {
  for (int j = 0; j < 8; ++j) {
    w[j] = bswap32(loadu(rows[j]));
    w[8 + j] = bswap32(loadu(rows[j] + 32));
  }
  transpose8(w);
  transpose8(w + 8);
}

// ---- sliced Merkle entry points -------------------------------------------------------------

void leaves32_sliced_avx2(const uint8_t* leaves, uint32_t* out, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    for (size_t h = 0; h < 2; ++h) {
      vec s[8], w[16];
      load_msgs32(leaves + (2 * b + h) * L * 32, w);
      init_state(s);
      simd::compress<V256, simd::ShapeMsg32>(s, w);
      uint32_t* o = out + b * kSlicedBlockWords + 8 * h;
      for (int i = 0; i < 8; ++i) storeu(o + 16 * i, s[i]);
    }
  }
}

void parents_sliced_avx2(const uint32_t* children, uint32_t* parents, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    for (size_t h = 0; h < 2; ++h) {
      const uint32_t* c = children + (2 * b + h) * kSlicedBlockWords;
      vec s[8], w[16];
      for (int i = 0; i < 8; ++i) {
        const __m256 lo = _mm256_castsi256_ps(loadu(c + 16 * i)), hi = _mm256_castsi256_ps(loadu(c + 16 * i + 8));
        // shuffle_ps: [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6]; permute4x64 (0,2,1,3) puts them in order.
        const vec ev = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
        const vec od = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
        w[i] = _mm256_permute4x64_epi64(ev, _MM_SHUFFLE(3, 1, 2, 0));
        w[8 + i] = _mm256_permute4x64_epi64(od, _MM_SHUFFLE(3, 1, 2, 0));
      }
      init_state(s);
      simd::compress<V256, simd::ShapeData>(s, w);
      simd::compress<V256, simd::ShapePad64>(s, w);
      uint32_t* o = parents + b * kSlicedBlockWords + 8 * h;
      for (int i = 0; i < 8; ++i) storeu(o + 16 * i, s[i]);
    }
  }
}

void digests_sliced_avx2(const uint32_t* in, uint32_t* out, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    for (size_t h = 0; h < 2; ++h) {
      vec s[8], w[16];
      for (int i = 0; i < 8; ++i) w[i] = loadu(in + b * kSlicedBlockWords + 16 * i + 8 * h);
      init_state(s);
      simd::compress<V256, simd::ShapeMsg32>(s, w);
      for (int i = 0; i < 8; ++i) storeu(out + b * kSlicedBlockWords + 16 * i + 8 * h, s[i]);
    }
  }
}

// ---- byte-oriented batch entry points -------------------------------------------------------

ST_SHA_INLINE void hash32_group(const uint8_t* in, uint8_t* out) {
  vec s[8], w[16];
  load_msgs32(in, w);
  init_state(s);
  simd::compress<V256, simd::ShapeMsg32>(s, w);
  store_digests(s, out);
}

ST_SHA_INLINE void hash64_group(const uint8_t* in, uint8_t* out) {
  const uint8_t* rows[8];
  for (int j = 0; j < 8; ++j) rows[j] = in + 64 * j;
  vec s[8], w[16];
  load_blocks(rows, w);
  init_state(s);
  simd::compress<V256, simd::ShapeData>(s, w);
  simd::compress<V256, simd::ShapePad64>(s, w);
  store_digests(s, out);
}

void hash32_batch_avx2(const uint8_t* in, uint8_t* out, size_t n) {
  simd::batch_fixed<L, 32>(in, out, n, [](const uint8_t* i, uint8_t* o) { hash32_group(i, o); }, kTailSingles,
                           single_stream_is_fast, hash_single_best);
}

void hash64_batch_avx2(const uint8_t* in, uint8_t* out, size_t n) {
  simd::batch_fixed<L, 64>(in, out, n, [](const uint8_t* i, uint8_t* o) { hash64_group(i, o); }, kTailSingles,
                           single_stream_is_fast, hash_single_best);
}

void hash_batch_avx2(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  if (n <= 1) {
    for (size_t i = 0; i < n; ++i) hash_single_best(msgs[i], lens[i], out + 32 * i);
    return;
  }
  simd::hash_batch_lanes<L>(msgs, lens, out, n, [](uint32_t* state, const uint8_t* const* blocks) {
    vec s[8], w[16];
    for (int i = 0; i < 8; ++i) s[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(state + 8 * i));
    load_blocks(blocks, w);
    simd::compress<V256, simd::ShapeData>(s, w);
    for (int i = 0; i < 8; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(state + 8 * i), s[i]);
  }, straggler_compressor(), kStragglerLanes);
}

}  // namespace

extern const Sha256Kernel kSha256Avx2;
const Sha256Kernel kSha256Avx2 = {
    "avx2",            Sha256Tier::avx2,     hash_single_best,     hash32_batch_avx2,
    hash64_batch_avx2, hash_batch_avx2,      leaves32_sliced_avx2, parents_sliced_avx2,
    digests_sliced_avx2};

}  // namespace st::kernels::sha256_detail
