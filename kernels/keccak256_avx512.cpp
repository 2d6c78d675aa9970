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
// at most kScalarTailLanes slots are still working, they are finished one at a time with the
// one-state permutation (a mostly idle 8-lane permutation costs as much as a full one).
// keccak256_batch_avx512 takes its messages from arrays, keccak256_pull_avx512 from the
// caller's callback (keccak256_batch_pull), through the same scheduler.
//
// Single messages (keccak256() in this tier): the same round on one state held in the low
// 64 bits of 25 xmm registers (AVX-512VL vpternlogq / vprolq, 32 registers: no spills).
//
//   state memory  S[25][8]: S[w][slot] = lane w of slot's state (the zmm layout, 64-byte rows)
//
// Only compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq (kernels/CMakeLists.txt);
// called only after cpu_features().avx512 and the self-test (keccak256.cpp).
#include <immintrin.h>

// GCC 12 warns "__Y (may be) used uninitialized" inside its own _mm512_rol_epi64 (the
// intrinsic passes _mm512_undefined_epi32() as the unused merge source); not our code.
// Silenced only around the permutations (push here, pop before the scheduler).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/keccak256_tiers.h"

namespace st::kernels::keccak_detail {

namespace {

constexpr size_t kSlots = 8;
constexpr size_t kRateWords = kKeccak256RateBytes / 8;  // 17
constexpr size_t kScalarTailLanes = 2;                  // finish one by one when <= this many

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

#define KECCAK_ROUND_V(I, O, rc)                          \
  do {                                                    \
  C0 = V_XOR3(V_XOR3(I##ba, I##ga, I##ka), I##ma, I##sa); \
  C1 = V_XOR3(V_XOR3(I##be, I##ge, I##ke), I##me, I##se); \
  C2 = V_XOR3(V_XOR3(I##bi, I##gi, I##ki), I##mi, I##si); \
  C3 = V_XOR3(V_XOR3(I##bo, I##go, I##ko), I##mo, I##so); \
  C4 = V_XOR3(V_XOR3(I##bu, I##gu, I##ku), I##mu, I##su); \
  D0 = V_XOR(C4, V_ROL(C1, 1));                           \
  D1 = V_XOR(C0, V_ROL(C2, 1));                           \
  D2 = V_XOR(C1, V_ROL(C3, 1));                           \
  D3 = V_XOR(C2, V_ROL(C4, 1));                           \
  D4 = V_XOR(C3, V_ROL(C0, 1));                           \
  B0 = V_XOR(I##ba, D0);                                  \
  B1 = V_ROL(V_XOR(I##ge, D1), 44);                       \
  B2 = V_ROL(V_XOR(I##ki, D2), 43);                       \
  B3 = V_ROL(V_XOR(I##mo, D3), 21);                       \
  B4 = V_ROL(V_XOR(I##su, D4), 14);                       \
  O##ba = V_XOR(V_CHI(B0, B1, B2), rc);                   \
  O##be = V_CHI(B1, B2, B3);                              \
  O##bi = V_CHI(B2, B3, B4);                              \
  O##bo = V_CHI(B3, B4, B0);                              \
  O##bu = V_CHI(B4, B0, B1);                              \
  B0 = V_ROL(V_XOR(I##bo, D3), 28);                       \
  B1 = V_ROL(V_XOR(I##gu, D4), 20);                       \
  B2 = V_ROL(V_XOR(I##ka, D0), 3);                        \
  B3 = V_ROL(V_XOR(I##me, D1), 45);                       \
  B4 = V_ROL(V_XOR(I##si, D2), 61);                       \
  O##ga = V_CHI(B0, B1, B2);                              \
  O##ge = V_CHI(B1, B2, B3);                              \
  O##gi = V_CHI(B2, B3, B4);                              \
  O##go = V_CHI(B3, B4, B0);                              \
  O##gu = V_CHI(B4, B0, B1);                              \
  B0 = V_ROL(V_XOR(I##be, D1), 1);                        \
  B1 = V_ROL(V_XOR(I##gi, D2), 6);                        \
  B2 = V_ROL(V_XOR(I##ko, D3), 25);                       \
  B3 = V_ROL(V_XOR(I##mu, D4), 8);                        \
  B4 = V_ROL(V_XOR(I##sa, D0), 18);                       \
  O##ka = V_CHI(B0, B1, B2);                              \
  O##ke = V_CHI(B1, B2, B3);                              \
  O##ki = V_CHI(B2, B3, B4);                              \
  O##ko = V_CHI(B3, B4, B0);                              \
  O##ku = V_CHI(B4, B0, B1);                              \
  B0 = V_ROL(V_XOR(I##bu, D4), 27);                       \
  B1 = V_ROL(V_XOR(I##ga, D0), 36);                       \
  B2 = V_ROL(V_XOR(I##ke, D1), 10);                       \
  B3 = V_ROL(V_XOR(I##mi, D2), 15);                       \
  B4 = V_ROL(V_XOR(I##so, D3), 56);                       \
  O##ma = V_CHI(B0, B1, B2);                              \
  O##me = V_CHI(B1, B2, B3);                              \
  O##mi = V_CHI(B2, B3, B4);                              \
  O##mo = V_CHI(B3, B4, B0);                              \
  O##mu = V_CHI(B4, B0, B1);                              \
  B0 = V_ROL(V_XOR(I##bi, D2), 62);                       \
  B1 = V_ROL(V_XOR(I##go, D3), 55);                       \
  B2 = V_ROL(V_XOR(I##ku, D4), 39);                       \
  B3 = V_ROL(V_XOR(I##ma, D0), 41);                       \
  B4 = V_ROL(V_XOR(I##se, D1), 2);                        \
  O##sa = V_CHI(B0, B1, B2);                              \
  O##se = V_CHI(B1, B2, B3);                              \
  O##si = V_CHI(B2, B3, B4);                              \
  O##so = V_CHI(B3, B4, B0);                              \
  O##su = V_CHI(B4, B0, B1);                              \
  } while (0)

// 8 states (zmm): S[25][8], 64-byte aligned.
#define V_XOR(a, b) _mm512_xor_si512((a), (b))
#define V_ROL(a, n) _mm512_rol_epi64((a), (n))
#define V_XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)
#define V_CHI(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0xD2)
// 24 rounds over the 8 states in S[25][8] (64-byte aligned).
void keccak_f1600_x8(uint64_t* S) {
  __m512i Aba = _mm512_load_si512(S + 0);
  __m512i Abe = _mm512_load_si512(S + 8);
  __m512i Abi = _mm512_load_si512(S + 16);
  __m512i Abo = _mm512_load_si512(S + 24);
  __m512i Abu = _mm512_load_si512(S + 32);
  __m512i Aga = _mm512_load_si512(S + 40);
  __m512i Age = _mm512_load_si512(S + 48);
  __m512i Agi = _mm512_load_si512(S + 56);
  __m512i Ago = _mm512_load_si512(S + 64);
  __m512i Agu = _mm512_load_si512(S + 72);
  __m512i Aka = _mm512_load_si512(S + 80);
  __m512i Ake = _mm512_load_si512(S + 88);
  __m512i Aki = _mm512_load_si512(S + 96);
  __m512i Ako = _mm512_load_si512(S + 104);
  __m512i Aku = _mm512_load_si512(S + 112);
  __m512i Ama = _mm512_load_si512(S + 120);
  __m512i Ame = _mm512_load_si512(S + 128);
  __m512i Ami = _mm512_load_si512(S + 136);
  __m512i Amo = _mm512_load_si512(S + 144);
  __m512i Amu = _mm512_load_si512(S + 152);
  __m512i Asa = _mm512_load_si512(S + 160);
  __m512i Ase = _mm512_load_si512(S + 168);
  __m512i Asi = _mm512_load_si512(S + 176);
  __m512i Aso = _mm512_load_si512(S + 184);
  __m512i Asu = _mm512_load_si512(S + 192);
  __m512i Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku, Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;
  __m512i B0, B1, B2, B3, B4, C0, C1, C2, C3, C4, D0, D1, D2, D3, D4;
  for (int round = 0; round < 24; round += 2) {
    KECCAK_ROUND_V(A, E, _mm512_set1_epi64(int64_t(kRoundConstants[round])));
    KECCAK_ROUND_V(E, A, _mm512_set1_epi64(int64_t(kRoundConstants[round + 1])));
  }
  _mm512_store_si512(S + 0, Aba);
  _mm512_store_si512(S + 8, Abe);
  _mm512_store_si512(S + 16, Abi);
  _mm512_store_si512(S + 24, Abo);
  _mm512_store_si512(S + 32, Abu);
  _mm512_store_si512(S + 40, Aga);
  _mm512_store_si512(S + 48, Age);
  _mm512_store_si512(S + 56, Agi);
  _mm512_store_si512(S + 64, Ago);
  _mm512_store_si512(S + 72, Agu);
  _mm512_store_si512(S + 80, Aka);
  _mm512_store_si512(S + 88, Ake);
  _mm512_store_si512(S + 96, Aki);
  _mm512_store_si512(S + 104, Ako);
  _mm512_store_si512(S + 112, Aku);
  _mm512_store_si512(S + 120, Ama);
  _mm512_store_si512(S + 128, Ame);
  _mm512_store_si512(S + 136, Ami);
  _mm512_store_si512(S + 144, Amo);
  _mm512_store_si512(S + 152, Amu);
  _mm512_store_si512(S + 160, Asa);
  _mm512_store_si512(S + 168, Ase);
  _mm512_store_si512(S + 176, Asi);
  _mm512_store_si512(S + 184, Aso);
  _mm512_store_si512(S + 192, Asu);
}
#undef V_XOR
#undef V_ROL
#undef V_XOR3
#undef V_CHI

// 1 state (the low 64 bits of 25 xmm registers; AVX-512VL gives vpternlogq/vprolq on xmm and
// 32 vector registers, so the whole state plus temporaries stays in registers).
#define V_XOR(a, b) _mm_xor_si128((a), (b))
#define V_ROL(a, n) _mm_rol_epi64((a), (n))
#define V_XOR3(a, b, c) _mm_ternarylogic_epi64((a), (b), (c), 0x96)
#define V_CHI(a, b, c) _mm_ternarylogic_epi64((a), (b), (c), 0xD2)
// 24 rounds over one state S[25].
void keccak_f1600_x1(uint64_t* S) {
  __m128i Aba = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 0));
  __m128i Abe = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 1));
  __m128i Abi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 2));
  __m128i Abo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 3));
  __m128i Abu = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 4));
  __m128i Aga = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 5));
  __m128i Age = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 6));
  __m128i Agi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 7));
  __m128i Ago = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 8));
  __m128i Agu = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 9));
  __m128i Aka = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 10));
  __m128i Ake = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 11));
  __m128i Aki = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 12));
  __m128i Ako = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 13));
  __m128i Aku = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 14));
  __m128i Ama = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 15));
  __m128i Ame = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 16));
  __m128i Ami = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 17));
  __m128i Amo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 18));
  __m128i Amu = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 19));
  __m128i Asa = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 20));
  __m128i Ase = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 21));
  __m128i Asi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 22));
  __m128i Aso = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 23));
  __m128i Asu = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(S + 24));
  __m128i Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku, Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;
  __m128i B0, B1, B2, B3, B4, C0, C1, C2, C3, C4, D0, D1, D2, D3, D4;
  for (int round = 0; round < 24; round += 2) {
    KECCAK_ROUND_V(A, E, _mm_cvtsi64_si128(int64_t(kRoundConstants[round])));
    KECCAK_ROUND_V(E, A, _mm_cvtsi64_si128(int64_t(kRoundConstants[round + 1])));
  }
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 0), Aba);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 1), Abe);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 2), Abi);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 3), Abo);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 4), Abu);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 5), Aga);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 6), Age);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 7), Agi);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 8), Ago);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 9), Agu);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 10), Aka);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 11), Ake);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 12), Aki);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 13), Ako);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 14), Aku);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 15), Ama);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 16), Ame);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 17), Ami);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 18), Amo);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 19), Amu);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 20), Asa);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 21), Ase);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 22), Asi);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 23), Aso);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(S + 24), Asu);
}
#undef V_XOR
#undef V_ROL
#undef V_XOR3
#undef V_CHI
#undef KECCAK_ROUND_V

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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

