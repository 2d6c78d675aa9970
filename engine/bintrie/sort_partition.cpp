// sort_partition: top-bits partition and per-bucket sort (see sort_partition.h).
#include "engine/bintrie/sort_partition.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

#include "engine/bintrie/stem_bits.h"
#include "engine/bintrie/stem_subtree.h"
#include "engine/pipeline/parallel.h"
#include "kernels/stream_store.h"

namespace st::bintrie {
namespace {

// One 64-byte entry to a 64-byte aligned destination with non-temporal stores: the scatter
// writes whole cache lines, so the stores skip the read-for-ownership a normal store would
// make (measured on the 1M-key partition: 31 -> 20 ms thread CPU) and do not evict the
// input from the caches.
inline void store_entry_stream(Entry* dst, const uint8_t* src64) { kernels::stream_copy64(dst, src64); }

// Orders the streaming stores before the stores that publish the work as done.
inline void store_stream_fence() { kernels::stream_fence(); }

}  // namespace

void partition_entries(std::span<const Entry> in, unsigned bits, unsigned threads, EntryPartition& out) {
  assert(bits <= 24 && threads >= 1);
  const size_t n = in.size();
  const size_t nb = size_t(1) << bits;
  const unsigned shift = bits == 0 ? 63 : 64 - bits;
  const uint64_t mask = bits == 0 ? 0 : ~uint64_t(0);
  out.bits = bits;
  out.n = n;
  static_assert(sizeof(Entry) == 64, "an entry is one cache line");
  Entry* dst = out.ent.reserve(n);
  assert(reinterpret_cast<uintptr_t>(dst) % 64 == 0);
  out.begin.assign(nb + 1, 0);
  const size_t slices = (threads > 1 && n >= 65536) ? threads : 1;
  auto slice_lo = [&](size_t t) { return n * t / slices; };
  out.count.assign(slices * nb, 0);
  uint32_t* count = out.count.data();
  // Pass 1: bucket sizes per slice (reads the first 8 key bytes of every entry).
  auto count_slice = [&](size_t t) {
    uint32_t* c = count + t * nb;
    const Entry* e = in.data();
    for (size_t i = slice_lo(t), hi = slice_lo(t + 1); i < hi; ++i) c[(load_be64(e[i].key.data()) & mask) >> shift]++;
  };
  // Pass 2: every entry copied to its bucket's cursor (64 bytes, one cache line when the
  // block is 64-byte aligned, which large_alloc guarantees).
  auto scatter_slice = [&](size_t t) {
    uint32_t* fill = count + t * nb;
    const Entry* e = in.data();
    for (size_t i = slice_lo(t), hi = slice_lo(t + 1); i < hi; ++i) {
      const uint8_t* src = e[i].key.data();
      Entry* d = dst + fill[(load_be64(src) & mask) >> shift]++;
      store_entry_stream(d, src);
    }
    store_stream_fence();
  };
  auto each_slice = [&](auto&& body) {
    if (slices == 1) { body(0); return; }
    pipeline::parallel_for(slices, 1, [&](size_t t0, size_t t1) { for (size_t t = t0; t < t1; ++t) body(t); });
  };
  each_slice(count_slice);
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
}

namespace {

// rec_at(i): the i-th record of the bucket (prefix, index into src), i < m, in input order.
template <class RecAt>
void sort_bucket_impl(const Entry* src, RecAt&& rec_at, size_t m, unsigned shared_bits, SortedBucket& out) {
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
    for (size_t i = 0; i < m; ++i) r[i] = rec_at(i);
    out.counter.assign(2, 0);
    out.counter[1] = uint32_t(m);
  } else {
    const unsigned drop = 64 - shared_bits - cb;  // low bits below the counter bits
    const uint64_t keep = avail == 64 ? ~uint64_t(0) : (uint64_t(1) << avail) - 1;
    auto digit = [&](uint64_t p) { return size_t((p & keep) >> drop); };
    const size_t nc = size_t(1) << cb;
    out.counter.assign(nc + 1, 0);
    uint32_t* c = out.counter.data();
    for (size_t i = 0; i < m; ++i) c[digit(rec_at(i).prefix) + 1]++;
    for (size_t j = 0; j < nc; ++j) c[j + 1] += c[j];
    // c[j] is digit j's write cursor; after the scatter c[j] = end of run j = start of j+1.
    for (size_t i = 0; i < m; ++i) {
      const SortedRef x = rec_at(i);
      r[c[digit(x.prefix)]++] = x;
    }
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

}  // namespace

void sort_bucket_entries(const Entry* ent, size_t m, unsigned shared_bits, SortedBucket& out) {
  sort_bucket_impl(ent, [&](size_t i) { return SortedRef{load_be64(ent[i].key.data()), uint32_t(i)}; }, m,
                   shared_bits, out);
}

}  // namespace st::bintrie
