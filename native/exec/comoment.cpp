// Co-moment merge + finalize for covariance / correlation (comoment.h).
#include "exec/comoment.h"

#include <cmath>
#include <cstring>

namespace tet {
namespace exec {
namespace comoment {

__attribute__((noinline)) void merge_finalize(const double* states, uint64_t units, uint64_t order, bool correlation,
                                              double* out) {
  const uint64_t sd = state_doubles(order), tri = order * (order + 1) / 2;
  double n = 0;
  std::vector<double> mean(order, 0.0), c(tri, 0.0), d(order, 0.0);
  for (uint64_t u = 0; u < units; ++u) {
    const double* s = states + u * sd;
    const double nb = s[0];
    if (!(nb > 0)) continue;
    const double* mb = s + 1;
    const double* cb = s + 1 + order;
    if (n == 0) {
      n = nb;
      std::memcpy(mean.data(), mb, order * 8);
      std::memcpy(c.data(), cb, tri * 8);
      continue;
    }
    const double nn = n + nb;
    const double f = n * nb / nn, g = nb / nn;
    for (uint64_t i = 0; i < order; ++i) d[i] = mb[i] - mean[i];
    uint64_t at = 0;
    for (uint64_t i = 0; i < order; ++i) {
      const double di = d[i] * f;
      for (uint64_t j = i; j < order; ++j, ++at) c[at] += cb[at] + di * d[j];
    }
    for (uint64_t i = 0; i < order; ++i) mean[i] += d[i] * g;
    n = nn;
  }
  uint64_t at = 0;
  for (uint64_t i = 0; i < order; ++i)
    for (uint64_t j = i; j < order; ++j, ++at) {
      const double v = c[at] / n;
      out[i * order + j] = v;
      out[j * order + i] = v;
    }
  if (correlation) {
    for (uint64_t i = 0; i < order; ++i) d[i] = std::sqrt(out[i * order + i]);
    for (uint64_t i = 0; i < order; ++i)
      for (uint64_t j = 0; j < order; ++j) {
        double r = out[i * order + j] / (d[i] * d[j]);
        if (r > 1.0) r = 1.0;
        if (r < -1.0) r = -1.0;
        out[i * order + j] = r;
      }
  }
}

}  // namespace comoment
}  // namespace exec
}  // namespace tet
