// sha256_tiers: the kernel tables each tier's source file defines. A table is declared only
// when its ISA was compiled in (STATETREE_HAVE_SHA256_<ISA> set by kernels/CMakeLists.txt).
#pragma once

#include "kernels/sha256.h"

namespace st::kernels::sha256_detail {

extern const Sha256Kernel kSha256Portable;
#if defined(STATETREE_HAVE_SHA256_SHANI)
extern const Sha256Kernel kSha256Shani;
#endif
#if defined(STATETREE_HAVE_SHA256_AVX2)
extern const Sha256Kernel kSha256Avx2;
#endif
#if defined(STATETREE_HAVE_SHA256_AVX512)
extern const Sha256Kernel kSha256Avx512;
#endif

// The fastest single-stream hash on this CPU (SHA-NI when compiled in and supported, else
// portable). Lane-parallel tiers use it for `hash`: one message gains nothing from lanes.
void hash_single_best(const uint8_t* data, size_t len, uint8_t* out);

}  // namespace st::kernels::sha256_detail
