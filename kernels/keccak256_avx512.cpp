// keccak256_avx512 ("avx512x8"): keccak256_batch over 8 independent Keccak-f[1600] states at
// once, one state per 64-bit lane of 25 zmm registers (register k holds lane k = x + 5*y of
// all 8 states). chi is one vpternlogq (a ^ (~b & c), imm 0xD2), the theta column parities
// are two 3-input XORs (imm 0x96), rho is vprolq. Same round structure as the portable tier
// (keccak256.cpp), generated from the same FIPS 202 definitions.
//
// Scheduling: 8 lane slots; each slot streams one message block by block (full 136-byte
// blocks straight from the message, the padded final block from a per-slot buffer). After
// every permutation the slots whose final block was absorbed emit their digest, are zeroed
// and take the next message, so messages of mixed lengths keep all 8 slots busy. When
// fewer than kScalarTailLanes slots are still working, they are finished with the portable
// permutation (a mostly idle 8-lane permutation costs as much as a full one).
//
//   state memory  S[25][8]: S[w][slot] = lane w of slot's state (the zmm layout, 64-byte rows)
//
// Only compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq (kernels/CMakeLists.txt);
// called only after cpu_features().avx512 and the self-test (keccak256.cpp).
#include <immintrin.h>

// GCC 12 warns "__Y may be used uninitialized" inside its own _mm512_rol_epi64 (the
// intrinsic passes _mm512_undefined_epi32() as the unused merge source); not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/keccak256_tiers.h"

