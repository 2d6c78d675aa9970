// sliced_ops: small portable operations on word-sliced digest blocks (format in sha256.h).
// Pure functions; the compiler vectorizes them with the baseline ISA.
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::kernels {

// True when some sibling pair (2i, 2i+1), 2i+1 < node_count, of the node_count digests
// stored from the start of `blocks` holds two equal digests (the CVE-2012-2459 condition).
bool sliced_has_equal_siblings(const uint32_t* blocks, size_t node_count);

}  // namespace st::kernels
