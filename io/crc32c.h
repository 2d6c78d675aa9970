// crc32c: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the manifest's checksum.
// Portable slicing-by-8 (~0.5-1 GB/s here; pages use the faster XXH64, see page_format.h).
// Pure function: no allocation, no state; crc32c(init=0) of "123456789" is 0xE3069283.
// Chaining: crc32c(b, crc32c(a)) == crc32c(a || b).
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::io {

uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace st::io
