// Partial-fold state: compact per-op arrays over a box of output elements (structure of arrays,
// a few bytes per element instead of one fold::Acc), grown by element-wise loops over the kept
// inner run (out[j] op= x[j], SIMD-friendly), by per-run accumulators (reduced last axis), or by
// merging another box state (segments, in a fixed order).
//
// Sums go through a block: a unit's rows accumulate into plain f64 block arrays, folded into the
// state once per element with a Neumaier add at the end of the unit. Var/std treat each batch of
// up to kMaxRows rows as a two-pass block (mean, then squared deviations) merged per element with
// Chan's formula. Everything is element-wise and batches depend on the plan only, so results do
// not depend on the ISA or the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "fold/accumulator.h"
#include "fold/row_kernels.h"

namespace tet {
namespace fold {

template <class T> struct PState {
  std::vector<double> s, c, n;  // sums: Neumaier sum / compensation (n: nan_mean count)
                                // var/std: s mean, c M2, n count; product: s
  std::vector<__int128> isum;   // exact integer sums
  std::vector<T> v;             // min / max extremum, arg best
  std::vector<uint64_t> u;      // counters, arg index
  std::vector<uint8_t> f;       // NaN seen
  size_t len = 0;
};

// Block scratch (one per worker): sized to the largest box, all zero between blocks.
struct PBlock {
  std::vector<double> s, n;
  std::vector<int64_t> i;
  std::vector<uint8_t> e;  // arg: batch extrema (T values) and NaN flags, scratch per batch
  std::vector<uint8_t> ef;
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [begin, end) box ranges touched
  void reserve(size_t len, bool sum, bool count, bool isum) {
    if (sum && s.size() < len) s.resize(len, 0.0);
    if (count && n.size() < len) n.resize(len, 0.0);
    if (isum && i.size() < len) i.resize(len, 0);
  }
  // Sorts and coalesces the touched ranges into disjoint ones.
  void coalesce() {
    if (runs.size() < 2) return;
    std::sort(runs.begin(), runs.end());
    size_t k = 0;
    for (size_t r = 1; r < runs.size(); ++r) {
      if (runs[r].first <= runs[k].second) runs[k].second = std::max(runs[k].second, runs[r].second);
      else runs[++k] = runs[r];
    }
    runs.resize(k + 1);
  }
};

template <class T> class PartialOp {
 public:
  static constexpr bool kFloat = std::is_floating_point<T>::value;
  static constexpr bool kSmallInt = std::is_integral<T>::value && sizeof(T) <= 4;

  PartialOp(Op op, Isa isa, bool has_fill, double fill)
      : op_(op), fo_(op, isa, has_fill, fill), rk_(&row_kernels<T>(isa)) {
    switch (op_) {
      case Op::Sum: case Op::Mean: case Op::NanMean:
        if (kFloat) kind_ = op_ == Op::NanMean ? K::NanSum : K::Sum;
        else kind_ = kSmallInt ? K::SmallInt : K::BigInt;
        break;
      case Op::NormL1: case Op::NormL2: kind_ = K::Sum; break;
      case Op::Min: case Op::Max: kind_ = K::Ext; break;
      case Op::Var: case Op::Std: kind_ = K::Var; break;
      case Op::NanStd: kind_ = kFloat ? K::NanVar : K::Var; break;
      case Op::Product: kind_ = K::Prod; break;
      case Op::ArgMin: case Op::ArgMax: kind_ = K::Arg; break;
      case Op::Count: kind_ = K::None; break;
      default: kind_ = K::Cnt; break;
    }
  }
  Op op() const { return op_; }
  const FoldOp<T>& fold_op() const { return fo_; }

  // Bytes of state per output element (for the segment memory cap).
  size_t state_bytes() const {
    switch (kind_) {
      case K::Sum: return 16;
      case K::NanSum: case K::Var: case K::NanVar: return 24;
      case K::SmallInt: case K::BigInt: return 16;
      case K::Ext: return sizeof(T) + 1;
      case K::Arg: return sizeof(T) + 9;
      case K::Prod: case K::Cnt: return 8;
      default: return 0;
    }
  }
  // The block arrays this op uses (sum, count, var, int).
  void reserve_block(PBlock& b, size_t len) const {
    b.reserve(len, kind_ == K::Sum || kind_ == K::NanSum, kind_ == K::NanSum, kind_ == K::SmallInt);
  }
  bool blocked() const { return kind_ == K::Sum || kind_ == K::NanSum || kind_ == K::SmallInt; }

  void init(PState<T>& st, size_t len) const {
    st.len = len;
    const T lo = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    const T hi = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    switch (kind_) {
      case K::Sum: st.s.assign(len, 0.0), st.c.assign(len, 0.0); break;
      case K::NanSum: case K::Var: case K::NanVar: st.s.assign(len, 0.0), st.c.assign(len, 0.0), st.n.assign(len, 0.0); break;
      case K::SmallInt: case K::BigInt: st.isum.assign(len, 0); break;
      case K::Ext: st.v.assign(len, op_ == Op::Min ? lo : hi); if (kFloat) st.f.assign(len, 0); break;
      case K::Arg:  // best starts at the batch-extremum identity, so an empty state always "ties"
        st.v.assign(len, op_ == Op::ArgMin ? lo : hi), st.u.assign(len, UINT64_MAX), st.f.assign(len, 0);
        break;
      case K::Prod: st.s.assign(len, 1.0); break;
      case K::Cnt: st.u.assign(len, 0); break;
      default: break;
    }
  }
  void release(PState<T>& st) const { st = PState<T>(); }

  // Pass 1 (and the only pass for unblocked ops): k <= kMaxRows rows xs[i][0..n) of fiber
  // indices fibs[i], in fiber-visit order, into box elements [j0, j0 + n). Blocked ops record
  // the range in b.runs.
  void rows(PState<T>& st, PBlock& b, size_t j0, const T* const* xs, const uint64_t* fibs, size_t k, size_t n) const {
    switch (kind_) {
      case K::Sum:
        rk_->add(b.s.data() + j0, xs, k, n, op_ == Op::NormL1 ? Xform::Abs : op_ == Op::NormL2 ? Xform::Square : Xform::Identity);
        break;
      case K::NanSum: rk_->add_nan(b.s.data() + j0, b.n.data() + j0, xs, k, n); break;
      case K::Var: case K::NanVar:  // the batch is a two-pass block, Chan-merged per element
        rk_->var(st.n.data() + j0, st.s.data() + j0, st.c.data() + j0, xs, k, n, kind_ == K::NanVar);
        return;
      case K::SmallInt: rk_->isum(b.i.data() + j0, xs, k, n); break;
      case K::Ext: rk_->ext(st.v.data() + j0, kFloat ? st.f.data() + j0 : nullptr, xs, k, n, op_ == Op::Min); return;
      case K::BigInt:
        for (size_t i = 0; i < k; ++i) {
          const T* x = xs[i];
          __int128* sum = st.isum.data() + j0;
          for (size_t j = 0; j < n; ++j) sum[j] += static_cast<__int128>(x[j]);
        }
        return;
      case K::Arg: {
        // Batch extrema first (vectorised); only elements where the batch may win (or ties,
        // or NaN) replay the rows in order with the exact rule.
        if (b.e.size() < n * sizeof(T)) b.e.resize(n * sizeof(T)), b.ef.resize(n);
        T* ex = reinterpret_cast<T*>(b.e.data());
        uint8_t* ef = b.ef.data();
        const T init = op_ == Op::ArgMin
                           ? (std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max())
                           : (std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
        std::fill(ex, ex + n, init);
        std::fill(ef, ef + n, uint8_t(0));
        rk_->ext(ex, kFloat ? ef : nullptr, xs, k, n, op_ == Op::ArgMin);
        const T* best = st.v.data() + j0;
        const uint8_t* nan = st.f.data() + j0;
        const bool mn = op_ == Op::ArgMin;
        // mask (in ef): this batch may change element j. An earlier NaN stays unless the batch
        // has one too; else the batch matters when it has a NaN or its extremum ties or beats
        // the state (an empty state holds the identity, which every batch ties or beats).
        for (size_t j = 0; j < n; ++j) {
          const uint8_t beats = mn ? uint8_t(!(best[j] < ex[j])) : uint8_t(!(best[j] > ex[j]));
          ef[j] = uint8_t((ef[j] | beats) & (ef[j] | uint8_t(nan[j] == 0)));
        }
        for (size_t j = 0; j < n;) {
          if (j + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, ef + j, 8);
            if (w == 0) { j += 8; continue; }
          }
          if (ef[j])
            for (size_t i = 0; i < k; ++i) arg_row(st, j0 + j, xs[i] + j, 1, fibs[i]);
          ++j;
        }
        return;
      }
      case K::Prod:
        for (size_t i = 0; i < k; ++i) {
          const T* __restrict x = xs[i];
          double* __restrict p = st.s.data() + j0;
          for (size_t j = 0; j < n; ++j) p[j] *= double(x[j]);
        }
        return;
      case K::Cnt:
        for (size_t i = 0; i < k; ++i) count_loop(st.u.data() + j0, xs[i], n);
        return;
      default: return;
    }
    b.runs.emplace_back(j0, j0 + n);
  }

  // Folds the block into the state (once per touched element) and zeroes it.
  void flush(PState<T>& st, PBlock& b) const {
    if (b.runs.empty()) return;
    b.coalesce();
    for (const auto& r : b.runs) {
      const size_t j0 = r.first, n = r.second - r.first;
      switch (kind_) {
        case K::Sum: case K::NanSum: {
          double* bs = b.s.data() + j0;
          double* s = st.s.data() + j0;
          double* c = st.c.data() + j0;
          for (size_t j = 0; j < n; ++j) neumaier_add(s[j], c[j], bs[j]), bs[j] = 0.0;
          if (kind_ == K::NanSum) {
            double* bn = b.n.data() + j0;
            double* sn = st.n.data() + j0;
            for (size_t j = 0; j < n; ++j) sn[j] += bn[j], bn[j] = 0.0;
          }
          break;
        }
        case K::SmallInt: {
          int64_t* bi = b.i.data() + j0;
          __int128* s = st.isum.data() + j0;
          for (size_t j = 0; j < n; ++j) s[j] += bi[j], bi[j] = 0;
          break;
        }
        default: break;
      }
    }
    b.runs.clear();
  }

  // A per-run accumulator (reduced last axis) into element j; arg indices already global.
  void merge_acc(PState<T>& st, size_t j, const Acc<T>& a) const {
    switch (kind_) {
      case K::Sum: neumaier_add(st.s[j], st.c[j], a.s); st.c[j] += a.c; break;
      case K::NanSum: neumaier_add(st.s[j], st.c[j], a.s); st.c[j] += a.c; st.n[j] += double(a.n); break;
      case K::SmallInt: case K::BigInt: st.isum[j] += a.isum; break;
      case K::Var: case K::NanVar: chan_merge_d(st.n[j], st.s[j], st.c[j], double(a.n), a.mean, a.m2); break;
      case K::Ext: {
        const T e = op_ == Op::Min ? a.lo : a.hi;
        if (op_ == Op::Min ? e < st.v[j] : e > st.v[j]) st.v[j] = e;
        if (kFloat) st.f[j] |= uint8_t(a.nan);
        break;
      }
      case K::Arg: merge_arg(st, j, a.best, a.idx, a.nan); break;
      case K::Prod: st.s[j] *= a.prod; break;
      case K::Cnt: st.u[j] += a.cnt; break;
      default: break;
    }
  }

  // dst[dj + k] <- merge(dst[dj + k], src[sj + k]) for k < n.
  void merge(PState<T>& d, size_t dj, const PState<T>& s, size_t sj, size_t n) const {
    for (size_t k = 0; k < n; ++k) {
      const size_t a = dj + k, b = sj + k;
      switch (kind_) {
        case K::Sum: neumaier_add(d.s[a], d.c[a], s.s[b]); d.c[a] += s.c[b]; break;
        case K::NanSum: neumaier_add(d.s[a], d.c[a], s.s[b]); d.c[a] += s.c[b]; d.n[a] += s.n[b]; break;
        case K::SmallInt: case K::BigInt: d.isum[a] += s.isum[b]; break;
        case K::Var: case K::NanVar: chan_merge_d(d.n[a], d.s[a], d.c[a], s.n[b], s.s[b], s.c[b]); break;
        case K::Ext:
          if (op_ == Op::Min ? s.v[b] < d.v[a] : s.v[b] > d.v[a]) d.v[a] = s.v[b];
          if (kFloat) d.f[a] |= s.f[b];
          break;
        case K::Arg: merge_arg(d, a, s.v[b], s.u[b], s.f[b] != 0); break;
        case K::Prod: d.s[a] *= s.s[b]; break;
        case K::Cnt: d.u[a] += s.u[b]; break;
        default: break;
      }
    }
  }

  // Final value of element j (8 bytes, or 1 for Bool kinds); `fib_len` = elements per output.
  void finalize(const PState<T>& st, size_t j, uint64_t fib_len, uint8_t* out) const {
    const double nanv = std::numeric_limits<double>::quiet_NaN();
    switch (op_) {
      case Op::Sum:
        put(out, kFloat ? neumaier_result(st.s[j], st.c[j]) : double(st.isum[j]));
        break;
      case Op::Mean: case Op::NanMean: {
        const double cnt = kind_ == K::NanSum ? st.n[j] : double(fib_len);
        const double sum = kFloat ? neumaier_result(st.s[j], st.c[j]) : double(st.isum[j]);
        put(out, cnt == 0 ? nanv : sum / cnt);
        break;
      }
      case Op::NormL1: put(out, neumaier_result(st.s[j], st.c[j])); break;
      case Op::NormL2: put(out, std::sqrt(neumaier_result(st.s[j], st.c[j]))); break;
      case Op::Min: case Op::Max:
        if (kFloat) put(out, st.f[j] ? nanv : double(st.v[j]));
        else if (std::is_signed<T>::value) put(out, int64_t(st.v[j]));
        else put(out, uint64_t(st.v[j]));
        break;
      case Op::Count: put(out, fib_len); break;
      case Op::Var: case Op::Std: case Op::NanStd: {
        const double var = st.n[j] == 0 ? nanv : st.c[j] / st.n[j];
        put(out, op_ == Op::Var ? var : std::sqrt(var));
        break;
      }
      case Op::Product: put(out, st.s[j]); break;
      case Op::AllFinite: out[0] = st.u[j] == 0; break;
      case Op::AnyNan: case Op::AnyInf: out[0] = st.u[j] > 0; break;
      case Op::NanCount: case Op::InfCount: case Op::NullCount: put(out, st.u[j]); break;
      case Op::ArgMin: case Op::ArgMax: put(out, st.u[j] == UINT64_MAX ? uint64_t(0) : st.u[j]); break;
      default: put(out, nanv); break;
    }
  }

 private:
  enum class K { None, Sum, NanSum, SmallInt, BigInt, Var, NanVar, Ext, Arg, Prod, Cnt };

  template <class V> static void put(uint8_t* o, V v) { std::memcpy(o, &v, 8); }

  static void chan_merge_d(double& na, double& ma, double& m2a, double nb, double mb, double m2b) {
    if (nb == 0) return;
    if (na == 0) { na = nb, ma = mb, m2a = m2b; return; }
    const double n = na + nb;
    const double delta = mb - ma;
    ma = ma + delta * (nb / n);
    m2a = m2a + m2b + delta * delta * (na * nb / n);
    na = n;
  }

  // The first NaN wins, else the extremum with the smallest index (order independent).
  void merge_arg(PState<T>& st, size_t j, T best, uint64_t idx, bool nan) const {
    if (idx == UINT64_MAX) return;
    if (nan) {
      if (!st.f[j] || idx < st.u[j]) st.f[j] = 1, st.u[j] = idx;
      return;
    }
    if (st.f[j]) return;
    if (st.u[j] == UINT64_MAX) { st.v[j] = best, st.u[j] = idx; return; }
    const bool better = op_ == Op::ArgMin ? best < st.v[j] : best > st.v[j];
    if (better || (best == st.v[j] && idx < st.u[j])) st.v[j] = best, st.u[j] = idx;
  }

  void arg_row(PState<T>& st, size_t j0, const T* x, size_t n, uint64_t fib) const {
    T* best = st.v.data() + j0;
    uint64_t* idx = st.u.data() + j0;
    uint8_t* nan = st.f.data() + j0;
    const bool mn = op_ == Op::ArgMin;
    for (size_t j = 0; j < n; ++j) {
      const T v = x[j];
      if (v != v) {
        if (!nan[j] || fib < idx[j]) nan[j] = 1, idx[j] = fib;
        continue;
      }
      if (nan[j]) continue;
      if (idx[j] == UINT64_MAX || (mn ? v < best[j] : v > best[j]) || (v == best[j] && fib < idx[j]))
        best[j] = v, idx[j] = fib;
    }
  }

  void count_loop(uint64_t* __restrict u, const T* __restrict x, size_t n) const {
    switch (op_) {
      case Op::AllFinite:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j] += !std::isfinite(x[j]);
        break;
      case Op::AnyNan: case Op::NanCount:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j] += x[j] != x[j];
        break;
      case Op::AnyInf: case Op::InfCount:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j] += std::isinf(x[j]);
        break;
      case Op::NullCount:
        if (!fo_.fill_ok()) break;
        if (fo_.fill_nan()) { for (size_t j = 0; j < n; ++j) u[j] += x[j] != x[j]; }
        else { const T f = fo_.fill_value(); for (size_t j = 0; j < n; ++j) u[j] += x[j] == f; }
        break;
      default: break;
    }
  }

  Op op_;
  FoldOp<T> fo_;
  const RowKernels<T>* rk_;
  K kind_ = K::None;
};

}  // namespace fold
}  // namespace tet
