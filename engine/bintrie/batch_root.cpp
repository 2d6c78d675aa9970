// batch_root: sort, sparse stem subtrees, stem nodes, internal levels (see batch_root.h).
#include "engine/bintrie/batch_root.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <memory>

#include "engine/bintrie/batch_stems.h"
#include "engine/bintrie/internal_reduce.h"
#include "engine/pipeline/parallel.h"
#include "engine/bintrie/stem_bits.h"
#include "engine/bintrie/stem_subtree.h"

namespace st::bintrie {
namespace {

// (key prefix, input index); among equal keys the later index wins.
using SortRec = SortedRef;

// Stems per chunk of the stem-subtree pass: keeps the level buffers cache-resident.
constexpr size_t kStemChunk = 2048;

// Tiny batches (under 512 entries): one comparison sort, no bucket table.
SortedEntries sort_entries_small(std::span<const Entry> in) {
  std::vector<SortRec> recs(in.size());
  for (size_t i = 0; i < in.size(); ++i) recs[i] = {load_be64(in[i].key.data()), uint32_t(i)};
  std::sort(recs.begin(), recs.end(), [&](const SortRec& a, const SortRec& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = std::memcmp(in[a.index].key.data() + 8, in[b.index].key.data() + 8, 24);
    if (c != 0) return c < 0;
    return a.index < b.index;
  });
  SortedEntries out;
  out.entries.reserve(in.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    const Entry& e = in[recs[i].index];
    if (i + 1 < recs.size() && recs[i + 1].prefix == recs[i].prefix &&
        std::memcmp(in[recs[i + 1].index].key.data(), e.key.data(), 32) == 0)
      continue;  // keep the last write of a run of equal keys
    out.entries.push_back(e);
  }
  for (size_t i = 0; i < out.entries.size(); ++i)
    if (i == 0 || std::memcmp(out.entries[i].key.data(), out.entries[i - 1].key.data(), 31) != 0)
      out.stem_begin.push_back(uint32_t(i));
  if (!out.entries.empty()) out.stem_begin.push_back(uint32_t(out.entries.size()));
  return out;
}

}  // namespace

uint64_t SortedEntries::stem_prefix(size_t s) const {
  return src ? ref[stem_begin[s]].prefix : load_be64(stem(s));
}

SortedEntries sort_entries(std::span<const Entry> in, unsigned threads, bool materialize) {
  if (in.size() < 512) return sort_entries_small(in);
  // Counting sort on the top key bits (stable: input order kept within a bucket), then a
  // comparison sort inside each bucket: about 4 entries per bucket for random keys
  // (kBucketBits = bit width of n - 2, 8..20), so the insertion sorts stay short. An
  // incremental batch (4,096 writes) takes this path too: 2,048 buckets instead of a
  // comparison sort whose compares are mispredicted branches.
  const unsigned kBucketBits = std::clamp<unsigned>(unsigned(std::bit_width(in.size())) - 2, 8, 20);
  const size_t kBuckets = size_t(1) << kBucketBits;
  // Pass 1 reads the 64 MB input once (sequentially): the 8-byte key prefixes go to a
  // compact array (8 MB) and the bucket sizes are counted; pass 2 scatters from that array,
  // not from the input again.
  std::vector<uint32_t> bucket_start(kBuckets + 1, 0);
  std::unique_ptr<uint64_t[]> prefix(new uint64_t[in.size()]);
  for (size_t i = 0; i < in.size(); ++i) {
    const uint64_t p = load_be64(in[i].key.data());
    prefix[i] = p;
    bucket_start[(p >> (64 - kBucketBits)) + 1]++;
  }
  for (size_t b = 0; b < kBuckets; ++b) bucket_start[b + 1] += bucket_start[b];
  std::vector<SortRec> recs(in.size());
  {
    std::vector<uint32_t> fill(bucket_start.begin(), bucket_start.end() - 1);
    for (size_t i = 0; i < in.size(); ++i) {
      const uint64_t p = prefix[i];
      recs[fill[p >> (64 - kBucketBits)]++] = {p, uint32_t(i)};
    }
  }
  prefix.reset();
  auto less = [&](const SortRec& a, const SortRec& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = std::memcmp(in[a.index].key.data() + 8, in[b.index].key.data() + 8, 24);
    if (c != 0) return c < 0;
    return a.index < b.index;
  };
  auto sort_bucket = [&](size_t lo, size_t hi) {
    if (hi - lo <= 1) return;
    if (hi - lo <= 24) {  // tiny bucket (the common case): insertion sort
      for (size_t i = lo + 1; i < hi; ++i) {
        const SortRec x = recs[i];
        size_t j = i;
        while (j > lo && less(x, recs[j - 1])) { recs[j] = recs[j - 1]; --j; }
        recs[j] = x;
      }
    } else {
      std::sort(recs.begin() + long(lo), recs.begin() + long(hi), less);
    }
  };
  auto sort_buckets = [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) sort_bucket(bucket_start[b], bucket_start[b + 1]);
  };
  SortedEntries out;
  if (!materialize) {
    // Index form: no copy of the entries. Dedupe and stem starts compare prefixes first and
    // touch the (random-order) input only when the 8-byte prefixes are equal. The records
    // are compacted in place (kept <= i) and become the view; the serial path does it bucket
    // by bucket right after sorting each (the bucket is still in L1).
    out.src = in.data();
    out.stem_begin.reserve(in.size() + 1);
    size_t kept = 0;
    auto compact = [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) {
        const SortRec r = recs[i];
        if (i + 1 < hi && recs[i + 1].prefix == r.prefix &&
            std::memcmp(in[recs[i + 1].index].key.data(), in[r.index].key.data(), 32) == 0)
          continue;  // keep the last write of a run of equal keys (equal keys share a bucket)
        if (kept == 0 || recs[kept - 1].prefix != r.prefix ||
            std::memcmp(in[recs[kept - 1].index].key.data(), in[r.index].key.data(), 31) != 0)
          out.stem_begin.push_back(uint32_t(kept));
        recs[kept++] = r;
      }
    };
    if (threads > 1) {
      {
        pipeline::ThreadScope scope{unsigned(threads)};
        pipeline::parallel_for(kBuckets, 1024, sort_buckets);
      }
      for (size_t b = 0; b < kBuckets; ++b) compact(bucket_start[b], bucket_start[b + 1]);
    } else {
      for (size_t b = 0; b < kBuckets; ++b) {
        sort_bucket(bucket_start[b], bucket_start[b + 1]);
        compact(bucket_start[b], bucket_start[b + 1]);
      }
    }
    recs.resize(kept);
    out.ref = std::move(recs);
    out.stem_begin.push_back(uint32_t(kept));
    if (kept == 0) out.stem_begin.clear();
    return out;
  }
  out.entries.resize(in.size());
  auto gather = [&](size_t i0, size_t i1) {
    constexpr size_t kAhead = 16;  // random reads: keep several misses in flight
    for (size_t i = i0; i < i1; ++i) {
      if (i + kAhead < i1) __builtin_prefetch(&in[recs[i + kAhead].index]);
      out.entries[i] = in[recs[i].index];
    }
  };
  if (threads > 1) {
    pipeline::ThreadScope scope{unsigned(threads)};
    pipeline::parallel_for(kBuckets, 1024, sort_buckets);
    pipeline::parallel_for(in.size(), 65536, gather);
  } else {
    sort_buckets(0, kBuckets);
    gather(0, in.size());
  }
  // Keep the last write of each run of equal keys (the run is in input order).
  size_t kept = 0;
  for (size_t i = 0; i < out.entries.size(); ++i) {
    if (i + 1 < out.entries.size() && recs[i + 1].prefix == recs[i].prefix &&
        std::memcmp(out.entries[i + 1].key.data(), out.entries[i].key.data(), 32) == 0)
      continue;
    if (kept != i) out.entries[kept] = out.entries[i];
    ++kept;
  }
  out.entries.resize(kept);
  out.stem_begin.reserve(kept + 1);
  for (size_t i = 0; i < out.entries.size(); ++i) {
    if (i == 0 || std::memcmp(out.entries[i].key.data(), out.entries[i - 1].key.data(), 31) != 0)
      out.stem_begin.push_back(uint32_t(i));
  }
  out.stem_begin.push_back(uint32_t(out.entries.size()));
  if (out.entries.empty()) out.stem_begin.clear();
  return out;
}

