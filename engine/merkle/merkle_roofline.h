// merkle_roofline: the hash-throughput limit of a Merkle run, from the active kernel's
// measured cost on cache-resident data (one thread, the calling thread's core).
//
// leaf_ns   = ns per 32-byte leaf hash (leaves32_sliced: one compression);
// parent_ns = ns per parent (parents_sliced: a data compression + the constant padding one);
// digest_ns = ns per re-hash of a digest (digests_sliced: double SHA-256's extra step).
// limit_ns(run) = leaf_hashes x leaf_ns + parents x parent_ns (+ digests x digest_ns),
// divided by the thread count: what the run would cost if it only hashed.
#pragma once

#include <cstdint>

namespace st::merkle {

struct MerkleKernelCost {
  double leaf_ns = 0;
  double parent_ns = 0;
  double digest_ns = 0;
};

// Median of several timed passes over L2-resident buffers.
MerkleKernelCost measure_merkle_kernel_cost();

double merkle_limit_ns(const MerkleKernelCost& cost, uint64_t leaf_hashes, uint64_t parents, uint64_t digest_rehashes,
                       unsigned threads);

}  // namespace st::merkle
