// sort_partition: the from-scratch root's sort, split in two so that its second half runs
// bucket by bucket right before that bucket is hashed (the bucket's records are still in
// L1/L2 when its stems are hashed):
//
//   partition_entries: one stable scatter of the whole 64-byte entries (non-temporal
//     stores of full cache lines) into 2^k buckets by the top k key bits, so that each
//     bucket is one contiguous block (see EntryPartition below). Pass 1 counts the bucket
//     sizes, pass 2 copies; with T threads each thread takes one contiguous slice of the
//     input and owns one run inside every bucket (runs in slice order), so the result is
//     exactly the serial one. The slices run in the caller's ThreadScope.
//   sort_bucket_entries: one bucket's entries -> ascending (key, position) records in a
//     scratch buffer (counting sort on the next key bits below the k bucket bits, about one
//     record per counter for random keys, then one insertion sort pass over the bucket, or
//     std::sort per counter run when the runs are long), keeps the last write of each key,
//     marks where each stem begins.
//
//   records (16 B):  | prefix: key bytes 0..7, big-endian (u64) | index: u32 | pad |
//   bucket b      :  ent[begin[b] .. begin[b+1]), input order within a bucket
//
// Invariants: keys compare by their first 8 bytes (prefix) first, then bytes 8..31 of the
// entry (read only when prefixes tie); among equal keys the later one (larger position: the
// later write) is the one kept. sort_bucket_entries' output equals a stable sort of the
// bucket by key followed by "keep the last of each run of equal keys".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/bintrie/batch_root.h"
#include "kernels/support/large_alloc.h"
#include "engine/bintrie/internal_reduce.h"

namespace st::bintrie {

// An uninitialized array of a trivial type for the sort's big temporaries (kernels/support/large_alloc.h:
// huge pages from 4 MiB on).
template <class T>
class BigArray {
 public:
  BigArray() = default;
  explicit BigArray(size_t n) : p_(static_cast<T*>(large_alloc(n * sizeof(T)))), n_(n) {}
  ~BigArray() { if (p_) large_free(p_, n_ * sizeof(T)); }
  BigArray(BigArray&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  BigArray& operator=(BigArray&& o) noexcept {
    if (this != &o) { this->~BigArray(); p_ = o.p_; n_ = o.n_; o.p_ = nullptr; o.n_ = 0; }
    return *this;
  }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  T* get() const { return p_; }
  size_t size() const { return n_; }
  // Room for at least n elements; the old contents are dropped when it reallocates. A
  // scratch kept across calls grows to its largest call and stays there.
  T* reserve(size_t n) {
    if (n > n_) *this = BigArray(n);
    return p_;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// The entries themselves in bucket order: partition_entries copies each 64-byte entry into
// its bucket's run (stable: input order within a bucket, slice runs in slice order), so that a bucket's later passes read one contiguous, cache-resident block instead
// of gathering from the whole input (a TLB miss and a cache miss per entry). Kept across
// calls by a BatchRootScratch: the block is faulted in once, not per call.
struct EntryPartition {
  unsigned bits = 0;
  size_t n = 0;
  BigArray<Entry> ent;          // [0, n): the entries, bucket by bucket
  std::vector<uint32_t> begin;  // 2^bits + 1 bucket starts
  std::vector<uint32_t> count;  // slices x 2^bits counters (scratch)
  size_t buckets() const { return begin.size() - 1; }
};

// bits in 0..24; threads >= 1 (1: no TBB; more: the slices run in the caller's ThreadScope).
void partition_entries(std::span<const Entry> in, unsigned bits, unsigned threads, EntryPartition& out);

// Scratch and result of sort_bucket_entries (reused across buckets: no allocation once warm).
struct SortedBucket {
  RawBuf<SortedRef> ref;          // [0, entries): ascending key, unique
  RawBuf<uint32_t> stem_begin;    // [0, stems]: stem s owns ref[stem_begin[s] .. stem_begin[s+1])
  std::vector<uint32_t> counter;  // the counting sort's counters
  size_t entries = 0;
  size_t stems = 0;
};

// Sorts m contiguous entries (a bucket of an EntryPartition) whose keys share their top
// `shared_bits` bits (the partition's k; 0 for a whole set). The records are (prefix,
// position in ent), made on the fly: no record array in between.
void sort_bucket_entries(const Entry* ent, size_t m, unsigned shared_bits, SortedBucket& out);

}  // namespace st::bintrie
