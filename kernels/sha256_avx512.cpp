// sha256_avx512: the 16-lane multi-buffer tier (compiled with -mavx512f/bw/vl/dq, used only
// when the CPU and OS support AVX-512). Lane j of a vector holds message j of a group of 16;
// the rounds are the shared compress<V, Shape>() of sha256_simd.h over a zmm policy that
// uses vprord and vpternlogd (one instruction each for Ch, Maj and every 3-way xor).
//
// Entry points and their data movement:
//   leaves32_sliced  16 leaves -> 8 row loads [leaf m | leaf m+8], bswap, 8x8 transposes
//                    -> one compression with words 8..15 constant -> 8 stores (sliced).
//   parents_sliced   child blocks A (2b) and B (2b+1), per word w one vpermt2d each:
//                      left_w  = even lanes of (A_w, B_w)   right_w = odd lanes
//                    -> data compression, then the padding block with W+K all constants
//                    -> 8 stores. No byte swapping anywhere.
//   digests_sliced   8 loads -> one compression (constant words 8..15) -> 8 stores.
//   hash32/64_batch  16 messages per group (transpose in, bswap, transpose out); a partial
//                    last group goes through a zero-padded stack copy.
//   hash_batch       the lane-refilling scheduler of sha256_simd.h, one 16x16 transpose of
//                    the 16 lanes' next blocks per compression.
//   hash             one message gains nothing from lanes: the best single-stream tier.
//
// Row/lane diagram of the 8-row transpose (rows r_m are 64-byte vectors):
//   r_m = [ msg m word 0..7 | msg m+8 word 0..7 ]     m = 0..7
//   after transpose8: W_w = [ msg 0..7 word w | msg 8..15 word w ]   (lane j = msg j)
// The transpose is its own inverse, so digests go back the same way.
//
// Invariants: no allocation; unaligned pointers accepted everywhere; in == out allowed for
// hash32_batch, hash64_batch and digests_sliced (each group is loaded before it is stored).
#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*
// self-initialisation once inlined (GCC PR 105593, fixed in 12.3/13): thousands of false
// warnings per build. Silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstring>

#include "kernels/sha256.h"
#include "kernels/sha256_simd.h"
#include "kernels/sha256_tiers.h"

