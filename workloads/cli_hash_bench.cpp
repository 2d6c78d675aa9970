// cli_hash_bench: `statetree hash-bench`, the SHA-256 kernel micro-benchmark. For every
// available tier (or the one named) and every entry point of its table, it times repeated
// passes over L1/L2-resident buffers and reports ns per message and ns per compression
// (median, mean, stddev, min, max over --reps; the samples in JSON). Compressions per message: hash / hash32_batch /
// leaves32_sliced / digests_sliced 1, hash64_batch and parents_sliced 2 (the second is the
// constant padding block), hash_batch over mixed lengths 0..1000 the exact block count.
// It also measures SHA-NI directly after an AVX-512 call on the same thread (the vzeroupper
// hazard) next to SHA-NI alone.
//
// Inputs are deterministic pseudo-random bytes; outputs are consumed into a checksum so no
// pass can be optimised away.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stats/summary.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/report.h"
#include "workloads/commands.h"

namespace st::cli {

namespace {

using kernels::Sha256Kernel;
using kernels::Sha256Tier;
using Clock = std::chrono::steady_clock;

int fail(const std::string& msg, int code = 2) { return cli_error("statetree hash-bench", msg, code); }

constexpr Sha256Tier kTiers[] = {Sha256Tier::portable, Sha256Tier::shani, Sha256Tier::avx2, Sha256Tier::avx512};

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

struct Entry {
  std::string kernel, entry;
  double compressions_per_msg;
  stats::Summary ns_per_msg, ns_per_compression;
};

// Times `pass` (which processes `msgs` messages): calibrates the inner repetition count to
// about 0.25 ms per sample (short samples dodge preemption on a shared machine), then takes `reps` samples.
stats::Summary time_pass(const std::function<void()>& pass, double msgs, uint64_t reps) {
  pass();  // warm caches and the code path
  auto t0 = Clock::now();
  pass();
  const double once_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  const uint64_t inner = std::max<uint64_t>(1, uint64_t(2.5e5 / std::max(once_ns, 1.0)));
  std::vector<double> samples;
  for (uint64_t r = 0; r < reps; ++r) {
    t0 = Clock::now();
    for (uint64_t i = 0; i < inner; ++i) pass();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    samples.push_back(ns / (double(inner) * msgs));
  }
  return stats::summarize(samples);
}

// Entry points timed per tier (bench_tier's add() calls), for the progress line.
constexpr uint64_t kEntriesPerTier = 7;

void bench_tier(const Sha256Kernel& k, Buffers& b, uint64_t reps, std::vector<Entry>& out, uint64_t& sink,
                report::Progress* progress, uint64_t* done) {
  const size_t n = b.messages, nblocks = n / 16;
  auto add = [&](const char* entry, double msgs, double compressions, const std::function<void()>& pass) {
    const stats::Summary per_msg = time_pass(pass, msgs, reps);
    report::note_timing(std::string(k.name) + " " + entry, per_msg);
    out.push_back({k.name, entry, compressions / msgs, per_msg, stats::scaled(per_msg, compressions / msgs)});
    sink += b.out.p[0] + b.sliced_out.p[0];
    if (progress) progress->update(++*done);
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

std::string fmt_summary(const stats::Summary& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%8.2f +-%6.2f [%7.2f, %8.2f]", s.median, s.stddev, s.min, s.max);
  return buf;
}

// The tiers --kernel names ("all": every available one), each passing its self-test;
// nullopt = go on, else the exit status.
std::optional<int> select_tiers(const std::string& name, std::vector<Sha256Tier>* tiers) {
  if (name == "all") {
    for (Sha256Tier t : kTiers)
      if (kernels::sha256_tier_available(t)) tiers->push_back(t);
  } else {
    const auto t = kernels::sha256_tier_from_name(name);
    if (!t) return fail("unknown kernel '" + name + "' (portable, shani, avx2, avx512 or all)");
    if (!kernels::sha256_tier_available(*t)) return fail("kernel '" + name + "' is not available on this CPU/build");
    tiers->push_back(*t);
  }
  for (Sha256Tier t : *tiers)
    if (std::string failure = kernels::sha256_self_test(t); !failure.empty()) return fail(failure, 70);
  return std::nullopt;
}

// vzeroupper hazard: SHA-NI alone, then the same SHA-NI pass preceded by a one-block AVX-512
// call (about 1 % of the pass's work). Without vzeroupper the second would be many times slower.
void bench_vzeroupper(Buffers& bufs, uint64_t reps, std::vector<Entry>& results) {
  const Sha256Kernel& sha = kernels::sha256_kernel(Sha256Tier::shani);
  const Sha256Kernel& z = kernels::sha256_kernel(Sha256Tier::avx512);
  const size_t n = bufs.messages;
  auto* sl_in = reinterpret_cast<const uint32_t*>(bufs.sliced_in.p);
  auto* sl_out = reinterpret_cast<uint32_t*>(bufs.sliced_out.p);
  const stats::Summary alone = time_pass([&] { sha.hash32_batch(bufs.in.p, bufs.out.p, n); }, double(n), reps);
  const stats::Summary after = time_pass([&] { z.digests_sliced(sl_in, sl_out, 1); sha.hash32_batch(bufs.in.p, bufs.out.p, n); }, double(n), reps);
  report::note_timing("shani hash32_batch alone", alone);
  report::note_timing("shani hash32_batch after avx512", after);
  results.push_back({"shani", "hash32_batch (alone, vzeroupper check)", 1.0, alone, alone});
  results.push_back({"shani", "hash32_batch after an avx512 call", 1.0, after, after});
}

nlohmann::json hash_bench_json(uint64_t messages, uint64_t reps, uint64_t sink, const std::vector<Entry>& results) {
  nlohmann::json j;
  j["command"] = "hash-bench";
  j["root"] = nullptr;
  j["root_note"] = "hash-bench times hash kernels on buffers: no tree, no root";
  report::stamp(j);
  j["active_kernel"] = kernels::sha256_active().name;
  j["messages_per_pass"] = messages;
  j["reps"] = reps;
  j["sink"] = sink;
  j["results"] = nlohmann::json::array();
  for (const Entry& e : results)
    j["results"].push_back({{"kernel", e.kernel}, {"entry", e.entry}, {"compressions_per_msg", e.compressions_per_msg},
                            {"ns_per_msg", report::summary_json(e.ns_per_msg)}, {"ns_per_compression", report::summary_json(e.ns_per_compression)}});
  return j;
}

void print_hash_bench(uint64_t messages, uint64_t reps, uint64_t sink, const std::vector<Entry>& results) {
  std::printf("sha256 hash-bench: active kernel %s, %llu messages per pass, %llu reps, median +-stddev [min, max]\n",
              kernels::sha256_active().name, static_cast<unsigned long long>(messages), static_cast<unsigned long long>(reps));
  std::printf("%-9s %-40s %-38s %-38s\n", "kernel", "entry", "ns/message", "ns/compression");
  for (const Entry& e : results)
    std::printf("%-9s %-40s %-38s %-38s\n", e.kernel.c_str(), e.entry.c_str(), fmt_summary(e.ns_per_msg).c_str(),
                fmt_summary(e.ns_per_compression).c_str());
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(sink & 0xffff));
  std::printf("%s\n", report::stamp_line().c_str());
}

}  // namespace

int cmd_hash_bench(int argc, char** argv) {
  Args args("statetree hash-bench",
            "Times every SHA-256 kernel tier and entry point on L1/L2-resident buffers:\n"
            "ns per message and ns per 64-byte compression (median [min, max] over reps).");
  args.option("kernel", "NAME", "portable, shani, avx2, avx512, or all available", "all");
  add_reps(args, "samples per entry point (each ~0.25 ms)", 31, 10000);
  args.option_u64("messages", "N", "messages per pass, a multiple of 16 (1024 = 64 KiB of input, L2-resident)", 16,
                  1u << 20, 1024);
  args.pin_option();
  add_json(args, "print one JSON object instead of the table");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const uint64_t reps = args.get_u64("reps");
  const uint64_t messages = args.get_u64("messages");
  if (messages % 16) return fail("--messages must be a multiple of 16 (got " + std::to_string(messages) + ")");
  const std::string name = args.str("kernel");
  std::vector<Sha256Tier> tiers;
  if (auto rc = select_tiers(name, &tiers)) return *rc;

  Buffers bufs(messages);
  std::vector<Entry> results;
  uint64_t sink = 0;
  const bool json = args.given("json");
  report::Progress progress("hash-bench", tiers.size() * kEntriesPerTier);
  uint64_t done = 0;
  for (Sha256Tier t : tiers)
    bench_tier(kernels::sha256_kernel(t), bufs, reps, results, sink, json ? nullptr : &progress, &done);
  progress.finish();
  const bool mixed = kernels::sha256_tier_available(Sha256Tier::shani) && kernels::sha256_tier_available(Sha256Tier::avx512) &&
                     (name == "all" || name == "shani" || name == "avx512");
  if (mixed) bench_vzeroupper(bufs, reps, results);
  if (json) std::printf("%s\n", hash_bench_json(messages, reps, sink, results).dump().c_str());
  else print_hash_bench(messages, reps, sink, results);
  return 0;
}

}  // namespace st::cli
