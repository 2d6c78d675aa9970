// page_format: sealing and checking the 16-byte page trailer (layout in page_format.h).
#include "io/page_format.h"

#include <cstring>

#include "io/xxh64.h"

namespace st::io {
namespace {

void store_u64_le(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void store_u32_le(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint64_t load_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t load_u32_le(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t page_checksum(const unsigned char* page, uint32_t page_size) {
  return uint32_t(xxh64(page, page_size - 4, 0));
}

}  // namespace

const char* page_check_name(PageCheck c) {
  switch (c) {
    case PageCheck::ok: return "ok";
    case PageCheck::never_written: return "never written (all-zero trailer)";
    case PageCheck::bad_magic: return "bad trailer magic";
    case PageCheck::wrong_page_id: return "trailer names another page id";
    case PageCheck::bad_checksum: return "checksum mismatch";
  }
  return "unknown";
}

void seal_page(unsigned char* page, uint32_t page_size, uint64_t page_id) {
  unsigned char* t = page + page_size - kPageTrailerBytes;
  store_u64_le(t, page_id);
  store_u32_le(t + 8, kPageMagic);
  store_u32_le(t + 12, page_checksum(page, page_size));
}

PageCheck check_page(const unsigned char* page, uint32_t page_size, uint64_t page_id) {
  const unsigned char* t = page + page_size - kPageTrailerBytes;
  const uint32_t magic = load_u32_le(t + 8);
  if (magic != kPageMagic) {
    static const unsigned char kZero[kPageTrailerBytes] = {};
    return std::memcmp(t, kZero, kPageTrailerBytes) == 0 ? PageCheck::never_written
                                                          : PageCheck::bad_magic;
  }
  if (page_checksum(page, page_size) != load_u32_le(t + 12)) return PageCheck::bad_checksum;
  if (load_u64_le(t) != page_id) return PageCheck::wrong_page_id;
  return PageCheck::ok;
}

}  // namespace st::io