namespace st::kernels::sha256_detail {

namespace {

struct V512 {
  using vec = __m512i;
  static ST_SHA_INLINE vec set1(uint32_t x) { return _mm512_set1_epi32(int(x)); }
  static ST_SHA_INLINE vec add(vec a, vec b) { return _mm512_add_epi32(a, b); }
  static ST_SHA_INLINE vec xor3(vec a, vec b, vec c) { return _mm512_ternarylogic_epi32(a, b, c, 0x96); }
  static ST_SHA_INLINE vec bsig0(vec x) { return xor3(_mm512_ror_epi32(x, 2), _mm512_ror_epi32(x, 13), _mm512_ror_epi32(x, 22)); }
  static ST_SHA_INLINE vec bsig1(vec x) { return xor3(_mm512_ror_epi32(x, 6), _mm512_ror_epi32(x, 11), _mm512_ror_epi32(x, 25)); }
  static ST_SHA_INLINE vec ssig0(vec x) { return xor3(_mm512_ror_epi32(x, 7), _mm512_ror_epi32(x, 18), _mm512_srli_epi32(x, 3)); }
  static ST_SHA_INLINE vec ssig1(vec x) { return xor3(_mm512_ror_epi32(x, 17), _mm512_ror_epi32(x, 19), _mm512_srli_epi32(x, 10)); }
  static ST_SHA_INLINE vec ch(vec e, vec f, vec g) { return _mm512_ternarylogic_epi32(e, f, g, 0xCA); }
  static ST_SHA_INLINE vec maj(vec a, vec b, vec c) { return _mm512_ternarylogic_epi32(a, b, c, 0xE8); }
};

using vec = __m512i;
constexpr size_t L = 16;
// A partial last group of at most this many messages is hashed one by one with SHA-NI
// (when present) instead of a full 16-lane pass over zero padding.
constexpr size_t kTailSingles = 3;
// hash_batch: when at most this many lanes are still busy and no message is left to start,
// the rest is finished with single-stream SHA-NI (if present).
constexpr size_t kStragglerLanes = 3;
bool single_stream_is_fast() {
  static const bool fast = sha256_tier_available(Sha256Tier::shani);
  return fast;
}

ST_SHA_INLINE vec bswap32(vec x) {
  const vec mask = _mm512_broadcast_i32x4(_mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  return _mm512_shuffle_epi8(x, mask);
}

ST_SHA_INLINE vec loadu(const void* p) { return _mm512_loadu_si512(p); }
ST_SHA_INLINE void storeu(void* p, vec v) { _mm512_storeu_si512(p, v); }

// Index vectors for one level of the block transpose: within every 2k x 2k block, swap the
// top-right and bottom-left k x k blocks of the row pair (r_i, r_{i+k}).
//   lo[c] = (c & k) ? r_{i+k}[c - k] : r_i[c]
//   hi[c] = (c & k) ? r_{i+k}[c]     : r_i[c + k]
template <int K>
ST_SHA_INLINE void transpose_level(vec* r, int rows) {
  alignas(64) static constexpr auto idx = [] {
    struct { int32_t lo[16], hi[16]; } t{};
    for (int c = 0; c < 16; ++c) {
      t.lo[c] = (c & K) ? 16 + (c - K) : c;
      t.hi[c] = (c & K) ? 16 + c : c + K;
    }
    return t;
  }();
  const vec lo = _mm512_load_si512(idx.lo), hi = _mm512_load_si512(idx.hi);
  for (int i = 0; i < rows; ++i) {
    if (i & K) continue;
    const vec a = r[i], b = r[i + K];
    r[i] = _mm512_permutex2var_epi32(a, lo, b);
    r[i + K] = _mm512_permutex2var_epi32(a, hi, b);
  }
}

// 8 rows: transposes the two 8x8 halves independently (see the diagram above).
ST_SHA_INLINE void transpose8(vec* r) {
  transpose_level<4>(r, 8);
  transpose_level<2>(r, 8);
  transpose_level<1>(r, 8);
}

// 16 rows: full 16x16 transpose of 32-bit words.
ST_SHA_INLINE void transpose16(vec* r) {
  transpose_level<8>(r, 16);
  transpose_level<4>(r, 16);
  transpose_level<2>(r, 16);
  transpose_level<1>(r, 16);
}

ST_SHA_INLINE void init_state(vec* s) {
  for (int i = 0; i < 8; ++i) s[i] = V512::set1(simd::kIV[i]);
}

// 16 messages of 32 bytes at p (message j at p + 32 j) -> message words 0..7, lane j = msg j.
ST_SHA_INLINE void load_msgs32(const uint8_t* p, vec* w) {
  for (int m = 0; m < 8; ++m) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * m));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * (m + 8)));
    w[m] = bswap32(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
  }
  transpose8(w);
}

// 8 state vectors -> 16 digests of 32 bytes (digest j at out + 32 j).
ST_SHA_INLINE void store_digests(vec* s, uint8_t* out) {
  transpose8(s);
  for (int m = 0; m < 8; ++m) {
    const vec row = bswap32(s[m]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * m), _mm512_castsi512_si256(row));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * (m + 8)), _mm512_extracti64x4_epi64(row, 1));
  }
}

// 16 blocks of 64 bytes, row pointers -> the 16 message words, lane j = block j.
ST_SHA_INLINE void load_blocks(const uint8_t* const* rows, vec* w) {
  for (int j = 0; j < 16; ++j) w[j] = bswap32(loadu(rows[j]));
  transpose16(w);
}

// ---- sliced Merkle entry points -------------------------------------------------------------

void leaves32_sliced_avx512(const uint8_t* leaves, uint32_t* out, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    vec s[8], w[16];
    load_msgs32(leaves + b * kSlicedLanes * 32, w);
    init_state(s);
    simd::compress<V512, simd::ShapeMsg32>(s, w);
    uint32_t* o = out + b * kSlicedBlockWords;
    for (int i = 0; i < 8; ++i) storeu(o + 16 * i, s[i]);
  }
}

