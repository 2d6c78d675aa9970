// mann_whitney: ranks with ties, the exact null distribution of U, and the normal
// approximation (see mann_whitney.h).
#include "engine/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace st::stats {

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

namespace {

struct RankSums {
  double rank_sum_x = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  bool ties = false;
};

RankSums rank_sums(std::span<const double> x, std::span<const double> y) {
  std::vector<std::pair<double, bool>> pooled;  // (value, from x)
  pooled.reserve(x.size() + y.size());
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  RankSums r;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = double(j - i);
    const double mean_rank = 0.5 * (double(i + 1) + double(j));  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) r.rank_sum_x += mean_rank;
    if (t > 1) {
      r.ties = true;
      r.tie_term += t * t * t - t;
    }
    i = j;
  }
  return r;
}

// P(U >= u) under the null for sample sizes m, n (no ties), by the recurrence over
// (i, j): P(i, j, k) = i/(i+j) P(i-1, j, k-j) + j/(i+j) P(i, j-1, k).
double exact_upper_tail(size_t m, size_t n, double u) {
  const size_t u_max = m * n;
  // prev[j][k] = P(i-1, j, k), cur[j][k] = P(i, j, k)
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(u_max + 1, 0.0));
  std::vector<std::vector<double>> cur = prev;
  for (size_t j = 0; j <= n; ++j) prev[j][0] = 1.0;  // i = 0: U = 0 surely
  for (size_t i = 1; i <= m; ++i) {
    for (auto& row : cur) std::fill(row.begin(), row.end(), 0.0);
    cur[0][0] = 1.0;  // j = 0: U = 0 surely
    for (size_t j = 1; j <= n; ++j) {
      const double wi = double(i) / double(i + j), wj = double(j) / double(i + j);
      for (size_t k = 0; k <= i * j; ++k) {
        double p = wj * cur[j - 1][k];
        if (k >= j) p += wi * prev[j][k - j];
        cur[j][k] = p;
      }
    }
    std::swap(prev, cur);
  }
  const auto& dist = prev[n];
  const size_t from = size_t(std::ceil(u));
  double tail = 0;
  for (size_t k = from; k <= u_max; ++k) tail += dist[k];
  return tail;
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  if (x.empty() || y.empty()) return r;
  const double nx = double(x.size()), ny = double(y.size()), n = nx + ny;
  const RankSums rs = rank_sums(x, y);
  r.ties = rs.ties;
  r.u_x = rs.rank_sum_x - nx * (nx + 1) / 2;
  r.u_y = nx * ny - r.u_x;
  const double u_big = std::max(r.u_x, r.u_y);
  if (!rs.ties && x.size() <= kMannWhitneyExactMax && y.size() <= kMannWhitneyExactMax) {
    r.exact = true;
    r.p_two_sided = std::min(1.0, 2.0 * exact_upper_tail(x.size(), y.size(), u_big));
    return r;
  }
  const double sigma2 = nx * ny / 12.0 * ((n + 1) - rs.tie_term / (n * (n - 1)));
  if (sigma2 <= 0) return r;  // every value equal: no evidence either way (p = 1)
  r.z = (u_big - nx * ny / 2 - 0.5) / std::sqrt(sigma2);
  r.p_two_sided = std::clamp(2.0 * normal_sf(r.z), 0.0, 1.0);
  return r;
}

}  // namespace st::stats
