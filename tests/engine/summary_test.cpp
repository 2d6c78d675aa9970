// summary_test: engine/stats/summary.h against hand-computed values: median, mean, sample
// standard deviation, min, max, the samples kept in order, nearest-rank percentiles and the
// noise rule (cv > 10 % or max > 2x median, at least 3 samples); the log-bucket histogram
// (exact below 128 and at bucket lower bounds, within 1/64 otherwise; merge, clear).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/stats/summary.h"

using st::stats::summarize;

TEST_CASE("summarize: median, mean, sample stddev, min, max, samples") {
  // 2 4 4 4 5 5 7 9: sum 40, mean 5; squared deviations 9 1 1 1 0 0 4 16 = 32;
  // sample variance 32 / 7; median (4 + 5) / 2.
  const std::vector<double> v{9, 4, 2, 5, 4, 7, 4, 5};
  const auto s = summarize(v);
  CHECK(s.count == 8);
  CHECK(s.median == 4.5);
  CHECK(s.mean == 5.0);
  CHECK(s.min == 2.0);
  CHECK(s.max == 9.0);
  CHECK(s.stddev == doctest::Approx(std::sqrt(32.0 / 7.0)).epsilon(1e-12));
  CHECK(s.cv() == doctest::Approx(std::sqrt(32.0 / 7.0) / 5.0).epsilon(1e-12));
  CHECK(s.samples == v);  // as measured, not sorted

  // Odd count: the middle one. 1 2 10: mean 13/3, deviations (-10/3)^2 + (-7/3)^2 + (17/3)^2
  // = (100 + 49 + 289) / 9 = 438 / 9; / 2 = 73 / 3.
  const auto o = summarize({10, 1, 2});
  CHECK(o.median == 2.0);
  CHECK(o.stddev == doctest::Approx(std::sqrt(73.0 / 3.0)).epsilon(1e-12));

  // One sample: no spread; none: all zero.
  const auto one = summarize({3.5});
  CHECK(one.median == 3.5);
  CHECK(one.stddev == 0.0);
  CHECK(summarize({}).count == 0);
}

TEST_CASE("scaled divides every figure and sample") {
  const auto s = st::stats::scaled(summarize({2, 4, 6}), 2.0);
  CHECK(s.median == 2.0);
  CHECK(s.mean == 2.0);
  CHECK(s.min == 1.0);
  CHECK(s.max == 3.0);
  CHECK(s.stddev == doctest::Approx(1.0));  // stddev of 2 4 6 is 2
  CHECK(s.samples == std::vector<double>{1, 2, 3});
}

TEST_CASE("nearest-rank percentiles, fio's p50 / p90 / p99 / p99.9") {
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);
  const auto l = st::stats::latency(ten);
  CHECK(l.p50 == 5.0);   // rank ceil(0.5 * 10) = 5
  CHECK(l.p90 == 9.0);   // rank 9
  CHECK(l.p99 == 10.0);  // rank ceil(9.9) = 10
  CHECK(l.p999 == 10.0);
  CHECK(l.mean == 5.5);
  CHECK(l.max == 10.0);
  std::vector<uint64_t> thousand;
  for (uint64_t i = 1; i <= 1000; ++i) thousand.push_back(i);
  const auto t = st::stats::latency(thousand);
  CHECK(t.p50 == 500.0);
  CHECK(t.p90 == 900.0);
  CHECK(t.p99 == 990.0);
  CHECK(t.p999 == 999.0);
  CHECK(st::stats::percentile(thousand, 0.999) == 999u);
  CHECK(st::stats::latency(std::vector<double>{}).count == 0);
}

