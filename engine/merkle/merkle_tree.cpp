// merkle_tree: addData and compute over the word-sliced arena.
//
// compute() runs in two phases:
//   A. the bottom levels, chunk by chunk: a chunk is the subtree over kChunkLeaves leaves
//      (256 KiB of leaf hashes, L2-resident); each chunk is reduced from level 0 up to the
//      level where it is one 16-node block, so its data is read from cache, not memory.
//      Chunks are independent and run in parallel.
//   B. the levels above, one level at a time (parallel over blocks when large), with the
//      small top levels (< 32 nodes of capacity) done node by node.
// Odd levels duplicate their last node into the next slot before the parents are
// computed; the mutation check runs on each level's real sibling pairs before that.
#include "engine/merkle/merkle_tree.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#include "engine/pipeline/parallel.h"
#include "kernels/sha256.h"
#include "kernels/sha256_portable.h"
#include "kernels/sliced_ops.h"

namespace st::merkle {

using kernels::kSlicedLanes;
using kernels::Sha256Kernel;

namespace {

constexpr size_t kChunkLeaves = 8192;      // 256 KiB of level-0 hashes per chunk
constexpr size_t kLeafBlocksPerTask = 64;  // addData parallel grain (1024 leaves)

uint64_t compressions_for_length(size_t len) { return (uint64_t(len) + 9 + 63) / 64; }

Hash32 hash_bytes(const Sha256Kernel& k, const uint8_t* data, size_t len, bool twice) {
  Hash32 d, twice_d;
  k.hash(data, len, d.data());
  if (!twice) return d;
  k.hash(d.data(), 32, twice_d.data());  // `hash` promises nothing about in == out
  return twice_d;
}

}  // namespace

MerkleTree::MerkleTree(size_t leaf_capacity, MerkleOptions options) : arena_(leaf_capacity), options_(options) {}

std::optional<std::string> MerkleTree::add_fixed(const uint8_t* data, size_t n, size_t leaf_size) {
  if (n == 0) return std::string("no leaves: a Merkle tree needs at least one leaf");
  if (n > arena_.leaf_capacity()) return "too many leaves for this tree's capacity";
  const Sha256Kernel& k = kernels::sha256_active();
  const bool twice = options_.double_sha256;
  leaf_count_ = n;
  leaf_compressions_ = n * (compressions_for_length(leaf_size) + (twice ? 1 : 0));
  const size_t full_blocks = n / kSlicedLanes;

  pipeline::parallel_for(full_blocks, kLeafBlocksPerTask, [&](size_t b0, size_t b1) {
    uint32_t* out = arena_.block(b0);
    const uint8_t* in = data + b0 * kSlicedLanes * leaf_size;
    const size_t nb = b1 - b0;
    if (leaf_size == 32) {
      k.leaves32_sliced(in, out, nb);
    } else {
      alignas(64) uint8_t digests[kSlicedLanes * 32];
      for (size_t b = 0; b < nb; ++b) {
        const uint8_t* blk = in + b * kSlicedLanes * leaf_size;
        if (leaf_size == 64) {
          k.hash64_batch(blk, digests, kSlicedLanes);
        } else {
          const uint8_t* msgs[kSlicedLanes];
          size_t lens[kSlicedLanes];
          for (size_t j = 0; j < kSlicedLanes; ++j) { msgs[j] = blk + j * leaf_size; lens[j] = leaf_size; }
          k.hash_batch(msgs, lens, digests, kSlicedLanes);
        }
        kernels::sha256_detail::slice_block(digests, out + b * kernels::kSlicedBlockWords);
      }
    }
    if (twice) k.digests_sliced(out, out, nb);
  });

  const size_t tail = n - full_blocks * kSlicedLanes;
  if (tail) {
    alignas(64) uint8_t digests[kSlicedLanes * 32] = {};
    const uint8_t* msgs[kSlicedLanes];
    size_t lens[kSlicedLanes];
    for (size_t j = 0; j < tail; ++j) { msgs[j] = data + (full_blocks * kSlicedLanes + j) * leaf_size; lens[j] = leaf_size; }
    k.hash_batch(msgs, lens, digests, tail);
    uint32_t* out = arena_.block(full_blocks);
    kernels::sha256_detail::slice_block(digests, out);
    if (twice) k.digests_sliced(out, out, 1);
  }
  return std::nullopt;
}

std::optional<std::string> MerkleTree::set_leaf_hashes(const uint8_t* hashes, size_t n) {
  if (n == 0) return std::string("no leaves: a Merkle tree needs at least one leaf");
  if (n > arena_.leaf_capacity()) return "too many leaves for this tree's capacity";
  leaf_count_ = n;
  leaf_compressions_ = 0;
  const size_t blocks = (n + kSlicedLanes - 1) / kSlicedLanes;
  pipeline::parallel_for(blocks, kLeafBlocksPerTask, [&](size_t b0, size_t b1) {
    alignas(64) uint8_t digests[kSlicedLanes * 32] = {};
    for (size_t b = b0; b < b1; ++b) {
      const size_t count = std::min(kSlicedLanes, n - b * kSlicedLanes);
      std::memcpy(digests, hashes + b * kSlicedLanes * 32, count * 32);
      kernels::sha256_detail::slice_block(digests, arena_.block(b));
    }
  });
  return std::nullopt;
}

std::optional<std::string> MerkleTree::add_variable(const uint8_t* const* leaves, const size_t* lens, size_t n) {
  if (n == 0) return std::string("no leaves: a Merkle tree needs at least one leaf");
  if (n > arena_.leaf_capacity()) return "too many leaves for this tree's capacity";
  const Sha256Kernel& k = kernels::sha256_active();
  const bool twice = options_.double_sha256;
  leaf_count_ = n;
  const size_t blocks = (n + kSlicedLanes - 1) / kSlicedLanes;
  std::atomic<uint64_t> compressions{0};
  pipeline::parallel_for(blocks, kLeafBlocksPerTask, [&](size_t b0, size_t b1) {
    alignas(64) uint8_t digests[kSlicedLanes * 32] = {};
    uint64_t local = 0;
    for (size_t b = b0; b < b1; ++b) {
      const size_t first = b * kSlicedLanes;
      const size_t count = std::min(kSlicedLanes, n - first);
      k.hash_batch(leaves + first, lens + first, digests, count);
      for (size_t j = 0; j < count; ++j) local += compressions_for_length(lens[first + j]) + (twice ? 1 : 0);
      uint32_t* out = arena_.block(b);
      kernels::sha256_detail::slice_block(digests, out);
      if (twice) k.digests_sliced(out, out, 1);
    }
    compressions.fetch_add(local, std::memory_order_relaxed);
  });
  leaf_compressions_ = compressions.load();
  return std::nullopt;
}

void MerkleTree::duplicate_last_if_odd(unsigned level) {
  const size_t count = level_counts_[level];
  if (count > 1 && count % 2 == 1) {
    const size_t base = arena_.level_offset(level);
    arena_.copy_slot(base + count - 1, base + count);
  }
}

// Reduces chunk `chunk` from level 0 up to `top_level` (where the chunk is one block).
void MerkleTree::compute_chunk(size_t chunk, unsigned top_level, bool* mutated) {
  const Sha256Kernel& k = kernels::sha256_active();
  const bool twice = options_.double_sha256;
  for (unsigned level = 0; level < top_level; ++level) {
    const size_t width = kChunkLeaves >> level;  // slots of this chunk at this level
    const size_t first = chunk * width;
    const size_t count = level_counts_[level];
    if (first >= count) return;
    const size_t real = std::min(width, count - first);
    const uint32_t* children = arena_.block((arena_.level_offset(level) + first) / kSlicedLanes);
    if (kernels::sliced_has_equal_siblings(children, real)) *mutated = true;
    if (first + real == count) duplicate_last_if_odd(level);
    const size_t parents = (real + 1) / 2;
    const size_t parent_blocks = (parents + kSlicedLanes - 1) / kSlicedLanes;
    uint32_t* out = arena_.block((arena_.level_offset(level + 1) + first / 2) / kSlicedLanes);
    k.parents_sliced(children, out, parent_blocks);
    if (twice) k.digests_sliced(out, out, parent_blocks);
  }
}

// Reduces one whole level into the next.
void MerkleTree::compute_level(unsigned level, bool* mutated) {
  const Sha256Kernel& k = kernels::sha256_active();
  const bool twice = options_.double_sha256;
  const size_t count = level_counts_[level];
  const size_t base = arena_.level_offset(level);
  const size_t parent_base = arena_.level_offset(level + 1);
  const size_t parents = level_counts_[level + 1];
  if (arena_.level_capacity(level) >= 2 * kSlicedLanes) {
    const uint32_t* children = arena_.block(base / kSlicedLanes);
    if (kernels::sliced_has_equal_siblings(children, count)) *mutated = true;
    duplicate_last_if_odd(level);
    const size_t parent_blocks = (parents + kSlicedLanes - 1) / kSlicedLanes;
    pipeline::parallel_for(parent_blocks, 64, [&](size_t b0, size_t b1) {
      uint32_t* out = arena_.block(parent_base / kSlicedLanes + b0);
      k.parents_sliced(arena_.block(base / kSlicedLanes + 2 * b0), out, b1 - b0);
      if (twice) k.digests_sliced(out, out, b1 - b0);
    });
    return;
  }
  // Small top levels: node by node.
  for (size_t i = 0; i + 1 < count; i += 2)
    if (arena_.equal_slots(base + i, base + i + 1)) *mutated = true;
  duplicate_last_if_odd(level);
  for (size_t p = 0; p < parents; ++p) {
    uint8_t pair[64];
    const Hash32 l = arena_.get(base + 2 * p), r = arena_.get(base + 2 * p + 1);
    std::memcpy(pair, l.data(), 32);
    std::memcpy(pair + 32, r.data(), 32);
    arena_.set(parent_base + p, hash_bytes(k, pair, 64, twice));
  }
}

MerkleResult MerkleTree::compute() {
  assert(leaf_count_ > 0);
  level_counts_.assign(1, leaf_count_);
  while (level_counts_.back() > 1) level_counts_.push_back((level_counts_.back() + 1) / 2);
  const unsigned top = unsigned(level_counts_.size() - 1);

  bool mutated = false;
  unsigned level = 0;
  // Phase A: cache-sized chunks, when the tree is big enough to have several levels of them.
  unsigned chunk_top = 0;
  while ((kChunkLeaves >> chunk_top) > kSlicedLanes) ++chunk_top;  // chunk is one block here
  if (arena_.pow2() >= kChunkLeaves && top > chunk_top) {
    const size_t chunks = (leaf_count_ + kChunkLeaves - 1) / kChunkLeaves;
    std::vector<uint8_t> chunk_mutated(chunks, 0);
    pipeline::parallel_for(chunks, 1, [&](size_t c0, size_t c1) {
      for (size_t c = c0; c < c1; ++c) {
        bool m = false;
        compute_chunk(c, chunk_top, &m);
        chunk_mutated[c] = m;
      }
    });
    for (uint8_t m : chunk_mutated) mutated |= m != 0;
    level = chunk_top;
  }
  // Phase B: the remaining levels one at a time.
  for (; level < top; ++level) compute_level(level, &mutated);

  MerkleResult result;
  result.root = arena_.get(arena_.level_offset(top));
  result.mutated = mutated;
  return result;
}

uint64_t MerkleTree::parent_count() const {
  uint64_t total = 0;
  for (size_t i = 1; i < level_counts_.size(); ++i) total += level_counts_[i];
  return total;
}

uint64_t MerkleTree::parent_compressions() const { return parent_count() * (options_.double_sha256 ? 3 : 2); }

std::vector<Hash32> MerkleTree::proof(size_t index) const {
  assert(index < leaf_count_ && !level_counts_.empty());
  std::vector<Hash32> path;
  for (size_t level = 0; level + 1 < level_counts_.size(); ++level) {
    const size_t count = level_counts_[level];
    size_t sibling = index ^ 1;
    if (sibling >= count) sibling = index;  // the duplicated last node pairs with itself
    path.push_back(arena_.get(arena_.level_offset(unsigned(level)) + sibling));
    index >>= 1;
  }
  return path;
}

Hash32 MerkleTree::leaf_hash(const uint8_t* data, size_t len, MerkleOptions options) {
  return hash_bytes(kernels::sha256_active(), data, len, options.double_sha256);
}

bool MerkleTree::verify(const Hash32& leaf, size_t index, size_t leaf_count, const std::vector<Hash32>& path,
                        const Hash32& root, MerkleOptions options) {
  if (index >= leaf_count) return false;
  const Sha256Kernel& k = kernels::sha256_active();
  Hash32 h = leaf;
  size_t count = leaf_count;  // nodes at the current level
  for (const Hash32& sibling : path) {
    if (count == 1) return false;  // path longer than the tree is deep
    const bool right = index & 1;
    const bool last_of_odd = !right && index == count - 1;
    if (last_of_odd && sibling != h) return false;  // only a duplicated node pairs with itself
    uint8_t pair[64];
    std::memcpy(pair, right ? sibling.data() : h.data(), 32);
    std::memcpy(pair + 32, right ? h.data() : sibling.data(), 32);
    h = hash_bytes(k, pair, 64, options.double_sha256);
    index >>= 1;
    count = (count + 1) / 2;
  }
  return count == 1 && h == root;
}

}  // namespace st::merkle