void keccak256_avx512vl(const uint8_t* data, size_t len, uint8_t* out32) {
  keccak256_sponge(data, len, out32, [](uint64_t* state) { keccak_f1600_x1(state); });
}

namespace {

// The 8-lane scheduler over a message source: src.next(lane, &m) hands lane `lane` its next
// message (false: none left). A lane asks only after its previous digest was written, and a
// message is read only until its digest is written (the pull API's promise, keccak256.h).
template <class Source>
void batch_lanes(Source& src) {
  alignas(64) uint64_t S[25 * kSlots];
  std::memset(S, 0, sizeof S);
  Slot slots[kSlots];
  bool exhausted = false;
  auto refill = [&](Slot& s, unsigned lane) {
    Keccak256Message m;
    if (!exhausted && src.next(lane, &m)) {
      s.data = m.data;
      s.remaining = m.len;
      s.out = m.out;
      s.active = true;
    } else {
      exhausted = true;
      s.active = false;
    }
  };
  for (unsigned k = 0; k < kSlots; ++k) refill(slots[k], k);

  bool final_block[kSlots];
  for (;;) {
    size_t active = 0;
    for (const Slot& s : slots) active += s.active;
    if (active == 0) break;  // (a lane goes idle only once the source is exhausted)
    if (active <= kScalarTailLanes && exhausted) break;  // finish the tail in scalar
    // Absorb one block per active slot (idle slots absorb nothing and are ignored).
    for (size_t k = 0; k < kSlots; ++k) {
      if (!slots[k].active) continue;
      const uint8_t* block = next_block(slots[k], final_block[k]);
      for (size_t w = 0; w < kRateWords; ++w) S[w * kSlots + k] ^= load_le64(block + 8 * w);
    }
    keccak_f1600_x8(S);
    for (unsigned k = 0; k < kSlots; ++k) {
      Slot& s = slots[k];
      if (!s.active || !final_block[k]) continue;
      for (size_t w = 0; w < 4; ++w) store_le64(s.out + 8 * w, S[w * kSlots + k]);
      for (size_t w = 0; w < 25; ++w) S[w * kSlots + k] = 0;
      refill(s, k);
    }
  }
  // Tail: continue each remaining slot's own state with the one-state permutation.
  for (size_t k = 0; k < kSlots; ++k) {
    Slot& s = slots[k];
    if (!s.active) continue;
    uint64_t st[25];
    for (size_t w = 0; w < 25; ++w) st[w] = S[w * kSlots + k];
    bool final = false;
    while (!final) {
      const uint8_t* block = next_block(s, final);
      for (size_t w = 0; w < kRateWords; ++w) st[w] ^= load_le64(block + 8 * w);
      keccak_f1600_x1(st);
    }
    for (size_t w = 0; w < 4; ++w) store_le64(s.out + 8 * w, st[w]);
  }
}

}  // namespace

