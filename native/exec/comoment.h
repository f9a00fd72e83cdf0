// Covariance / correlation by co-moment states (exec/README.md, "Tier C"). The observations are
// cut into fixed blocks (units: a function of the variable count and the observation count
// only); each unit's state is (n, per-variable mean, the upper triangle of the centered
// co-moment sums), computed two-pass within the block; the states are merged in unit order by
// Chan's update and finalized by merge_finalize, the one function both tet::execute and the
// shard merge call (Chan merges are not bitwise associative: the order is part of the result).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "exec/thread_pool.h"
#include "exec/tile_input.h"
#include "tet/query.h"

namespace tet {
namespace exec {
namespace comoment {

// Observations per unit: at least 4096, and 128 per variable so that a state (~4 order^2 bytes)
// stays a small fraction of its unit's values (order x block elements).
inline uint64_t block_obs(uint64_t order) { return std::max<uint64_t>(4096, 128 * order); }
inline uint64_t unit_count(uint64_t nobs, uint64_t order) {
  const uint64_t b = block_obs(order);
  return (nobs + b - 1) / b;
}
// doubles per state: n, means, upper triangle (i <= j, row-major)
inline uint64_t state_doubles(uint64_t order) { return 1 + order + order * (order + 1) / 2; }

// States of the units covering observations [0, nobs) of a row-major buffer with `cols`
// columns (obs_rows: observations are rows, variables columns; else the transpose). The first
// observation of the buffer starts a unit. states: unit_count(nobs, order) * state_doubles.
template <class T>
void unit_states(const T* buf, bool obs_rows, uint64_t cols, uint64_t nobs, uint64_t order, uint32_t threads,
                 const ExecContext& ctx, double* states, uint32_t& threads_used) {
  ThreadPool& pool = ThreadPool::instance();
  const uint64_t B = block_obs(order), units = unit_count(nobs, order), sd = state_doubles(order);
  if (units == 0) return;
  // centered values: unit u, variable v at centered[order * u0 + v * m] (m = the unit's length)
  std::vector<double> centered(size_t(order * nobs));
  const uint32_t parts = pool.participants(units * order, threads);
  threads_used = std::max(threads_used, parts);
  pool.parallel_for(units * order, threads, [&](uint64_t t, uint32_t) {
    if ((t & 63) == 0) check_cancel(ctx);
    const uint64_t u = t / order, v = t % order;
    const uint64_t k0 = u * B, m = std::min(nobs, k0 + B) - k0;
    double* c = centered.data() + order * k0 + v * m;
    for (uint64_t k = 0; k < m; ++k) c[k] = double(obs_rows ? buf[(k0 + k) * cols + v] : buf[v * cols + k0 + k]);
    double lanes[4] = {0, 0, 0, 0};
    uint64_t k = 0;
    for (; k + 4 <= m; k += 4)
      for (int l = 0; l < 4; ++l) lanes[l] += c[k + l];
    for (; k < m; ++k) lanes[k & 3] += c[k];
    const double mean = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) / double(m);
    for (k = 0; k < m; ++k) c[k] -= mean;
    double* s = states + u * sd;
    s[1 + v] = mean;
    if (v == 0) s[0] = double(m);
  });
  pool.parallel_for(units * order, threads, [&](uint64_t t, uint32_t) {
    if ((t & 63) == 0) check_cancel(ctx);
    const uint64_t u = t / order, i = t % order;
    const uint64_t k0 = u * B, m = std::min(nobs, k0 + B) - k0;
    const double* base = centered.data() + order * k0;
    const double* a = base + i * m;
    // row i of the triangle starts after rows 0..i-1 (order - r entries each)
    const uint64_t at = i * order - i * (i - 1) / 2;  // sum of (order - r), r < i
    double* out = states + u * sd + 1 + order + at;
    for (uint64_t j = i; j < order; ++j) {
      const double* b = base + j * m;
      double lanes[4] = {0, 0, 0, 0};
      uint64_t k = 0;
      for (; k + 4 <= m; k += 4)
        for (int l = 0; l < 4; ++l) lanes[l] += a[k + l] * b[k + l];
      for (; k < m; ++k) lanes[k & 3] += a[k] * b[k];
      out[j - i] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    }
  });
}

// Merges `units` states in order (Chan) and writes the order x order covariance (population:
// / n), or the correlation (clipped to [-1, 1]), into out.
__attribute__((noinline)) void merge_finalize(const double* states, uint64_t units, uint64_t order, bool correlation,
                                              double* out);

}  // namespace comoment
}  // namespace exec
}  // namespace tet
