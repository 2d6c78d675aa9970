// merkle_roofline: kernel cost calibration (see merkle_roofline.h).
#include "engine/merkle/merkle_roofline.h"

#include <chrono>
#include <cstring>
#include <new>
#include <vector>

#include "engine/stats/summary.h"
#include "kernels/sha256.h"
#include "kernels/support/clock.h"

namespace st::merkle {

namespace {

constexpr size_t kBlocks = 256;  // 4096 digests: 128 KiB per sliced buffer (L2-resident)

template <class F>
double median_ns_per_item(F&& f, size_t items) {
  std::vector<double> samples;
  for (int rep = 0; rep < 15; ++rep) {
    const uint64_t t0 = monotonic_ns();
    f();
    samples.push_back(double(monotonic_ns() - t0) / double(items));
  }
  return stats::summarize(samples).median;
}

}  // namespace

MerkleKernelCost measure_merkle_kernel_cost() {
  const kernels::Sha256Kernel& k = kernels::sha256_active();
  const size_t words = 2 * kBlocks * kernels::kSlicedBlockWords;
  auto* in = static_cast<uint32_t*>(::operator new(words * 4, std::align_val_t(64)));
  auto* out = static_cast<uint32_t*>(::operator new(words * 4, std::align_val_t(64)));
  for (size_t i = 0; i < words; ++i) in[i] = uint32_t(i * 2654435761u);
  const auto* leaf_bytes = reinterpret_cast<const uint8_t*>(in);
  MerkleKernelCost c;
  c.leaf_ns = median_ns_per_item([&] { k.leaves32_sliced(leaf_bytes, out, kBlocks); }, kBlocks * 16);
  c.parent_ns = median_ns_per_item([&] { k.parents_sliced(in, out, kBlocks); }, kBlocks * 16);
  c.digest_ns = median_ns_per_item([&] { k.digests_sliced(in, out, kBlocks); }, kBlocks * 16);
  ::operator delete(in, std::align_val_t(64));
  ::operator delete(out, std::align_val_t(64));
  return c;
}

double merkle_limit_ns(const MerkleKernelCost& cost, uint64_t leaf_hashes, uint64_t parents, uint64_t digest_rehashes,
                       unsigned threads) {
  const double one = double(leaf_hashes) * cost.leaf_ns + double(parents) * cost.parent_ns +
                     double(digest_rehashes) * cost.digest_ns;
  return one / double(threads ? threads : 1);
}

}  // namespace st::merkle
