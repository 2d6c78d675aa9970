// hash_bench: the SHA-256 kernel micro-benchmark's protocol (see hash_bench.h).
#include "engine/experiments/hash_bench.h"

#include <algorithm>
#include <random>

#include "kernels/support/clock.h"

namespace st::experiments {

namespace {

using kernels::Sha256Kernel;
using kernels::Sha256Tier;

// 64-byte aligned scratch of n bytes.
struct Aligned {
  std::vector<uint8_t> raw;
  uint8_t* p;
  explicit Aligned(size_t n) : raw(n + 64) {
    p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw.data()) + 63) & ~uintptr_t(63));
  }
};

struct Buffers {
  size_t messages;  // messages per pass (a multiple of 16)
  Aligned in, out, sliced_in, sliced_out;
  std::vector<const uint8_t*> mixed_ptrs;
  std::vector<size_t> mixed_lens;
  double mixed_compressions = 0;  // blocks per pass of hash_batch over mixed lengths
  explicit Buffers(size_t n)
      : messages(n), in(64 * n + 1024), out(64 * n), sliced_in(2 * (n / 16) * 512), sliced_out((n / 16) * 512) {
    std::mt19937 rng(42);
    for (size_t i = 0; i < 64 * n + 1024; ++i) in.p[i] = uint8_t(rng());
    for (size_t i = 0; i < 2 * (n / 16) * 512; ++i) sliced_in.p[i] = uint8_t(rng());
    // Mixed lengths: 0..1000 bytes, from one 1 KiB-strided region (messages overlap, fine).
    const size_t mixed = n / 8;
    for (size_t i = 0; i < mixed; ++i) {
      const size_t len = rng() % 1001;
      mixed_ptrs.push_back(in.p + (rng() % 1024));
      mixed_lens.push_back(len);
      mixed_compressions += double((len + 9 + 63) / 64);
    }
  }
};

// Times `pass` (which processes `msgs` messages): calibrates the inner repetition count to
// about 0.25 ms per sample, then takes `reps` samples of ns per message.
stats::Summary time_pass(const std::function<void()>& pass, double msgs, uint64_t reps) {
  pass();  // warm caches and the code path
  uint64_t t0 = monotonic_ns();
  pass();
  const double once_ns = double(monotonic_ns() - t0);
  const uint64_t inner = std::max<uint64_t>(1, uint64_t(2.5e5 / std::max(once_ns, 1.0)));
  std::vector<double> samples;
  for (uint64_t r = 0; r < reps; ++r) {
    t0 = monotonic_ns();
    for (uint64_t i = 0; i < inner; ++i) pass();
    const double ns = double(monotonic_ns() - t0);
    samples.push_back(ns / (double(inner) * msgs));
  }
  return stats::summarize(samples);
}

void bench_tier(const Sha256Kernel& k, Buffers& b, const HashBenchOptions& o, HashBenchResult* out, uint64_t* done) {
  const size_t n = b.messages, nblocks = n / 16;
  auto add = [&](const char* entry, double msgs, double compressions, const std::function<void()>& pass) {
    const stats::Summary per_msg = time_pass(pass, msgs, o.reps);
    out->entries.push_back({k.name, entry, compressions / msgs, per_msg, stats::scaled(per_msg, compressions / msgs)});
    out->sink += b.out.p[0] + b.sliced_out.p[0];
    if (o.progress) o.progress(++*done);
  };
  // Single calls are slow on the portable tier: a quarter of the messages keeps passes short.
  const size_t singles = n / 4;
  add("hash", double(singles), double(singles), [&] {
    for (size_t i = 0; i < singles; ++i) k.hash(b.in.p + 32 * i, 32, b.out.p + 32 * (i & 15));
  });
  add("hash32_batch", double(n), double(n), [&] { k.hash32_batch(b.in.p, b.out.p, n); });
  add("hash64_batch", double(n), 2.0 * double(n), [&] { k.hash64_batch(b.in.p, b.out.p, n); });
  add("hash_batch", double(b.mixed_ptrs.size()), b.mixed_compressions, [&] {
    k.hash_batch(b.mixed_ptrs.data(), b.mixed_lens.data(), b.out.p, b.mixed_ptrs.size());
  });
  add("leaves32_sliced", double(n), double(n), [&] {
    k.leaves32_sliced(b.in.p, reinterpret_cast<uint32_t*>(b.sliced_out.p), nblocks);
  });
  add("parents_sliced", double(n), 2.0 * double(n), [&] {
    k.parents_sliced(reinterpret_cast<const uint32_t*>(b.sliced_in.p), reinterpret_cast<uint32_t*>(b.sliced_out.p), nblocks);
  });
  add("digests_sliced", double(n), double(n), [&] {
    k.digests_sliced(reinterpret_cast<const uint32_t*>(b.sliced_in.p), reinterpret_cast<uint32_t*>(b.sliced_out.p), nblocks);
  });
}

// vzeroupper hazard: SHA-NI alone, then the same SHA-NI pass preceded by a one-block AVX-512
// call. Without vzeroupper the second would be many times slower.
void bench_vzeroupper(Buffers& bufs, uint64_t reps, HashBenchResult* out) {
  const Sha256Kernel& sha = kernels::sha256_kernel(Sha256Tier::shani);
  const Sha256Kernel& z = kernels::sha256_kernel(Sha256Tier::avx512);
  const size_t n = bufs.messages;
  auto* sl_in = reinterpret_cast<const uint32_t*>(bufs.sliced_in.p);
  auto* sl_out = reinterpret_cast<uint32_t*>(bufs.sliced_out.p);
  const stats::Summary alone = time_pass([&] { sha.hash32_batch(bufs.in.p, bufs.out.p, n); }, double(n), reps);
  const stats::Summary after = time_pass([&] { z.digests_sliced(sl_in, sl_out, 1); sha.hash32_batch(bufs.in.p, bufs.out.p, n); }, double(n), reps);
  out->entries.push_back({"shani", "hash32_batch (alone, vzeroupper check)", 1.0, alone, alone});
  out->entries.push_back({"shani", "hash32_batch after an avx512 call", 1.0, after, after});
}

}  // namespace

HashBenchResult run_hash_bench(const HashBenchOptions& options) {
  Buffers bufs(options.messages);
  HashBenchResult result;
  uint64_t done = 0;
  for (Sha256Tier t : options.tiers) bench_tier(kernels::sha256_kernel(t), bufs, options, &result, &done);
  if (options.vzeroupper_check) bench_vzeroupper(bufs, options.reps, &result);
  return result;
}

}  // namespace st::experiments
