// big_alloc: huge-page-advised aligned allocation (see big_alloc.h).
#include "engine/bintrie/big_alloc.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace st::bintrie {
namespace {
constexpr size_t kHugeThreshold = size_t(4) << 20;
constexpr size_t kHugeAlign = size_t(2) << 20;
size_t big_align(size_t bytes) { return bytes >= kHugeThreshold ? kHugeAlign : 64; }
}  // namespace

void* big_alloc(size_t bytes) {
  const size_t align = big_align(bytes);
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = ::operator new(rounded, std::align_val_t(align));
#if defined(MADV_HUGEPAGE)
  if (align == kHugeAlign) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void big_free(void* p, size_t bytes) { ::operator delete(p, std::align_val_t(big_align(bytes))); }

}  // namespace st::bintrie
