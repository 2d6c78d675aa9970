// sha256_shani: the SHA-NI tier (compiled with -msha -msse4.1, used only when the CPU has
// SHA-NI). One stream for single messages; batches run kStreams independent messages
// interleaved, so the latency-bound sha256rnds2 chains of different messages overlap.
//
// Register layout (Intel's): a state lives in two xmm, ABEF = {f, e, b, a} and
// CDGH = {h, g, d, c} (lane 0 first); message groups m[g] = W[4g..4g+3] (lane 0 = W[4g]).
// The constant padding block of a 64-byte message uses precomputed W+K (no schedule).
// Sliced entry points are native: 4 lanes of a sliced block at a time, moved between the
// sliced words and the streams' message groups / states by 4x4 transposes (no bswap).
//
// Invariants: no allocation; unaligned input/output; in == out aliasing allowed where the
// table contract allows it (each group is fully loaded before its digests are stored).
#include <immintrin.h>

#include <cstring>

#include "kernels/sha256.h"
#include "kernels/sha256_simd.h"
#include "kernels/sha256_tiers.h"

namespace st::kernels::sha256_detail {

namespace {

using simd::kK;

// Streams interleaved by the batch entry points (2: measured no better at 3-4 on this machine, and 16 xmm registers hold 2 without spills).
constexpr int kStreams = 2;

alignas(16) constexpr uint32_t kKAligned[64] = {
    kK[0],  kK[1],  kK[2],  kK[3],  kK[4],  kK[5],  kK[6],  kK[7],  kK[8],  kK[9],  kK[10], kK[11], kK[12],
    kK[13], kK[14], kK[15], kK[16], kK[17], kK[18], kK[19], kK[20], kK[21], kK[22], kK[23], kK[24], kK[25],
    kK[26], kK[27], kK[28], kK[29], kK[30], kK[31], kK[32], kK[33], kK[34], kK[35], kK[36], kK[37], kK[38],
    kK[39], kK[40], kK[41], kK[42], kK[43], kK[44], kK[45], kK[46], kK[47], kK[48], kK[49], kK[50], kK[51],
    kK[52], kK[53], kK[54], kK[55], kK[56], kK[57], kK[58], kK[59], kK[60], kK[61], kK[62], kK[63]};

constexpr auto& kPadWK = simd::ShapeWK<simd::ShapePad64>::table;

ST_SHA_INLINE __m128i bswap_mask() { return _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); }
ST_SHA_INLINE __m128i load_be(const uint8_t* p) { return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), bswap_mask()); }

ST_SHA_INLINE __m128i iv_abef() { return _mm_set_epi32(int(simd::kIV[0]), int(simd::kIV[1]), int(simd::kIV[4]), int(simd::kIV[5])); }
ST_SHA_INLINE __m128i iv_cdgh() { return _mm_set_epi32(int(simd::kIV[2]), int(simd::kIV[3]), int(simd::kIV[6]), int(simd::kIV[7])); }

// state[8] (a..h) <-> ABEF/CDGH.
ST_SHA_INLINE void state_to_regs(const uint32_t* state, __m128i& abef, __m128i& cdgh) {
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  dcba = _mm_shuffle_epi32(dcba, 0xB1);  // {b, a, d, c}
  hgfe = _mm_shuffle_epi32(hgfe, 0x1B);  // {h, g, f, e}
  abef = _mm_alignr_epi8(dcba, hgfe, 8);  // {f, e, b, a}
  cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);  // {h, g, d, c}
}
ST_SHA_INLINE void regs_to_state(__m128i abef, __m128i cdgh, uint32_t* state) {
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // {a, b, e, f}
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);  // {g, h, c, d}
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));  // {a, b, c, d}
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));  // {e, f, g, h}
}
// Digest bytes (big-endian words a..h) from ABEF/CDGH.
ST_SHA_INLINE void store_digest(__m128i abef, __m128i cdgh, uint8_t* out) {
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(_mm_blend_epi16(feba, dchg, 0xF0), bswap_mask()));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_shuffle_epi8(_mm_alignr_epi8(dchg, feba, 8), bswap_mask()));
}

// Four rounds of N streams from W+K groups.
template <int N>
ST_SHA_INLINE void rounds4(__m128i* abef, __m128i* cdgh, const __m128i* wk) {
  for (int i = 0; i < N; ++i) {
    cdgh[i] = _mm_sha256rnds2_epu32(cdgh[i], abef[i], wk[i]);
    abef[i] = _mm_sha256rnds2_epu32(abef[i], cdgh[i], _mm_shuffle_epi32(wk[i], 0x0E));
  }
}

