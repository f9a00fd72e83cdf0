// Internal to exec/: the tier-C operations (tier_c_impl.h; tier_c.cpp, tier_c_<dtypes>.cpp).
#pragma once
#include <vector>

#include "exec/materialize.h"
#include "tet/chunk_source.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace tet {
namespace exec {

// Runs the plan's tier-C op (median, quantile, histogram, covariance, correlation) on `in`,
// storage type S, value type T; the preview, values, histogram edges and covariance order land
// in in.res.
template <class S, class T> void run_tier_c(const ChunkSource& src, const ReadInput& in);

// Shard side of covariance / correlation (order_rounds.cpp): the co-moment unit states of the
// plan's (observation-narrowed) selection, as tet::execute computes them.
std::vector<double> covariance_unit_states(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx,
                                           QueryResult& stats);

}  // namespace exec
}  // namespace tet
