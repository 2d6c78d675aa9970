// stream_store: one 64-byte cache line copied with non-temporal stores, and the fence that
// orders such stores before the stores that publish them. The only intrinsics the engine
// uses outside the hash kernels; SSE2 is in the x86-64 baseline, so no ISA flag is needed,
// and other targets get plain copies. Header-only so the copy inlines into the caller's loop.
//
// Invariant: dst64 is 64-byte aligned (the streaming stores require 16; whole lines are what
// makes them skip the read-for-ownership).
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace st::kernels {

inline void stream_copy64(void* dst64, const void* src64) {
#if defined(__SSE2__)
  const __m128i* q = static_cast<const __m128i*>(src64);
  const __m128i a = _mm_loadu_si128(q), b = _mm_loadu_si128(q + 1), c = _mm_loadu_si128(q + 2),
                d = _mm_loadu_si128(q + 3);
  __m128i* o = static_cast<__m128i*>(dst64);
  _mm_stream_si128(o, a);
  _mm_stream_si128(o + 1, b);
  _mm_stream_si128(o + 2, c);
  _mm_stream_si128(o + 3, d);
#else
  std::memcpy(dst64, src64, 64);
#endif
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace st::kernels