void keccak256_batch_avx512(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  if (n < kSlots / 2) {  // too few messages to fill the lanes
    keccak256_batch_portable(msgs, lens, out, n);
    return;
  }
  struct Arrays {
    const uint8_t* const* msgs;
    const size_t* lens;
    uint8_t* out;
    size_t n, next_msg = 0;
    bool next(unsigned, Keccak256Message* m) {
      if (next_msg == n) return false;
      *m = {msgs[next_msg], lens[next_msg], out + 32 * next_msg};
      ++next_msg;
      return true;
    }
  } src{msgs, lens, out, n};
  batch_lanes(src);
}

void keccak256_batch32_avx512(const uint8_t* const* msgs, uint8_t* out, size_t n) {
  // Each message is one block: words 0-3 the message, word 4 the 0x01 pad byte, word 16 the
  // final 0x80; 8 messages per permutation, the last group padded with repeats of its first.
  alignas(64) uint64_t S[25 * kSlots];
  for (size_t g = 0; g < n; g += kSlots) {
    const size_t m = n - g < kSlots ? n - g : kSlots;
    if (m < kSlots / 2) {  // a short tail: one state at a time
      for (size_t i = g; i < n; ++i) keccak256_avx512vl(msgs[i], 32, out + 32 * i);
      break;
    }
    std::memset(S, 0, sizeof S);
    for (size_t k = 0; k < kSlots; ++k) {
      const uint8_t* p = msgs[g + (k < m ? k : 0)];
      for (size_t w = 0; w < 4; ++w) S[w * kSlots + k] = load_le64(p + 8 * w);
      S[4 * kSlots + k] = 0x01;
      S[16 * kSlots + k] = 0x8000000000000000ull;
    }
    keccak_f1600_x8(S);
    for (size_t k = 0; k < m; ++k)
      for (size_t w = 0; w < 4; ++w) store_le64(out + 32 * (g + k) + 8 * w, S[w * kSlots + k]);
  }
}

void keccak256_pull_avx512(Keccak256Next next, void* ctx) {
  struct Pull {
    Keccak256Next fn;
    void* ctx;
    bool next(unsigned lane, Keccak256Message* m) { return fn(ctx, lane, m); }
  } src{next, ctx};
  batch_lanes(src);
}

}  // namespace st::kernels::keccak_detail
