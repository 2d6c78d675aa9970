// bintrie_blob_checks_test: BlobHashChecks (engine/persist/bintrie/blob_checks.h) hashes
// queued group and stem blobs in batches to exactly what reconstruct_group(...)[0] and
// stem_blob_hash compute one blob at a time: random group shapes at every group depth 1..8
// (entries ending early, lone entries, zero entry hashes), random stems from 1 to 256
// values, both hashes, mixed in one run; a changed expectation is reported at its position
// in add order, and the queue is empty after every run.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/persist/bintrie/blob_checks.h"
#include "tests/io/io_test_util.h"

namespace {

using namespace st;
using bintrie::Hash32;

uint64_t next(uint64_t& rng) { return io::test::splitmix64(rng); }

Hash32 random_hash(uint64_t& rng) {
  Hash32 h;
  for (int i = 0; i < 4; ++i) {
    const uint64_t v = next(rng);
    std::memcpy(h.data() + 8 * i, &v, 8);
  }
  if (next(rng) % 16 == 0) h = Hash32{};  // a zero hash now and then: the zero rule
  return h;
}

// A random g-level subtree shape below relative depth r, relative path p: empty, an entry
// (ending early only when it has a sibling, as the strict decoder requires), or two halves.
void random_group_entries(uint64_t& rng, unsigned g, unsigned r, unsigned p, bool sibling_present,
                          std::vector<bintrie::GroupEntry>* out) {
  if (r == g) {
    out->push_back({uint16_t(p), uint8_t(r), random_hash(rng)});
    return;
  }
  const unsigned pick = unsigned(next(rng) % 4);
  if (r > 0 && pick == 0 && sibling_present) {  // ends early
    out->push_back({uint16_t(p << (g - r)), uint8_t(r), random_hash(rng)});
    return;
  }
  // Split: left, right or both non-empty.
  const unsigned sides = 1 + unsigned(next(rng) % 3);  // 1 left, 2 right, 3 both
  if (sides & 1) random_group_entries(rng, g, r + 1, p << 1, sides == 3, out);
  if (sides & 2) random_group_entries(rng, g, r + 1, p << 1 | 1, sides == 3, out);
}

struct Blob {
  std::vector<uint8_t> bytes;
  Hash32 hash;  // one at a time: reconstruct_group[0] / stem_blob_hash
  bool group;
};

Blob random_group(uint64_t& rng, const bintrie::Hasher& h, unsigned g) {
  for (;;) {
    bintrie::GroupBlob b;
    b.g = uint8_t(g);
    random_group_entries(rng, g, 0, 0, false, &b.entries);
    Blob out;
    bintrie::encode_group_blob(b, &out.bytes);
    bintrie::GroupBlobView v;
    if (!bintrie::check_group_blob(out.bytes, g, &v).empty()) continue;  // a shape the decoder refuses
    out.hash = bintrie::reconstruct_group(h, b)[0];
    out.group = true;
    return out;
  }
}

Blob random_stem(uint64_t& rng, const bintrie::Hasher& h) {
  bintrie::StemBlob b;
  for (auto& x : b.stem) x = uint8_t(next(rng));
  const unsigned mode = unsigned(next(rng) % 4);
  for (unsigned sub = 0; sub < 256; ++sub) {
    const bool present = mode == 0 ? true : mode == 1 ? sub < 2 : (next(rng) % (mode == 2 ? 3 : 40)) == 0;
    if (!present) continue;
    b.bitmap[sub / 8] |= uint8_t(0x80 >> (sub % 8));
    Hash32 v = random_hash(rng);
    b.values.push_back(v);
  }
  if (b.values.empty()) {
    b.bitmap[0] |= 0x80;
    b.values.push_back(random_hash(rng));
  }
  Blob out;
  bintrie::encode_stem_blob(b, &out.bytes);
  out.hash = bintrie::stem_blob_hash(h, b);
  out.group = false;
  return out;
}

void add(persist::BlobHashChecks& c, const Blob& b, unsigned g, const Hash32& expect, uint64_t tag) {
  if (b.group) {
    bintrie::GroupBlobView v;
    REQUIRE(bintrie::check_group_blob(b.bytes, g, &v).empty());
    c.add_group(v, expect.data(), tag);
  } else {
    bintrie::StemBlobView v;
    REQUIRE(bintrie::check_stem_blob(b.bytes, &v).empty());
    c.add_stem(v, expect.data(), tag);
  }
}

TEST_CASE("BlobHashChecks: batched group and stem hashes equal reconstruct_group and stem_blob_hash") {
  for (auto kind : {bintrie::HashKind::sha256, bintrie::HashKind::blake3}) {
    const bintrie::Hasher h = bintrie::make_hasher(kind);
    for (unsigned g = 1; g <= 8; ++g) {
      CAPTURE(g);
      uint64_t rng = 1000 * g + unsigned(kind);
      std::vector<Blob> blobs;
      for (int i = 0; i < 60; ++i) blobs.push_back(next(rng) % 3 ? random_group(rng, h, g) : random_stem(rng, h));
      persist::BlobHashChecks checks(h, g);
      for (size_t i = 0; i < blobs.size(); ++i) add(checks, blobs[i], g, blobs[i].hash, 100 + i);
      CHECK(checks.pending() == blobs.size());
      CHECK(checks.run() == -1);
      CHECK(checks.pending() == 0);
      CHECK(checks.hashes() > 0);
      // One expectation off by a bit (a group at i = 7 or later, a stem at j): the first
      // mismatch in add order is reported, with its tag.
      for (size_t bad : {size_t(0), size_t(7), blobs.size() - 1}) {
        CAPTURE(bad);
        for (size_t i = 0; i < blobs.size(); ++i) {
          Hash32 e = blobs[i].hash;
          if (i == bad || i == bad + 5) e[31] ^= 1;
          add(checks, blobs[i], g, e, 100 + i);
        }
        const long at = checks.run();
        CHECK(at == long(bad));
        CHECK(checks.tag(size_t(at)) == 100 + bad);
        CHECK(checks.is_group(size_t(at)) == blobs[bad].group);
      }
      // Alone (no batch partner) too.
      for (size_t i = 0; i < 4; ++i) {
        add(checks, blobs[i], g, blobs[i].hash, i);
        CHECK(checks.run() == -1);
      }
    }
  }
}

TEST_CASE("BlobHashChecks: clear drops queued checks") {
  const bintrie::Hasher h = bintrie::make_hasher(bintrie::HashKind::sha256);
  uint64_t rng = 9;
  const Blob s = random_stem(rng, h);
  persist::BlobHashChecks checks(h, 4);
  Hash32 wrong = s.hash;
  wrong[0] ^= 0x80;
  add(checks, s, 4, wrong, 1);
  checks.clear();
  CHECK(checks.pending() == 0);
  CHECK(checks.run() == -1);
}

}  // namespace
