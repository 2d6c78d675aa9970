// summary: the one shape in which every statetree figure is reported: median, mean,
// standard deviation, min and max of repeated measurements, with the samples themselves;
// device latencies add nearest-rank percentiles (p50, p90, p99, p99.9), from the samples
// themselves or, where there are too many to keep, from a log-bucket histogram
// (LogHistogram, below). Pure, header-only.
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
#include <array>
#include <bit>
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

// A log-bucket histogram of non-negative integer samples (device latencies in ns), fixed
// size (no allocation; mergeable), for runs with too many samples to keep:
//   v < 128                 its own bucket: exact
//   v >= 128                bucket [m * 2^s, (m + 1) * 2^s) with m in [64, 128), s >= 1:
//                           64 buckets per power of two, each 1/64 (1.6 %) of its lower bound wide
//   v >= 2^kMaxBits         counted in the last bucket (max stays exact)
// percentile(q) is the nearest rank over the buckets (the ceil(q * n)-th smallest sample's
// bucket), reported as that bucket's lower bound clamped to [min, max]: for the exact
// nearest-rank sample x it is in (x * 63/64, x], equal to x when x is a bucket's lower bound
// (every x < 128, and every m * 2^s). count, min, max and mean are exact.
class LogHistogram {
 public:
  static constexpr unsigned kSubBits = 6;                 // 64 buckets per power of two
  static constexpr uint64_t kSub = uint64_t(1) << kSubBits;
  static constexpr unsigned kMaxBits = 40;                // ~1,100 s in ns
  static constexpr size_t kBuckets = 2 * kSub + (kMaxBits - kSubBits - 1) * kSub;  // 2,240

  static size_t bucket_of(uint64_t v) {
    if (v >= (uint64_t(1) << kMaxBits)) return kBuckets - 1;
    if (v < 2 * kSub) return size_t(v);
    const unsigned shift = unsigned(std::bit_width(v)) - 1 - kSubBits;  // >= 1
    return size_t(2 * kSub + (shift - 1) * kSub + ((v >> shift) - kSub));
  }
  static uint64_t lower_bound_of(size_t i) {
    if (i < 2 * kSub) return i;
    const size_t j = i - 2 * kSub;
    return (kSub + j % kSub) << (j / kSub + 1);
  }

  void add(uint64_t v) {
    counts_[bucket_of(v)] += 1;
    if (count_ == 0 || v < min_) min_ = v;
    if (v > max_) max_ = v;
    count_ += 1;
    sum_ += double(v);
  }
  void merge(const LogHistogram& o) {
    if (o.count_ == 0) return;
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    min_ = count_ ? std::min(min_, o.min_) : o.min_;
    max_ = std::max(max_, o.max_);
    count_ += o.count_;
    sum_ += o.sum_;
  }
  void clear() { *this = LogHistogram(); }

  uint64_t count() const { return count_; }
  uint64_t min() const { return min_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? sum_ / double(count_) : 0; }
  // Nearest rank (0 < q <= 1), as in the header comment; 0 when empty.
  uint64_t percentile(double q) const {
    if (count_ == 0) return 0;
    uint64_t rank = uint64_t(std::ceil(q * double(count_) - 1e-9));
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::clamp(lower_bound_of(i), min_, max_);
    }
    return max_;
  }
  // The distribution in latency()'s shape, every figure divided by `unit` (1000: ns -> us).
  Latency latency(double unit = 1) const {
    Latency l;
    l.count = size_t(count_);
    if (count_ == 0) return l;
    l.p50 = double(percentile(0.50)) / unit;
    l.p90 = double(percentile(0.90)) / unit;
    l.p99 = double(percentile(0.99)) / unit;
    l.p999 = double(percentile(0.999)) / unit;
    l.mean = mean() / unit;
    l.max = double(max_) / unit;
    return l;
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0, min_ = 0, max_ = 0;
  double sum_ = 0;
};

}  // namespace st::stats
