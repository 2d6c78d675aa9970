// manifest_test: manifest encoding round trip, damage detection, one-line parameter
// mismatch errors naming both values, and the file slot's atomic replace: stopping publish
// after each step (as a crash there would) leaves the old or the new manifest, never neither.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "io/manifest.h"
#include "tests/io/io_test_util.h"

using namespace st::io;
using st::io::test::TempDir;

namespace {

Manifest sample(uint64_t seq) {
  Manifest m;
  m.params.tree_kind = TreeKind::bintrie;
  m.params.hash_kind = HashKind::sha256;
  m.params.group_depth = 8;
  m.params.page_size = 16384;
  m.commit_seq = seq;
  for (int i = 0; i < 32; ++i) m.root_hash[i] = uint8_t(i * 7 + seq);
  m.root_page = 1000 + seq;
  m.page_high_water = 5000;
  m.free_list_page = 77;
  m.free_list_pages = 2;
  m.node_count = 123456789;
  m.pages_used = 4321;
  m.key_count = 10000000;
  m.payload_bytes = 987654321;
  return m;
}

bool same(const Manifest& a, const Manifest& b) {
  return encode_manifest(a) == encode_manifest(b);
}

}  // namespace

TEST_CASE("manifest: encode/decode round trip and damage") {
  const Manifest m = sample(3);
  const auto bytes = encode_manifest(m);
  Manifest back;
  REQUIRE(decode_manifest(bytes.data(), bytes.size(), &back).ok());
  CHECK(same(m, back));
  CHECK(back.params.group_depth == 8);
  CHECK(back.root_page == 1003);
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= 0x40;
    CHECK_MESSAGE(decode_manifest(bad.data(), bad.size(), &back).code() == Errc::corrupt_page, "byte " << i);
  }
  CHECK(decode_manifest(bytes.data(), bytes.size() - 1, &back).code() == Errc::corrupt_page);
  // A newer format version, and version 1 (8-bit record child counts): refused, naming both.
  Manifest v3 = m;
  v3.params.format_version = 3;
  const auto b3 = encode_manifest(v3);
  Status s = decode_manifest(b3.data(), b3.size(), &back);
  CHECK(s.code() == Errc::mismatch);
  CHECK(s.message() == "format version mismatch: database built with 3, opened with 2 (this build)");
  Manifest v1 = m;
  v1.params.format_version = 1;
  const auto b1 = encode_manifest(v1);
  s = decode_manifest(b1.data(), b1.size(), &back);
  CHECK(s.code() == Errc::mismatch);
  CHECK(s.message() ==
        "format version mismatch: database built with 1, opened with 2 (this build); rebuild it with statetree build --force");
}

TEST_CASE("manifest: opening with other parameters is a one-line error naming both values") {
  const StoreParams built = sample(0).params;
  CHECK(check_params(built, built).ok());
  StoreParams w = built;
  w.group_depth = 4;
  CHECK(check_params(built, w).message() == "group depth mismatch: database built with 8, opened with 4");
  w = built;
  w.hash_kind = HashKind::blake3;
  CHECK(check_params(built, w).message() == "hash mismatch: database built with sha256, opened with blake3");
  w = built;
  w.tree_kind = TreeKind::mpt;
  CHECK(check_params(built, w).message() == "tree mismatch: database built with bintrie, opened with mpt");
  w = built;
  w.page_size = 4096;
  CHECK(check_params(built, w).message() == "page size mismatch: database built with 16384, opened with 4096");
  w = built;
  w.format_version = 7;
  CHECK(check_params(built, w).code() == Errc::mismatch);
  CHECK(check_params(built, w).message().find('\n') == std::string::npos);
}

TEST_CASE("manifest file slot: atomic replace survives a stop after every step") {
  TempDir dir;
  FileManifestSlot slot(dir.path());
  Manifest got;
  Status s = slot.load(&got);
  CHECK(s.code() == Errc::not_found);
  REQUIRE(slot.publish(sample(1)).ok());
  REQUIRE(slot.load(&got).ok());
  CHECK(same(got, sample(1)));

  for (int step = 1; step <= 3; ++step) {
    CAPTURE(step);
    slot.stop_after_step = step;
    CHECK(slot.publish(sample(10 + step)).code() == Errc::injected_fault);
    slot.stop_after_step.reset();
    REQUIRE(slot.load(&got).ok());
    // Before the rename the old manifest is current; after it, the new one is.
    if (step < 3) CHECK(got.commit_seq == 1);
    else CHECK(got.commit_seq == 13);
  }
  REQUIRE(slot.publish(sample(20)).ok());
  REQUIRE(slot.load(&got).ok());
  CHECK(got.commit_seq == 20);
  CHECK(!std::filesystem::exists(dir.file("MANIFEST.tmp")));

  // A truncated or damaged MANIFEST is named as such, never half-read.
  ::truncate(slot.path().c_str(), 100);
  s = slot.load(&got);
  CHECK(s.code() == Errc::corrupt_page);
  CHECK(s.message().find("MANIFEST") != std::string::npos);
}

TEST_CASE("manifest memory slot: a failed publish keeps the previous manifest") {
  MemoryManifestSlot slot;
  Manifest got;
  CHECK(slot.load(&got).code() == Errc::not_found);
  REQUIRE(slot.publish(sample(1)).ok());
  slot.fail_next_publish = true;
  CHECK(!slot.publish(sample(2)).ok());
  REQUIRE(slot.load(&got).ok());
  CHECK(got.commit_seq == 1);
  REQUIRE(slot.publish(sample(3)).ok());
  REQUIRE(slot.load(&got).ok());
  CHECK(got.commit_seq == 3);
}
