// batch_root: the from-scratch root of a key/value set, built the data-oriented way.
//
// batch_root (batch_root_buckets.cpp) is fused per bucket of the top k key bits:
//   1. partition the entries (copied, 64 bytes each) into 2^k buckets by their top k key
//      bits (about 2,048 entries each, at least 16 buckets per thread; sort_partition.h);
//   2. per bucket, in cache-resident buffers: sort the bucket's records, keep the last write
//      of each key; leaf hashes H(value) of every present value (one hash32_batch); stem
//      subtrees, 8 levels, sparse: level l holds only the nodes with a present leaf below
//      (absent siblings are 32 zero bytes; two absent children are never hashed), all of
//      the bucket's level-l nodes in one hash64_batch; stem nodes H(stem || 0x00 || R) (one
//      hash64_batch); internal nodes level by level, deepest first, down to the bucket's
//      node at depth k: the depth of stem i is 1 + max(lcp(i-1, i), lcp(i, i+1)); items at
//      depth d pair with their sibling (the adjacent item sharing d-1 bits) or with an
//      empty child, all of one depth in one batch;
//   3. the bucket nodes are reduced the same way to the root.
// With threads > 1 the partition's passes and the buckets run in parallel (TBB
// parallel_for in one task_arena); the serial path is the same code.
// The two-step path (sort_entries into a SortedEntries, then batch_root_sorted /
// hash_stems) serves the mutable tree's bulk build and the persistent builder.
//
// Invariants: the result equals the canonical EIP-7864 root (independent of input order,
// last write wins, any thread count and bucket width); counts in BatchRootStats are exactly
// the messages hashed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/bintrie/hasher.h"

namespace st::bintrie {

struct Entry {
  Hash32 key{};
  Hash32 value{};
};

struct BatchRootStats {
  size_t entries = 0;          // distinct keys
  size_t stems = 0;
  size_t hash32_messages = 0;  // leaf hashes
  size_t hash64_messages = 0;  // stem-subtree, stem and internal nodes
  size_t internal_nodes = 0;
  // batch_root's phases, wall ns: the top-bits partition (serial with 1 thread), the
  // buckets (sort, stems, internal levels: parallel) and the top levels (serial).
  uint64_t partition_ns = 0;
  uint64_t buckets_ns = 0;
  uint64_t top_ns = 0;
};

struct BatchRootOptions {
  unsigned threads = 1;         // 1: the serial path (no TBB)
  unsigned bucket_bits = 0;     // 0: automatic (about 2048 stems per bucket, >= 16 buckets per thread)
};

// Sorted, deduplicated view of an entry set grouped by stem. Two forms:
//   materialized (the default): `entries` holds copies in key order;
//   index (sort_entries(..., materialize = false)): `entries` is empty, `ref[i]` names the
//     input entry of rank i (src must outlive the view) with its 8-byte key prefix, so the
//     batch root never copies the entries (64 MB for 1M keys) and splits stems by prefix
//     without touching them.
struct SortedRef {
  uint64_t prefix;  // first 8 key bytes, big-endian
  uint32_t index;   // position in src
};
struct SortedEntries {
  std::vector<Entry> entries;        // materialized form: ascending key, unique
  const Entry* src = nullptr;        // index form: the input
  std::vector<SortedRef> ref;        // index form: ascending key, unique
  std::vector<uint32_t> stem_begin;  // stem s owns entries [stem_begin[s] .. stem_begin[s+1])
  size_t size() const { return src ? ref.size() : entries.size(); }
  const Entry& entry(size_t i) const { return src ? src[ref[i].index] : entries[i]; }
  size_t stems() const { return stem_begin.empty() ? 0 : stem_begin.size() - 1; }
  const uint8_t* stem(size_t s) const { return entry(stem_begin[s]).key.data(); }
  uint64_t stem_prefix(size_t s) const;
};

SortedEntries sort_entries(std::span<const Entry> entries, unsigned threads = 1, bool materialize = true);

Hash32 batch_root(const Hasher& h, std::span<const Entry> entries, const BatchRootOptions& opt = {},
                   BatchRootStats* stats = nullptr);

// Working memory of batch_root that a caller may keep across calls (its bucket-ordered
// copy of the entries, 64 bytes per entry, and the per-thread bucket buffers): a call
// grows it to what it needs and leaves it allocated, so repeated roots do not fault the
// same pages in again. It holds no results: every call starts from its unsorted input.
// One call at a time per scratch.
class BatchRootScratch {
 public:
  BatchRootScratch();
  ~BatchRootScratch();
  BatchRootScratch(BatchRootScratch&&) noexcept;
  BatchRootScratch& operator=(BatchRootScratch&&) noexcept;
  size_t bytes() const;  // memory held now
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

Hash32 batch_root(const Hasher& h, std::span<const Entry> entries, const BatchRootOptions& opt,
                   BatchRootStats* stats, BatchRootScratch& scratch);
Hash32 batch_root_sorted(const Hasher& h, const SortedEntries& sorted, const BatchRootOptions& opt = {},
                          BatchRootStats* stats = nullptr);

// Stem subtree hashes for a range of stems [s0, s1) of a sorted set: stem_hash_out[s - s0].
// Exposed for the mutable tree's bulk build and for tests.
void hash_stems(const Hasher& h, const SortedEntries& sorted, size_t s0, size_t s1, Hash32* stem_hash_out,
                BatchRootStats* stats);

// Depth of every stem in the canonical tree (0 for a single stem).
std::vector<uint8_t> stem_depths(const SortedEntries& sorted);

}  // namespace st::bintrie
