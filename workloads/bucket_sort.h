// bucket_sort: the sort the loaders use for millions of keys (genesis addresses, --kv keys):
// one counting pass scatters the items into 65536 buckets by the top 16 bits of a 64-bit
// prefix, then each bucket is sorted by the full order. Random keys leave ~n/65536 items per
// bucket, so the comparison sort runs on tiny ranges; skewed keys fall back to one std::sort.
//
// Invariant required of the caller: top64(a) < top64(b) implies less(a, b) (the prefix is the
// most significant part of the order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workloads/huge_pages.h"

namespace st::workloads {

template <class T, class Top64, class Less>
void bucket_sort(std::vector<T>& items, Top64 top64, Less less) {
  if (items.size() < 8192) {
    std::sort(items.begin(), items.end(), less);
    return;
  }
  constexpr size_t kBuckets = size_t(1) << 16;
  std::vector<size_t> start(kBuckets + 1, 0);
  for (const T& x : items) ++start[(top64(x) >> 48) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::vector<T> out;
  out.reserve(items.size());
  advise_huge_pages(out.data(), items.size() * sizeof(T));
  out.resize(items.size());
  std::vector<size_t> pos(start.begin(), start.end() - 1);
  for (const T& x : items) out[pos[top64(x) >> 48]++] = x;
  for (size_t b = 0; b < kBuckets; ++b)
    if (start[b + 1] - start[b] > 1) std::sort(out.begin() + start[b], out.begin() + start[b + 1], less);
  items.swap(out);
}

}  // namespace st::workloads
