// keccak256_test: Ethereum Keccak-256 against published digests and 200 pycryptodomex
// digests (tests/data/keccak/keccak256_vectors.txt, lengths 0..600 across the 136-byte rate
// boundaries; messages re-derived here from the generator's splitmix64 stream), batch ==
// single for the dispatched tier and the portable tier, and the permutation's known answer.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/keccak256.h"
#include "kernels/keccak256_tiers.h"
#include "kernels/support/splitmix64.h"
#include "test_paths.h"

using namespace st::kernels;

namespace {

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) { s += kDigits[p[i] >> 4]; s += kDigits[p[i] & 15]; }
  return s;
}

std::string keccak_hex(const std::string& msg) {
  uint8_t out[32];
  keccak256(reinterpret_cast<const uint8_t*>(msg.data()), msg.size(), out);
  return to_hex(out, 32);
}

// Same stream as gen_keccak256_vectors.py.
std::vector<uint8_t> vector_message(uint64_t k, size_t n) {
  uint64_t s = (k + 1) * st::kSplitmix64Gamma;
  std::vector<uint8_t> out;
  while (out.size() < n) {
    const uint64_t z = st::splitmix64(s);
    for (int b = 0; b < 8; ++b) out.push_back(uint8_t(z >> (8 * b)));
  }
  out.resize(n);
  return out;
}

struct Vector {
  std::vector<uint8_t> msg;
  std::string digest_hex;
};

std::vector<Vector> load_vectors() {
  std::ifstream in(std::string(STATETREE_TEST_DATA_DIR) + "/keccak/keccak256_vectors.txt");
  REQUIRE(in.good());
  std::vector<Vector> v;
  uint64_t k;
  size_t len;
  std::string hex;
  while (in >> k >> len >> hex) v.push_back({vector_message(k, len), hex});
  return v;
}

}  // namespace

