// bootstrap: the percentile bootstrap confidence interval of the ratio of two medians, and
// the coefficient of variation: how statetree says "B is r times A, 95 % CI [lo, hi]".
//
//   for each of `resamples` rounds: draw n_a values of a and n_b values of b with
//   replacement (a seeded splitmix64 stream: the same inputs and seed give the same CI),
//   ratio_i = median(b*) / median(a*); the CI is the (1-level)/2 and (1+level)/2 empirical
//   quantiles of the ratios (linear interpolation between order statistics).
//
// Invariants: lo <= hi; with a constant sample on each side lo = hi = the ratio; an empty
// sample or a zero median of a (resampled or not) gives ok = false, never a NaN interval.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace st::stats {

struct RatioCi {
  bool ok = false;
  double ratio = 0;     // median(b) / median(a) of the samples as given
  double lo = 0, hi = 0;
  double level = 0.95;
  size_t resamples = 0;
  uint64_t seed = 0;
};

RatioCi bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, size_t resamples = 10000,
                               uint64_t seed = 1, double level = 0.95);

// Median of an unsorted sample (0 for an empty one).
double median_of(std::span<const double> v);

// Sample standard deviation / mean (n - 1 in the denominator); 0 for fewer than 2 values or
// a zero mean.
double coefficient_of_variation(std::span<const double> v);

}  // namespace st::stats
