// page_format: sealing and checking the 16-byte page trailer (layout in page_format.h).
#include "io/page_format.h"

#include <cstring>

#include "io/xxh64.h"
#include "kernels/support/byte_order.h"
#include "kernels/support/check.h"

namespace st::io {
namespace {

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
  ST_CHECK(page_size > kPageTrailerBytes, "a page smaller than its trailer");
  unsigned char* t = page + page_size - kPageTrailerBytes;
  put_u64(t, page_id);
  put_u32(t + 8, kPageMagic);
  put_u32(t + 12, page_checksum(page, page_size));
}

PageCheck check_page(const unsigned char* page, uint32_t page_size, uint64_t page_id) {
  ST_CHECK(page_size > kPageTrailerBytes, "a page smaller than its trailer");
  const unsigned char* t = page + page_size - kPageTrailerBytes;
  const uint32_t magic = get_u32(t + 8);
  if (magic != kPageMagic) {
    static const unsigned char kZero[kPageTrailerBytes] = {};
    return std::memcmp(t, kZero, kPageTrailerBytes) == 0 ? PageCheck::never_written
                                                          : PageCheck::bad_magic;
  }
  if (page_checksum(page, page_size) != get_u32(t + 12)) return PageCheck::bad_checksum;
  if (get_u64(t) != page_id) return PageCheck::wrong_page_id;
  return PageCheck::ok;
}

}  // namespace st::io
