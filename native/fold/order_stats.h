// Tier-C kernels on materialized values: quantiles by selection (nth_element, numpy 'linear'
// interpolation), numpy-compatible equal-width histograms, and population covariance.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "fold/kernels.h"

namespace tet {
namespace fold {

// numpy's _lerp: a + (b-a)*t, evaluated from b's side when t >= 0.5.
inline double lerp_numpy(double a, double b, double t) {
  const double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

// numpy 'linear' quantile position: order statistic k (0-based) and the weight of k+1.
struct QuantileRank {
  uint64_t k;
  double gamma;
};
inline QuantileRank quantile_rank(uint64_t n, double q) {
  const double virt = q * double(n - 1);
  double prev = std::floor(virt);
  if (prev < 0) prev = 0;
  if (prev > double(n - 1)) prev = double(n - 1);
  return {uint64_t(prev), virt - prev};
}

// Quantile q of x[0..n) with numpy 'linear' interpolation; NaN when any element is NaN.
// Reorders x. n >= 1.
template <class T> double quantile_inplace(T* x, size_t n, double q) {
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i)
    if (x[i] != x[i]) return std::numeric_limits<double>::quiet_NaN();
  const QuantileRank r = quantile_rank(n, q);
  const size_t k = size_t(r.k);
  const double gamma = r.gamma;
  std::nth_element(x, x + k, x + n);
  const double a = double(x[k]);
  if (k + 1 >= n) return a;
  const double b = double(*std::min_element(x + k + 1, x + n));
  return lerp_numpy(a, b, gamma);
}

// Finite min / max of x (NaN and +-inf ignored); false when there is no finite element.
template <class T> bool finite_range(const T* x, size_t n, double& lo, double& hi) {
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const double v = double(x[i]);
    if (!std::isfinite(v)) continue;
    if (!any) {
      lo = hi = v, any = true;
    } else {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return any;
}

// numpy.histogram's range handling: an empty range widens to [lo - 0.5, hi + 0.5].
inline void histogram_range_fix(double& lo, double& hi) {
  if (lo == hi) lo -= 0.5, hi += 0.5;
}

// Edges as numpy.linspace(lo, hi, bins + 1).
inline void histogram_edges(double lo, double hi, uint32_t bins, double* edges) {
  const double step = (hi - lo) / double(bins);
  for (uint32_t i = 0; i <= bins; ++i) edges[i] = double(i) * step + lo;
  edges[bins] = hi;
}

// Adds the counts of x into counts[bins] like numpy.histogram with uniform bins over [lo, hi]
// (last bin closed, values outside the range and NaN skipped). `edges` = histogram_edges.
template <class T> void histogram_count(const T* x, size_t n, uint32_t bins, double lo, double hi,
                                        const double* edges, uint64_t* counts) {
  const double norm = double(bins) / (hi - lo);
  for (size_t i = 0; i < n; ++i) {
    const double v = double(x[i]);
    if (!(v >= lo && v <= hi)) continue;
    // f is NaN/inf/huge when hi - lo overflows or underflows: clamp before the integer
    // conversion (out-of-range float -> int is undefined); the edge checks below fix up by one.
    const double f = (v - lo) * norm;
    int64_t k = f >= 0 && f < double(bins) ? int64_t(f) : (f >= double(bins) ? int64_t(bins) - 1 : 0);
    if (v < edges[k] && k > 0) --k;
    else if (k != int64_t(bins) - 1 && v >= edges[k + 1]) ++k;
    ++counts[k];
  }
}

}  // namespace fold
}  // namespace tet
