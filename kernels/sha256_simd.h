// sha256_simd: ISA-free building blocks shared by the SIMD tiers (shani, avx2, avx512).
//
// 1. Message shapes: which of the 64 schedule words W[t] are compile-time constants. A
//    shape is computed once at compile time from the known message words (the SHA-256
//    padding of a 32-byte message: words 8..15; the padding block of a 64-byte message: all
//    16 words), so the kernels skip the schedule work and fold W[t]+K[t] into broadcast
//    constants wherever the value is known.
// 2. compress<V, Shape>(): 64 fully unrolled rounds over lane vectors of any width. V is a
//    policy of vector ops (add, set1, the four sigma functions, Ch, Maj) that each ISA file
//    defines in its own anonymous namespace, so every instantiation has internal linkage
//    and is compiled with that file's flags only (no ODR mixing of ISA code).
// 3. batch_fixed<L, Bytes>(): n contiguous fixed-size messages in groups of L lanes; the
//    last partial group goes either to single-stream hashing (few messages, when that is
//    fast) or to one zero-padded group in a stack buffer.
// 4. hash_batch_lanes<L>(): the multi-buffer scheduler for messages of arbitrary lengths:
//    L lanes, each walks its message block by block (full blocks read in place, the 1-2
//    padded tail blocks built in a per-lane buffer); a lane whose message ends is refilled
//    with the next message, idle lanes hash a zero block whose result is discarded; the
//    last few straggling lanes may be finished by a single-stream compressor.
//
// Invariants: no allocation, no I/O; everything here is a template or constexpr (no
// out-of-line function that could be emitted with one file's ISA flags and linked into
// another).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/sha256_constants.h"

