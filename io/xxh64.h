// xxh64: the XXH64 hash (Yann Collet's published algorithm, implemented here from its
// specification), the page checksum of the node stores. Portable 64-bit arithmetic, four
// independent lanes: several GB/s on any x86-64 without ISA-specific code, ~5-10x faster
// than portable CRC-32C, which matters because every page read is verified on the read
// path. Pure function: no allocation, no state. xxh64("", 0, 0) = 0xEF46DB3751D8E999.
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::io {

uint64_t xxh64(const void* data, size_t size, uint64_t seed = 0);

}  // namespace st::io
