// tet::execute: checks the plan against the catalog, picks the strategy it names and fills the
// QueryResult: streaming folds fold_driver_impl.h, tier-C operations tier_c_impl.h, reading into memory
// and the preview materialize.cpp, the export spill spill.cpp. This file only dispatches.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "exec/device.h"
#include "exec/device_fold.h"
#include "exec/fold_driver.h"
#include "exec/materialize.h"
#include "exec/tier_c.h"
#include "exec/selection.h"
#include "exec/thread_pool.h"
#include "exec/tile_input.h"
#include "fold/order_stats.h"
#include "fold/registry.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/query.h"

namespace tet {
namespace exec {
namespace {

class Executor {
 public:
  Executor(const ChunkSource& src, const QueryPlan& plan, const ExecContext& ctx, const Selection& sel, QueryResult& res)
      : src_(src), plan_(plan), ctx_(ctx), sel_(sel), res_(res), fetcher_(src, plan.dataset_id, dtype_size(sel.dataset.dtype), ctx.progress) {}

  template <class S, class T> void run() {
    res_.stats.threads_used = 1;
    if (ctx_.has_output && !output_allowed())
      fail("TET_PLAN_INVALID", "a caller-owned output needs a read (a plan without a reduction or spill) or a partial "
                               "reduction of a streaming op with f64 / u64 / i64 values");
    if (plan_.op == Op::None) {
      if (plan_.strategy == Strategy::MmapSpill) spill<S, T>();
      else preview_capped<S, T>();
    } else if (fold::is_tier_c(plan_.op)) {
      run_tier_c<S, T>(src_, input());
    } else {
      if (plan_.preview_max > 0) preview_capped<S, T>();
      FoldRun fr{plan_, sel_, ctx_, fetcher_, fold::best_isa(), plan_.threads};
      if (plan_.device == Device::Gpu && plan_.more.empty() && on_device<S, T>(fr)) return finish_stats();
      if (!plan_.more.empty()) fold_scalar_multi<S, T>(fr, res_);  // decode_plan: scalar, ungrouped, cpu
      else if (scalar() && !plan_.grouped()) fold_scalar<S, T>(fr, res_);
      else fold_partial<S, T>(fr, res_);
    }
    finish_stats();
  }

 private:
  void finish_stats() {
    res_.stats.chunks_read = fetcher_.chunks();
    res_.stats.stored_bytes_read = fetcher_.stored_bytes();
  }
  // A GPU plan (DEVICE section): the device fold (scalar or partial), or false with the fallback
  // reason recorded. Device failures never fail the query; the CPU fold runs instead.
  template <class S, class T> bool on_device(FoldRun& fr) {
    std::string reason = "gpu_unsupported_op";
    const bool folded = scalar() && !plan_.grouped() ? fold_scalar_device<S, T>(fr, res_, reason)
                                                     : fold_partial_device<S, T>(fr, res_, reason);
    if (folded) {
      const device::Backend& be = device::backend();
      const bool all = plan_.device_ordinal == device::kAllDevices;
      res_.stats.device_gpu_multi = all && be.devices.size() > 1;
      res_.stats.device_used = res_.stats.device_gpu_multi ? "cuda:multi"
                                                           : "cuda:" + std::to_string(all ? 0 : plan_.device_ordinal);
      res_.stats.device_gpu_pipeline = sel_.tiles > 1;
      return true;
    }
    res_.stats.device_used = "cpu";
    res_.stats.device_fallback_reason = reason;
    return false;
  }
  bool scalar() const { return plan_.reduce_mask == (1u << sel_.ndim) - 1; }
  // The read plumbing (materialize.cpp, spill.cpp).
  ReadInput input() { return ReadInput{plan_, sel_, ctx_, fetcher_, res_, ctx_.has_output && plan_.op == Op::None}; }
  // ExecContext::output is the preview of a read, or the values of a partial streaming fold.
  bool output_allowed() const {
    if (plan_.op == Op::None) return plan_.strategy != Strategy::MmapSpill;
    return fold::is_streaming(plan_.op) && (!scalar() || plan_.grouped()) && fold::value_kind(plan_.op, sel_.dataset.dtype) != ValueKind::Bool;
  }
  template <class S, class T> void preview_capped() { exec::preview_capped<S, T>(input()); }
  template <class S, class T> void spill() { exec::spill<S, T>(input()); }

  const ChunkSource& src_;
  const QueryPlan& plan_;
  const ExecContext& ctx_;
  const Selection& sel_;
  QueryResult& res_;
  TileFetcher fetcher_;
};

}  // namespace
}  // namespace exec

void start_workers() { (void)exec::ThreadPool::instance(); }

QueryResult execute(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const Catalog& cat = source.catalog();
  if (plan.dataset_id >= cat.datasets.size())
    fail("TET_PLAN_INVALID", "dataset_id " + std::to_string(plan.dataset_id) + " out of range (catalog has " +
                                 std::to_string(cat.datasets.size()) + " datasets)");
  const DatasetInfo& d = cat.datasets[plan.dataset_id];
  if (plan.ndim != d.ndim) fail("TET_PLAN_INVALID", "plan ndim " + std::to_string(plan.ndim) + " != dataset rank " + std::to_string(d.ndim));
  if (plan.f16_raw && (d.dtype != DType::F16 || plan.op != Op::None || !ctx.has_output || plan.strategy == Strategy::MmapSpill))
    fail("TET_PLAN_INVALID", "OUTPUT flag f16-as-bits needs a read of an f16 dataset into a caller-owned output (no reduction, no spill)");
  const exec::Selection sel(d, plan);
  // No overflow: a selection has at most the dataset's elements, whose logical bytes the catalog checked.
  exec::start_progress(ctx, sel.elements * dtype_size(d.dtype));
  QueryResult res;
  res.stats.strategy = plan.strategy;
  res.stats.io_mode = plan.io_mode;
  res.stats.simd = fold::isa_name(fold::best_isa());
  exec::Executor ex(source, plan, ctx, sel, res);
  try {
    switch (d.dtype) {
      case DType::F32: ex.run<float, float>(); break;
      case DType::F64: ex.run<double, double>(); break;
      case DType::F16:
        // f16_raw (a read into a caller-owned Uint16Array, viewed as Float16Array by lib/): the
        // stored binary16 bits are copied as they are; it carries no reduction (checked above).
        if (plan.f16_raw) ex.run<uint16_t, uint16_t>();
        else ex.run<uint16_t, float>();
        break;
      case DType::U8: ex.run<uint8_t, uint8_t>(); break;
      case DType::U16: ex.run<uint16_t, uint16_t>(); break;
      case DType::I16: ex.run<int16_t, int16_t>(); break;
      case DType::I32: ex.run<int32_t, int32_t>(); break;
      case DType::U32: ex.run<uint32_t, uint32_t>(); break;
      case DType::I64: ex.run<int64_t, int64_t>(); break;
      case DType::U64: ex.run<uint64_t, uint64_t>(); break;
      default: fail("TET_INTERNAL", "unknown dtype tag " + std::to_string(uint32_t(d.dtype)));
    }
  } catch (const std::length_error&) {
    fail("TET_BUDGET_EXCEEDED", "result of " + std::to_string(sel.elements) + " selected elements is too large to allocate");
  } catch (const std::bad_alloc&) {
    fail("TET_BUDGET_EXCEEDED", "out of memory materializing " + std::to_string(sel.elements) + " elements of " +
                                    dtype_name(d.dtype) + "; raise the memory budget or use a temp spill");
  }
  res.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}


}  // namespace tet
