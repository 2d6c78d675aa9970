// monotonic_clock: nanoseconds on CLOCK_MONOTONIC, for I/O latencies and run times.
#pragma once

#include <time.h>

#include <cstdint>

namespace st::io {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace st::io
