// clock: the project's clocks, in nanoseconds. monotonic_ns (CLOCK_MONOTONIC) times runs,
// phases and I/O latencies; thread_cpu_ns (CLOCK_THREAD_CPUTIME_ID) is the CPU time of the
// calling thread, for the share of a phase spent computing rather than waiting;
// process_cpu_ns (CLOCK_PROCESS_CPUTIME_ID) sums every thread of the process.
//
// Invariants: header-only; monotonic_ns never decreases within a process; thread_cpu_ns
// never decreases within a thread and is not comparable across threads.
#pragma once

#include <time.h>

#include <cstdint>

namespace st {

inline uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
inline uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
inline uint64_t process_cpu_ns() { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

}  // namespace st
