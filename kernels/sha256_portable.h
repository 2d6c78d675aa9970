// sha256_portable: the reference-speed scalar SHA-256 shared by every tier.
// compress() is the FIPS 180-4 compression function over one 64-byte block; the helpers
// below build the tier-independent entry points from a tier's own primitives.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/sha256_constants.h"
#include "kernels/support/byte_order.h"

namespace st::kernels::sha256_detail {


// state <- compress(state, blocks), nblocks consecutive 64-byte blocks.
void compress_portable(uint32_t state[8], const uint8_t* blocks, size_t nblocks);

// Full message hash with a given multi-block compressor (handles padding).
using CompressFn = void (*)(uint32_t state[8], const uint8_t* blocks, size_t nblocks);
void hash_with(CompressFn compress, const uint8_t* data, size_t len, uint8_t* out);

// Sliced-block adapters built on a tier's byte-oriented batch kernels (used by tiers that
// have no native sliced kernel). They un-slice/re-slice through a stack buffer.
using Batch32Fn = void (*)(const uint8_t* in, uint8_t* out, size_t n);
using Batch64Fn = void (*)(const uint8_t* in, uint8_t* out, size_t n);
void leaves32_sliced_via(Batch32Fn h32, const uint8_t* leaves, uint32_t* out, size_t nblocks);
void parents_sliced_via(Batch64Fn h64, const uint32_t* children, uint32_t* parents, size_t nblocks);
void digests_sliced_via(Batch32Fn h32, const uint32_t* in, uint32_t* out, size_t nblocks);

// Sliced <-> byte digests for one block (16 digests).
void unslice_block(const uint32_t* block, uint8_t* digests16x32);
void slice_block(const uint8_t* digests16x32, uint32_t* block);

}  // namespace st::kernels::sha256_detail
