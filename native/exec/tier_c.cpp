// Tier-C entry points of exec/ outside run_tier_c: the covariance / correlation unit states of a
// sharded query (definitions in tier_c_impl.h).
#include "exec/tier_c_impl.h"

namespace tet {
namespace exec {

std::vector<double> covariance_unit_states(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx,
                                           QueryResult& stats) {
  const DatasetInfo& d = source.catalog().datasets.at(plan.dataset_id);
  const Selection sel(d, plan);
  stats.stats.strategy = plan.strategy, stats.stats.io_mode = plan.io_mode;
  start_progress(ctx, sel.elements * dtype_size(d.dtype));  // <= the dataset's checked logical bytes
  TileFetcher fetcher(source, plan.dataset_id, dtype_size(d.dtype), ctx.progress);
  const ReadInput in{plan, sel, ctx, fetcher, stats, false};
  TierC t(source, in);
  std::vector<double> states;
  const bool known = dispatch_dtype(d.dtype, [&](auto* s, auto* v) {
    t.template covariance_states<std::remove_pointer_t<decltype(s)>, std::remove_pointer_t<decltype(v)>>(states);
  });
  if (!known) fail("TET_INTERNAL", "unknown dtype tag " + std::to_string(uint32_t(d.dtype)));
  return states;
}

}  // namespace exec
}  // namespace tet