namespace st::kernels::keccak_detail {

namespace {

constexpr size_t kSlots = 8;
constexpr size_t kRateWords = kKeccak256RateBytes / 8;  // 17
constexpr size_t kScalarTailLanes = 2;                  // finish with scalar when <= this many

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)
#define CHI(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0xD2)

#define KECCAK_ROUND_X8(I, O, rc)                                \
  do {                                                           \
  C0 = XOR3(XOR3(I##ba, I##ga, I##ka), I##ma, I##sa);            \
  C1 = XOR3(XOR3(I##be, I##ge, I##ke), I##me, I##se);            \
  C2 = XOR3(XOR3(I##bi, I##gi, I##ki), I##mi, I##si);            \
  C3 = XOR3(XOR3(I##bo, I##go, I##ko), I##mo, I##so);            \
  C4 = XOR3(XOR3(I##bu, I##gu, I##ku), I##mu, I##su);            \
  D0 = _mm512_xor_si512(C4, _mm512_rol_epi64(C1, 1));            \
  D1 = _mm512_xor_si512(C0, _mm512_rol_epi64(C2, 1));            \
  D2 = _mm512_xor_si512(C1, _mm512_rol_epi64(C3, 1));            \
  D3 = _mm512_xor_si512(C2, _mm512_rol_epi64(C4, 1));            \
  D4 = _mm512_xor_si512(C3, _mm512_rol_epi64(C0, 1));            \
  B0 = _mm512_xor_si512(I##ba, D0);                              \
  B1 = _mm512_rol_epi64(_mm512_xor_si512(I##ge, D1), 44);        \
  B2 = _mm512_rol_epi64(_mm512_xor_si512(I##ki, D2), 43);        \
  B3 = _mm512_rol_epi64(_mm512_xor_si512(I##mo, D3), 21);        \
  B4 = _mm512_rol_epi64(_mm512_xor_si512(I##su, D4), 14);        \
  O##ba = _mm512_xor_si512(CHI(B0, B1, B2), rc);                 \
  O##be = CHI(B1, B2, B3);                                       \
  O##bi = CHI(B2, B3, B4);                                       \
  O##bo = CHI(B3, B4, B0);                                       \
  O##bu = CHI(B4, B0, B1);                                       \
  B0 = _mm512_rol_epi64(_mm512_xor_si512(I##bo, D3), 28);        \
  B1 = _mm512_rol_epi64(_mm512_xor_si512(I##gu, D4), 20);        \
  B2 = _mm512_rol_epi64(_mm512_xor_si512(I##ka, D0), 3);         \
  B3 = _mm512_rol_epi64(_mm512_xor_si512(I##me, D1), 45);        \
  B4 = _mm512_rol_epi64(_mm512_xor_si512(I##si, D2), 61);        \
  O##ga = CHI(B0, B1, B2);                                       \
  O##ge = CHI(B1, B2, B3);                                       \
  O##gi = CHI(B2, B3, B4);                                       \
  O##go = CHI(B3, B4, B0);                                       \
  O##gu = CHI(B4, B0, B1);                                       \
  B0 = _mm512_rol_epi64(_mm512_xor_si512(I##be, D1), 1);         \
  B1 = _mm512_rol_epi64(_mm512_xor_si512(I##gi, D2), 6);         \
  B2 = _mm512_rol_epi64(_mm512_xor_si512(I##ko, D3), 25);        \
  B3 = _mm512_rol_epi64(_mm512_xor_si512(I##mu, D4), 8);         \
  B4 = _mm512_rol_epi64(_mm512_xor_si512(I##sa, D0), 18);        \
  O##ka = CHI(B0, B1, B2);                                       \
  O##ke = CHI(B1, B2, B3);                                       \
  O##ki = CHI(B2, B3, B4);                                       \
  O##ko = CHI(B3, B4, B0);                                       \
  O##ku = CHI(B4, B0, B1);                                       \
  B0 = _mm512_rol_epi64(_mm512_xor_si512(I##bu, D4), 27);        \
  B1 = _mm512_rol_epi64(_mm512_xor_si512(I##ga, D0), 36);        \
  B2 = _mm512_rol_epi64(_mm512_xor_si512(I##ke, D1), 10);        \
  B3 = _mm512_rol_epi64(_mm512_xor_si512(I##mi, D2), 15);        \
  B4 = _mm512_rol_epi64(_mm512_xor_si512(I##so, D3), 56);        \
  O##ma = CHI(B0, B1, B2);                                       \
  O##me = CHI(B1, B2, B3);                                       \
  O##mi = CHI(B2, B3, B4);                                       \
  O##mo = CHI(B3, B4, B0);                                       \
  O##mu = CHI(B4, B0, B1);                                       \
  B0 = _mm512_rol_epi64(_mm512_xor_si512(I##bi, D2), 62);        \
  B1 = _mm512_rol_epi64(_mm512_xor_si512(I##go, D3), 55);        \
  B2 = _mm512_rol_epi64(_mm512_xor_si512(I##ku, D4), 39);        \
  B3 = _mm512_rol_epi64(_mm512_xor_si512(I##ma, D0), 41);        \
  B4 = _mm512_rol_epi64(_mm512_xor_si512(I##se, D1), 2);         \
  O##sa = CHI(B0, B1, B2);                                       \
  O##se = CHI(B1, B2, B3);                                       \
  O##si = CHI(B2, B3, B4);                                       \
  O##so = CHI(B3, B4, B0);                                       \
  O##su = CHI(B4, B0, B1);                                       \
  } while (0)

// 24 rounds over the 8 states in S (64-byte aligned).
void keccak_f1600_x8(uint64_t* S) {
  __m512i Aba = _mm512_load_si512(S + 0 * 8), Abe = _mm512_load_si512(S + 1 * 8), Abi = _mm512_load_si512(S + 2 * 8),
          Abo = _mm512_load_si512(S + 3 * 8), Abu = _mm512_load_si512(S + 4 * 8);
  __m512i Aga = _mm512_load_si512(S + 5 * 8), Age = _mm512_load_si512(S + 6 * 8), Agi = _mm512_load_si512(S + 7 * 8),
          Ago = _mm512_load_si512(S + 8 * 8), Agu = _mm512_load_si512(S + 9 * 8);
  __m512i Aka = _mm512_load_si512(S + 10 * 8), Ake = _mm512_load_si512(S + 11 * 8), Aki = _mm512_load_si512(S + 12 * 8),
          Ako = _mm512_load_si512(S + 13 * 8), Aku = _mm512_load_si512(S + 14 * 8);
  __m512i Ama = _mm512_load_si512(S + 15 * 8), Ame = _mm512_load_si512(S + 16 * 8), Ami = _mm512_load_si512(S + 17 * 8),
          Amo = _mm512_load_si512(S + 18 * 8), Amu = _mm512_load_si512(S + 19 * 8);
  __m512i Asa = _mm512_load_si512(S + 20 * 8), Ase = _mm512_load_si512(S + 21 * 8), Asi = _mm512_load_si512(S + 22 * 8),
          Aso = _mm512_load_si512(S + 23 * 8), Asu = _mm512_load_si512(S + 24 * 8);
  __m512i Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku;
  __m512i Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;
  __m512i B0, B1, B2, B3, B4, C0, C1, C2, C3, C4, D0, D1, D2, D3, D4;
  for (int round = 0; round < 24; round += 2) {
    KECCAK_ROUND_X8(A, E, _mm512_set1_epi64(int64_t(kRoundConstants[round])));
    KECCAK_ROUND_X8(E, A, _mm512_set1_epi64(int64_t(kRoundConstants[round + 1])));
  }
  _mm512_store_si512(S + 0 * 8, Aba); _mm512_store_si512(S + 1 * 8, Abe); _mm512_store_si512(S + 2 * 8, Abi);
  _mm512_store_si512(S + 3 * 8, Abo); _mm512_store_si512(S + 4 * 8, Abu);
  _mm512_store_si512(S + 5 * 8, Aga); _mm512_store_si512(S + 6 * 8, Age); _mm512_store_si512(S + 7 * 8, Agi);
  _mm512_store_si512(S + 8 * 8, Ago); _mm512_store_si512(S + 9 * 8, Agu);
  _mm512_store_si512(S + 10 * 8, Aka); _mm512_store_si512(S + 11 * 8, Ake); _mm512_store_si512(S + 12 * 8, Aki);
  _mm512_store_si512(S + 13 * 8, Ako); _mm512_store_si512(S + 14 * 8, Aku);
  _mm512_store_si512(S + 15 * 8, Ama); _mm512_store_si512(S + 16 * 8, Ame); _mm512_store_si512(S + 17 * 8, Ami);
  _mm512_store_si512(S + 18 * 8, Amo); _mm512_store_si512(S + 19 * 8, Amu);
  _mm512_store_si512(S + 20 * 8, Asa); _mm512_store_si512(S + 21 * 8, Ase); _mm512_store_si512(S + 22 * 8, Asi);
  _mm512_store_si512(S + 23 * 8, Aso); _mm512_store_si512(S + 24 * 8, Asu);
}

#undef KECCAK_ROUND_X8
#undef XOR3
#undef CHI

// One slot's message cursor.
struct Slot {
  const uint8_t* data = nullptr;  // not yet absorbed part of the message
  size_t remaining = 0;           // bytes at data
  uint8_t* out = nullptr;         // digest destination
  bool active = false;
  alignas(8) uint8_t pad[kKeccak256RateBytes];  // the padded final block
};

// The next block of a slot: a full block of the message, or the padded final block
// (message tail || 0x01 || 0.. || 0x80). Sets `final` when it is the last one.
const uint8_t* next_block(Slot& s, bool& final) {
  if (s.remaining >= kKeccak256RateBytes) {
    const uint8_t* b = s.data;
    s.data += kKeccak256RateBytes;
    s.remaining -= kKeccak256RateBytes;
    final = false;
    return b;
  }
  std::memset(s.pad, 0, sizeof s.pad);
  if (s.remaining) std::memcpy(s.pad, s.data, s.remaining);
  s.pad[s.remaining] ^= 0x01;
  s.pad[kKeccak256RateBytes - 1] ^= 0x80;
  s.remaining = 0;
  final = true;
  return s.pad;
}

}  // namespace

void keccak256_batch_avx512(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  if (n < kSlots / 2) {  // too few messages to fill the lanes
    keccak256_batch_portable(msgs, lens, out, n);
    return;
  }
  alignas(64) uint64_t S[25 * kSlots];
  std::memset(S, 0, sizeof S);
  Slot slots[kSlots];
  size_t next_msg = 0;
  auto refill = [&](Slot& s) {
    if (next_msg < n) {
      s.data = msgs[next_msg];
      s.remaining = lens[next_msg];
      s.out = out + 32 * next_msg;
      s.active = true;
      ++next_msg;
    } else {
      s.active = false;
    }
  };
  for (Slot& s : slots) refill(s);

  bool final_block[kSlots];
  for (;;) {
    size_t active = 0;
    for (const Slot& s : slots) active += s.active;
    if (active == 0) break;
    if (active <= kScalarTailLanes && next_msg == n) break;  // finish the tail in scalar
    // Absorb one block per active slot (idle slots absorb nothing and are ignored).
    for (size_t k = 0; k < kSlots; ++k) {
      if (!slots[k].active) continue;
      const uint8_t* block = next_block(slots[k], final_block[k]);
      for (size_t w = 0; w < kRateWords; ++w) S[w * kSlots + k] ^= load_le64(block + 8 * w);
    }
    keccak_f1600_x8(S);
    for (size_t k = 0; k < kSlots; ++k) {
      Slot& s = slots[k];
      if (!s.active || !final_block[k]) continue;
      for (size_t w = 0; w < 4; ++w) store_le64(s.out + 8 * w, S[w * kSlots + k]);
      for (size_t w = 0; w < 25; ++w) S[w * kSlots + k] = 0;
      refill(s);
    }
  }
  // Scalar tail: continue each remaining slot's own state with the portable permutation.
  for (size_t k = 0; k < kSlots; ++k) {
    Slot& s = slots[k];
    if (!s.active) continue;
    uint64_t st[25];
    for (size_t w = 0; w < 25; ++w) st[w] = S[w * kSlots + k];
    bool final = false;
    while (!final) {
      const uint8_t* block = next_block(s, final);
      for (size_t w = 0; w < kRateWords; ++w) st[w] ^= load_le64(block + 8 * w);
      keccak_f1600(st);
    }
    for (size_t w = 0; w < 4; ++w) store_le64(s.out + 8 * w, st[w]);
  }
}

}  // namespace st::kernels::keccak_detail
