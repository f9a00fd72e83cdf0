// Tier-A/B streaming folds: scalar (every axis reduced) and partial (a subset of axes), over the
// thread pool. The work decomposition comes from work_units.h (a function of the plan and the
// selection only), tiles from tile_input.h, output boxes from output_box.h; the loops here call
// the op's state family (fold/ops/*.h, picked once per query through fold::with_family)
// directly, so results do not depend on thread count or ISA.
#pragma once
#include <vector>

#include "exec/selection.h"
#include "exec/tile_input.h"
#include "exec/work_units.h"
#include "fold/kernels.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace tet {
namespace exec {

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
// Every aggregate of the plan (plan.aggs(): op, then plan.more) as scalar folds in one pass over
// the selection; fills res.values (the first) and res.more_values (the rest, in order), stats.
template <class S, class T> void fold_scalar_multi(FoldRun& run, QueryResult& res);
// Partial fold; fills res.values, res.reduced_shape and stats.
template <class S, class T> void fold_partial(FoldRun& run, QueryResult& res);

// Sharded execution (exec/shard.cpp). A shard folds a contiguous range of the work units
// (scalar: scalar_units; partial: the tasks of partial_units) and encodes each unit's state
// (fold/ops codec); the coordinator decodes all of them and runs the same compiled merge +
// finalize as fold_scalar / fold_partial, so results are bit-identical to the single-process fold.
template <class S, class T>
void fold_scalar_states(FoldRun& run, uint64_t u0, uint64_t u1, std::vector<uint8_t>& out, QueryResult& res);
// `n` unit states (n * state_bytes<T>(plan.op) bytes) in unit order -> res.values.
template <class S, class T>
void finish_scalar(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t n, QueryResult& res);
// Encoded bytes of the states of tasks [t0, t1).
template <class S, class T>
uint64_t partial_states_bytes(const QueryPlan& plan, const Selection& sel, uint64_t t0, uint64_t t1);
template <class S, class T>
void fold_partial_states(FoldRun& run, uint64_t t0, uint64_t t1, std::vector<uint8_t>& out, QueryResult& res);
// Every task's states in task order (`len` bytes) -> res.values and res.reduced_shape.
template <class S, class T>
void finish_partial(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t len, uint32_t threads,
                    QueryResult& res);

}  // namespace exec
}  // namespace tet
