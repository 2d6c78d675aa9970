// heap_counter: counts the test binary's heap allocations (calls and bytes through every
// replaceable global operator new), for tests that assert a code path allocates nothing.
// The replacement operators live in heap_counter.cpp and forward to malloc / aligned_alloc
// / free; one count for the process (atomics: allocations on any thread count) and one per
// thread.
// Memory taken by malloc directly (C code, io_uring setup) is not counted.
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
