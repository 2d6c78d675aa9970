// large_alloc: the one allocator for big flat arrays (the binary trie's node arrays and sort
// temporaries, the Merkle and MPT arenas, loader buffers). From 4 MiB on a block is 2 MiB
// aligned and advised to use transparent huge pages, so random walks over it do not pay a
// TLB miss and a page walk per node and its first touch faults a few 2 MiB pages instead of
// thousands of 4 KiB ones; smaller blocks are 64-byte aligned. advise_huge_pages gives the
// same advice for memory allocated elsewhere (a growing std::vector's buffer).
//
// Invariants: the memory is uninitialized; large_free gets the same byte count that
// large_alloc got (the count selects the alignment); huge-page advice never changes the
// contents, only the speed where the kernel follows it.
#pragma once

#include <cstddef>

namespace st {

inline constexpr size_t kLargeAllocHugeThresholdBytes = size_t(4) << 20;
inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// The alignment large_alloc uses for a block of `bytes`.
inline constexpr size_t large_alloc_alignment(size_t bytes) {
  return bytes >= kLargeAllocHugeThresholdBytes ? kHugePageBytes : 64;
}

// A block of at least max(bytes, 1) bytes; throws std::bad_alloc when out of memory.
// huge_pages = false: the same alignment, advised against huge pages (MADV_NOHUGEPAGE from
// 4 MiB on: memory that measured slower on them, which the process allocator's own huge-page
// policy must not put there either).
void* large_alloc(size_t bytes, bool huge_pages = true);
// The same, or nullptr when out of memory.
void* large_alloc_nothrow(size_t bytes, bool huge_pages = true);
void large_free(void* p, size_t bytes);

// MADV_HUGEPAGE on the 2 MiB-aligned interior of [p, p + bytes) (nothing when there is none).
void advise_huge_pages(const void* p, size_t bytes);

}  // namespace st
