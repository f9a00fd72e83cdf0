// Tier-C operations (median, quantile, histogram, covariance, correlation): a scalar median /
// quantile selects over the tiles in place (quantile.h, no selection-sized buffer); the others
// materialize the selection (in memory, or in an unlinked temp file under a temp-spill strategy;
// util/io) and run on that row-major buffer: per-fiber quantiles and histograms, and the
// co-moment states of covariance / correlation (comoment.h). execute.cpp dispatches here.
// Internal to exec/: the definitions; tier_c.cpp holds covariance_unit_states, and the
// tier_c_<dtypes>.cpp files instantiate run_tier_c (TET_TIER_C_INSTANTIATE) a few storage types
// each, so a 2-core build compiles them side by side.
#pragma once
#include "exec/tier_c.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/comoment.h"
#include "exec/dtype_dispatch.h"
#include "exec/quantile.h"
#include "exec/thread_pool.h"
#include "exec/work_units.h"
#include "fold/order_stats.h"
#include "fold/registry.h"
#include "tet/error.h"
#include "util/io.h"

namespace tet {
namespace exec {
namespace {

class TierC {
 public:
  TierC(const ChunkSource& src, const ReadInput& in)
      : src_(src), in_(in), plan_(in.plan), ctx_(in.ctx), sel_(in.sel), res_(in.res), pool_(ThreadPool::instance()),
        fetcher_(in.fetcher) {}

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
    ScratchMapping m;
    T* buf;
    if (plan_.strategy == Strategy::TempSpillMaterialize) {
      m.fd = create_unlinked_temp(plan_.temp_dir, "tet-materialize-");  // gone from the directory already
      map_shared_file(m, plan_.temp_dir + "/tet-materialize-* (unlinked)", bytes);
    } else {
      if (sel_.elements > (uint64_t(1) << 62) / sizeof(T)) throw std::bad_alloc();
      map_anonymous(m, bytes);  // with transparent huge pages where the kernel allows them
    }
    buf = reinterpret_cast<T*>(m.data());
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

  // Co-moment states of the observation blocks (comoment.h), merged in block order.
  template <class T> void covariance(const T* buf) {
    const uint64_t rows = sel_.count[0], cols = sel_.count[1];
    const bool obs_rows = plan_.obs_axis == 0;
    const uint64_t order = obs_rows ? cols : rows, nobs = obs_rows ? rows : cols;
    const uint64_t units = comoment::unit_count(nobs, order);
    std::vector<double> states(size_t(units * comoment::state_doubles(order)));
    uint32_t used = 1;
    comoment::unit_states<T>(buf, obs_rows, cols, nobs, order, plan_.threads, ctx_, states.data(), used);
    res_.stats.threads_used = std::max(res_.stats.threads_used, used);
    check_cancel(ctx_);
    set_f64(order * order);
    comoment::merge_finalize(states.data(), units, order, plan_.op == Op::Correlation,
                             reinterpret_cast<double*>(res_.values.bytes.data()));
    res_.cov_order = order;
  }

  // Shard side of covariance / correlation: the unit states of this (observation-narrowed)
  // selection, materialized as tet::execute does.
  template <class S, class T> void covariance_states(std::vector<double>& states) {
    res_.stats.threads_used = 1;
    const uint64_t bytes = sel_.elements * sizeof(T);
    std::vector<T> buf(size_t(sel_.elements));
    if (bytes) scatter<S, T>(reinterpret_cast<uint8_t*>(buf.data()), sel_.elements);
    check_cancel(ctx_);
    const uint64_t rows = sel_.count[0], cols = sel_.count[1];
    const bool obs_rows = plan_.obs_axis == 0;
    const uint64_t order = obs_rows ? cols : rows, nobs = obs_rows ? rows : cols;
    states.assign(size_t(comoment::unit_count(nobs, order) * comoment::state_doubles(order)), 0.0);
    uint32_t used = 1;
    comoment::unit_states<T>(buf.data(), obs_rows, cols, nobs, order, plan_.threads, ctx_, states.data(), used);
    res_.stats.threads_used = std::max(res_.stats.threads_used, used);
    res_.stats.chunks_read = fetcher_.chunks();
    res_.stats.stored_bytes_read = fetcher_.stored_bytes();
  }


 private:
  template <class S, class D> void scatter(uint8_t* dest, uint64_t limit) { exec::scatter<S, D>(in_, dest, limit); }
  template <class S, class T> void preview_capped() { exec::preview_capped<S, T>(in_); }
  template <class T> void preview_from(const T* values) { exec::preview_from<T>(in_, values); }

  const ChunkSource& src_;
  const ReadInput& in_;
  const QueryPlan& plan_;
  const ExecContext& ctx_;
  const Selection& sel_;
  QueryResult& res_;
  ThreadPool& pool_;
  TileFetcher& fetcher_;
};

}  // namespace

template <class S, class T> void run_tier_c(const ChunkSource& src, const ReadInput& in) {
  TierC(src, in).materialize_and_run<S, T>();
}
#define TET_TIER_C_INSTANTIATE(S, T) template void run_tier_c<S, T>(const ChunkSource&, const ReadInput&);

}  // namespace exec
}  // namespace tet
