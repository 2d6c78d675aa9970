// cpu_features: what this x86-64 CPU and OS support, read once from CPUID/XGETBV.
// On non-x86 targets every flag is false and only portable kernels are used.
#pragma once

namespace st::kernels {

struct CpuFeatures {
  bool ssse3 = false;
  bool sse41 = false;
  bool sha = false;       // SHA-NI
  bool avx2 = false;      // CPU flag and OS saves YMM state
  bool avx512 = false;    // F + BW + VL + DQ and OS saves ZMM/opmask state
};

// Detected once (thread-safe static init); cheap to call.
const CpuFeatures& cpu_features();

}  // namespace st::kernels
