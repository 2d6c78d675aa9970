// keccak256 (portable tier + dispatch): Keccak-f[1600] with every round written out and the
// 25 lanes held in local variables, two rounds per loop iteration (A -> E -> A) so that no
// state copy is needed. The round body below was generated from the FIPS 202 definitions
// (rho offsets from the (x,y) -> (y,2x+3y) walk, round constants from the rc LFSR), with
// "lane complementing" (the Keccak team's implementation note): six lanes (be, bi, go, ki,
// mi, sa) are kept complemented inside the permutation; complements pass through theta
// and rho/pi unchanged (XOR and rotation commute with NOT), and each chi term is rewritten
// with &, | and at most one ~ so that its output again has the chosen polarity. That needs
// 8 NOTs per round instead of 25 (x86-64 without BMI has no and-not).
//
//   lane names  <row><column>, rows y = b g k m s (0..4), columns x = a e i o u (0..4),
//   lane index  = x + 5*y, e.g. "ba" = 0, "be" = 1, "ga" = 5, "su" = 24.
//
//   theta: C[x] = xor of column x;  D[x] = C[x-1] ^ rotl(C[x+1], 1);  A[x][y] ^= D[x]
//   rho+pi: B at (y, 2x+3y) = rotl(A[x][y], r[x][y])
//   chi:    A'[x][y] = B[x][y] ^ (~B[x+1][y] & B[x+2][y]);   iota: A'[0][0] ^= RC[round]
//
// Padding (Ethereum / original Keccak): message || 0x01 || 0x00... || 0x80 (the 0x01 and 0x80
// share one byte, 0x81, when exactly one byte of room is left); rate 136 bytes; the digest is
// the first 32 bytes of the state, lanes little-endian.
#include "kernels/keccak256.h"

#include <atomic>
#include <cstring>
#include <string>

#include "kernels/cpu_features.h"
#include "kernels/keccak256_tiers.h"

