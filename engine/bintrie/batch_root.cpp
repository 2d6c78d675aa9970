// batch_root: sort, sparse stem subtrees, stem nodes, internal levels (see batch_root.h).
#include "engine/bintrie/batch_root.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

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

// Small batches (an incremental block): one comparison sort, no bucket table.
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
  if (in.size() < 32768) return sort_entries_small(in);
  // Counting sort on the top 16 key bits (stable: input order kept within a bucket), then a
  // comparison sort inside each bucket (a few entries each for random keys).
  constexpr unsigned kBucketBits = 16;
  constexpr size_t kBuckets = size_t(1) << kBucketBits;
  std::vector<uint32_t> bucket_start(kBuckets + 1, 0);
  for (const Entry& e : in) bucket_start[(size_t(e.key[0]) << 8 | e.key[1]) + 1]++;
  for (size_t b = 0; b < kBuckets; ++b) bucket_start[b + 1] += bucket_start[b];
  std::vector<SortRec> recs(in.size());
  {
    std::vector<uint32_t> fill(bucket_start.begin(), bucket_start.end() - 1);
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t b = size_t(in[i].key[0]) << 8 | in[i].key[1];
      recs[fill[b]++] = {load_be64(in[i].key.data()), uint32_t(i)};
    }
  }
  auto less = [&](const SortRec& a, const SortRec& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = std::memcmp(in[a.index].key.data() + 8, in[b.index].key.data() + 8, 24);
    if (c != 0) return c < 0;
    return a.index < b.index;
  };
  auto sort_buckets = [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      const size_t lo = bucket_start[b], hi = bucket_start[b + 1];
      if (hi - lo <= 1) continue;
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
    }
  };
  SortedEntries out;
  if (!materialize) {
    // Index form: no copy of the entries. Dedupe and stem starts compare prefixes first and
    // touch the (random-order) input only when the 8-byte prefixes are equal.
    if (threads > 1) {
      pipeline::ThreadScope scope{unsigned(threads)};
      pipeline::parallel_for(kBuckets, 1024, sort_buckets);
    } else {
      sort_buckets(0, kBuckets);
    }
    out.src = in.data();
    size_t kept_n = 0;  // compact in place: the records become the view
    for (size_t i = 0; i < recs.size(); ++i) {
      if (i + 1 < recs.size() && recs[i + 1].prefix == recs[i].prefix &&
          std::memcmp(in[recs[i + 1].index].key.data(), in[recs[i].index].key.data(), 32) == 0)
        continue;  // keep the last write of a run of equal keys
      recs[kept_n++] = recs[i];
    }
    recs.resize(kept_n);
    out.ref = std::move(recs);
    const size_t kept = out.ref.size();
    out.stem_begin.reserve(kept + 1);
    for (size_t i = 0; i < kept; ++i) {
      if (i == 0 || out.ref[i].prefix != out.ref[i - 1].prefix ||
          std::memcmp(in[out.ref[i].index].key.data(), in[out.ref[i - 1].index].key.data(), 31) != 0)
        out.stem_begin.push_back(uint32_t(i));
    }
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

void hash_stems(const Hasher& h, const SortedEntries& sorted, size_t s0, size_t s1, Bytes32* stem_hash_out,
                BatchRootStats* stats) {
  StemLevels L;
  std::vector<Bytes32> msgs;
  size_t n32 = 0, n64 = 0;
  for (size_t c0 = s0; c0 < s1; c0 += kStemChunk) {
    const size_t c1 = std::min(s1, c0 + kStemChunk);
    const size_t e0 = sorted.stem_begin[c0], e1 = sorted.stem_begin[c1];
    const size_t ne = e1 - e0;
    // Leaves: H(value) for every present value.
    L.hash.resize(ne);
    L.pos.resize(ne);
    if (sorted.src) {
      constexpr size_t kAhead = 16;  // index form: random reads, keep several misses in flight
      for (size_t i = 0; i < ne; ++i) {
        if (i + kAhead < ne) __builtin_prefetch(&sorted.entry(e0 + i + kAhead).value);
        const Entry& e = sorted.entry(e0 + i);
        L.hash[i] = e.value;
        L.pos[i] = e.key[31];
      }
    } else {
      for (size_t i = 0; i < ne; ++i) {
        L.hash[i] = sorted.entries[e0 + i].value;
        L.pos[i] = sorted.entries[e0 + i].key[31];
      }
    }
    h.hash32_batch(L.hash[0].data(), L.hash[0].data(), ne);
    n32 += ne;
    L.off.resize(c1 - c0 + 1);
    for (size_t s = c0; s <= c1; ++s) L.off[s - c0] = sorted.stem_begin[s] - uint32_t(e0);
    n64 += stem_subtree_roots(h, L);
    // Stem nodes: H(stem || 0x00 || R).
    const size_t ns = c1 - c0;
    msgs.resize(2 * ns);
    for (size_t s = 0; s < ns; ++s) {
      uint8_t* msg = msgs[2 * s].data();
      std::memcpy(msg, sorted.stem(c0 + s), 31);
      msg[31] = 0;
      std::memcpy(msg + 32, L.hash[s].data(), 32);
    }
    h.hash64_batch(msgs[0].data(), stem_hash_out[c0 - s0].data(), ns);
    n64 += ns;
  }
  if (stats) {
    stats->hash32_messages += n32;
    stats->hash64_messages += n64;
  }
}

Bytes32 batch_root_sorted(const Hasher& h, const SortedEntries& sorted, const BatchRootOptions& opt,
                          BatchRootStats* stats) {
  const size_t n = sorted.stems();
  if (stats) { stats->entries = sorted.size(); stats->stems = n; }
  if (n == 0) return Bytes32{};
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
  std::vector<ReduceItem> bucket_item(nb);
  std::vector<uint8_t> bucket_has(nb, 0);
  std::vector<BatchRootStats> bstats(nb);
  std::vector<size_t> breduce(nb, 0);
  auto run_buckets = [&](size_t b0, size_t b1) {
    std::vector<Bytes32> stem_hash;
    std::vector<ReduceItem> items;
    for (size_t b = b0; b < b1; ++b) {
      const size_t s0 = bucket_begin[b], s1 = bucket_begin[b + 1];
      if (s0 == s1) continue;
      stem_hash.resize(s1 - s0);
      hash_stems(h, sorted, s0, s1, stem_hash.data(), &bstats[b]);
      bucket_has[b] = 1;
      if (s1 - s0 == 1) {
        bucket_item[b] = {uint32_t(s0), depth[s0], sorted.stem_prefix(s0), stem_hash[0]};
        continue;
      }
      items.resize(s1 - s0);
      for (size_t i = s0; i < s1; ++i) items[i - s0] = {uint32_t(i), depth[i], sorted.stem_prefix(i), stem_hash[i - s0]};
      ReduceStats rs;
      auto top = reduce_levels(h, sorted, std::move(items), k, &rs);
      items = {};
      assert(top.size() == 1);
      bucket_item[b] = top[0];
      breduce[b] = rs.messages;
    }
  };
  if (opt.threads > 1) {
    pipeline::ThreadScope scope{unsigned(opt.threads)};
    pipeline::parallel_for(nb, 1, run_buckets);
  } else {
    run_buckets(0, nb);
  }
  std::vector<ReduceItem> items;
  for (size_t b = 0; b < nb; ++b) {
    if (bucket_has[b]) items.push_back(bucket_item[b]);
    if (stats) {
      stats->hash32_messages += bstats[b].hash32_messages;
      stats->hash64_messages += bstats[b].hash64_messages + breduce[b];
      stats->internal_nodes += breduce[b];
    }
  }
  ReduceStats rs;
  auto top = reduce_levels(h, sorted, std::move(items), 0, &rs);
  if (stats) { stats->hash64_messages += rs.messages; stats->internal_nodes += rs.messages; }
  assert(top.size() == 1);
  return top[0].hash;
}

Bytes32 batch_root(const Hasher& h, std::span<const Entry> entries, const BatchRootOptions& opt,
                   BatchRootStats* stats) {
  const SortedEntries sorted = sort_entries(entries, opt.threads, /*materialize=*/false);
  return batch_root_sorted(h, sorted, opt, stats);
}

}  // namespace st::bintrie

namespace st::bintrie {

std::vector<ReduceItem> reduce_levels(const Hasher& h, const SortedEntries& sorted, std::vector<ReduceItem> items,
                                      unsigned stop_depth, ReduceStats* stats) {
  return reduce_levels_generic(h, [&](uint32_t rep) { return sorted.stem(rep); }, std::move(items), stop_depth, stats);
}

}  // namespace st::bintrie