std::vector<uint8_t> stem_depths(const SortedEntries& sorted) {
  const size_t n = sorted.stems();
  std::vector<uint8_t> depth(n, 0);
  if (n < 2) return depth;
  unsigned prev_lcp = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned next_lcp = 0;
    if (i + 1 < n) {
      const uint64_t x = sorted.stem_prefix(i) ^ sorted.stem_prefix(i + 1);
      next_lcp = x ? unsigned(std::countl_zero(x)) : stem_lcp(sorted.stem(i), sorted.stem(i + 1));
    }
    depth[i] = uint8_t(1 + std::max(prev_lcp, next_lcp));
    prev_lcp = next_lcp;
  }
  return depth;
}

void hash_stems(const Hasher& h, const SortedEntries& sorted, size_t s0, size_t s1, Hash32* stem_hash_out,
                BatchRootStats* stats) {
  StemChunkScratch S;
  size_t n32 = 0, n64 = 0;
  for (size_t c0 = s0; c0 < s1; c0 += kStemChunk) {
    const size_t c1 = std::min(s1, c0 + kStemChunk);
    const size_t e0 = sorted.stem_begin[c0], ne = sorted.stem_begin[c1] - e0;
    const uint32_t* sb = sorted.stem_begin.data() + c0;
    Hash32* out = stem_hash_out + (c0 - s0);
    if (sorted.src) {
      // Index form: random reads; the prefetch runs far enough ahead to keep many misses
      // in flight (a DRAM miss is ~100 ns, an iteration a few ns).
      constexpr size_t kAhead = 48;
      const SortedRef* ref = sorted.ref.data() + e0;
      const Entry* src = sorted.src;
      hash_stem_chunk(
          h, c1 - c0, sb, [&](size_t i) -> const Entry& { return src[ref[i].index]; },
          [&](size_t i) { if (i + kAhead < ne) __builtin_prefetch(&src[ref[i + kAhead].index]); }, S, out, &n32, &n64);
    } else {
      const Entry* ent = sorted.entries.data() + e0;
      hash_stem_chunk(h, c1 - c0, sb, [&](size_t i) -> const Entry& { return ent[i]; }, [](size_t) {}, S, out, &n32,
                      &n64);
    }
  }
  if (stats) {
    stats->hash32_messages += n32;
    stats->hash64_messages += n64;
  }
}