template <int N, int G>
ST_SHA_INLINE void group_step(__m128i* abef, __m128i* cdgh, __m128i (*m)[4]) {
  __m128i wk[N];
  for (int i = 0; i < N; ++i) {
    if constexpr (G >= 4) {
      __m128i x = _mm_sha256msg1_epu32(m[i][G & 3], m[i][(G + 1) & 3]);
      x = _mm_add_epi32(x, _mm_alignr_epi8(m[i][(G + 3) & 3], m[i][(G + 2) & 3], 4));
      m[i][G & 3] = _mm_sha256msg2_epu32(x, m[i][(G + 3) & 3]);
    }
    wk[i] = _mm_add_epi32(m[i][G & 3], _mm_load_si128(reinterpret_cast<const __m128i*>(kKAligned + 4 * G)));
  }
  rounds4<N>(abef, cdgh, wk);
}

template <int N, int... G>
ST_SHA_INLINE void all_groups(__m128i* abef, __m128i* cdgh, __m128i (*m)[4], std::integer_sequence<int, G...>) {
  (group_step<N, G>(abef, cdgh, m), ...);
}

// N streams, one data block each; m[i] = the 4 message groups (byte-swapped) of stream i.
template <int N>
ST_SHA_INLINE void compress_streams(__m128i* abef, __m128i* cdgh, __m128i (*m)[4]) {
  __m128i abef0[N], cdgh0[N];
  for (int i = 0; i < N; ++i) { abef0[i] = abef[i]; cdgh0[i] = cdgh[i]; }
  all_groups<N>(abef, cdgh, m, std::make_integer_sequence<int, 16>{});
  for (int i = 0; i < N; ++i) { abef[i] = _mm_add_epi32(abef[i], abef0[i]); cdgh[i] = _mm_add_epi32(cdgh[i], cdgh0[i]); }
}

// N streams over the constant padding block of a 64-byte message.
template <int N>
ST_SHA_INLINE void compress_pad64(__m128i* abef, __m128i* cdgh) {
  __m128i abef0[N], cdgh0[N];
  for (int i = 0; i < N; ++i) { abef0[i] = abef[i]; cdgh0[i] = cdgh[i]; }
  for (int g = 0; g < 16; ++g) {
    const __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(kPadWK.wk + 4 * g));
    __m128i wk[N];
    for (int i = 0; i < N; ++i) wk[i] = k;
    rounds4<N>(abef, cdgh, wk);
  }
  for (int i = 0; i < N; ++i) { abef[i] = _mm_add_epi32(abef[i], abef0[i]); cdgh[i] = _mm_add_epi32(cdgh[i], cdgh0[i]); }
}

// ---- entry points -------------------------------------------------------------------------

// One message: full blocks straight from the input, then the 1-2 padded tail blocks from a
// stack buffer; the state stays in ABEF/CDGH registers from IV to digest.
void hash_shani(const uint8_t* data, size_t len, uint8_t* out) {
  __m128i abef = iv_abef(), cdgh = iv_cdgh();
  const size_t full = len / 64;
  for (size_t b = 0; b < full; ++b, data += 64) {
    __m128i m[1][4] = {{load_be(data), load_be(data + 16), load_be(data + 32), load_be(data + 48)}};
    compress_streams<1>(&abef, &cdgh, m);
  }
  const size_t rem = len % 64;
  alignas(16) uint8_t tail[128];
  std::memset(tail, 0, sizeof tail);
  if (rem) std::memcpy(tail, data, rem);
  tail[rem] = 0x80;
  const size_t tail_blocks = rem + 9 <= 64 ? 1 : 2;
  const uint64_t bits_be = __builtin_bswap64(uint64_t(len) * 8);
  std::memcpy(tail + 64 * tail_blocks - 8, &bits_be, 8);
  for (size_t b = 0; b < tail_blocks; ++b) {
    const uint8_t* p = tail + 64 * b;
    __m128i m[1][4] = {{load_be(p), load_be(p + 16), load_be(p + 32), load_be(p + 48)}};
    compress_streams<1>(&abef, &cdgh, m);
  }
  store_digest(abef, cdgh, out);
}

template <int N>
ST_SHA_INLINE void hash32_group(const uint8_t* in, uint8_t* out) {
  __m128i abef[N], cdgh[N], m[N][4];
  for (int i = 0; i < N; ++i) {
    abef[i] = iv_abef();
    cdgh[i] = iv_cdgh();
    m[i][0] = load_be(in + 32 * i);
    m[i][1] = load_be(in + 32 * i + 16);
    m[i][2] = _mm_set_epi32(0, 0, 0, int(0x80000000u));
    m[i][3] = _mm_set_epi32(256, 0, 0, 0);
  }
  compress_streams<N>(abef, cdgh, m);
  for (int i = 0; i < N; ++i) store_digest(abef[i], cdgh[i], out + 32 * i);
}

