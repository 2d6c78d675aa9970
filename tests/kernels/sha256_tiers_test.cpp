// sha256_tiers_test: every tier available on this machine, every entry point, against the
// portable tier AND OpenSSL (EVP one-shot): NIST vectors incl. the million-'a' message,
// random messages of length 0..1000 at unaligned offsets, batch sizes 0..40 (partial lane
// groups), in == out aliasing where the contract allows it, no writes past the output, and
// sliced round trips (leaves -> parents -> ... checked level by level). Tiers not available
// on this CPU/build are skipped with a MESSAGE.
#include <doctest/doctest.h>
#include <openssl/evp.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/sha256.h"

using namespace st::kernels;

namespace {

constexpr Sha256Tier kAllTiers[] = {Sha256Tier::portable, Sha256Tier::shani, Sha256Tier::avx2, Sha256Tier::avx512};

std::vector<uint8_t> openssl_sha256(const uint8_t* p, size_t n) {
  std::vector<uint8_t> d(32);
  unsigned int len = 0;
  REQUIRE(EVP_Digest(p, n, d.data(), &len, EVP_sha256(), nullptr) == 1);
  REQUIRE(len == 32);
  return d;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) { s += digits[p[i] >> 4]; s += digits[p[i] & 15]; }
  return s;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

// Runs body(kernel) for every available tier, reporting skipped ones.
template <class F>
void for_each_tier(F&& body) {
  for (Sha256Tier t : kAllTiers) {
    if (!sha256_tier_available(t)) { MESSAGE("tier not available here, skipped: " << std::string(sha256_tier_name(t))); continue; }
    const Sha256Kernel& k = sha256_kernel(t);
    CAPTURE(std::string(k.name));
    body(k);
  }
}

// Sliced block <-> digest j (big-endian words, word w at block[w * 16 + j]).
void digest_of_slice(const uint32_t* block, size_t j, uint8_t* d) {
  for (size_t w = 0; w < 8; ++w) {
    const uint32_t v = block[w * kSlicedLanes + j];
    d[4 * w] = uint8_t(v >> 24); d[4 * w + 1] = uint8_t(v >> 16); d[4 * w + 2] = uint8_t(v >> 8); d[4 * w + 3] = uint8_t(v);
  }
}

// 64-byte aligned uint32 storage with a canary tail.
struct SlicedBuf {
  std::vector<uint32_t> raw;
  uint32_t* p;
  size_t words;
  explicit SlicedBuf(size_t blocks) : raw(blocks * kSlicedBlockWords + 16 + 32, 0xA5A5A5A5u), words(blocks * kSlicedBlockWords) {
    uintptr_t a = reinterpret_cast<uintptr_t>(raw.data());
    p = reinterpret_cast<uint32_t*>((a + 63) & ~uintptr_t(63));
    for (size_t i = 0; i < 16; ++i) p[words + i] = 0xA5A5A5A5u;
  }
  bool canary_ok() const {
    for (size_t i = 0; i < 16; ++i) if (p[words + i] != 0xA5A5A5A5u) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("sha256 NIST vectors through every tier and every byte entry point") {
  struct Vec { std::string msg; const char* hex; };
  std::vector<Vec> vecs = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for_each_tier([&](const Sha256Kernel& k) {
    std::vector<const uint8_t*> msgs;
    std::vector<size_t> lens;
    for (const Vec& v : vecs) {
      CAPTURE(v.msg.size());
      uint8_t d[32];
      k.hash(reinterpret_cast<const uint8_t*>(v.msg.data()), v.msg.size(), d);
      CHECK(hex(d, 32) == v.hex);
      msgs.push_back(reinterpret_cast<const uint8_t*>(v.msg.data()));
      lens.push_back(v.msg.size());
    }
    // The same vectors as one batch of mixed lengths, then repeated to fill lane groups.
    for (size_t reps : {size_t(1), size_t(4)}) {
      std::vector<const uint8_t*> m;
      std::vector<size_t> l;
      for (size_t r = 0; r < reps; ++r) { m.insert(m.end(), msgs.begin(), msgs.end()); l.insert(l.end(), lens.begin(), lens.end()); }
      std::vector<uint8_t> out(32 * m.size());
      k.hash_batch(m.data(), l.data(), out.data(), m.size());
      for (size_t i = 0; i < m.size(); ++i) { CAPTURE(i); CHECK(hex(out.data() + 32 * i, 32) == vecs[i % vecs.size()].hex); }
    }
  });
}

TEST_CASE("sha256 hash: random messages 0..1000 bytes at unaligned offsets vs OpenSSL and portable") {
  const auto data = random_bytes(1100, 1);
  const Sha256Kernel& ref = sha256_kernel(Sha256Tier::portable);
  std::mt19937 rng(2);
  for_each_tier([&](const Sha256Kernel& k) {
    for (size_t len = 0; len <= 1000; len += (len < 160 ? 1 : 1 + rng() % 23)) {
      const size_t off = len % 61;
      CAPTURE(len);
      uint8_t got[32], want[32];
      k.hash(data.data() + off, len, got);
      ref.hash(data.data() + off, len, want);
      CHECK(std::memcmp(got, want, 32) == 0);
      CHECK(hex(got, 32) == hex(openssl_sha256(data.data() + off, len).data(), 32));
    }
  });
}

TEST_CASE("sha256 hash32_batch / hash64_batch: n = 0..40, unaligned, aliasing, no overrun") {
  const auto data = random_bytes(64 * 41 + 8, 3);
  for_each_tier([&](const Sha256Kernel& k) {
    for (size_t n = 0; n <= 40; ++n) {
      CAPTURE(n);
      const size_t off = 1 + n % 7;
      // hash32_batch
      std::vector<uint8_t> out(32 * n + 32, 0xEE);
      k.hash32_batch(data.data() + off, out.data(), n);
      bool ok = true;
      for (size_t i = 0; i < n; ++i) ok &= std::memcmp(out.data() + 32 * i, openssl_sha256(data.data() + off + 32 * i, 32).data(), 32) == 0;
      CHECK(ok);
      bool canary = true;
      for (size_t i = 32 * n; i < out.size(); ++i) canary &= out[i] == 0xEE;
      CHECK(canary);
      // in == out
      std::vector<uint8_t> alias(data.begin() + off, data.begin() + off + 32 * n);
      k.hash32_batch(alias.data(), alias.data(), n);
      CHECK((n == 0 || std::memcmp(alias.data(), out.data(), 32 * n) == 0));

      // hash64_batch
      std::fill(out.begin(), out.end(), 0xEE);
      k.hash64_batch(data.data() + off, out.data(), n);
      ok = true;
      for (size_t i = 0; i < n; ++i) ok &= std::memcmp(out.data() + 32 * i, openssl_sha256(data.data() + off + 64 * i, 64).data(), 32) == 0;
      CHECK(ok);
      canary = true;
      for (size_t i = 32 * n; i < out.size(); ++i) canary &= out[i] == 0xEE;
      CHECK(canary);
      std::vector<uint8_t> alias64(data.begin() + off, data.begin() + off + 64 * n);
      k.hash64_batch(alias64.data(), alias64.data(), n);
      CHECK((n == 0 || std::memcmp(alias64.data(), out.data(), 32 * n) == 0));
    }
  });
}

TEST_CASE("sha256 hash_batch: n = 0..40 messages of random lengths 0..1000 at unaligned offsets") {
  const auto data = random_bytes(2048, 4);
  const Sha256Kernel& ref = sha256_kernel(Sha256Tier::portable);
  for_each_tier([&](const Sha256Kernel& k) {
    std::mt19937 rng(5);
    for (size_t n = 0; n <= 40; ++n) {
      CAPTURE(n);
      std::vector<const uint8_t*> msgs(n);
      std::vector<size_t> lens(n);
      for (size_t i = 0; i < n; ++i) {
        // Mostly mixed lengths; every fifth batch all equal (lanes finish together).
        lens[i] = n % 5 == 0 ? 55 + n : rng() % 1001;
        msgs[i] = data.data() + 1 + rng() % 1000;
      }
      std::vector<uint8_t> out(32 * n + 32, 0xEE), want(32 * n + 32, 0xEE);
      k.hash_batch(msgs.data(), lens.data(), out.data(), n);
      ref.hash_batch(msgs.data(), lens.data(), want.data(), n);
      CHECK(out == want);
      bool ok = true;
      for (size_t i = 0; i < n; ++i) ok &= std::memcmp(out.data() + 32 * i, openssl_sha256(msgs[i], lens[i]).data(), 32) == 0;
      CHECK(ok);
    }
  });
}

TEST_CASE("sha256 sliced entry points: layout, parents pairing, digests aliasing, no overrun") {
  const auto leaves = random_bytes(16 * 32 * 4 + 3, 6);
  for_each_tier([&](const Sha256Kernel& k) {
    for (size_t nb = 0; nb <= 3; ++nb) {
      CAPTURE(nb);
      // leaves32_sliced at an unaligned input offset
      SlicedBuf out(nb);
      k.leaves32_sliced(leaves.data() + 3, out.p, nb);
      bool ok = true;
      for (size_t i = 0; i < 16 * nb; ++i) {
        uint8_t d[32];
        digest_of_slice(out.p + (i / 16) * kSlicedBlockWords, i % 16, d);
        ok &= std::memcmp(d, openssl_sha256(leaves.data() + 3 + 32 * i, 32).data(), 32) == 0;
      }
      CHECK(ok);
      CHECK(out.canary_ok());

      // parents_sliced over random child blocks: parent p = H(child 2p || child 2p+1)
      SlicedBuf children(2 * nb), parents(nb);
      std::mt19937 rng(uint32_t(7 + nb));
      for (size_t i = 0; i < children.words; ++i) children.p[i] = rng();
      k.parents_sliced(children.p, parents.p, nb);
      ok = true;
      for (size_t p = 0; p < 16 * nb; ++p) {
        uint8_t pair[64], d[32];
        digest_of_slice(children.p + ((2 * p) / 16) * kSlicedBlockWords, (2 * p) % 16, pair);
        digest_of_slice(children.p + ((2 * p + 1) / 16) * kSlicedBlockWords, (2 * p + 1) % 16, pair + 32);
        digest_of_slice(parents.p + (p / 16) * kSlicedBlockWords, p % 16, d);
        ok &= std::memcmp(d, openssl_sha256(pair, 64).data(), 32) == 0;
      }
      CHECK(ok);
      CHECK(parents.canary_ok());

      // digests_sliced, out of place then in place
      SlicedBuf dig(nb);
      k.digests_sliced(children.p, dig.p, nb);
      ok = true;
      for (size_t i = 0; i < 16 * nb; ++i) {
        uint8_t in[32], d[32];
        digest_of_slice(children.p + (i / 16) * kSlicedBlockWords, i % 16, in);
        digest_of_slice(dig.p + (i / 16) * kSlicedBlockWords, i % 16, d);
        ok &= std::memcmp(d, openssl_sha256(in, 32).data(), 32) == 0;
      }
      CHECK(ok);
      CHECK(dig.canary_ok());
      k.digests_sliced(children.p, children.p, nb);
      CHECK((nb == 0 || std::memcmp(children.p, dig.p, nb * kSlicedBlockWords * 4) == 0));
    }
  });
}

TEST_CASE("sha256 sliced round trip: 256 leaves -> 16 -> 8 -> 4 -> 2 -> 1 block, level by level vs OpenSSL") {
  const auto leaves = random_bytes(256 * 32, 8);
  // OpenSSL levels
  std::vector<std::vector<uint8_t>> levels(1);
  for (size_t i = 0; i < 256; ++i) {
    const auto d = openssl_sha256(leaves.data() + 32 * i, 32);
    levels[0].insert(levels[0].end(), d.begin(), d.end());
  }
  while (levels.back().size() > 16 * 32) {
    const auto& lv = levels.back();
    std::vector<uint8_t> up;
    for (size_t i = 0; i + 64 <= lv.size(); i += 64) {
      const auto d = openssl_sha256(lv.data() + i, 64);
      up.insert(up.end(), d.begin(), d.end());
    }
    levels.push_back(std::move(up));
  }
  for_each_tier([&](const Sha256Kernel& k) {
    SlicedBuf cur(16);
    k.leaves32_sliced(leaves.data(), cur.p, 16);
    size_t blocks = 16;
    for (size_t level = 0;; ++level) {
      CAPTURE(level);
      bool ok = true;
      for (size_t i = 0; i < 16 * blocks; ++i) {
        uint8_t d[32];
        digest_of_slice(cur.p + (i / 16) * kSlicedBlockWords, i % 16, d);
        ok &= std::memcmp(d, levels[level].data() + 32 * i, 32) == 0;
      }
      CHECK(ok);
      if (blocks == 1) break;
      SlicedBuf up(blocks / 2);
      k.parents_sliced(cur.p, up.p, blocks / 2);
      CHECK(up.canary_ok());
      std::swap(cur, up);
      blocks /= 2;
    }
  });
}

TEST_CASE("sha256_select forces each available tier and reports it as active") {
  for (Sha256Tier t : kAllTiers) {
    const std::string name = sha256_tier_name(t);
    if (!sha256_tier_available(t)) {
      MESSAGE("tier not available here, skipped: " << name);
      CHECK(sha256_select(name).has_value());
      continue;
    }
    CHECK_FALSE(sha256_select(name).has_value());
    CHECK(std::string(sha256_active().name) == name);
  }
  CHECK_FALSE(sha256_select("auto").has_value());
}
