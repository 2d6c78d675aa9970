// sort_partition: top-bits partition and per-bucket sort (see sort_partition.h).
#include "engine/bintrie/sort_partition.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

#include "engine/bintrie/stem_bits.h"
#include "engine/pipeline/parallel.h"

namespace st::bintrie {

TopBitsPartition partition_top_bits(std::span<const Entry> in, unsigned bits, unsigned threads) {
  assert(bits <= 24 && threads >= 1);
  const size_t n = in.size();
  const size_t nb = size_t(1) << bits;
  // bucket of a prefix; bits == 0 -> 0 (a shift by 64 is undefined)
  const unsigned shift = bits == 0 ? 63 : 64 - bits;
  const uint64_t mask = bits == 0 ? 0 : ~uint64_t(0);
  TopBitsPartition out;
  out.bits = bits;
  out.recs = BigArray<SortedRef>(n);  // left uninitialized: every slot is written below
  out.begin.assign(nb + 1, 0);
  // Slices: one per thread (a thread's runs inside each bucket follow slice order).
  const size_t slices = (threads > 1 && n >= 65536) ? threads : 1;
  auto slice_lo = [&](size_t t) { return n * t / slices; };
  // Pass 1 reads the input once (64 B per entry, sequential): the 8-byte key prefixes go to
  // a compact array and the bucket sizes are counted; pass 2 scatters from that array
  // (8 B per entry) instead of reading the input again.
  BigArray<uint64_t> prefix(n);
  std::vector<uint32_t> count(slices * nb, 0);
  auto count_slice = [&](size_t t) {
    uint32_t* c = count.data() + t * nb;
    const Entry* e = in.data();
    uint64_t* pre = prefix.get();
    for (size_t i = slice_lo(t), hi = slice_lo(t + 1); i < hi; ++i) {
      const uint64_t p = load_be64(e[i].key.data());
      pre[i] = p;
      c[(p & mask) >> shift]++;
    }
  };
  auto scatter_slice = [&](size_t t) {
    uint32_t* fill = count.data() + t * nb;  // now the slice's write cursor per bucket
    SortedRef* recs = out.recs.get();
    const uint64_t* pre = prefix.get();
    for (size_t i = slice_lo(t), hi = slice_lo(t + 1); i < hi; ++i) {
      const uint64_t p = pre[i];
      recs[fill[(p & mask) >> shift]++] = {p, uint32_t(i)};
    }
  };
  // Slices run with parallel_for in the caller's ThreadScope (batch_root holds one).
  auto each_slice = [&](auto&& body) {
    if (slices == 1) { body(0); return; }
    pipeline::parallel_for(slices, 1, [&](size_t t0, size_t t1) { for (size_t t = t0; t < t1; ++t) body(t); });
  };
  each_slice(count_slice);
  // Counts -> cursors: bucket by bucket, slice runs in slice order.
  uint32_t pos = 0;
  for (size_t b = 0; b < nb; ++b) {
    out.begin[b] = pos;
    for (size_t t = 0; t < slices; ++t) {
      const uint32_t c = count[t * nb + b];
      count[t * nb + b] = pos;
      pos += c;
    }
  }
  out.begin[nb] = pos;
  each_slice(scatter_slice);
  return out;
}

void sort_bucket(const Entry* src, const SortedRef* recs, size_t m, unsigned shared_bits, SortedBucket& out) {
  out.entries = out.stems = 0;
  uint32_t* sb = out.stem_begin.grow(m + 1);
  sb[0] = 0;
  if (m == 0) return;
  SortedRef* r = out.ref.grow(m);
  auto less = [&](const SortedRef& a, const SortedRef& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = std::memcmp(src[a.index].key.data() + 8, src[b.index].key.data() + 8, 24);
    if (c != 0) return c < 0;
    return a.index < b.index;
  };
  // Counting sort (stable) on the `cb` key bits right below the shared ones: about one
  // record per counter for random keys. No counter bits left (shared_bits >= 64): runs
  // of the whole bucket, sorted by comparison below.
  const unsigned avail = shared_bits >= 64 ? 0 : 64 - shared_bits;
  const unsigned cb = std::min<unsigned>(avail, std::clamp<unsigned>(unsigned(std::bit_width(m)), 1, 16));
  if (cb == 0 || m < 8) {
    std::copy(recs, recs + m, r);
    out.counter.assign(2, 0);
    out.counter[1] = uint32_t(m);
  } else {
    const unsigned drop = 64 - shared_bits - cb;  // low bits below the counter bits
    const uint64_t keep = avail == 64 ? ~uint64_t(0) : (uint64_t(1) << avail) - 1;
    auto digit = [&](uint64_t p) { return size_t((p & keep) >> drop); };
    const size_t nc = size_t(1) << cb;
    out.counter.assign(nc + 1, 0);
    uint32_t* c = out.counter.data();
    for (size_t i = 0; i < m; ++i) c[digit(recs[i].prefix) + 1]++;
    for (size_t j = 0; j < nc; ++j) c[j + 1] += c[j];
    // c[j] is digit j's write cursor; after the scatter c[j] = end of run j = start of j+1.
    for (size_t i = 0; i < m; ++i) r[c[digit(recs[i].prefix)]++] = recs[i];
    // Shift back so that runs are [c[j], c[j+1]) again.
    std::memmove(c + 1, c, nc * sizeof(uint32_t));
    c[0] = 0;
  }
  // Only records of one counter's run can be out of order: one insertion sort over the
  // whole bucket (for random keys nearly every step is one compare, no move). Skewed keys
  // give long runs: past a budget of moves, each run is finished by std::sort instead.
  size_t moves = 0;
  const size_t budget = 8 * m + 64;
  for (size_t i = 1; i < m && moves <= budget; ++i) {
    if (!less(r[i], r[i - 1])) continue;
    const SortedRef x = r[i];
    size_t k = i;
    do { r[k] = r[k - 1]; --k; ++moves; } while (k > 0 && less(x, r[k - 1]));
    r[k] = x;
  }
  if (moves > budget) {
    const uint32_t* c = out.counter.data();
    for (size_t j = 0; j + 1 < out.counter.size(); ++j)
      if (c[j + 1] - c[j] > 1) std::sort(r + c[j], r + c[j + 1], less);
  }
  // Keep the last write of each key; mark stem starts (compaction in place, kept <= i).
  // The input is read only when two 8-byte prefixes tie.
  size_t kept = 0, stems = 0;
  for (size_t i = 0; i < m; ++i) {
    const SortedRef x = r[i];
    if (i + 1 < m && r[i + 1].prefix == x.prefix &&
        std::memcmp(src[r[i + 1].index].key.data(), src[x.index].key.data(), 32) == 0)
      continue;
    if (kept == 0 || r[kept - 1].prefix != x.prefix ||
        std::memcmp(src[r[kept - 1].index].key.data(), src[x.index].key.data(), 31) != 0)
      sb[stems++] = uint32_t(kept);
    r[kept++] = x;
  }
  sb[stems] = uint32_t(kept);
  out.entries = kept;
  out.stems = stems;
}

}  // namespace st::bintrie
