// sha256_dispatch: tier availability (compiled in x CPU support), name parsing, the
// mandatory known-answer self-test and the process-wide active kernel.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu_features.h"
#include "kernels/sha256.h"
#include "kernels/sha256_portable.h"
#include "kernels/sha256_tiers.h"
#include "kernels/support/splitmix64.h"

namespace st::kernels {

using namespace sha256_detail;

namespace {

const Sha256Kernel* compiled_table(Sha256Tier tier) {
  switch (tier) {
    case Sha256Tier::portable: return &kSha256Portable;
#if defined(STATETREE_HAVE_SHA256_SHANI)
    case Sha256Tier::shani: return &kSha256Shani;
#endif
#if defined(STATETREE_HAVE_SHA256_AVX2)
    case Sha256Tier::avx2: return &kSha256Avx2;
#endif
#if defined(STATETREE_HAVE_SHA256_AVX512)
    case Sha256Tier::avx512: return &kSha256Avx512;
#endif
    default: return nullptr;
  }
}

bool cpu_supports(Sha256Tier tier) {
  const CpuFeatures& f = cpu_features();
  switch (tier) {
    case Sha256Tier::portable: return true;
    case Sha256Tier::shani: return f.sha;
    case Sha256Tier::avx2: return f.avx2;
    case Sha256Tier::avx512: return f.avx512;
  }
  return false;
}

// Deterministic test bytes (xorshift), so the self-test needs no allocation or RNG state.
void fill_bytes(uint8_t* p, size_t n, uint64_t seed) {
  uint64_t x = seed * kSplitmix64Gamma + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    p[i] = uint8_t(x >> 24);
  }
}

std::string hex32(const uint8_t* d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) { s += digits[d[i] >> 4]; s += digits[d[i] & 15]; }
  return s;
}

std::atomic<const Sha256Kernel*> g_active{nullptr};

}  // namespace

bool sha256_tier_available(Sha256Tier tier) { return compiled_table(tier) && cpu_supports(tier); }

sha256_detail::CompressStateFn sha256_detail::straggler_compressor() {
#if defined(STATETREE_HAVE_SHA256_SHANI)
  static const CompressStateFn fn = cpu_supports(Sha256Tier::shani) ? compress_shani : nullptr;
  return fn;
#else
  return nullptr;
#endif
}

void sha256_detail::hash_single_best(const uint8_t* data, size_t len, uint8_t* out) {
  static const Sha256Kernel* const best =
      sha256_tier_available(Sha256Tier::shani) ? compiled_table(Sha256Tier::shani) : &kSha256Portable;
  best->hash(data, len, out);
}

std::optional<Sha256Tier> sha256_tier_from_name(std::string_view name) {
  if (name == "portable") return Sha256Tier::portable;
  if (name == "shani") return Sha256Tier::shani;
  if (name == "avx2") return Sha256Tier::avx2;
  if (name == "avx512") return Sha256Tier::avx512;
  return std::nullopt;
}

const char* sha256_tier_name(Sha256Tier tier) {
  switch (tier) {
    case Sha256Tier::portable: return "portable";
    case Sha256Tier::shani: return "shani";
    case Sha256Tier::avx2: return "avx2";
    case Sha256Tier::avx512: return "avx512";
  }
  return "?";
}

const Sha256Kernel& sha256_kernel(Sha256Tier tier) {
  const Sha256Kernel* k = compiled_table(tier);
  if (!k || !cpu_supports(tier)) {
    std::fprintf(stderr, "statetree: sha256 tier %s is not available on this CPU/build\n", sha256_tier_name(tier));
    std::abort();
  }
  return *k;
}