namespace st::kernels::sha256_detail::simd {

#define ST_SHA_INLINE inline __attribute__((always_inline))

inline constexpr const uint32_t (&kK)[64] = sha256_detail::kRound;
inline constexpr const uint32_t (&kIV)[8] = sha256_detail::kInit;

constexpr uint32_t c_ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
constexpr uint32_t c_ssig0(uint32_t x) { return c_ror(x, 7) ^ c_ror(x, 18) ^ (x >> 3); }
constexpr uint32_t c_ssig1(uint32_t x) { return c_ror(x, 17) ^ c_ror(x, 19) ^ (x >> 10); }

// Which schedule words are constants, and their values. W[t] (t >= 16) is known iff all
// four of its terms are.
struct MsgShape {
  bool known[64] = {};
  uint32_t value[64] = {};
};

constexpr MsgShape make_shape(const bool (&known16)[16], const uint32_t (&value16)[16]) {
  MsgShape s;
  for (int t = 0; t < 16; ++t) { s.known[t] = known16[t]; s.value[t] = known16[t] ? value16[t] : 0; }
  for (int t = 16; t < 64; ++t) {
    s.known[t] = s.known[t - 2] && s.known[t - 7] && s.known[t - 15] && s.known[t - 16];
    s.value[t] = s.known[t] ? c_ssig1(s.value[t - 2]) + s.value[t - 7] + c_ssig0(s.value[t - 15]) + s.value[t - 16] : 0;
  }
  return s;
}

// Every word comes from the data.
struct ShapeData {
  static constexpr bool kKnown[16] = {};
  static constexpr uint32_t kValue[16] = {};
  static constexpr MsgShape shape = make_shape(kKnown, kValue);
};

// A 32-byte message in one block: words 0..7 data, then 0x80000000, 0 x6, bit length 256.
struct ShapeMsg32 {
  static constexpr bool kKnown[16] = {false, false, false, false, false, false, false, false,
                                      true,  true,  true,  true,  true,  true,  true,  true};
  static constexpr uint32_t kValue[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x80000000u, 0, 0, 0, 0, 0, 0, 256};
  static constexpr MsgShape shape = make_shape(kKnown, kValue);
};

// The second block of a 64-byte message: 0x80000000, 0 x14, bit length 512. Fully known.
struct ShapePad64 {
  static constexpr bool kKnown[16] = {true, true, true, true, true, true, true, true,
                                      true, true, true, true, true, true, true, true};
  static constexpr uint32_t kValue[16] = {0x80000000u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 512};
  static constexpr MsgShape shape = make_shape(kKnown, kValue);
};

// W[t] + K[t] of a fully known shape, for kernels that take precomputed round inputs.
template <class Shape>
struct ShapeWK {
  static constexpr auto make() {
    struct { alignas(64) uint32_t wk[64]; } r{};
    for (int t = 0; t < 64; ++t) r.wk[t] = Shape::shape.value[t] + kK[t];
    return r;
  }
  static constexpr auto table = make();
};

// ---- lane-parallel compression over a vector policy V -------------------------------------
//
// State slots rotate instead of moving data: at round t, a..h live in s[(0-t)&7]..s[(7-t)&7].
// After 64 rounds the slots are back in order. w[] is a 16-entry ring of the unknown
// schedule words (known words never touch it).
template <class V, class Shape, int t>
ST_SHA_INLINE void round_step(typename V::vec* s, typename V::vec* w) {
  using vec = typename V::vec;
  constexpr const MsgShape& S = Shape::shape;
  vec wk;
  if constexpr (S.known[t]) {
    wk = V::set1(S.value[t] + kK[t]);
  } else {
    if constexpr (t >= 16) {
      constexpr uint32_t kConst = (S.known[t - 2] ? c_ssig1(S.value[t - 2]) : 0u) + (S.known[t - 7] ? S.value[t - 7] : 0u) +
                                  (S.known[t - 15] ? c_ssig0(S.value[t - 15]) : 0u) + (S.known[t - 16] ? S.value[t - 16] : 0u);
      // Start from the variable term that is always present when W[t] is unknown.
      vec acc{};  // always assigned by the first term; initialised so GCC 12 -O2 sees it
      bool have = false;
      auto add_term = [&](vec x) { acc = have ? V::add(acc, x) : x; have = true; };
      if constexpr (!S.known[t - 16]) add_term(w[t & 15]);
      if constexpr (!S.known[t - 7]) add_term(w[(t - 7) & 15]);
      if constexpr (!S.known[t - 15]) add_term(V::ssig0(w[(t - 15) & 15]));
      if constexpr (!S.known[t - 2]) add_term(V::ssig1(w[(t - 2) & 15]));
      w[t & 15] = kConst ? V::add(acc, V::set1(kConst)) : acc;
    }
    wk = V::add(w[t & 15], V::set1(kK[t]));
  }
  vec& a = s[(0 - t) & 7];
  vec& b = s[(1 - t) & 7];
  vec& c = s[(2 - t) & 7];
  vec& d = s[(3 - t) & 7];
  vec& e = s[(4 - t) & 7];
  vec& f = s[(5 - t) & 7];
  vec& g = s[(6 - t) & 7];
  vec& h = s[(7 - t) & 7];
  const vec t1 = V::add(V::add(h, wk), V::add(V::bsig1(e), V::ch(e, f, g)));
  d = V::add(d, t1);
  h = V::add(t1, V::add(V::bsig0(a), V::maj(a, b, c)));
}

template <class V, class Shape, int... T>
ST_SHA_INLINE void run_rounds(typename V::vec* s, typename V::vec* w, std::integer_sequence<int, T...>) {
  (round_step<V, Shape, T>(s, w), ...);
}

// s <- compress(s, block) for every lane; w holds the unknown words of the block (lane j of
// w[i] = message word i of lane j) and is clobbered.
template <class V, class Shape>
ST_SHA_INLINE void compress(typename V::vec* s, typename V::vec* w) {
  typename V::vec in[8];
  for (int i = 0; i < 8; ++i) in[i] = s[i];
  run_rounds<V, Shape>(s, w, std::make_integer_sequence<int, 64>{});
  for (int i = 0; i < 8; ++i) s[i] = V::add(s[i], in[i]);
}

// ---- multi-buffer scheduler for messages of arbitrary lengths -------------------------------
//
// compress_lanes(state, blocks): state is word-sliced, state[w * L + j] = word w of lane j;
// blocks[j] points at lane j's next 64-byte block (unaligned). Digests are written
// big-endian to out[32 * i].
//
// Stragglers: once no message is left to start and at most `finish_lanes` lanes are still
// active, a vector pass would mostly hash idle lanes; if `finish` (a single-stream
// compressor of consecutive blocks from a state, e.g. SHA-NI) is given, each remaining
// lane's blocks are run through it instead.
using FinishFn = void (*)(uint32_t state[8], const uint8_t* blocks, size_t nblocks);

template <size_t L, size_t kMsgBytes, class Group, class SinglesFast, class Single>
ST_SHA_INLINE void batch_fixed(const uint8_t* in, uint8_t* out, size_t n, Group group, size_t tail_singles,
                               SinglesFast singles_fast, Single single) {
  // out may equal in: group g reads in[L*kMsgBytes*g, +L*kMsgBytes) before writing
  // out[32*L*g, +32*L), which lies in input already consumed (kMsgBytes >= 32).
  size_t i = 0;
  for (; i + L <= n; i += L) group(in + kMsgBytes * i, out + 32 * i);
  const size_t rest = n - i;
  if (rest && rest <= tail_singles && singles_fast()) {
    for (; i < n; ++i) single(in + kMsgBytes * i, kMsgBytes, out + 32 * i);
  } else if (rest) {
    alignas(64) uint8_t buf[L * kMsgBytes] = {};
    std::memcpy(buf, in + kMsgBytes * i, kMsgBytes * rest);
    group(buf, buf);
    std::memcpy(out + 32 * i, buf, 32 * rest);
  }
}

template <size_t L, class CompressLanes>
void hash_batch_lanes(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n,
                      CompressLanes&& compress_lanes, FinishFn finish = nullptr, size_t finish_lanes = 0) {
  struct Lane {
    const uint8_t* data;     // next full block
    size_t full_left;        // full blocks still to read from data
    size_t tail_next;        // next tail block (0 or 1)
    size_t tail_blocks;      // 1 or 2
    size_t msg;              // message index
    bool active;
    alignas(64) uint8_t tail[128];
  };
  alignas(64) static constexpr uint8_t kZeroBlock[64] = {};
  Lane lanes[L];
  alignas(64) uint32_t state[8 * L];
  const uint8_t* blocks[L];
  size_t next_msg = 0;

  auto start = [&](size_t j) {
    Lane& ln = lanes[j];
    if (next_msg >= n) { ln.active = false; return; }
    const size_t i = next_msg++;
    const size_t len = lens[i];
    ln.msg = i;
    ln.active = true;
    ln.data = msgs[i];
    ln.full_left = len / 64;
    ln.tail_next = 0;
    const size_t rem = len % 64;
    ln.tail_blocks = rem + 9 <= 64 ? 1 : 2;
    std::memset(ln.tail, 0, sizeof ln.tail);
    if (rem) std::memcpy(ln.tail, msgs[i] + ln.full_left * 64, rem);
    ln.tail[rem] = 0x80;
    const uint64_t bits = uint64_t(len) * 8;
    for (int b = 0; b < 8; ++b) ln.tail[ln.tail_blocks * 64 - 1 - b] = uint8_t(bits >> (8 * b));
    for (size_t w = 0; w < 8; ++w) state[w * L + j] = kIV[w];
  };

  auto write_digest = [&](size_t msg, const uint32_t* words, size_t stride) {
    uint8_t* d = out + 32 * msg;
    for (size_t w = 0; w < 8; ++w) {
      const uint32_t v = words[w * stride];
      d[4 * w] = uint8_t(v >> 24); d[4 * w + 1] = uint8_t(v >> 16); d[4 * w + 2] = uint8_t(v >> 8); d[4 * w + 3] = uint8_t(v);
    }
  };

  for (size_t j = 0; j < L; ++j) start(j);
  for (;;) {
    if (finish && next_msg >= n) {
      size_t active = 0;
      for (size_t j = 0; j < L; ++j) active += lanes[j].active;
      if (active <= finish_lanes) {
        for (size_t j = 0; j < L; ++j) {
          Lane& ln = lanes[j];
          if (!ln.active) continue;
          uint32_t st[8];
          for (size_t w = 0; w < 8; ++w) st[w] = state[w * L + j];
          if (ln.full_left) finish(st, ln.data, ln.full_left);
          finish(st, ln.tail + 64 * ln.tail_next, ln.tail_blocks - ln.tail_next);
          write_digest(ln.msg, st, 1);
          ln.active = false;
        }
        break;
      }
    }
    bool any = false;
    for (size_t j = 0; j < L; ++j) {
      Lane& ln = lanes[j];
      if (!ln.active) { blocks[j] = kZeroBlock; continue; }
      any = true;
      if (ln.full_left) { blocks[j] = ln.data; ln.data += 64; --ln.full_left; }
      else { blocks[j] = ln.tail + 64 * ln.tail_next; ++ln.tail_next; }
    }
    if (!any) break;
    compress_lanes(state, blocks);
    for (size_t j = 0; j < L; ++j) {
      Lane& ln = lanes[j];
      if (!ln.active || ln.full_left || ln.tail_next < ln.tail_blocks) continue;
      write_digest(ln.msg, state + j, L);
      start(j);
    }
  }
}

}  // namespace st::kernels::sha256_detail::simd
