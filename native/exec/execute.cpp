// tet::execute: picks the strategy the plan names, runs it on the process-wide pool and fills
// the QueryResult. Streaming folds live in streaming_fold.cpp; this file holds materialization
// (in memory, temp spill, export spill), the preview, and the tier-C operations.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "exec/comoment.h"
#include "exec/quantile.h"
#include "exec/selection.h"
#include "exec/streaming_fold.h"
#include "exec/thread_pool.h"
#include "exec/tile_fetch.h"
#include "fold/order_stats.h"
#include "fold/registry.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/query.h"

namespace tet {
namespace exec {

const float* f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = f16_to_f32(uint16_t(h));
    return t;
  }();
  return table.data();
}

namespace {

// A file mapping that is unmapped (and its descriptor closed) on every exit path.
struct Mapping {
  void* addr = MAP_FAILED;
  size_t len = 0;
  int fd = -1;
  ~Mapping() {
    if (addr != MAP_FAILED) ::munmap(addr, len);
    if (fd >= 0) ::close(fd);
  }
  uint8_t* data() const { return static_cast<uint8_t*>(addr); }
};

[[noreturn]] void io_fail(const char* code, const std::string& what, const std::string& path) {
  fail(code, what + " '" + path + "': " + std::strerror(errno));
}

void map_file(Mapping& m, const std::string& path, uint64_t bytes) {
  if (::ftruncate(m.fd, off_t(bytes)) != 0) io_fail("TET_IO_WRITE", "cannot size", path);
  m.len = size_t(bytes);
  m.addr = ::mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
  if (m.addr == MAP_FAILED) io_fail("TET_IO_WRITE", "cannot map", path);
}

class Executor {
 public:
  Executor(const ChunkSource& src, const QueryPlan& plan, const ExecContext& ctx, const Selection& sel, QueryResult& res)
      : src_(src), plan_(plan), ctx_(ctx), sel_(sel), res_(res), pool_(ThreadPool::instance()),
        fetcher_(src, plan.dataset_id, dtype_size(sel.dataset.dtype)) {}

