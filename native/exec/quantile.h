// Scalar quantile of a materialized buffer on the thread pool: parallel radix select on
// order-preserving keys of the values (a histogram of the top bits finds the bucket that holds
// the wanted rank, the next bits narrow it down; a small bucket is gathered and selected with
// nth_element). Exact order statistics, numpy 'linear' interpolation, NaN when any value is
// NaN; the result depends only on the values (order statistics are unique), not on threads.
#pragma once
#include <cstdint>

#include "tet/query.h"

namespace tet {
namespace exec {

// Quantile q of x[0..n) (x is not modified). threads: pool participants cap (0 = all).
template <class T> double parallel_quantile(const T* x, uint64_t n, double q, uint32_t threads, const ExecContext& ctx,
                                            uint32_t& threads_used);

}  // namespace exec
}  // namespace tet
