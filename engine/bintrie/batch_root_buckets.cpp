// batch_root_buckets: batch_root, the from-scratch root of a key/value set, fused per bucket so
// that each bucket's records, stems and internal levels stay in the core's caches:
//
//   1. partition_entries: the 64-byte entries themselves copied into 2^k buckets by the top
//      k key bits (k: about kBucketEntries entries per bucket, >= 16 buckets per thread), so
//      a bucket is one contiguous block (128 KiB for 2,048 entries) that its passes read
//      from L2, not a gather of cache and TLB misses over the whole input;
//   2. per bucket (parallel_for over buckets, per-thread scratch; with one thread the same
//      loop, no TBB): sort_bucket_entries (sort, last write wins, stem starts), the stems'
//      depths inside the bucket, hash_stem_chunk (leaf hashes, sparse stem subtrees, stem
//      nodes), reduce_levels down to the bucket's node at depth k;
//   3. the top: one item per non-empty bucket, reduced to the root. A bucket with one stem
//      gives that stem at its own depth (1 + its longest common prefix with the last stem
//      of the previous non-empty bucket or the first of the next, both < k).
//
// Why the depths are local: stem i's depth is 1 + max(lcp(i-1, i), lcp(i, i+1)); stems of
// one bucket share >= k bits and stems of different buckets < k, so in a bucket of >= 2
// stems the in-bucket neighbour always gives the max.
//
// Memory: the partition's copy (64 bytes per entry) and the per-thread buffers live in a
// BatchRootScratch; a caller that keeps one across calls pays their page faults once (a
// fresh 64 MB block is ~16k 4 KiB faults, or 32 huge-page clears, per call otherwise).
//
// Invariants: equals the canonical EIP-7864 root (input order irrelevant, last write of a
// key wins), bit for bit the same for any thread count and bucket width; BatchRootStats
// counts exactly the messages hashed.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cassert>
#include <memory>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/batch_stems.h"
#include "engine/bintrie/internal_reduce.h"
#include "engine/bintrie/sort_partition.h"
#include "engine/bintrie/stem_bits.h"
#include "engine/pipeline/parallel.h"
#include "kernels/support/clock.h"

