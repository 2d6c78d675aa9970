// merkle_baselines: the published C baselines for the Merkle benchmark, built into the same
// binary so the engine is compared side by side, in the same run:
//   oneshot:  a plain loop calling OpenSSL's SHA256() once per hash (the published C code);
//   ctx:      a plain loop calling SHA256_Init/Update/Final once per hash.
// Both follow the spec literally (flat array sized to the node count, odd levels duplicate
// their last node) and must produce the engine's root. Fixed-size leaves only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace st::workloads {

enum class MerkleBaseline { oneshot, ctx };

class MerkleBaselineTree {
 public:
  explicit MerkleBaselineTree(size_t leaf_count);
  // Timed phases, like the engine's: hash the leaves, then reduce. Returns nothing; root()
  // reads the result.
  void add(MerkleBaseline kind, const uint8_t* data, size_t leaf_size, bool twice);
  void compute(MerkleBaseline kind, bool twice);
  std::array<uint8_t, 32> root() const { return root_; }

 private:
  size_t n_;
  std::vector<uint8_t> nodes_;  // (pow2 - 1) * 2 + 1 slots of 32 bytes
  std::array<uint8_t, 32> root_{};
};

}  // namespace st::workloads