namespace {

// The self-test's parts: each returns what failed ("" when all passed).

// FIPS 180-4 known answers.
std::string self_test_known_answers(const Sha256Kernel& k) {
  struct Kat { const char* msg; const char* hex; };
  static const Kat kats[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  for (const Kat& kat : kats) {
    uint8_t d[32];
    k.hash(reinterpret_cast<const uint8_t*>(kat.msg), std::strlen(kat.msg), d);
    if (hex32(d) != kat.hex) return "known answer for \"" + std::string(kat.msg).substr(0, 16) + "\"";
  }
  return {};
}

constexpr size_t kSelfTestMaxN = 3 * kSlicedLanes + 5;   // 53 messages: partial lane groups

// Every batched entry point against the portable tier, over sizes that cover partial lane
// groups; then in place (out == in, as the Merkle engine hashes parents and re-hashes
// digests) and n = 0.
std::string self_test_batches(const Sha256Kernel& k, const Sha256Kernel& ref, const uint8_t* in) {
  constexpr size_t kMaxN = kSelfTestMaxN;
  alignas(64) static thread_local uint8_t got[kMaxN * 32];
  alignas(64) static thread_local uint8_t want[kMaxN * 32];
  for (size_t len = 0; len <= 130; len += 1) {
    k.hash(in + 1, len, got);
    ref.hash(in + 1, len, want);
    if (std::memcmp(got, want, 32) != 0) return "hash of length " + std::to_string(len);
  }
  for (size_t n : {size_t(1), size_t(7), size_t(16), size_t(17), kMaxN}) {
    k.hash32_batch(in + 3, got, n);
    ref.hash32_batch(in + 3, want, n);
    if (std::memcmp(got, want, 32 * n) != 0) return "hash32_batch n=" + std::to_string(n);
    k.hash64_batch(in + 5, got, n);
    ref.hash64_batch(in + 5, want, n);
    if (std::memcmp(got, want, 32 * n) != 0) return "hash64_batch n=" + std::to_string(n);
    const uint8_t* msgs[kMaxN];
    size_t lens[kMaxN];
    for (size_t i = 0; i < n; ++i) { msgs[i] = in + i; lens[i] = (i * 37) % 190; }
    k.hash_batch(msgs, lens, got, n);
    ref.hash_batch(msgs, lens, want, n);
    if (std::memcmp(got, want, 32 * n) != 0) return "hash_batch n=" + std::to_string(n);
  }
  for (size_t n : {size_t(0), size_t(9), kMaxN}) {
    std::memcpy(got, in + 7, 32 * n);
    k.hash32_batch(got, got, n);
    ref.hash32_batch(in + 7, want, n);
    if (std::memcmp(got, want, 32 * n) != 0) return "hash32_batch in place n=" + std::to_string(n);
    alignas(64) static thread_local uint8_t pairs[kMaxN * 64];
    std::memcpy(pairs, in + 9, 64 * n);
    k.hash64_batch(pairs, pairs, n);
    ref.hash64_batch(in + 9, want, n);
    if (std::memcmp(pairs, want, 32 * n) != 0) return "hash64_batch in place n=" + std::to_string(n);
  }
  return {};
}

// The bit-sliced entry points against the portable tier (and digests in place).
std::string self_test_sliced(const Sha256Kernel& k, const Sha256Kernel& ref, const uint8_t* in) {
  alignas(64) static thread_local uint32_t sl_in[4 * kSlicedBlockWords];
  alignas(64) static thread_local uint32_t sl_got[2 * kSlicedBlockWords];
  alignas(64) static thread_local uint32_t sl_want[2 * kSlicedBlockWords];
  fill_bytes(reinterpret_cast<uint8_t*>(sl_in), sizeof sl_in, 11);
  k.leaves32_sliced(in + 1, sl_got, 2);
  ref.leaves32_sliced(in + 1, sl_want, 2);
  if (std::memcmp(sl_got, sl_want, sizeof sl_got) != 0) return "leaves32_sliced";
  k.parents_sliced(sl_in, sl_got, 2);
  ref.parents_sliced(sl_in, sl_want, 2);
  if (std::memcmp(sl_got, sl_want, sizeof sl_got) != 0) return "parents_sliced";
  k.digests_sliced(sl_in, sl_got, 2);
  ref.digests_sliced(sl_in, sl_want, 2);
  if (std::memcmp(sl_got, sl_want, sizeof sl_got) != 0) return "digests_sliced";
  std::memcpy(sl_got, sl_in, sizeof sl_got);
  k.digests_sliced(sl_got, sl_got, 2);
  if (std::memcmp(sl_got, sl_want, sizeof sl_got) != 0) return "digests_sliced in place";
  return {};
}

}  // namespace

std::string sha256_self_test(Sha256Tier tier) {
  if (!sha256_tier_available(tier)) return std::string("tier ") + sha256_tier_name(tier) + " not available";
  const Sha256Kernel& k = *compiled_table(tier);
  const Sha256Kernel& ref = kSha256Portable;
  alignas(64) static thread_local uint8_t in[kSelfTestMaxN * 200];
  fill_bytes(in, sizeof in, 7);
  std::string failed = self_test_known_answers(k);
  if (failed.empty()) failed = self_test_batches(k, ref, in);
  if (failed.empty()) failed = self_test_sliced(k, ref, in);
  if (failed.empty()) return {};
  return std::string("sha256 self-test of ") + k.name + " failed: " + failed;
}

std::optional<std::string> sha256_select(std::string_view name) {
  Sha256Tier tier = Sha256Tier::portable;
  if (name == "auto") {
    for (Sha256Tier t : {Sha256Tier::avx512, Sha256Tier::shani, Sha256Tier::avx2, Sha256Tier::portable}) {
      if (sha256_tier_available(t)) { tier = t; break; }
    }
  } else {
    const auto parsed = sha256_tier_from_name(name);
    if (!parsed) return "unknown kernel '" + std::string(name) + "' (expected portable, shani, avx2, avx512 or auto)";
    tier = *parsed;
    if (!compiled_table(tier)) return "kernel '" + std::string(name) + "' was not compiled into this binary";
    if (!cpu_supports(tier)) return "kernel '" + std::string(name) + "' needs CPU features this machine lacks";
  }
  const std::string failure = sha256_self_test(tier);
  if (!failure.empty()) return failure;
  g_active.store(compiled_table(tier), std::memory_order_release);
  return std::nullopt;
}

const Sha256Kernel& sha256_active() {
  const Sha256Kernel* k = g_active.load(std::memory_order_acquire);
  if (k) return *k;
  if (auto err = sha256_select("auto")) {
    std::fprintf(stderr, "statetree: %s\n", err->c_str());
    std::exit(70);
  }
  return *g_active.load(std::memory_order_acquire);
}

}  // namespace st::kernels
