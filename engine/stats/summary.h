// summary: median / min / max (and mean) of repeated measurements, the shape in which every
// statetree figure is reported. Pure, header-only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace st::stats {

struct Summary {
  double median = 0, min = 0, max = 0, mean = 0;
  size_t count = 0;
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(n);
  return s;
}

}  // namespace st::stats
