// crc32c: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the per-page checksum of the
// node stores. Portable slicing-by-8 (~1-2 GB/s; a 4 KiB page costs a few microseconds,
// well under one device read). Pure function: no allocation, no state; crc32c(init=0) of
// "123456789" is 0xE3069283. Chaining: crc32c(b, crc32c(a)) == crc32c(a || b).
#pragma once

#include <cstddef>
#include <cstdint>

namespace st::io {

uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace st::io
