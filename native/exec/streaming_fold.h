// Tier-A/B streaming folds: scalar (every axis reduced) and partial (a subset of axes), over
// the thread pool with a fixed work decomposition so results do not depend on thread count.
#pragma once
#include "exec/selection.h"
#include "exec/tile_fetch.h"
#include "fold/kernels.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace tet {
namespace exec {

// Elements per work unit: a unit is a range of one tile's selected elements (tile-local
// row-major order). Fixed, so the block structure of every sum is independent of threads.
constexpr uint64_t kUnitElems = uint64_t(1) << 17;

struct FoldRun {
  const QueryPlan& plan;
  const Selection& sel;
  const ExecContext& ctx;
  TileFetcher& fetcher;
  fold::Isa isa;
  uint32_t threads;  // max participants (0 = pool size)
};

// Scalar fold; fills res.values and res.stats.{io_mode, threads_used}.
template <class S, class T> void fold_scalar(FoldRun& run, QueryResult& res);
// Partial fold; fills res.values, res.reduced_shape and stats.
template <class S, class T> void fold_partial(FoldRun& run, QueryResult& res);

}  // namespace exec
}  // namespace tet
