// mann_whitney: the Mann-Whitney U test (Wilcoxon rank-sum) for two independent samples, as
// statetree compares two configurations' timings. Pure functions, no allocation beyond the
// result's working arrays.
//
//   u_x = R_x - n_x (n_x + 1) / 2       R_x: the sum of x's ranks in the pooled sample
//                                       (ties get the mean of the ranks they span)
//   two-sided p:
//     exact        when there are no ties and n_x, n_y <= kExactMax: the null distribution
//                  of U counted by the recurrence P(i, j, u) = i/(i+j) P(i-1, j, u-j)
//                  + j/(i+j) P(i, j-1, u); p = 2 P(U >= max(u_x, u_y)), at most 1
//     asymptotic   otherwise: z = (max(u_x, u_y) - n_x n_y / 2 - 1/2) / sigma, with
//                  sigma^2 = n_x n_y / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))) over the
//                  tie groups t, p = 2 (1 - Phi(z)), at most 1 (continuity-corrected, as
//                  scipy.stats.mannwhitneyu's default)
//
// Invariants: 0 <= u_x <= n_x n_y and u_x + u_y = n_x n_y; p in [0, 1]; an empty sample
// gives p = 1 (no evidence) and method "none".
#pragma once

#include <cstddef>
#include <span>

namespace st::stats {

inline constexpr size_t kMannWhitneyExactMax = 50;

struct MannWhitney {
  double u_x = 0;         // U of the first sample (scipy's `statistic`)
  double u_y = 0;         // n_x n_y - u_x
  double p_two_sided = 1;
  double z = 0;           // the normal deviate (asymptotic method only, else 0)
  bool exact = false;     // which method gave p
  bool ties = false;      // the pooled sample has tied values
};

MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y);

// Standard normal upper tail, 1 - Phi(z).
double normal_sf(double z);

}  // namespace st::stats
