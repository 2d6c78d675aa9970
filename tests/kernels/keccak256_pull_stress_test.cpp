// keccak256_pull_stress_test: keccak256_batch_pull against the portable single-message
// kernel for random message counts (0..40, 300) and lengths around the 136-byte rate
// boundaries (0, 1, 31-33, 135-137, 271-273, 408, 600), on every tier this CPU runs. The producer keeps
// one fixed buffer per lane and checks the kernel's promises (keccak256.h): a lane asks for
// its next message only after its previous digest was written (the digest's bytes no longer
// the sentinel), and a message is not read after that (the producer overwrites the whole
// lane buffer with junk before writing the next message into it).
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/keccak256.h"
#include "kernels/keccak256_tiers.h"

using namespace st::kernels;

namespace {

constexpr size_t kMaxLen = 600;
constexpr uint8_t kSentinel = 0xAA;

struct Feed {
  std::vector<std::vector<uint8_t>> msgs;
  std::vector<uint8_t> out;
  size_t next = 0;
  uint8_t lane_buf[kKeccak256PullLanes][kMaxLen];
  size_t lane_msg[kKeccak256PullLanes];  // the message a lane holds (SIZE_MAX: none)
  size_t bad_lane = 0, asked_early = 0;
};

bool feed_next(void* ctx, unsigned lane, Keccak256Message* m) {
  Feed& f = *static_cast<Feed*>(ctx);
  if (lane >= kKeccak256PullLanes) { ++f.bad_lane; return false; }
  if (f.lane_msg[lane] != SIZE_MAX) {  // its previous digest must be out already
    const uint8_t* d = &f.out[32 * f.lane_msg[lane]];
    bool all_sentinel = true;
    for (size_t i = 0; i < 32; ++i) all_sentinel &= d[i] == kSentinel;
    f.asked_early += all_sentinel;
  }
  std::memset(f.lane_buf[lane], 0x5A ^ int(f.next), kMaxLen);  // junk over the previous message
  if (f.next == f.msgs.size()) { f.lane_msg[lane] = SIZE_MAX; return false; }
  const auto& msg = f.msgs[f.next];
  if (!msg.empty()) std::memcpy(f.lane_buf[lane], msg.data(), msg.size());
  *m = {f.lane_buf[lane], msg.size(), &f.out[32 * f.next]};
  f.lane_msg[lane] = f.next++;
  return true;
}

}  // namespace

TEST_CASE("keccak256_batch_pull: random counts and boundary lengths, reused lane buffers, every tier") {
  static constexpr size_t kLens[] = {0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 408, 600};
  std::mt19937_64 rng(11);
  // The tiers' pull functions directly (not through keccak256_select, whose self-test would
  // hide a broken tier behind "not available").
  std::vector<std::pair<const char*, keccak_detail::PullFn>> tiers = {{"portable", keccak_detail::keccak256_pull_portable}};
#if defined(STATETREE_HAVE_KECCAK256_AVX512)
  if (cpu_features().avx512) tiers.push_back({"avx512x8", keccak_detail::keccak256_pull_avx512});
#endif
  if (tiers.size() == 1) MESSAGE("avx512x8 tier not available here: portable only");
  for (const auto& [name, pull] : tiers) {
    CAPTURE(name);
    std::vector<size_t> counts;
    for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
    counts.push_back(300);
    for (size_t n : counts) {
      for (int rep = 0; rep < 3; ++rep) {
        CAPTURE(n);
        CAPTURE(rep);
        auto f = std::make_unique<Feed>();
        for (size_t i = 0; i < n; ++i) {
          // rep 0: all one length; rep 1: random boundary lengths; rep 2: one long message among short ones
          const size_t len = rep == 0 ? kLens[n % std::size(kLens)]
                             : rep == 1 ? kLens[rng() % std::size(kLens)]
                                        : (i == n / 2 ? 600 : rng() % 40);
          std::vector<uint8_t> msg(len);
          for (auto& b : msg) b = uint8_t(rng());
          f->msgs.push_back(std::move(msg));
        }
        f->out.assign(32 * n + 1, kSentinel);
        for (auto& l : f->lane_msg) l = SIZE_MAX;
        pull(feed_next, f.get());
        CHECK(f->next == n);
        CHECK(f->bad_lane == 0);
        CHECK(f->asked_early == 0);
        CHECK(f->out.back() == kSentinel);
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
          uint8_t want[32];
          keccak_detail::keccak256_portable(f->msgs[i].data(), f->msgs[i].size(), want);
          bad += std::memcmp(want, &f->out[32 * i], 32) != 0;
        }
        CHECK(bad == 0);
      }
    }
  }
}
