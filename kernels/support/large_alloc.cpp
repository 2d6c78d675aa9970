// large_alloc: huge-page-advised aligned allocation (see large_alloc.h).
#include "kernels/support/large_alloc.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <new>

namespace st {
namespace {

size_t rounded_bytes(size_t bytes, size_t align) { return (std::max<size_t>(bytes, 1) + align - 1) / align * align; }

// huge_pages = false advises against them: the process allocator may itself ask for huge
// pages for its segments (statetree's mimalloc policy), and this memory measured slower on them.
void advise_block(void* p, size_t rounded, size_t align, bool huge_pages) {
#if defined(MADV_HUGEPAGE)
  if (p && align == kHugePageBytes) ::madvise(p, rounded, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
}

}  // namespace

void* large_alloc(size_t bytes, bool huge_pages) {
  const size_t align = large_alloc_alignment(bytes), rounded = rounded_bytes(bytes, align);
  void* p = ::operator new(rounded, std::align_val_t(align));
  advise_block(p, rounded, align, huge_pages);
  return p;
}

void* large_alloc_nothrow(size_t bytes, bool huge_pages) {
  const size_t align = large_alloc_alignment(bytes), rounded = rounded_bytes(bytes, align);
  void* p = ::operator new(rounded, std::align_val_t(align), std::nothrow);
  advise_block(p, rounded, align, huge_pages);
  return p;
}

void large_free(void* p, size_t bytes) { ::operator delete(p, std::align_val_t(large_alloc_alignment(bytes))); }

void advise_huge_pages(const void* p, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  const uintptr_t begin = (uintptr_t(p) + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  const uintptr_t end = (uintptr_t(p) + bytes) & ~uintptr_t(kHugePageBytes - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace st