template <int N>
ST_SHA_INLINE void hash64_group(const uint8_t* in, uint8_t* out) {
  __m128i abef[N], cdgh[N], m[N][4];
  for (int i = 0; i < N; ++i) {
    abef[i] = iv_abef();
    cdgh[i] = iv_cdgh();
    for (int q = 0; q < 4; ++q) m[i][q] = load_be(in + 64 * i + 16 * q);
  }
  compress_streams<N>(abef, cdgh, m);
  compress_pad64<N>(abef, cdgh);
  for (int i = 0; i < N; ++i) store_digest(abef[i], cdgh[i], out + 32 * i);
}

void hash32_batch_shani(const uint8_t* in, uint8_t* out, size_t n) {
  size_t i = 0;
  for (; i + kStreams <= n; i += kStreams) hash32_group<kStreams>(in + 32 * i, out + 32 * i);
  for (; i + 2 <= n; i += 2) hash32_group<2>(in + 32 * i, out + 32 * i);
  for (; i < n; ++i) hash32_group<1>(in + 32 * i, out + 32 * i);
}

void hash64_batch_shani(const uint8_t* in, uint8_t* out, size_t n) {
  // out may equal in: group i reads in[64i .. 64(i+N)) before writing out[32i .. 32(i+N)),
  // which never reaches a later group's input.
  size_t i = 0;
  for (; i + kStreams <= n; i += kStreams) hash64_group<kStreams>(in + 64 * i, out + 32 * i);
  for (; i + 2 <= n; i += 2) hash64_group<2>(in + 64 * i, out + 32 * i);
  for (; i < n; ++i) hash64_group<1>(in + 64 * i, out + 32 * i);
}

void hash_batch_shani(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  if (n == 1) { hash_shani(msgs[0], lens[0], out); return; }
  constexpr size_t L = kStreams;
  simd::hash_batch_lanes<L>(msgs, lens, out, n, [](uint32_t* state, const uint8_t* const* blocks) {
    __m128i abef[L], cdgh[L], m[L][4];
    for (size_t j = 0; j < L; ++j) {
      uint32_t s[8];
      for (int w = 0; w < 8; ++w) s[w] = state[w * L + j];
      state_to_regs(s, abef[j], cdgh[j]);
      for (int q = 0; q < 4; ++q) m[j][q] = load_be(blocks[j] + 16 * q);
    }
    compress_streams<int(L)>(abef, cdgh, m);
    for (size_t j = 0; j < L; ++j) {
      uint32_t s[8];
      regs_to_state(abef[j], cdgh[j], s);
      for (int w = 0; w < 8; ++w) state[w * L + j] = s[w];
    }
  });
}

// ---- sliced entry points: 4 lanes at a time, 4x4 transposes between sliced words and streams

ST_SHA_INLINE void transpose4(__m128i& a, __m128i& b, __m128i& c, __m128i& d) {
  const __m128i t0 = _mm_unpacklo_epi32(a, b), t1 = _mm_unpackhi_epi32(a, b);
  const __m128i t2 = _mm_unpacklo_epi32(c, d), t3 = _mm_unpackhi_epi32(c, d);
  a = _mm_unpacklo_epi64(t0, t2);
  b = _mm_unpackhi_epi64(t0, t2);
  c = _mm_unpacklo_epi64(t1, t3);
  d = _mm_unpackhi_epi64(t1, t3);
}

// Lanes lane0..lane0+3 of a sliced block -> per lane, words 0..3 and 4..7 (message groups).
ST_SHA_INLINE void load_sliced4(const uint32_t* blk, size_t lane0, __m128i (*words)[2]) {
  for (int half = 0; half < 2; ++half) {
    __m128i r[4];
    for (int i = 0; i < 4; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + (4 * half + i) * kSlicedLanes + lane0));
    transpose4(r[0], r[1], r[2], r[3]);
    for (int k = 0; k < 4; ++k) words[k][half] = r[k];
  }
}

