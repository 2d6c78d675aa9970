// crc32c_page_test: CRC-32C known answers (RFC 3720 B.4 and the "check" value), XXH64 against
// vectors generated with libxxhash (tests/data/io/xxh64_vectors.txt), and the page trailer: a sealed page verifies; any flipped byte, a wrong page id or an all-zero page is
// detected and classified.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/crc32c.h"
#include "io/page_format.h"
#include "io/xxh64.h"
#include "tests/io/io_test_util.h"
#include "test_paths.h"

using namespace st::io;

TEST_CASE("crc32c known answers") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  unsigned char zeros[32] = {}, ones[32], inc[32], dec[32];
  std::memset(ones, 0xff, 32);
  for (int i = 0; i < 32; ++i) { inc[i] = uint8_t(i); dec[i] = uint8_t(31 - i); }
  CHECK(crc32c(zeros, 32) == 0x8A9136AAu);
  CHECK(crc32c(ones, 32) == 0x62A8AB43u);
  CHECK(crc32c(inc, 32) == 0x46DD794Eu);
  CHECK(crc32c(dec, 32) == 0x113FDB5Cu);
  CHECK(crc32c(nullptr, 0) == 0u);
}

TEST_CASE("crc32c chains across every split point") {
  std::vector<unsigned char> data(301);
  st::io::test::fill_payload(data.data(), data.size(), 3, 4);
  const uint32_t whole = crc32c(data.data(), data.size());
  for (size_t split = 0; split <= data.size(); ++split)
    REQUIRE(crc32c(data.data() + split, data.size() - split, crc32c(data.data(), split)) == whole);
}

TEST_CASE("page trailer: seal, verify, detect and classify damage") {
  for (uint32_t ps : {kPageSize4K, kPageSize16K}) {
    CAPTURE(ps);
    std::vector<unsigned char> page(ps, 0);
    CHECK(check_page(page.data(), ps, 9) == PageCheck::never_written);
    st::io::test::fill_payload(page.data(), page_payload_bytes(ps), 9, 1);
    seal_page(page.data(), ps, 9);
    CHECK(check_page(page.data(), ps, 9) == PageCheck::ok);
    CHECK(check_page(page.data(), ps, 10) == PageCheck::wrong_page_id);
    // Every single-byte flip is caught; flips in the magic are named as such.
    for (uint32_t off = 0; off < ps; off += (off < ps - 32 ? 61 : 1)) {
      page[off] ^= 0x20;
      const PageCheck c = check_page(page.data(), ps, 9);
      const bool in_magic = off >= ps - 8 && off < ps - 4;
      CHECK_MESSAGE(c == (in_magic ? PageCheck::bad_magic : PageCheck::bad_checksum), "offset " << off);
      page[off] ^= 0x20;
    }
    CHECK(check_page(page.data(), ps, 9) == PageCheck::ok);
  }
}

TEST_CASE("xxh64 matches libxxhash on committed vectors (every tail length path)") {
  std::ifstream in(std::string(STATETREE_TEST_DATA_DIR) + "/io/xxh64_vectors.txt");
  REQUIRE(in.good());
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    size_t n;
    std::string seed_hex, hash_hex;
    ss >> n >> seed_hex >> hash_hex;
    std::vector<unsigned char> msg(n);
    for (size_t i = 0; i < n; ++i) msg[i] = uint8_t((i * 31 + 7) % 256);
    const uint64_t seed = std::stoull(seed_hex, nullptr, 16), want = std::stoull(hash_hex, nullptr, 16);
    CAPTURE(n);
    CAPTURE(seed_hex);
    CHECK(xxh64(msg.data(), n, seed) == want);
    ++checked;
  }
  CHECK(checked == 72);
}