  template <class S, class T> void run() {
    res_.stats.threads_used = 1;
    if (ctx_.has_output &&
        (plan_.op != Op::None || plan_.strategy == Strategy::MmapSpill))
      fail("TET_PLAN_INVALID", "a caller-owned output needs a plan without a reduction or spill (read)");
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
  // Writes selection elements with logical index < limit into dest (row-major, elements of
  // size sizeof(D)), converting storage S to D.
  template <class S, class D> void scatter(uint8_t* dest, uint64_t limit) {
    std::vector<uint64_t> tiles;
    for (uint64_t t = 0; t < sel_.tiles; ++t)
      if (sel_.tile(t).min_logical < limit) tiles.push_back(t);
    const uint32_t parts = pool_.participants(tiles.size(), plan_.threads);
    res_.stats.threads_used = std::max(res_.stats.threads_used, parts);
    std::vector<std::vector<uint8_t>> scratch(parts);
    const uint32_t last = sel_.ndim - 1;
    pool_.parallel_for(tiles.size(), plan_.threads, [&](uint64_t k, uint32_t slot) {
      check_cancel(ctx_);
      const TileSelection ts = sel_.tile(tiles[k]);
      const TileView v = fetcher_.fetch(ts, scratch[slot]);
      Selection::for_each_run(ts, sel_.ndim, 0, ts.elems, [&](uint64_t off, uint64_t n, const Axes& idx) {
        uint64_t o = 0;
        for (uint32_t a = 0; a < sel_.ndim; ++a) o += (ts.sel0[a] + idx[a]) * sel_.sel_stride[a];
        if (o >= limit) return;
        if (n > limit - o) n = limit - o;
        const uint8_t* p = v.data + off * sizeof(S);
        uint8_t* q = dest + o * sizeof(D);
        if (std::is_same<S, D>::value && ts.step[last] == 1) std::memcpy(q, p, n * sizeof(S));
        else if (std::is_same<S, D>::value) {
          for (uint64_t i = 0; i < n; ++i) std::memcpy(q + i * sizeof(S), p + i * ts.step[last] * sizeof(S), sizeof(S));
        } else {
          D tmp[256];
          for (uint64_t i = 0; i < n; i += 256) {
            const uint64_t m = std::min<uint64_t>(256, n - i);
            load_elems<S, D>(p + i * ts.step[last] * sizeof(S), ts.step[last], m, tmp);
            std::memcpy(q + i * sizeof(D), tmp, m * sizeof(D));
          }
        }
      });
    });
  }

  uint64_t preview_len() const { return std::min<uint64_t>(plan_.preview_max, sel_.elements); }

  // Preview values are T (f16 widened to f32, everything else native).
  template <class S, class T> void preview_capped() {
    const uint64_t k = preview_len();
    res_.preview_length = k;
    if (ctx_.has_output) {
      // Caller-owned output (read()): the pool threads write each element once, in place.
      if (ctx_.output_bytes != k * sizeof(T) || (k > 0 && ctx_.output == nullptr))
        fail("TET_PLAN_INVALID", "output holds " + std::to_string(ctx_.output_bytes) + " bytes; the plan's preview is " +
                                     std::to_string(k) + " elements of " + std::to_string(sizeof(T)) + " bytes");
      if (k > 0) scatter<S, T>(ctx_.output, k);
      return;
    }
    res_.preview.assign(k * sizeof(T), 0);
    if (k > 0) scatter<S, T>(res_.preview.data(), k);
  }

  template <class T> void preview_from(const T* values) {
    const uint64_t k = preview_len();
    res_.preview.resize(k * sizeof(T));
    if (k > 0) std::memcpy(res_.preview.data(), values, k * sizeof(T));  // data() may be null
    res_.preview_length = k;
  }

  template <class S, class T> void spill() {
    const std::string& path = plan_.spill_path;
    const uint64_t bytes = sel_.elements * sizeof(S);
    static std::atomic<uint64_t> serial{0};
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial.fetch_add(1));
    Mapping m;
    m.fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (m.fd < 0) io_fail("TET_IO_OPEN", "cannot create spill file", tmp);
    try {
      map_file(m, tmp, bytes);
      scatter<S, S>(m.data(), sel_.elements);
      const uint64_t k = preview_len();
      if (std::is_same<S, T>::value) {
        preview_from<T>(reinterpret_cast<const T*>(m.data()));
      } else {
        res_.preview.resize(k * sizeof(T));
        std::vector<T> tmpv(k);
        load_elems<S, T>(m.data(), 1, k, tmpv.data());
        std::memcpy(res_.preview.data(), tmpv.data(), k * sizeof(T));
        res_.preview_length = k;
      }
      if (::msync(m.addr, m.len, MS_SYNC) != 0) io_fail("TET_IO_WRITE", "cannot flush spill file", tmp);
      if (::fsync(m.fd) != 0) io_fail("TET_IO_WRITE", "cannot sync spill file", tmp);
      if (::rename(tmp.c_str(), path.c_str()) != 0) io_fail("TET_IO_WRITE", "cannot rename spill file to", path);
    } catch (...) {
      ::unlink(tmp.c_str());
      throw;
    }
    const size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) ::fsync(dfd), ::close(dfd);
    res_.stats.spill_bytes = bytes;
  }

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

 public:
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
  if (plan.f16_raw && (d.dtype != DType::F16 || plan.op != Op::None || !ctx.has_output || plan.strategy == Strategy::MmapSpill))
    fail("TET_PLAN_INVALID", "OUTPUT flag f16-as-bits needs a read of an f16 dataset into a caller-owned output (no reduction, no spill)");
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

namespace exec {
std::vector<double> covariance_unit_states(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx,
                                           QueryResult& stats) {
  const DatasetInfo& d = source.catalog().datasets.at(plan.dataset_id);
  const Selection sel(d, plan);
  stats.stats.strategy = plan.strategy, stats.stats.io_mode = plan.io_mode;
  Executor ex(source, plan, ctx, sel, stats);
  std::vector<double> states;
  switch (d.dtype) {
    case DType::F32: ex.covariance_states<float, float>(states); break;
    case DType::F64: ex.covariance_states<double, double>(states); break;
    case DType::F16: ex.covariance_states<uint16_t, float>(states); break;
    case DType::U8: ex.covariance_states<uint8_t, uint8_t>(states); break;
    case DType::U16: ex.covariance_states<uint16_t, uint16_t>(states); break;
    case DType::I16: ex.covariance_states<int16_t, int16_t>(states); break;
    case DType::I32: ex.covariance_states<int32_t, int32_t>(states); break;
    case DType::U32: ex.covariance_states<uint32_t, uint32_t>(states); break;
    case DType::I64: ex.covariance_states<int64_t, int64_t>(states); break;
    case DType::U64: ex.covariance_states<uint64_t, uint64_t>(states); break;
    default: fail("TET_INTERNAL", "unknown dtype tag " + std::to_string(uint32_t(d.dtype)));
  }
  return states;
}
}  // namespace exec

}  // namespace tet
