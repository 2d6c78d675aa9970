// summary: the one shape in which every statetree figure is reported: median, mean,
// standard deviation, min and max of repeated measurements, with the samples themselves;
// device latencies add nearest-rank percentiles (p50, p90, p99, p99.9). Pure, header-only.
//
// Definitions (tested against hand-computed values in tests/engine/summary_test.cpp):
//   median   middle sample of the sorted samples; mean of the two middle ones for an even count
//   stddev   sample standard deviation, sqrt(sum (x - mean)^2 / (n - 1)); 0 for n < 2
//   cv       coefficient of variation, stddev / mean (0 when the mean is 0)
//   pXX      nearest rank: the ceil(q * n)-th smallest sample (1-based), 0 < q <= 1
//
// Noise rule (as hyperfine warns on outliers): a timing summary of at least 3 samples is
// NOISY when its coefficient of variation exceeds kNoisyCv (10 %) or its maximum exceeds
// kNoisyMaxOverMedian (2) times its median. Either means some repetitions ran on a busy
// machine (another process, frequency changes, a cold cache): the median still stands,
// but the spread says to rerun on an idle machine before comparing figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace st::stats {

inline constexpr double kNoisyCv = 0.10;
inline constexpr double kNoisyMaxOverMedian = 2.0;
inline constexpr size_t kNoisyMinSamples = 3;

struct Summary {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  size_t count = 0;
  std::vector<double> samples;  // as measured, in order

  double cv() const { return mean != 0 ? stddev / std::fabs(mean) : 0; }
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  s.count = v.size();
  s.samples = v;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(n);
  if (n >= 2) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / double(n - 1));
  }
  return s;
}

// The summary with every figure (and sample) divided by `by`, e.g. a per-message cost.
inline Summary scaled(Summary s, double by) {
  s.median /= by; s.min /= by; s.max /= by; s.mean /= by; s.stddev /= std::fabs(by);
  for (double& x : s.samples) x /= by;
  return s;
}

// Why a timing summary is noisy ("" when it is not): the rule in the header comment.
inline std::string noise_reason(const Summary& s) {
  if (s.count < kNoisyMinSamples) return "";
  char buf[96];
  if (s.median > 0 && s.max > kNoisyMaxOverMedian * s.median) {
    std::snprintf(buf, sizeof buf, "max %.2fx the median", s.max / s.median);
    return buf;
  }
  if (s.cv() > kNoisyCv) {
    std::snprintf(buf, sizeof buf, "coefficient of variation %.0f %%", 100.0 * s.cv());
    return buf;
  }
  return "";
}

// Nearest-rank percentile (0 < q <= 1) of a sample; 0 for an empty one.
template <class T>
T percentile(std::vector<T> v, double q) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  size_t rank = size_t(std::ceil(q * double(v.size()) - 1e-9));  // (0.9 * 10 must be rank 9)
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// A device's latency distribution (fio's shape): percentiles of per-operation latencies.
struct Latency {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, mean = 0, max = 0;
  size_t count = 0;
};

template <class T>
Latency latency(const std::vector<T>& v) {
  Latency l;
  l.count = v.size();
  if (v.empty()) return l;
  std::vector<double> d(v.begin(), v.end());
  std::sort(d.begin(), d.end());
  auto at = [&](double q) {
    size_t rank = std::clamp<size_t>(size_t(std::ceil(q * double(d.size()) - 1e-9)), 1, d.size());
    return d[rank - 1];
  };
  l.p50 = at(0.50);
  l.p90 = at(0.90);
  l.p99 = at(0.99);
  l.p999 = at(0.999);
  double sum = 0;
  for (double x : d) sum += x;
  l.mean = sum / double(d.size());
  l.max = d.back();
  return l;
}

}  // namespace st::stats