Hash32 batch_root_sorted(const Hasher& h, const SortedEntries& sorted, const BatchRootOptions& opt,
                          BatchRootStats* stats) {
  const size_t n = sorted.stems();
  if (stats) { stats->entries = sorted.size(); stats->stems = n; }
  if (n == 0) return Hash32{};
  const std::vector<uint8_t> depth = stem_depths(sorted);

  // Buckets by the top k stem bits: small enough (about kStemChunk stems) that a bucket's
  // stem subtrees and internal levels run in cache-resident buffers, and at least 16 per
  // thread for load balance. Each bucket reduces to its node at depth k; the top k levels
  // are reduced last. The serial path is the same loop without TBB.
  unsigned k = opt.bucket_bits;
  if (k == 0) {
    while (k < 24 && (n >> k) > kStemChunk) ++k;
    if (opt.threads > 1)
      while (k < 24 && (1u << k) < opt.threads * 16u) ++k;
  }
  const size_t nb = size_t(1) << k;
  std::vector<uint32_t> bucket_begin(nb + 1, 0);
  {
    size_t s = 0;
    for (size_t b = 0; b < nb; ++b) {
      bucket_begin[b] = uint32_t(s);
      while (s < n && (k == 0 || (sorted.stem_prefix(s) >> (64 - k)) == b)) ++s;
    }
    bucket_begin[nb] = uint32_t(n);
  }
  struct BucketTop {
    uint64_t prefix;
    uint32_t rep;
    uint8_t depth;
    Hash32 hash;
  };
  std::vector<BucketTop> bucket_item(nb);
  std::vector<uint8_t> bucket_has(nb, 0);
  std::vector<BatchRootStats> bstats(nb);
  std::vector<size_t> breduce(nb, 0);
  auto stem_of = [&](uint32_t rep) { return sorted.stem(rep); };
  auto run_buckets = [&](size_t b0, size_t b1) {
    ReduceScratch S;
    for (size_t b = b0; b < b1; ++b) {
      const size_t s0 = bucket_begin[b], s1 = bucket_begin[b + 1];
      if (s0 == s1) continue;
      const size_t ns = s1 - s0;
      S.begin(ns);
      hash_stems(h, sorted, s0, s1, S.pool.data(), &bstats[b]);  // stem hashes land in the pool
      bucket_has[b] = 1;
      if (ns == 1) {
        bucket_item[b] = {sorted.stem_prefix(s0), uint32_t(s0), depth[s0], S.pool.data()[0]};
        continue;
      }
      ReduceSlim* in = S.in.data();
      uint8_t* dep = S.depth.data();
      for (size_t i = 0; i < ns; ++i) {
        in[i] = {sorted.stem_prefix(s0 + i), uint32_t(s0 + i), uint32_t(i)};
        dep[i] = depth[s0 + i];
      }
      ReduceStats rs;
      const auto top = reduce_levels(h, stem_of, S, ns, k, &rs);
      assert(top.size() == 1);
      bucket_item[b] = {top[0].prefix, top[0].rep, uint8_t(k), S.pool.data()[top[0].hidx]};
      breduce[b] = rs.messages;
    }
  };
  if (opt.threads > 1) {
    pipeline::ThreadScope scope{unsigned(opt.threads)};
    pipeline::parallel_for(nb, 1, run_buckets);
  } else {
    run_buckets(0, nb);
  }
  ReduceScratch S;
  S.begin(nb);
  size_t ni = 0;
  for (size_t b = 0; b < nb; ++b) {
    if (bucket_has[b]) {
      const BucketTop& t = bucket_item[b];
      S.in.data()[ni] = {t.prefix, t.rep, uint32_t(ni)};
      S.depth.data()[ni] = t.depth;
      S.pool.data()[ni] = t.hash;
      ++ni;
    }
    if (stats) {
      stats->hash32_messages += bstats[b].hash32_messages;
      stats->hash64_messages += bstats[b].hash64_messages + breduce[b];
      stats->internal_nodes += breduce[b];
    }
  }
  ReduceStats rs;
  const auto top = reduce_levels(h, stem_of, S, ni, 0, &rs);
  if (stats) { stats->hash64_messages += rs.messages; stats->internal_nodes += rs.messages; }
  assert(top.size() == 1);
  return S.pool.data()[top[0].hidx];
}

}  // namespace st::bintrie

