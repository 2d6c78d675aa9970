// heap_counter: counts the test binary's heap allocations (calls and bytes), for tests that
// assert a code path allocates nothing: one count for the process (atomics: allocations on
// any thread count) and one per thread. Release: every replaceable global operator new
// (heap_counter.cpp replaces them, forwarding to malloc / aligned_alloc / free; memory taken
// by malloc directly is not counted). AddressSanitizer: ASan's allocator hooks, which see
// operator new and malloc alike.
#pragma once

#include <cstdint>

namespace st::test {

struct HeapCount {
  uint64_t calls = 0, bytes = 0;
  HeapCount operator-(const HeapCount& o) const { return {calls - o.calls, bytes - o.bytes}; }
};

// The allocations made so far by this process (operator new and its variants), and by the
// calling thread alone.
HeapCount heap_count();
HeapCount heap_count_this_thread();

}  // namespace st::test
