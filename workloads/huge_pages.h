// huge_pages: transparent huge pages for the loaders' growing vectors (a 1M-line --kv file
// decodes into ~70 MB; faulting that in 4 KiB pages costs as much as parsing it), through
// the spine's advise_huge_pages (kernels/support/large_alloc.h).
//
// Invariant: advice only (MADV_HUGEPAGE on the 2 MiB-aligned interior of a buffer); the
// buffer's contents and ownership are unchanged, and where the kernel ignores the advice
// nothing but speed differs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/support/large_alloc.h"

namespace st::workloads {

// Makes room for one more element of a growing vector: capacity doubles (at least 4096), and
// the new buffer is advised to use huge pages before it is touched.
template <class Vector>
void reserve_one_more(Vector& v) {
  if (v.size() < v.capacity()) return;
  v.reserve(std::max<size_t>(4096, v.capacity() * 2));
  advise_huge_pages(v.data(), v.capacity() * sizeof(*v.data()));
}

}  // namespace st::workloads
