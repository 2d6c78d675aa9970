// bootstrap: resampled medians and their ratio's percentile interval (see bootstrap.h).
#include "engine/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/support/splitmix64.h"

namespace st::stats {

namespace {

// Uniform index in [0, n) (multiply-shift; the bias for n << 2^32 is far below resampling noise).
size_t draw(uint64_t& state, size_t n) { return size_t(st::uniform_below(state, n)); }

double median_in_place(std::vector<double>& v) {
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (n % 2) return hi;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + mid) + hi);
}

double resampled_median(std::span<const double> src, std::vector<double>& scratch, uint64_t& state) {
  scratch.resize(src.size());
  for (double& x : scratch) x = src[draw(state, src.size())];
  return median_in_place(scratch);
}

// Empirical quantile q in [0, 1] of a sorted vector, linear between order statistics.
double quantile_sorted(const std::vector<double>& s, double q) {
  const double pos = q * double(s.size() - 1);
  const size_t i = size_t(pos);
  if (i + 1 >= s.size()) return s.back();
  return s[i] + (pos - double(i)) * (s[i + 1] - s[i]);
}

}  // namespace

double median_of(std::span<const double> v) {
  if (v.empty()) return 0;
  std::vector<double> c(v.begin(), v.end());
  return median_in_place(c);
}

double coefficient_of_variation(std::span<const double> v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  if (mean == 0) return 0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(v.size() - 1)) / std::fabs(mean);
}

RatioCi bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, size_t resamples, uint64_t seed,
                               double level) {
  RatioCi r;
  r.level = level;
  r.resamples = resamples;
  r.seed = seed;
  if (a.empty() || b.empty() || resamples == 0 || !(level > 0 && level < 1)) return r;
  const double med_a = median_of(a);
  if (med_a == 0) return r;
  r.ratio = median_of(b) / med_a;
  std::vector<double> ratios, sa, sb;
  ratios.reserve(resamples);
  uint64_t state = seed;
  for (size_t i = 0; i < resamples; ++i) {
    const double ma = resampled_median(a, sa, state);
    const double mb = resampled_median(b, sb, state);
    if (ma == 0) return r;
    ratios.push_back(mb / ma);
  }
  std::sort(ratios.begin(), ratios.end());
  r.lo = quantile_sorted(ratios, (1 - level) / 2);
  r.hi = quantile_sorted(ratios, (1 + level) / 2);
  r.ok = true;
  return r;
}

}  // namespace st::stats
