// keccak256_bench: prints Keccak-256 throughput per tier side by side (no assertions on
// time). Skipped by default; run from a Release build:
//   ./build/tests/test_kernels -ts="keccak256 bench" --no-skip
// Figures: ns per hash, thread CPU time (less sensitive to preemption on a shared machine),
// median [min..max] over repetitions, for fixed lengths and an MPT-like mix (66..535 bytes),
// with OpenSSL's EVP SHA3-256 (same permutation and rate) as an outside reference.
#include <doctest/doctest.h>

#include <openssl/evp.h>
#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine/stats/summary.h"
#include "kernels/keccak256.h"
#include "kernels/keccak256_tiers.h"

using namespace st::kernels;

namespace {

double thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

template <class F>
st::stats::Summary ns_per_hash(F&& f, int reps, size_t n) {
  std::vector<double> v;
  f();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const double t0 = thread_cpu_ns();
    f();
    v.push_back((thread_cpu_ns() - t0) / double(n));
  }
  return st::stats::summarize(v);
}

void print(const char* what, const st::stats::Summary& s) {
  std::printf("  %-18s %8.1f [%8.1f .. %8.1f]\n", what, s.median, s.min, s.max);
}

}  // namespace

TEST_SUITE("keccak256 bench" * doctest::skip()) {
TEST_CASE("keccak256 bench: ns per hash by tier") {
  const size_t n = 4096;
  const int reps = 15;
  std::vector<uint8_t> data(n * 600);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 31 + 7);
  std::vector<uint8_t> out(32 * n);
  std::vector<const uint8_t*> msgs(n);
  for (size_t i = 0; i < n; ++i) msgs[i] = &data[i * 600];
  std::printf("keccak256 ns/hash (thread CPU time), median [min .. max] of %d reps x %zu hashes; auto tier: %s\n",
              reps, n, keccak256_kernel_name());
  for (size_t len : {size_t(32), size_t(64), size_t(135), size_t(136), size_t(300), size_t(532), size_t(0)}) {
    std::vector<size_t> lens(n, len);
    if (len == 0)
      for (size_t i = 0; i < n; ++i) lens[i] = 66 + (i * 7919) % 470;
    std::printf("len %s\n", len ? std::to_string(len).c_str() : "mix 66..535");
    // Reference: OpenSSL's SHA3-256 (same Keccak-f[1600] and rate, 0x06 padding; its
    // assembly permutation) through EVP, one message at a time.
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const auto so = ns_per_hash([&] {
      unsigned out_len = 0;
      for (size_t i = 0; i < n; ++i) {
        EVP_DigestInit_ex(ctx, EVP_sha3_256(), nullptr);
        EVP_DigestUpdate(ctx, msgs[i], lens[i]);
        EVP_DigestFinal_ex(ctx, &out[32 * i], &out_len);
      }
    }, reps, n);
    EVP_MD_CTX_free(ctx);
    print("openssl sha3-256", so);
    const auto sp = ns_per_hash([&] { for (size_t i = 0; i < n; ++i) keccak_detail::keccak256_portable(msgs[i], lens[i], &out[32 * i]); }, reps, n);
    print("single portable", sp);
    const auto bp = ns_per_hash([&] { keccak_detail::keccak256_batch_portable(msgs.data(), lens.data(), out.data(), n); }, reps, n);
    print("batch portable", bp);
#if defined(STATETREE_HAVE_KECCAK256_AVX512)
    if (!keccak256_select("avx512x8")) {
      const auto sv = ns_per_hash([&] { for (size_t i = 0; i < n; ++i) keccak_detail::keccak256_avx512vl(msgs[i], lens[i], &out[32 * i]); }, reps, n);
      print("single avx512vl", sv);
      const auto bv = ns_per_hash([&] { keccak_detail::keccak256_batch_avx512(msgs.data(), lens.data(), out.data(), n); }, reps, n);
      print("batch avx512x8", bv);
      if (len == 32) {
        const auto b32 = ns_per_hash([&] { keccak_detail::keccak256_batch32_avx512(msgs.data(), out.data(), n); }, reps, n);
        print("batch32 avx512x8", b32);
      }
      std::printf("  speed-up (median): single %.2fx, batch %.2fx\n", sp.median / sv.median, bp.median / bv.median);
    }
#endif
  }
  CHECK_FALSE(keccak256_select("auto").has_value());
}
}