namespace st::bintrie {
namespace {

constexpr size_t kBucketEntries = 2048;  // target entries per bucket (cache-resident work)
constexpr size_t kStemChunk = 2048;      // stems per hash_stem_chunk call (skewed buckets)

struct Worker {
  SortedBucket sorted;
  StemChunkScratch stems;
  ReduceScratch reduce;
  BatchRootStats stats;
};

// What a bucket hands to the top reduction.
struct BucketTop {
  uint64_t prefix = 0;            // first 64 bits of the bucket's first stem
  uint64_t last_prefix = 0;       // ... and of its last stem
  const uint8_t* stem = nullptr;  // the first stem's bytes (stem_of for the top items)
  uint32_t stems = 0;             // 0: empty bucket
  uint8_t depth = 0;              // the item's depth (k, or a lone stem's own depth)
  Hash32 hash{};
};

unsigned lcp_of(const Entry* src, const SortedRef& a, const SortedRef& b) {
  const uint64_t x = a.prefix ^ b.prefix;
  return x ? unsigned(std::countl_zero(x)) : stem_lcp(src[a.index].key.data(), src[b.index].key.data());
}

// One bucket: src = its m entries (contiguous, input order). No software prefetch of the
// next bucket: its block is read sequentially, which the hardware prefetcher follows, and
// prefetching it during this bucket's entry pass cost more than it saved (perf, 1M keys:
// 114-124 vs 102 ms of non-hash time per root, alternated).
void run_bucket(const Hasher& h, const Entry* src, size_t m, unsigned k, Worker& w, BucketTop& top) {
  top.stems = 0;
  SortedBucket& B = w.sorted;
  sort_bucket_entries(src, m, k, B);
  const size_t ns = B.stems;
  if (ns == 0) return;
  const SortedRef* ref = B.ref.data();
  const uint32_t* sb = B.stem_begin.data();
  w.stats.entries += B.entries;
  w.stats.stems += ns;
  ReduceScratch& R = w.reduce;
  R.begin(ns);
  // Stem hashes straight into the reduction's hash pool.
  for (size_t c0 = 0; c0 < ns; c0 += kStemChunk) {
    const size_t c1 = std::min(ns, c0 + kStemChunk);
    const SortedRef* cref = ref + sb[c0];
    hash_stem_chunk(
        h, c1 - c0, sb + c0, [&](size_t i) -> const Entry& { return src[cref[i].index]; }, [](size_t) {}, w.stems,
        R.pool.data() + c0, &w.stats.hash32_messages, &w.stats.hash64_messages);
  }
  top.stems = uint32_t(ns);
  top.prefix = ref[sb[0]].prefix;
  top.last_prefix = ref[sb[ns - 1]].prefix;
  top.stem = src[ref[sb[0]].index].key.data();
  if (ns == 1) {  // depth set by the top pass
    top.hash = R.pool.data()[0];
    return;
  }
  ReduceSlim* in = R.in.data();
  uint8_t* dep = R.depth.data();
  unsigned prev_lcp = 0;
  for (size_t i = 0; i < ns; ++i) {
    const SortedRef& a = ref[sb[i]];
    const unsigned next_lcp = i + 1 < ns ? lcp_of(src, a, ref[sb[i + 1]]) : 0;
    in[i] = {a.prefix, uint32_t(i), uint32_t(i)};
    dep[i] = uint8_t(1 + std::max(prev_lcp, next_lcp));
    prev_lcp = next_lcp;
  }
  auto stem_of = [&](uint32_t rep) { return src[ref[sb[rep]].index].key.data(); };
  ReduceStats rs;
  const auto items = reduce_levels(h, stem_of, R, ns, k, &rs);
  assert(items.size() == 1);
  top.depth = uint8_t(k);
  top.hash = R.pool.data()[items[0].hidx];
  w.stats.hash64_messages += rs.messages;
  w.stats.internal_nodes += rs.messages;
}

}  // namespace

struct BatchRootScratch::Impl {
  EntryPartition part;
  std::vector<Worker> workers;
  std::vector<BucketTop> tops;
  std::vector<uint32_t> item_bucket;
  ReduceScratch top;
};

BatchRootScratch::BatchRootScratch() : impl_(std::make_unique<Impl>()) {}
BatchRootScratch::~BatchRootScratch() = default;
BatchRootScratch::BatchRootScratch(BatchRootScratch&&) noexcept = default;
BatchRootScratch& BatchRootScratch::operator=(BatchRootScratch&&) noexcept = default;
size_t BatchRootScratch::bytes() const { return impl_ ? impl_->part.ent.size() * sizeof(Entry) : 0; }

Hash32 batch_root(const Hasher& h, std::span<const Entry> entries, const BatchRootOptions& opt,
                   BatchRootStats* stats) {
  BatchRootScratch scratch;
  return batch_root(h, entries, opt, stats, scratch);
}

Hash32 batch_root(const Hasher& h, std::span<const Entry> entries, const BatchRootOptions& opt,
                   BatchRootStats* stats, BatchRootScratch& scratch) {
  if (stats) *stats = {};
  const size_t n = entries.size();
  if (n == 0) return Hash32{};
  BatchRootScratch::Impl& X = scratch.impl();
  const unsigned threads = std::max(1u, opt.threads);
  unsigned k = std::min(opt.bucket_bits, 24u);
  if (opt.bucket_bits == 0) {
    while (k < 24 && (n >> k) > kBucketEntries) ++k;
    if (threads > 1)
      while (k < 24 && (size_t(1) << k) < size_t(threads) * 16) ++k;
  }
  // One ThreadScope for both parallel phases.
  std::unique_ptr<pipeline::ThreadScope> scope;
  if (threads > 1) scope = std::make_unique<pipeline::ThreadScope>(threads);
  const uint64_t t0 = monotonic_ns();
  EntryPartition& part = X.part;
  partition_entries(entries, k, threads, part);
  const uint64_t t1 = monotonic_ns();
  const size_t nb = part.buckets();
  const Entry* ent = part.ent.get();
  std::vector<BucketTop>& tops = X.tops;
  tops.resize(nb);
  if (X.workers.size() < threads) X.workers.resize(threads);
  for (Worker& w : X.workers) w.stats = {};
  auto run_range = [&](size_t b0, size_t b1) {
    const unsigned slot = threads > 1 ? pipeline::thread_slot() : 0;
    assert(slot < threads);
    Worker& w = X.workers[slot];
    for (size_t b = b0; b < b1; ++b)
      run_bucket(h, ent + part.begin[b], part.begin[b + 1] - part.begin[b], k, w, tops[b]);
  };
  if (threads > 1) {
    pipeline::parallel_for(nb, 1, run_range);
  } else {
    run_range(0, nb);
  }
  scope.reset();
  const uint64_t t2 = monotonic_ns();
  BatchRootStats total;
  for (const Worker& w : X.workers) {
    total.entries += w.stats.entries;
    total.stems += w.stats.stems;
    total.hash32_messages += w.stats.hash32_messages;
    total.hash64_messages += w.stats.hash64_messages;
    total.internal_nodes += w.stats.internal_nodes;
  }
  // Top: the non-empty buckets' items, ascending. A lone stem's depth comes from the
  // neighbouring non-empty buckets' nearest stems (its lcp with them is < k <= 64 bits).
  ReduceScratch& R = X.top;
  R.begin(nb);
  std::vector<uint32_t>& item_bucket = X.item_bucket;
  item_bucket.clear();
  for (size_t b = 0; b < nb; ++b)
    if (tops[b].stems) item_bucket.push_back(uint32_t(b));
  const size_t ni = item_bucket.size();
  for (size_t i = 0; i < ni; ++i) {
    const BucketTop& t = tops[item_bucket[i]];
    uint8_t depth = t.depth;
    if (t.stems == 1) {
      unsigned l = 0;
      if (i > 0) l = std::max<unsigned>(l, unsigned(std::countl_zero(tops[item_bucket[i - 1]].last_prefix ^ t.prefix)));
      if (i + 1 < ni) l = std::max<unsigned>(l, unsigned(std::countl_zero(t.prefix ^ tops[item_bucket[i + 1]].prefix)));
      depth = ni == 1 ? 0 : uint8_t(1 + l);
    }
    R.in.data()[i] = {t.prefix, uint32_t(i), uint32_t(i)};
    R.depth.data()[i] = depth;
    R.pool.data()[i] = t.hash;
  }
  auto stem_of = [&](uint32_t rep) { return tops[item_bucket[rep]].stem; };
  ReduceStats rs;
  const auto items = reduce_levels(h, stem_of, R, ni, 0, &rs);
  assert(items.size() == 1);
  total.hash64_messages += rs.messages;
  total.internal_nodes += rs.messages;
  total.partition_ns = t1 - t0;
  total.buckets_ns = t2 - t1;
  total.top_ns = monotonic_ns() - t2;
  if (stats) *stats = total;
  return R.pool.data()[items[0].hidx];
}

}  // namespace st::bintrie
