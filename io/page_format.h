// page_format: the on-disk layout of one store page and its integrity check. Every page a
// node store writes carries a 16-byte trailer; a read is returned as data only if the
// trailer verifies, otherwise it is a corrupt_page error naming the page id.
//
//   0                                          P-16      P-8     P-4     P   (P = page size)
//   +------------------------------------------+---------+-------+-------+
//   | payload: P - 16 bytes (caller's bytes)   | page_id | magic | check |
//   +------------------------------------------+---------+-------+-------+
//                                                u64 LE    u32 LE  u32 LE
//   magic = 0x31505453 ("STP1" in little-endian bytes)
//   check = low 32 bits of XXH64(seed 0) over bytes [0, P-4): payload, page id and magic.
//           (XXH64, not CRC-32C: every read is verified on the hot path, and portable
//           XXH64 is ~5x faster than portable CRC-32C here; see docs/io.md.)
//
// The page id inside the trailer catches misdirected writes (a good page at the wrong
// offset); the magic lets a never-written (all-zero) page be named as such.
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::io {

inline constexpr uint32_t kPageTrailerBytes = 16;
inline constexpr uint32_t kPageMagic = 0x31505453u;  // "STP1"
inline constexpr uint32_t kPageSize4K = 4096;
inline constexpr uint32_t kPageSize16K = 16384;

inline bool valid_page_size(uint32_t page_size) {
  return page_size == kPageSize4K || page_size == kPageSize16K;
}
inline uint32_t page_payload_bytes(uint32_t page_size) { return page_size - kPageTrailerBytes; }

enum class PageCheck : uint8_t {
  ok = 0,
  never_written,  // all-zero trailer: the page was allocated but never written
  bad_magic,      // trailer magic wrong: not a statetree page, or torn
  wrong_page_id,  // a valid page of another id: a misdirected write or read
  bad_checksum,   // checksum mismatch: bit rot, torn write, or tampering
};

const char* page_check_name(PageCheck c);

// Writes the trailer of `page` (page_size bytes; the payload must already be in place).
// Layout and checksum are this page format's version 1 (the magic).
void seal_page(unsigned char* page, uint32_t page_size, uint64_t page_id);

// Verifies the trailer of `page` against the expected page id.
PageCheck check_page(const unsigned char* page, uint32_t page_size, uint64_t page_id);

}  // namespace st::io
