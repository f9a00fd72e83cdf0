// tet::execute: picks the strategy the plan names, runs it on the process-wide pool and fills
// the QueryResult. Streaming folds are fold_driver.cpp, reading into memory and the preview
// materialize.cpp, the export spill spill.cpp; this file dispatches, and (until they move to
// their own file) holds the tier-C operations over a materialized selection.
#include <sys/mman.h>  // the tier-C scratch mapping of materialize_and_run (moves with tier C)
#include <unistd.h>

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

#include "exec/fold_driver.h"
#include "exec/materialize.h"
#include "exec/quantile.h"
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
      : src_(src), plan_(plan), ctx_(ctx), sel_(sel), res_(res), pool_(ThreadPool::instance()),
        fetcher_(src, plan.dataset_id, dtype_size(sel.dataset.dtype)) {}

  template <class S, class T> void run() {
    res_.stats.threads_used = 1;
    if (ctx_.has_output && !output_allowed())
      fail("TET_PLAN_INVALID", "a caller-owned output needs a read (a plan without a reduction or spill) or a partial "
                               "reduction of a streaming op with f64 / u64 / i64 values");
    if (plan_.op == Op::None) {
      if (plan_.strategy == Strategy::MmapSpill) spill<S, T>();
      else preview_capped<S, T>();
    } else if (fold::is_tier_c(plan_.op)) {
      materialize_and_run<S, T>();
    } else {
      if (plan_.preview_max > 0) preview_capped<S, T>();
      FoldRun fr{plan_, sel_, ctx_, fetcher_, fold::best_isa(), plan_.threads};
      if (plan_.reduce_mask == (1u << sel_.ndim) - 1) fold_scalar<S, T>(fr, res_);
      else fold_partial<S, T>(fr, res_);
    }
    res_.stats.chunks_read = fetcher_.chunks();
    res_.stats.stored_bytes_read = fetcher_.stored_bytes();
  }

 private:
  // The read plumbing (materialize.cpp, spill.cpp), under the names the tier-C code uses.
  ReadInput input() { return ReadInput{plan_, sel_, ctx_, fetcher_, res_, ctx_.has_output && plan_.op == Op::None}; }
  // ExecContext::output is the preview of a read, or the values of a partial streaming fold.
  bool output_allowed() const {
    if (plan_.op == Op::None) return plan_.strategy != Strategy::MmapSpill;
    return fold::is_streaming(plan_.op) && !scalar() && fold::value_kind(plan_.op, sel_.dataset.dtype) != ValueKind::Bool;
  }
  template <class S, class D> void scatter(uint8_t* dest, uint64_t limit) { exec::scatter<S, D>(input(), dest, limit); }
  uint64_t preview_len() const { return exec::preview_len(plan_, sel_); }
  template <class S, class T> void preview_capped() { exec::preview_capped<S, T>(input()); }
  template <class T> void preview_from(const T* values) { exec::preview_from<T>(input(), values); }
  template <class S, class T> void spill() { exec::spill<S, T>(input()); }

  template <class S, class T> void materialize_and_run() {
    if ((plan_.op == Op::Median || plan_.op == Op::Quantile) && scalar() &&
        plan_.strategy != Strategy::TempSpillMaterialize) {
      // Selection over the tiles in place: no selection-sized buffer. (An explicit temp spill
      // still materializes into its temp file.)
      if (plan_.preview_max > 0) preview_capped<S, T>();
      check_cancel(ctx_);
      const TileInput<S, T> in(sel_, fetcher_, src_, plan_.dataset_id);
      uint32_t used = 1;
      set_f64(1);
      put_f64(0, quantile_of<T>(in, plan_.op == Op::Median ? 0.5 : plan_.q, plan_.threads, ctx_, used));
      res_.stats.threads_used = std::max(res_.stats.threads_used, used);
      return;
    }
    const uint64_t bytes = sel_.elements * sizeof(T);
    Mapping m;
    T* buf;
    if (plan_.strategy == Strategy::TempSpillMaterialize) {
      std::string tmpl = plan_.temp_dir + "/tet-materialize-XXXXXX";
      m.fd = ::mkstemp(&tmpl[0]);
      if (m.fd < 0) io_fail("TET_IO_OPEN", "cannot create temp file in", plan_.temp_dir);
      ::unlink(tmpl.c_str());  // gone from the directory whatever happens next
      map_file(m, tmpl, bytes);
      buf = reinterpret_cast<T*>(m.data());
    } else {
      // Anonymous mapping with transparent huge pages where the kernel allows them: a
      // selection-sized buffer otherwise spends most of its fill time in page faults.
      if (sel_.elements > (uint64_t(1) << 62) / sizeof(T)) throw std::bad_alloc();
      m.len = size_t(std::max<uint64_t>(bytes, 1));
      m.addr = ::mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m.addr == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
      ::madvise(m.addr, m.len, MADV_HUGEPAGE);
#endif
      buf = reinterpret_cast<T*>(m.data());
    }
    scatter<S, T>(reinterpret_cast<uint8_t*>(buf), sel_.elements);
    preview_from<T>(buf);
    check_cancel(ctx_);
    switch (plan_.op) {
      case Op::Median: case Op::Quantile: quantiles<T>(buf); break;
      case Op::Histogram: histogram<T>(buf); break;
      default: covariance<T>(buf); break;
    }
  }

  // Kept / reduced geometry for tier-C partial ops over the row-major buffer.
  struct Fibers {
    uint64_t out_len = 1, fib_len = 1;
    std::vector<uint64_t> fiber_offsets;  // element offsets of one fiber, relative to its base
    std::vector<uint32_t> kept;
    uint64_t base(const Selection& sel, uint64_t o) const {
      uint64_t b = 0;
      for (int i = int(kept.size()) - 1; i >= 0; --i) {
        b += (o % sel.count[kept[i]]) * sel.sel_stride[kept[i]];
        o /= sel.count[kept[i]];
      }
      return b;
    }
    // Copies fiber `o` of the row-major selection buffer into `out` (resized to fib_len).
    template <typename T>
    void gather(const Selection& sel, const T* buf, uint64_t o, std::vector<T>& out) const {
      out.resize(fib_len);
      const T* b = buf + base(sel, o);
      for (uint64_t j = 0; j < fib_len; ++j) out[j] = b[fiber_offsets[j]];
    }
  };
  Fibers fibers() const {
    Fibers f;
    std::vector<uint32_t> reduced;
    for (uint32_t a = 0; a < sel_.ndim; ++a) ((plan_.reduce_mask >> a) & 1 ? reduced : f.kept).push_back(a);
    for (uint32_t a : f.kept) f.out_len *= sel_.count[a];
    for (uint32_t a : reduced) f.fib_len *= sel_.count[a];
    f.fiber_offsets.resize(f.fib_len);
    Axes idx{};
    for (uint64_t j = 0; j < f.fib_len; ++j) {
      uint64_t off = 0;
      for (uint32_t a : reduced) off += idx[a] * sel_.sel_stride[a];
      f.fiber_offsets[j] = off;
      for (int i = int(reduced.size()) - 1; i >= 0; --i) {
        if (++idx[reduced[i]] < sel_.count[reduced[i]]) break;
        idx[reduced[i]] = 0;
      }
    }
    for (uint32_t a : f.kept) res_.reduced_shape.push_back(sel_.count[a]);
    return f;
  }
  bool scalar() const { return plan_.reduce_mask == (1u << sel_.ndim) - 1; }

  void set_f64(uint64_t n) {
    res_.values.kind = ValueKind::F64;
    res_.values.length = n;
    res_.values.bytes.assign(n * 8, 0);
  }
  void put_f64(uint64_t i, double v) { std::memcpy(res_.values.bytes.data() + i * 8, &v, 8); }

  template <class T> void quantiles(T* buf) {
    const double q = plan_.op == Op::Median ? 0.5 : plan_.q;
    if (scalar()) {
      set_f64(1);
      uint32_t used = 1;
      put_f64(0, parallel_quantile<T>(buf, sel_.elements, q, plan_.threads, ctx_, used));
      res_.stats.threads_used = std::max(res_.stats.threads_used, used);
      return;
    }
    const Fibers f = fibers();
    set_f64(f.out_len);
    const uint32_t parts = pool_.participants(f.out_len, plan_.threads);
    res_.stats.threads_used = std::max(res_.stats.threads_used, parts);
    std::vector<std::vector<T>> tmp(parts, std::vector<T>());
    pool_.parallel_for(f.out_len, plan_.threads, [&](uint64_t o, uint32_t slot) {
      if ((o & 1023) == 0) check_cancel(ctx_);
      std::vector<T>& t = tmp[slot];
      f.gather(sel_, buf, o, t);
      put_f64(o, fold::quantile_inplace(t.data(), f.fib_len, q));
    });
  }

  template <class T> void histogram(const T* buf) {
    const uint32_t bins = plan_.bins;
    res_.values.kind = ValueKind::U64;
    if (scalar()) {
      const uint64_t n = sel_.elements;
      const uint64_t blocks = (n + kUnitElems - 1) / kUnitElems;
      double lo = plan_.hist_min, hi = plan_.hist_max;
      if (!plan_.hist_range) {
        std::vector<double> blo(blocks), bhi(blocks);
        std::vector<uint8_t> bany(blocks);
        pool_.parallel_for(blocks, plan_.threads, [&](uint64_t b, uint32_t) {
          const uint64_t e0 = b * kUnitElems, e1 = std::min(n, e0 + kUnitElems);
          bany[b] = fold::finite_range(buf + e0, e1 - e0, blo[b], bhi[b]);
        });
        bool any = false;
        for (uint64_t b = 0; b < blocks; ++b) {
          if (!bany[b]) continue;
          lo = any ? std::min(lo, blo[b]) : blo[b];
          hi = any ? std::max(hi, bhi[b]) : bhi[b];
          any = true;
        }
        if (!any) lo = 0, hi = 1;
        fold::histogram_range_fix(lo, hi);
      }
      res_.hist_edges.resize(size_t(bins) + 1);
      fold::histogram_edges(lo, hi, bins, res_.hist_edges.data());
      const uint32_t parts = pool_.participants(blocks, plan_.threads);
      res_.stats.threads_used = std::max(res_.stats.threads_used, parts);
      std::vector<std::vector<uint64_t>> counts(parts);
      pool_.parallel_for(blocks, plan_.threads, [&](uint64_t b, uint32_t slot) {
        check_cancel(ctx_);
        if (counts[slot].empty()) counts[slot].assign(bins, 0);
        const uint64_t e0 = b * kUnitElems, e1 = std::min(n, e0 + kUnitElems);
        fold::histogram_count(buf + e0, e1 - e0, bins, lo, hi, res_.hist_edges.data(), counts[slot].data());
      });
      res_.values.length = bins;
      res_.values.bytes.assign(uint64_t(bins) * 8, 0);
      for (uint32_t i = 0; i < bins; ++i) {
        uint64_t c = 0;
        for (const auto& s : counts) c += s.empty() ? 0 : s[i];
        std::memcpy(res_.values.bytes.data() + uint64_t(i) * 8, &c, 8);
      }
      return;
    }
    const Fibers f = fibers();
    if (f.out_len > (uint64_t(1) << 56) / bins)
      fail("TET_BUDGET_EXCEEDED", "partial histogram needs " + std::to_string(f.out_len) + " x " + std::to_string(bins) +
                                      " counts; reduce the output or the bin count");
    res_.values.length = f.out_len * bins;
    res_.values.bytes.assign(f.out_len * bins * 8, 0);
    const uint32_t parts = pool_.participants(f.out_len, plan_.threads);
    res_.stats.threads_used = std::max(res_.stats.threads_used, parts);
    std::vector<std::vector<T>> tmp(parts);
    std::vector<std::vector<double>> edges(parts, std::vector<double>(size_t(bins) + 1));
    std::vector<std::vector<uint64_t>> cnt(parts, std::vector<uint64_t>(bins));
    pool_.parallel_for(f.out_len, plan_.threads, [&](uint64_t o, uint32_t slot) {
      if ((o & 1023) == 0) check_cancel(ctx_);
      std::vector<T>& t = tmp[slot];
      f.gather(sel_, buf, o, t);
      double lo = plan_.hist_min, hi = plan_.hist_max;
      if (!plan_.hist_range) {
        if (!fold::finite_range(t.data(), f.fib_len, lo, hi)) lo = 0, hi = 1;
        fold::histogram_range_fix(lo, hi);
      }
      fold::histogram_edges(lo, hi, bins, edges[slot].data());
      std::fill(cnt[slot].begin(), cnt[slot].end(), 0);
      fold::histogram_count(t.data(), f.fib_len, bins, lo, hi, edges[slot].data(), cnt[slot].data());
      std::memcpy(res_.values.bytes.data() + o * bins * 8, cnt[slot].data(), uint64_t(bins) * 8);
    });
  }

  template <class T> void covariance(const T* buf) {
    const uint64_t rows = sel_.count[0], cols = sel_.count[1];
    const bool obs_rows = plan_.obs_axis == 0;
    const uint64_t order = obs_rows ? cols : rows, nobs = obs_rows ? rows : cols;
    // Centered variables, one contiguous f64 row each.
    std::vector<double> centered(order * nobs);
    pool_.parallel_for(order, plan_.threads, [&](uint64_t v, uint32_t) {
      double* c = centered.data() + v * nobs;
      for (uint64_t k = 0; k < nobs; ++k) c[k] = double(obs_rows ? buf[k * cols + v] : buf[v * cols + k]);
      const double mean = fold::lane_sum(c, nobs, fold::Xform::Identity, 0, fold::best_isa()) / double(nobs);
      for (uint64_t k = 0; k < nobs; ++k) c[k] -= mean;
    });
    std::vector<double> cov(order * order);
    const uint32_t parts = pool_.participants(order, plan_.threads);
    res_.stats.threads_used = std::max(res_.stats.threads_used, parts);
    pool_.parallel_for(order, plan_.threads, [&](uint64_t i, uint32_t) {
      check_cancel(ctx_);
      const double* a = centered.data() + i * nobs;
      for (uint64_t j = i; j < order; ++j) {
        const double* b = centered.data() + j * nobs;
        double lanes[4] = {0, 0, 0, 0};
        uint64_t k = 0;
        for (; k + 4 <= nobs; k += 4)
          for (int l = 0; l < 4; ++l) lanes[l] += a[k + l] * b[k + l];
        for (; k < nobs; ++k) lanes[k & 3] += a[k] * b[k];
        const double c = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) / double(nobs);
        cov[i * order + j] = c;
        cov[j * order + i] = c;
      }
    });
    if (plan_.op == Op::Correlation) {
      std::vector<double> d(order);
      for (uint64_t i = 0; i < order; ++i) d[i] = std::sqrt(cov[i * order + i]);
      for (uint64_t i = 0; i < order; ++i)
        for (uint64_t j = 0; j < order; ++j) {
          double r = cov[i * order + j] / (d[i] * d[j]);
          if (r > 1.0) r = 1.0;
          if (r < -1.0) r = -1.0;
          cov[i * order + j] = r;
        }
    }
    set_f64(order * order);
    std::memcpy(res_.values.bytes.data(), cov.data(), cov.size() * 8);
    res_.cov_order = order;
  }

  const ChunkSource& src_;
  const QueryPlan& plan_;
  const ExecContext& ctx_;
  const Selection& sel_;
  QueryResult& res_;
  ThreadPool& pool_;
  TileFetcher fetcher_;
};

}  // namespace
}  // namespace exec

QueryResult execute(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const Catalog& cat = source.catalog();
  if (plan.dataset_id >= cat.datasets.size())
    fail("TET_PLAN_INVALID", "dataset_id " + std::to_string(plan.dataset_id) + " out of range (catalog has " +
                                 std::to_string(cat.datasets.size()) + " datasets)");
  const DatasetInfo& d = cat.datasets[plan.dataset_id];
  if (plan.ndim != d.ndim) fail("TET_PLAN_INVALID", "plan ndim " + std::to_string(plan.ndim) + " != dataset rank " + std::to_string(d.ndim));
  const exec::Selection sel(d, plan);
  QueryResult res;
  res.stats.strategy = plan.strategy;
  res.stats.io_mode = plan.io_mode;
  res.stats.simd = fold::isa_name(fold::best_isa());
  exec::Executor ex(source, plan, ctx, sel, res);
  try {
    switch (d.dtype) {
      case DType::F32: ex.run<float, float>(); break;
      case DType::F64: ex.run<double, double>(); break;
      case DType::F16: ex.run<uint16_t, float>(); break;
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
