// stats_test: the Mann-Whitney U test against values scipy.stats.mannwhitneyu 1.10.1 gives
// for the same samples (its documented example included: exact and asymptotic), the
// bootstrap CI of a ratio of medians by its defining properties, the coefficient of variation
// against a hand computation.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/stats/bootstrap.h"
#include "engine/stats/mann_whitney.h"

using namespace st::stats;

TEST_CASE("mann-whitney: scipy's documented example, exact (no ties, small samples)") {
  const std::vector<double> males{19, 22, 16, 29, 24}, females{20, 11, 17, 12};
  const MannWhitney r = mann_whitney_u(males, females);
  CHECK(r.exact);
  CHECK(!r.ties);
  CHECK(r.u_x == 17);
  CHECK(r.u_y == 3);
  CHECK(r.p_two_sided == doctest::Approx(0.1111111111111111).epsilon(1e-12));
  // symmetric in the order of the samples
  const MannWhitney s = mann_whitney_u(females, males);
  CHECK(s.u_x == 3);
  CHECK(s.p_two_sided == doctest::Approx(r.p_two_sided).epsilon(1e-12));
}

TEST_CASE("mann-whitney: exact p for larger samples and a clear shift") {
  // scipy: x = 0..29-ish normals vs shifted (seeded numpy draws, rounded to 3 decimals)
  const std::vector<double> c{10.691, 11.643, 10.661, 7.394, 11.811, 10.893, 8.926, 11.162, 10.729, 10.588,
                              10.057, 11.093, 8.527,  9.674, 9.036,  11.198, 10.079, 9.415, 8.436,  9.486,
                              10.016, 9.449,  12.588, 12.013, 4.578, 6.222,  9.65,   9.156, 10.427, 10.435};
  const std::vector<double> d{15.236, 8.776, 10.245, 15.086, 12.293, 12.326, 9.972, 7.704, 11.335,
                              11.218, 8.545, 9.634,  10.856, 9.11,   10.803, 11.191, 11.071, 9.987,
                              12.187, 12.782, 11.642, 9.364, 12.463, 9.997, 12.758};
  const MannWhitney r = mann_whitney_u(c, d);
  CHECK(r.exact);
  CHECK(r.u_x == 250);
  CHECK(r.p_two_sided == doctest::Approx(0.034583450132477704).epsilon(1e-9));
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) {
    x.push_back(i);
    y.push_back(i + 10.5);
  }
  const MannWhitney big = mann_whitney_u(x, y);
  CHECK(big.exact);
  CHECK(big.u_x == 780);
  CHECK(big.p_two_sided == doctest::Approx(0.001055016471113676).epsilon(1e-9));
}

TEST_CASE("mann-whitney: ties use the normal approximation with tie and continuity corrections") {
  const std::vector<double> a{1, 2, 2, 3, 3, 3, 4, 5, 6, 7, 7, 8}, b{2, 3, 4, 4, 5, 6, 6, 8, 9, 9, 10, 11, 12};
  const MannWhitney r = mann_whitney_u(a, b);
  CHECK(!r.exact);
  CHECK(r.ties);
  CHECK(r.u_x == 40.5);
  CHECK(r.p_two_sided == doctest::Approx(0.0431068246196337).epsilon(1e-9));
  const MannWhitney s = mann_whitney_u(std::vector<double>{1, 2, 2, 3}, std::vector<double>{2, 3, 4, 5});
  CHECK(s.u_x == 2.5);
  CHECK(s.p_two_sided == doctest::Approx(0.1366582477381475).epsilon(1e-9));
}

TEST_CASE("mann-whitney: degenerate inputs give p = 1, never NaN") {
  CHECK(mann_whitney_u(std::vector<double>{}, std::vector<double>{1, 2}).p_two_sided == 1);
  const MannWhitney same = mann_whitney_u(std::vector<double>{5, 5, 5}, std::vector<double>{5, 5});
  CHECK(same.p_two_sided == 1);
  CHECK(same.u_x == 3);
  const MannWhitney one = mann_whitney_u(std::vector<double>{1}, std::vector<double>{2});
  CHECK(one.exact);
  CHECK(one.p_two_sided == 1);  // 2 x P(U >= 1) = 2 x 1/2
}

TEST_CASE("bootstrap CI of a median ratio: exact for constants, deterministic by seed, covers the point") {
  const std::vector<double> a(9, 2.0), b(7, 5.0);
  RatioCi c = bootstrap_median_ratio(a, b, 1000, 7);
  REQUIRE(c.ok);
  CHECK(c.ratio == 2.5);
  CHECK(c.lo == 2.5);
  CHECK(c.hi == 2.5);

  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(100 + (i * 37 % 23));  // spread 100..122
    y.push_back(150 + (i * 53 % 31));  // spread 150..180
  }
  const RatioCi r1 = bootstrap_median_ratio(x, y, 10000, 42);
  const RatioCi r2 = bootstrap_median_ratio(x, y, 10000, 42);
  const RatioCi r3 = bootstrap_median_ratio(x, y, 10000, 43);
  REQUIRE(r1.ok);
  CHECK(r1.lo == r2.lo);
  CHECK(r1.hi == r2.hi);
  CHECK(r1.ratio == doctest::Approx(median_of(y) / median_of(x)));
  CHECK(r1.lo <= r1.ratio);
  CHECK(r1.ratio <= r1.hi);
  CHECK(r1.lo > 1.2);  // the samples do not overlap: the whole interval is well above 1
  CHECK(r1.hi < 1.8);
  CHECK((r3.lo != r1.lo || r3.hi != r1.hi));  // another seed, another resampling
  // more data, narrower interval
  std::vector<double> x4, y4;
  for (int k = 0; k < 4; ++k) {
    x4.insert(x4.end(), x.begin(), x.end());
    y4.insert(y4.end(), y.begin(), y.end());
  }
  const RatioCi r4 = bootstrap_median_ratio(x4, y4, 10000, 42);
  CHECK(r4.hi - r4.lo < r1.hi - r1.lo);
}

TEST_CASE("bootstrap: empty samples or a zero median are refused, not NaN") {
  CHECK(!bootstrap_median_ratio(std::vector<double>{}, std::vector<double>{1}).ok);
  CHECK(!bootstrap_median_ratio(std::vector<double>{0, 0, 0}, std::vector<double>{1, 2}).ok);
}

TEST_CASE("median and coefficient of variation") {
  CHECK(median_of(std::vector<double>{3, 1, 2}) == 2);
  CHECK(median_of(std::vector<double>{4, 1, 3, 2}) == 2.5);
  // 2,4,4,4,5,5,7,9: mean 5, sample sd sqrt(32/7) -> cv 0.427617987059879
  CHECK(coefficient_of_variation(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}) ==
        doctest::Approx(0.427617987059879).epsilon(1e-12));
  CHECK(coefficient_of_variation(std::vector<double>{5}) == 0);
}