void parents_sliced_avx512(const uint32_t* children, uint32_t* parents, size_t nblocks) {
  alignas(64) static constexpr int32_t kEven[16] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  alignas(64) static constexpr int32_t kOdd[16] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
  const vec even = _mm512_load_si512(kEven), odd = _mm512_load_si512(kOdd);
  for (size_t b = 0; b < nblocks; ++b) {
    const uint32_t* a_blk = children + (2 * b) * kSlicedBlockWords;
    const uint32_t* b_blk = a_blk + kSlicedBlockWords;
    vec s[8], w[16];
    for (int i = 0; i < 8; ++i) {
      const vec x = loadu(a_blk + 16 * i), y = loadu(b_blk + 16 * i);
      w[i] = _mm512_permutex2var_epi32(x, even, y);
      w[8 + i] = _mm512_permutex2var_epi32(x, odd, y);
    }
    init_state(s);
    simd::compress<V512, simd::ShapeData>(s, w);
    simd::compress<V512, simd::ShapePad64>(s, w);
    uint32_t* o = parents + b * kSlicedBlockWords;
    for (int i = 0; i < 8; ++i) storeu(o + 16 * i, s[i]);
  }
}

void digests_sliced_avx512(const uint32_t* in, uint32_t* out, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    vec s[8], w[16];
    for (int i = 0; i < 8; ++i) w[i] = loadu(in + b * kSlicedBlockWords + 16 * i);
    init_state(s);
    simd::compress<V512, simd::ShapeMsg32>(s, w);
    for (int i = 0; i < 8; ++i) storeu(out + b * kSlicedBlockWords + 16 * i, s[i]);
  }
}

// ---- byte-oriented batch entry points -------------------------------------------------------

ST_SHA_INLINE void hash32_group(const uint8_t* in, uint8_t* out) {
  vec s[8], w[16];
  load_msgs32(in, w);
  init_state(s);
  simd::compress<V512, simd::ShapeMsg32>(s, w);
  store_digests(s, out);
}

ST_SHA_INLINE void hash64_group(const uint8_t* in, uint8_t* out) {
  const uint8_t* rows[16];
  for (int j = 0; j < 16; ++j) rows[j] = in + 64 * j;
  vec s[8], w[16];
  load_blocks(rows, w);
  init_state(s);
  simd::compress<V512, simd::ShapeData>(s, w);
  simd::compress<V512, simd::ShapePad64>(s, w);
  store_digests(s, out);
}

void hash32_batch_avx512(const uint8_t* in, uint8_t* out, size_t n) {
  simd::batch_fixed<L, 32>(in, out, n, [](const uint8_t* i, uint8_t* o) { hash32_group(i, o); }, kTailSingles,
                           single_stream_is_fast, hash_single_best);
}

void hash64_batch_avx512(const uint8_t* in, uint8_t* out, size_t n) {
  simd::batch_fixed<L, 64>(in, out, n, [](const uint8_t* i, uint8_t* o) { hash64_group(i, o); }, kTailSingles,
                           single_stream_is_fast, hash_single_best);
}

void hash_batch_avx512(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  if (n <= 2) {
    for (size_t i = 0; i < n; ++i) hash_single_best(msgs[i], lens[i], out + 32 * i);
    return;
  }
  simd::hash_batch_lanes<L>(msgs, lens, out, n, [](uint32_t* state, const uint8_t* const* blocks) {
    vec s[8], w[16];
    for (int i = 0; i < 8; ++i) s[i] = _mm512_load_si512(state + 16 * i);
    load_blocks(blocks, w);
    simd::compress<V512, simd::ShapeData>(s, w);
    for (int i = 0; i < 8; ++i) _mm512_store_si512(state + 16 * i, s[i]);
  }, straggler_compressor(), kStragglerLanes);
}

}  // namespace

extern const Sha256Kernel kSha256Avx512;
const Sha256Kernel kSha256Avx512 = {
    "avx512",            Sha256Tier::avx512,     hash_single_best,       hash32_batch_avx512,
    hash64_batch_avx512, hash_batch_avx512,      leaves32_sliced_avx512, parents_sliced_avx512,
    digests_sliced_avx512};

}  // namespace st::kernels::sha256_detail