TEST_CASE("keccak256 published digests (Ethereum padding, not SHA3)") {
  CHECK(keccak_hex("") == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  CHECK(keccak_hex("abc") == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  // SHA3-256("") would be a7ffc6f8...; make sure we are not that.
  CHECK(keccak_hex("").rfind("a7ffc6f8", 0) != 0);
  CHECK(keccak_hex("The quick brown fox jumps over the lazy dog") ==
        "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15");
}

TEST_CASE("keccak_f1600 of the zero state (Keccak team known answer)") {
  uint64_t s[25] = {};
  keccak_f1600(s);
  CHECK(s[0] == 0xF1258F7940E1DDE7ULL);
  CHECK(s[1] == 0x84D5CCF933C0478AULL);
  CHECK(s[24] == 0xEAF1FF7B5CECA249ULL);
}

TEST_CASE("keccak256 matches 200 pycryptodomex digests, lengths 0..600") {
  const auto vectors = load_vectors();
  REQUIRE(vectors.size() == 200);
  for (size_t i = 0; i < vectors.size(); ++i) {
    CAPTURE(i);
    CAPTURE(vectors[i].msg.size());
    uint8_t out[32];
    keccak256(vectors[i].msg.data(), vectors[i].msg.size(), out);
    CHECK(to_hex(out, 32) == vectors[i].digest_hex);
  }
}

TEST_CASE("keccak256_batch == keccak256 for every batch size 0..19, dispatched and portable") {
  MESSAGE("keccak256 batch tier: " << keccak256_kernel_name());
  const auto vectors = load_vectors();
  for (size_t n = 0; n <= 19; ++n) {
    CAPTURE(n);
    // Batch n takes vectors starting at 7*n, so lanes mix lengths differently each time.
    std::vector<const uint8_t*> msgs;
    std::vector<size_t> lens;
    for (size_t i = 0; i < n; ++i) {
      const Vector& v = vectors[(7 * n + i) % vectors.size()];
      msgs.push_back(v.msg.data());
      lens.push_back(v.msg.size());
    }
    std::vector<uint8_t> got(32 * n + 1, 0xAA), port(32 * n + 1, 0xAA);
    keccak256_batch(msgs.data(), lens.data(), got.data(), n);
    keccak_detail::keccak256_batch_portable(msgs.data(), lens.data(), port.data(), n);
    CHECK(got.back() == 0xAA);  // wrote exactly 32*n bytes
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(to_hex(&got[32 * i], 32) == vectors[(7 * n + i) % vectors.size()].digest_hex);
      CHECK(to_hex(&port[32 * i], 32) == vectors[(7 * n + i) % vectors.size()].digest_hex);
    }
  }
}

TEST_CASE("keccak256 reads unaligned input and null data with length 0") {
  std::vector<uint8_t> buf(300 + 8);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 13 + 5);
  uint8_t a[32], b[32];
  std::vector<uint8_t> copy(buf.begin() + 3, buf.begin() + 3 + 280);
  keccak256(buf.data() + 3, 280, a);
  keccak256(copy.data(), copy.size(), b);
  CHECK(std::memcmp(a, b, 32) == 0);
  keccak256(nullptr, 0, a);
  CHECK(to_hex(a, 32) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
}

TEST_CASE("keccak256 self-test accepts the dispatched and portable tiers") {
  CHECK(keccak_detail::keccak256_self_test(keccak_detail::keccak256_portable, keccak_detail::keccak256_batch_portable, keccak_detail::keccak256_pull_portable, keccak_detail::keccak256_batch32_portable));
}

TEST_CASE("keccak256_select: names, errors, and each tier agrees with the vectors") {
  const auto vectors = load_vectors();
  // All 200 mixed-length messages in one batch, then the same lengths in reverse, then
  // 64 equal-length messages (several full lane groups), through every selectable tier.
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<std::string> want;
  for (const Vector& v : vectors) { msgs.push_back(v.msg.data()); lens.push_back(v.msg.size()); want.push_back(v.digest_hex); }
  for (size_t i = vectors.size(); i-- > 0;) { msgs.push_back(vectors[i].msg.data()); lens.push_back(vectors[i].msg.size()); want.push_back(vectors[i].digest_hex); }
  const Vector* one_block = nullptr;
  for (const Vector& v : vectors) if (v.msg.size() == 135) one_block = &v;
  REQUIRE(one_block != nullptr);
  for (int i = 0; i < 64; ++i) { msgs.push_back(one_block->msg.data()); lens.push_back(135); want.push_back(one_block->digest_hex); }

  CHECK(keccak256_select("sha3").value_or("").find("unknown keccak256 kernel") != std::string::npos);
  for (const char* name : {"portable", "avx512x8", "auto"}) {
    CAPTURE(name);
    auto err = keccak256_select(name);
    if (err) {
      MESSAGE("keccak256 tier not available here: " << *err);
      CHECK(std::string(name) == "avx512x8");
      CHECK(err->find("self-test") == std::string::npos);  // only a missing CPU feature or build option excuses it
      continue;
    }
    if (std::string(name) != "auto") CHECK(std::string(keccak256_kernel_name()) == name);
    size_t bad_single = 0;
    for (const Vector& v : vectors) {
      uint8_t one[32];
      keccak256(v.msg.data(), v.msg.size(), one);
      bad_single += to_hex(one, 32) != v.digest_hex;
    }
    CHECK(bad_single == 0);
    // Batches of every size from 0 to 40 taken from the mixed list, and the whole list.
    for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(4), size_t(7), size_t(8), size_t(9), size_t(15), size_t(16),
                     size_t(17), size_t(33), size_t(40), msgs.size()}) {
      CAPTURE(n);
      std::vector<uint8_t> out(32 * n);
      keccak256_batch(msgs.data(), lens.data(), out.data(), n);
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i) bad += to_hex(&out[32 * i], 32) != want[i];
      CHECK(bad == 0);
    }
  }
  CHECK_FALSE(keccak256_select("auto").has_value());
}