namespace st::kernels {

namespace {

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

inline uint64_t rotl64(uint64_t v, unsigned n) { return (v << n) | (v >> (64 - n)); }

#define KECCAK_ROUND_LC(I, O, rc)             \
  do {                                        \
  C0 = I##ba ^ I##ga ^ I##ka ^ I##ma ^ I##sa; \
  C1 = I##be ^ I##ge ^ I##ke ^ I##me ^ I##se; \
  C2 = I##bi ^ I##gi ^ I##ki ^ I##mi ^ I##si; \
  C3 = I##bo ^ I##go ^ I##ko ^ I##mo ^ I##so; \
  C4 = I##bu ^ I##gu ^ I##ku ^ I##mu ^ I##su; \
  D0 = C4 ^ rotl64(C1, 1);                    \
  D1 = C0 ^ rotl64(C2, 1);                    \
  D2 = C1 ^ rotl64(C3, 1);                    \
  D3 = C2 ^ rotl64(C4, 1);                    \
  D4 = C3 ^ rotl64(C0, 1);                    \
  B0 = I##ba ^ D0;                            \
  B1 = rotl64(I##ge ^ D1, 44);                \
  B2 = rotl64(I##ki ^ D2, 43);                \
  B3 = rotl64(I##mo ^ D3, 21);                \
  B4 = rotl64(I##su ^ D4, 14);                \
  O##ba = B0 ^ (B1 | B2) ^ rc;                \
  O##be = B1 ^ (~B2 | B3);                    \
  O##bi = B2 ^ (B3 & B4);                     \
  O##bo = B3 ^ (B4 | B0);                     \
  O##bu = B4 ^ (B0 & B1);                     \
  B0 = rotl64(I##bo ^ D3, 28);                \
  B1 = rotl64(I##gu ^ D4, 20);                \
  B2 = rotl64(I##ka ^ D0, 3);                 \
  B3 = rotl64(I##me ^ D1, 45);                \
  B4 = rotl64(I##si ^ D2, 61);                \
  O##ga = B0 ^ (B1 | B2);                     \
  O##ge = B1 ^ (B2 & B3);                     \
  O##gi = B2 ^ (B3 | ~B4);                    \
  O##go = B3 ^ (B4 | B0);                     \
  O##gu = B4 ^ (B0 & B1);                     \
  B0 = rotl64(I##be ^ D1, 1);                 \
  B1 = rotl64(I##gi ^ D2, 6);                 \
  B2 = rotl64(I##ko ^ D3, 25);                \
  B3 = rotl64(I##mu ^ D4, 8);                 \
  B4 = rotl64(I##sa ^ D0, 18);                \
  O##ka = B0 ^ (B1 | B2);                     \
  O##ke = B1 ^ (B2 & B3);                     \
  O##ki = B2 ^ (~B3 & B4);                    \
  O##ko = B3 ^ ~(B4 | B0);                    \
  O##ku = B4 ^ (B0 & B1);                     \
  B0 = rotl64(I##bu ^ D4, 27);                \
  B1 = rotl64(I##ga ^ D0, 36);                \
  B2 = rotl64(I##ke ^ D1, 10);                \
  B3 = rotl64(I##mi ^ D2, 15);                \
  B4 = rotl64(I##so ^ D3, 56);                \
  O##ma = B0 ^ (B1 & B2);                     \
  O##me = B1 ^ (B2 | B3);                     \
  O##mi = B2 ^ (~B3 | B4);                    \
  O##mo = B3 ^ ~(B4 & B0);                    \
  O##mu = B4 ^ (B0 | B1);                     \
  B0 = rotl64(I##bi ^ D2, 62);                \
  B1 = rotl64(I##go ^ D3, 55);                \
  B2 = rotl64(I##ku ^ D4, 39);                \
  B3 = rotl64(I##ma ^ D0, 41);                \
  B4 = rotl64(I##se ^ D1, 2);                 \
  O##sa = B0 ^ (~B1 & B2);                    \
  O##se = B1 ^ ~(B2 | B3);                    \
  O##si = B2 ^ (B3 & B4);                     \
  O##so = B3 ^ (B4 | B0);                     \
  O##su = B4 ^ (B0 & B1);                     \
  } while (0)

}  // namespace

void keccak_f1600(uint64_t s[25]) {
  // Lanes 1, 2, 8, 12, 17, 20 (be, bi, go, ki, mi, sa) are held complemented (see above).
  uint64_t Aba = s[0], Abe = ~s[1], Abi = ~s[2], Abo = s[3], Abu = s[4];
  uint64_t Aga = s[5], Age = s[6], Agi = s[7], Ago = ~s[8], Agu = s[9];
  uint64_t Aka = s[10], Ake = s[11], Aki = ~s[12], Ako = s[13], Aku = s[14];
  uint64_t Ama = s[15], Ame = s[16], Ami = ~s[17], Amo = s[18], Amu = s[19];
  uint64_t Asa = ~s[20], Ase = s[21], Asi = s[22], Aso = s[23], Asu = s[24];
  uint64_t Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku;
  uint64_t Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;
  uint64_t B0, B1, B2, B3, B4, C0, C1, C2, C3, C4, D0, D1, D2, D3, D4;
  for (int round = 0; round < 24; round += 2) {
    KECCAK_ROUND_LC(A, E, kRoundConstants[round]);
    KECCAK_ROUND_LC(E, A, kRoundConstants[round + 1]);
  }
  s[0] = Aba; s[1] = ~Abe; s[2] = ~Abi; s[3] = Abo; s[4] = Abu;
  s[5] = Aga; s[6] = Age; s[7] = Agi; s[8] = ~Ago; s[9] = Agu;
  s[10] = Aka; s[11] = Ake; s[12] = ~Aki; s[13] = Ako; s[14] = Aku;
  s[15] = Ama; s[16] = Ame; s[17] = ~Ami; s[18] = Amo; s[19] = Amu;
  s[20] = ~Asa; s[21] = Ase; s[22] = Asi; s[23] = Aso; s[24] = Asu;
}

#undef KECCAK_ROUND_LC

namespace keccak_detail {

void keccak256_portable(const uint8_t* data, size_t len, uint8_t* out32) {
  keccak256_sponge(data, len, out32, [](uint64_t* state) { keccak_f1600(state); });
}

void keccak256_batch_portable(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) keccak256_portable(msgs[i], lens[i], out + 32 * i);
}

void keccak256_batch32_portable(const uint8_t* const* msgs, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) keccak256_portable(msgs[i], 32, out + 32 * i);
}

void keccak256_pull_portable(Keccak256Next next, void* ctx) {
  Keccak256Message m;
  while (next(ctx, 0, &m)) keccak256_portable(m.data, m.len, m.out);
}

}  // namespace keccak_detail

namespace {

struct Tier {
  const char* name;
  keccak_detail::SingleFn single;
  keccak_detail::BatchFn batch;
  keccak_detail::PullFn pull;
  keccak_detail::Batch32Fn batch32;
};

constexpr Tier kPortableTier{"portable", keccak_detail::keccak256_portable, keccak_detail::keccak256_batch_portable,
                               keccak_detail::keccak256_pull_portable, keccak_detail::keccak256_batch32_portable};
#if defined(STATETREE_HAVE_KECCAK256_AVX512)
constexpr Tier kAvx512Tier{"avx512x8", keccak_detail::keccak256_avx512vl, keccak_detail::keccak256_batch_avx512,
                             keccak_detail::keccak256_pull_avx512, keccak_detail::keccak256_batch32_avx512};
#endif

// The tier a name asks for, or an error message.
const Tier* tier_by_name(std::string_view name, std::string& error) {
  if (name == "portable") return &kPortableTier;
  if (name == "avx512x8") {
#if defined(STATETREE_HAVE_KECCAK256_AVX512)
    if (!cpu_features().avx512) { error = "keccak256 kernel avx512x8: this CPU lacks AVX-512"; return nullptr; }
    if (!keccak_detail::keccak256_self_test(kAvx512Tier.single, kAvx512Tier.batch, kAvx512Tier.pull, kAvx512Tier.batch32)) { error = "keccak256 kernel avx512x8: self-test failed"; return nullptr; }
    return &kAvx512Tier;
#else
    error = "keccak256 kernel avx512x8: not compiled into this binary";
    return nullptr;
#endif
  }
  error = "unknown keccak256 kernel \"" + std::string(name) + "\" (auto, portable, avx512x8)";
  return nullptr;
}

const Tier* choose_auto() {
  std::string ignored;
  if (const Tier* t = tier_by_name("avx512x8", ignored)) return t;
  return &kPortableTier;
}

std::atomic<const Tier*>& active_tier() {
  static std::atomic<const Tier*> tier{choose_auto()};
  return tier;
}

}  // namespace

namespace keccak_detail {

bool keccak256_self_test(SingleFn single, BatchFn batch, PullFn pull, Batch32Fn batch32) {
  // Messages of lengths 0, 3 ("abc"), 135, 136, 137, 272 (+ a few more to fill 8+ lanes)
  // hashed by the tier (batch and pull-fed) and by the portable kernel must agree, and ""
  // and "abc" must match their published digests.
  static constexpr uint8_t kEmpty[32] = {
      0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d, 0xb2, 0xdc, 0xc7, 0x03, 0xc0,
      0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82, 0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70};
  static constexpr uint8_t kAbc[32] = {
      0x4e, 0x03, 0x65, 0x7a, 0xea, 0x45, 0xa9, 0x4f, 0xc7, 0xd4, 0x7b, 0xa8, 0x26, 0xc8, 0xd6, 0x67,
      0xc0, 0xd1, 0xe6, 0xe3, 0x3a, 0x64, 0xa0, 0x36, 0xec, 0x44, 0xf5, 0x8f, 0xa1, 0x2d, 0x6c, 0x45};
  constexpr size_t kCount = 11;
  static constexpr size_t kLens[kCount] = {0, 3, 135, 136, 137, 272, 1, 64, 300, 271, 32};
  uint8_t pool[300];
  for (size_t i = 0; i < sizeof pool; ++i) pool[i] = uint8_t(i * 7 + 1);
  pool[0] = 'a'; pool[1] = 'b'; pool[2] = 'c';
  const uint8_t* msgs[kCount];
  for (size_t i = 0; i < kCount; ++i) msgs[i] = pool;
  uint8_t got[32 * kCount];
  batch(msgs, kLens, got, kCount);
  if (std::memcmp(got, kEmpty, 32) != 0 || std::memcmp(got + 32, kAbc, 32) != 0) return false;
  struct Feed {
    const uint8_t* const* msgs;
    const size_t* lens;
    uint8_t* out;
    size_t next = 0;
  } feed{msgs, kLens, nullptr};
  uint8_t pulled[32 * kCount];
  feed.out = pulled;
  pull(
      [](void* ctx, unsigned, Keccak256Message* m) {
        Feed& f = *static_cast<Feed*>(ctx);
        if (f.next == kCount) return false;
        *m = {f.msgs[f.next], f.lens[f.next], f.out + 32 * f.next};
        ++f.next;
        return true;
      },
      &feed);
  for (size_t i = 0; i < kCount; ++i) {
    uint8_t want[32], one[32];
    keccak256_portable(msgs[i], kLens[i], want);
    single(msgs[i], kLens[i], one);
    if (std::memcmp(got + 32 * i, want, 32) != 0 || std::memcmp(one, want, 32) != 0) return false;
    if (std::memcmp(pulled + 32 * i, want, 32) != 0) return false;
  }
  // 32-byte messages: 19 of them (two full groups of 8 and a partial one), distinct
  const uint8_t* keys[19];
  for (size_t i = 0; i < 19; ++i) keys[i] = pool + 13 * i;
  uint8_t got32[32 * 19];
  batch32(keys, got32, 19);
  for (size_t i = 0; i < 19; ++i) {
    uint8_t want[32];
    keccak256_portable(keys[i], 32, want);
    if (std::memcmp(got32 + 32 * i, want, 32) != 0) return false;
  }
  return true;
}

}  // namespace keccak_detail

void keccak256(const uint8_t* data, size_t len, uint8_t* out32) {
  active_tier().load(std::memory_order_relaxed)->single(data, len, out32);
}

void keccak256_batch(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  active_tier().load(std::memory_order_relaxed)->batch(msgs, lens, out, n);
}

void keccak256_batch32(const uint8_t* const* msgs, uint8_t* out, size_t n) {
  active_tier().load(std::memory_order_relaxed)->batch32(msgs, out, n);
}

void keccak256_batch_pull(Keccak256Next next, void* ctx) { active_tier().load(std::memory_order_relaxed)->pull(next, ctx); }

const char* keccak256_kernel_name() { return active_tier().load(std::memory_order_relaxed)->name; }

std::optional<std::string> keccak256_select(std::string_view name) {
  std::string error;
  const Tier* t = name == "auto" ? choose_auto() : tier_by_name(name, error);
  if (!t) return error;
  active_tier().store(t, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace st::kernels