// Four states (ABEF/CDGH) -> lanes lane0..lane0+3 of a sliced block.
ST_SHA_INLINE void store_sliced4(const __m128i* abef, const __m128i* cdgh, uint32_t* blk, size_t lane0) {
  __m128i lo[4], hi[4];  // {a, b, c, d} and {e, f, g, h} of each stream
  for (int k = 0; k < 4; ++k) {
    const __m128i feba = _mm_shuffle_epi32(abef[k], 0x1B);
    const __m128i dchg = _mm_shuffle_epi32(cdgh[k], 0xB1);
    lo[k] = _mm_blend_epi16(feba, dchg, 0xF0);
    hi[k] = _mm_alignr_epi8(dchg, feba, 8);
  }
  transpose4(lo[0], lo[1], lo[2], lo[3]);
  transpose4(hi[0], hi[1], hi[2], hi[3]);
  for (int w = 0; w < 4; ++w) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blk + w * kSlicedLanes + lane0), lo[w]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blk + (4 + w) * kSlicedLanes + lane0), hi[w]);
  }
}

ST_SHA_INLINE void iv4(__m128i* abef, __m128i* cdgh) {
  for (int k = 0; k < 4; ++k) { abef[k] = iv_abef(); cdgh[k] = iv_cdgh(); }
}

// Message groups 2, 3 of a 32-byte message (the constant padding words).
ST_SHA_INLINE void pad32(__m128i* m) {
  m[2] = _mm_set_epi32(0, 0, 0, int(0x80000000u));
  m[3] = _mm_set_epi32(256, 0, 0, 0);
}

void leaves32_sliced_shani(const uint8_t* leaves, uint32_t* out, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    uint32_t* blk = out + b * kSlicedBlockWords;
    for (size_t lane0 = 0; lane0 < kSlicedLanes; lane0 += 4) {
      const uint8_t* p = leaves + (b * kSlicedLanes + lane0) * 32;
      __m128i abef[4], cdgh[4], m[4][4];
      for (int k = 0; k < 4; ++k) { m[k][0] = load_be(p + 32 * k); m[k][1] = load_be(p + 32 * k + 16); pad32(m[k]); }
      iv4(abef, cdgh);
      compress_streams<2>(abef, cdgh, m);
      compress_streams<2>(abef + 2, cdgh + 2, m + 2);
      store_sliced4(abef, cdgh, blk, lane0);
    }
  }
}

void parents_sliced_shani(const uint32_t* children, uint32_t* parents, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) {
    uint32_t* blk = parents + b * kSlicedBlockWords;
    for (size_t lane0 = 0; lane0 < kSlicedLanes; lane0 += 4) {
      // Parents lane0..lane0+3 <- children 2 lane0 .. 2 lane0 + 7 of the 32 in blocks 2b, 2b+1.
      const size_t child0 = 2 * lane0;
      const uint32_t* cblk = children + (2 * b + child0 / kSlicedLanes) * kSlicedBlockWords;
      __m128i cw[8][2];
      load_sliced4(cblk, child0 % kSlicedLanes, cw);
      load_sliced4(cblk, child0 % kSlicedLanes + 4, cw + 4);
      __m128i abef[4], cdgh[4], m[4][4];
      for (int k = 0; k < 4; ++k) {
        m[k][0] = cw[2 * k][0]; m[k][1] = cw[2 * k][1];
        m[k][2] = cw[2 * k + 1][0]; m[k][3] = cw[2 * k + 1][1];
      }
      iv4(abef, cdgh);
      compress_streams<2>(abef, cdgh, m);
      compress_pad64<2>(abef, cdgh);
      compress_streams<2>(abef + 2, cdgh + 2, m + 2);
      compress_pad64<2>(abef + 2, cdgh + 2);
      store_sliced4(abef, cdgh, blk, lane0);
    }
  }
}

void digests_sliced_shani(const uint32_t* in, uint32_t* out, size_t nblocks) {
  // in == out: each 4-lane group is loaded before it is stored, and groups are disjoint.
  for (size_t b = 0; b < nblocks; ++b) {
    for (size_t lane0 = 0; lane0 < kSlicedLanes; lane0 += 4) {
      __m128i words[4][2], abef[4], cdgh[4], m[4][4];
      load_sliced4(in + b * kSlicedBlockWords, lane0, words);
      for (int k = 0; k < 4; ++k) { m[k][0] = words[k][0]; m[k][1] = words[k][1]; pad32(m[k]); }
      iv4(abef, cdgh);
      compress_streams<2>(abef, cdgh, m);
      compress_streams<2>(abef + 2, cdgh + 2, m + 2);
      store_sliced4(abef, cdgh, out + b * kSlicedBlockWords, lane0);
    }
  }
}

}  // namespace

extern const Sha256Kernel kSha256Shani;
const Sha256Kernel kSha256Shani = {
    "shani",           Sha256Tier::shani,     hash_shani,           hash32_batch_shani,
    hash64_batch_shani, hash_batch_shani,     leaves32_sliced_shani, parents_sliced_shani,
    digests_sliced_shani};

}  // namespace st::kernels::sha256_detail
