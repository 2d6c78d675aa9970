// huge_pages: transparent huge pages for the loaders' large buffers (a 1M-line --kv file
// decodes into ~70 MB; faulting that in 4 KiB pages costs as much as parsing it).
//
// Invariant: advice only (MADV_HUGEPAGE on the 2 MiB-aligned interior of a buffer); the
// buffer's contents and ownership are unchanged, and where the kernel ignores the advice
// nothing but speed differs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <sys/mman.h>

namespace st::workloads {

inline void advise_huge_pages(const void* p, size_t bytes) {
  constexpr uintptr_t k2MiB = uintptr_t(2) << 20;
  const uintptr_t begin = (uintptr_t(p) + k2MiB - 1) & ~(k2MiB - 1);
  const uintptr_t end = (uintptr_t(p) + bytes) & ~(k2MiB - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Makes room for one more element of a growing vector: capacity doubles (at least 4096), and
// the new buffer is advised to use huge pages before it is touched.
template <class Vector>
void reserve_one_more(Vector& v) {
  if (v.size() < v.capacity()) return;
  v.reserve(std::max<size_t>(4096, v.capacity() * 2));
  advise_huge_pages(v.data(), v.capacity() * sizeof(*v.data()));
}

}  // namespace st::workloads
