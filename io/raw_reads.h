// raw_reads: the same random page reads as random_reads(), without a store: one O_DIRECT
// file, a plain io_uring loop at a fixed queue depth (submit_and_wait, one aligned buffer
// per slot), no checksum, no copy, no completion bookkeeping. It is the floor the arena
// store is compared with side by side (store cost per read / raw cost per read), so the
// store's own overhead is measured rather than assumed.
#pragma once

#include <cstdint>
#include <string>

#include "io/random_reads.h"
#include "io/status.h"

namespace st::io {

// Reads `reads` pages of `page_size` bytes at offsets chosen by the same generator as
// random_reads() (same seed -> same page sequence) from the first `pages` pages of `path`.
Status raw_random_reads(const std::string& path, uint32_t page_size, uint64_t pages, uint32_t queue_depth,
                        uint64_t reads, uint64_t seed, RandomReadResult* result);

}  // namespace st::io