TEST_CASE("the noise rule: cv > 10 % or max > 2x median, from 3 samples") {
  CHECK(st::stats::noise_reason(summarize({10, 10.1, 9.9})).empty());
  // max 25 = 2.5x the median 10
  CHECK(st::stats::noise_reason(summarize({10, 10, 10, 25})).find("max 2.50x") == 0);
  // mean 10, sample stddev sqrt(8 / 4) = 1.41: cv 14 %, max 12 < 2x median
  CHECK(st::stats::noise_reason(summarize({10, 12, 8, 10, 10})).find("coefficient of variation 14 %") == 0);
  // two samples are never called noisy
  CHECK(st::stats::noise_reason(summarize({1, 100})).empty());
}

TEST_CASE("LogHistogram: exact below 128 and at bucket lower bounds; within 1/64 below the exact nearest rank otherwise") {
  using st::stats::LogHistogram;
  // The bucket map: each value's bucket starts at or below it, the next starts above it.
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 129ull, 130ull, 255ull, 256ull, 1000ull, 123456ull, 99999999ull,
                     (1ull << 40) - 1}) {
    CAPTURE(v);
    const size_t b = LogHistogram::bucket_of(v);
    CHECK(b < LogHistogram::kBuckets);
    CHECK(LogHistogram::lower_bound_of(b) <= v);
    if (b + 1 < LogHistogram::kBuckets) CHECK(LogHistogram::lower_bound_of(b + 1) > v);
  }
  CHECK(LogHistogram::bucket_of((1ull << 40) - 1) == LogHistogram::kBuckets - 1);
  CHECK(LogHistogram::bucket_of(1ull << 50) == LogHistogram::kBuckets - 1);

  // 1..100 shuffled: every value has its own bucket, so the percentiles are the samples'.
  LogHistogram h;
  for (uint64_t i = 0; i < 100; ++i) h.add((i * 37) % 100 + 1);
  CHECK(h.count() == 100);
  CHECK(h.min() == 1);
  CHECK(h.max() == 100);
  CHECK(h.mean() == 50.5);
  CHECK(h.percentile(0.50) == 50);
  CHECK(h.percentile(0.90) == 90);
  CHECK(h.percentile(0.99) == 99);
  CHECK(h.percentile(1.0) == 100);

  // Samples on bucket lower bounds (m * 2^s), in microseconds' range: exact, and equal to
  // the nearest-rank percentiles of the samples themselves.
  std::vector<uint64_t> exact;
  for (uint64_t m = 64; m < 128; m += 3)
    for (unsigned s : {4u, 10u, 14u}) exact.push_back(m << s);
  LogHistogram e;
  for (uint64_t v : exact) e.add(v);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    CAPTURE(q);
    CHECK(e.percentile(q) == st::stats::percentile(exact, q));
  }
  const auto l = e.latency(1000.0);
  CHECK(l.count == exact.size());
  CHECK(l.p99 == double(st::stats::percentile(exact, 0.99)) / 1000.0);
  CHECK(l.max == double(*std::max_element(exact.begin(), exact.end())) / 1000.0);

  // Arbitrary values: within (x * 63/64, x] of the exact nearest-rank sample x.
  std::vector<uint64_t> any;
  uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) any.push_back((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 44);
  LogHistogram a;
  for (uint64_t v : any) a.add(v);
  for (double q : {0.5, 0.9, 0.99}) {
    CAPTURE(q);
    const uint64_t want = st::stats::percentile(any, q), got = a.percentile(q);
    CHECK(got <= want);
    CHECK(double(got) > double(want) * 63.0 / 64.0);
  }
  CHECK(a.max() == *std::max_element(any.begin(), any.end()));

  // merge: as if every sample had been added to one histogram; clear: empty.
  LogHistogram first, second;
  for (size_t i = 0; i < any.size(); ++i) (i % 3 ? first : second).add(any[i]);
  first.merge(second);
  CHECK(first.count() == a.count());
  CHECK(first.min() == a.min());
  CHECK(first.max() == a.max());
  for (double q : {0.5, 0.9, 0.99}) CHECK(first.percentile(q) == a.percentile(q));
  first.clear();
  CHECK(first.count() == 0);
  CHECK(first.percentile(0.5) == 0);
  CHECK(first.latency().count == 0);
}