// Selects Keccak tier `name`; false (with a message) only when this CPU or build lacks it,
// never because its self-test failed.
bool select_tier(const char* name) {
  auto err = keccak256_select(name);
  if (!err) return true;
  MESSAGE("keccak256 tier not available here: " << *err);
  CHECK(err->find("self-test") == std::string::npos);
  return false;
}

TEST_CASE("keccak256_batch_pull: every tier, one reused buffer per lane, mixed lengths") {
  const auto vectors = load_vectors();
  // The producer copies each message into its lane's buffer, over the previous one: a kernel
  // that read a message after asking its lane for the next one, or a lane number out of
  // range, would produce a wrong digest (tests/kernels/keccak256_pull_stress_test.cpp checks
  // the lane promises more strictly).
  struct Feed {
    const std::vector<Vector>* vectors = nullptr;
    size_t count = 0, next = 0, start = 0;
    std::vector<uint8_t> lane_buf[kKeccak256PullLanes];
    std::vector<uint8_t> out;
    size_t bad_lane = 0;
  };
  auto next = [](void* ctx, unsigned lane, Keccak256Message* m) {
    Feed& f = *static_cast<Feed*>(ctx);
    if (f.next == f.count) return false;
    if (lane >= kKeccak256PullLanes) { ++f.bad_lane; lane = 0; }
    const Vector& v = (*f.vectors)[(f.start + 11 * f.next) % f.vectors->size()];
    auto& buf = f.lane_buf[lane];
    buf.assign(v.msg.begin(), v.msg.end());
    *m = {buf.data(), buf.size(), f.out.data() + 32 * f.next};
    ++f.next;
    return true;
  };
  for (const char* name : {"portable", "avx512x8"}) {
    CAPTURE(name);
    if (!select_tier(name)) continue;
    for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(8), size_t(9), size_t(31), size_t(200)}) {
      CAPTURE(n);
      Feed f;
      f.vectors = &vectors;
      f.count = n;
      f.start = 3 * n;
      f.out.assign(32 * n + 1, 0xAA);
      keccak256_batch_pull(next, &f);
      CHECK(f.next == n);
      CHECK(f.bad_lane == 0);
      CHECK(f.out.back() == 0xAA);
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i) bad += to_hex(&f.out[32 * i], 32) != vectors[(f.start + 11 * i) % vectors.size()].digest_hex;
      CHECK(bad == 0);
    }
  }
  CHECK_FALSE(keccak256_select("auto").has_value());
}

TEST_CASE("keccak256_batch32 == keccak256 of each 32-byte message: every tier, sizes 0..20 and 100, unaligned") {
  std::vector<uint8_t> pool(32 * 100 + 7);
  for (size_t i = 0; i < pool.size(); ++i) pool[i] = uint8_t(i * 31 + 7);
  for (const char* name : {"portable", "avx512x8"}) {
    CAPTURE(name);
    if (!select_tier(name)) continue;
    std::vector<size_t> sizes;
    for (size_t n = 0; n <= 20; ++n) sizes.push_back(n);
    sizes.push_back(100);
    for (size_t n : sizes) {
      CAPTURE(n);
      std::vector<const uint8_t*> msgs;
      for (size_t i = 0; i < n; ++i) msgs.push_back(pool.data() + 3 + 32 * ((i * 37) % 100));  // out of order, unaligned
      std::vector<uint8_t> out(32 * n + 1, 0xAA);
      keccak256_batch32(msgs.data(), out.data(), n);
      CHECK(out.back() == 0xAA);
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i) {
        uint8_t want[32];
        keccak_detail::keccak256_portable(msgs[i], 32, want);
        bad += std::memcmp(want, &out[32 * i], 32) != 0;
      }
      CHECK(bad == 0);
    }
  }
  CHECK_FALSE(keccak256_select("auto").has_value());
}
