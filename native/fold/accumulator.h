// Streaming fold state for the tier-A/B ops (one accumulator per block, per output element or
// per whole selection) and the three ways to grow it: fold a dense block (SIMD kernels), add one
// element, merge another accumulator. Merges are exact for counts and extrema and use Neumaier
// sums / Chan's mean+M2 formula for the rest; callers merge in a fixed order for determinism.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fold/kernels.h"
#include "tet/plan.h"

namespace tet {
namespace fold {

template <class T> struct Acc {
  uint64_t n = 0;               // elements folded (non-NaN ones for nan_mean / nan_std)
  double s = 0, c = 0;          // Neumaier-compensated f64 sum and its correction
  double mean = 0, m2 = 0;      // var / std / nan_* (Chan)
  __int128 isum = 0;            // exact integer sum
  T lo = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  T hi = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  T best = T(0);                // arg_min / arg_max extremum
  bool nan = false;             // some element was NaN
  uint64_t cnt = 0;             // nan / inf / non-finite / null counters
  double prod = 1;
  uint64_t idx = UINT64_MAX;    // arg index (first NaN when nan), UINT64_MAX = none yet
};

inline void neumaier_add(double& s, double& c, double v) {
  const double t = s + v;
  if (std::fabs(s) >= std::fabs(v)) c += (s - t) + v;
  else c += (v - t) + s;
  s = t;
}
inline double neumaier_result(double s, double c) { return std::isfinite(s) ? s + c : s; }

inline void chan_merge(uint64_t& na, double& ma, double& m2a, uint64_t nb, double mb, double m2b) {
  if (nb == 0) return;
  if (na == 0) { na = nb, ma = mb, m2a = m2b; return; }
  const double n = double(na) + double(nb);
  const double delta = mb - ma;
  ma = ma + delta * (double(nb) / n);
  m2a = m2a + m2b + delta * delta * (double(na) * double(nb) / n);
  na += nb;
}

inline ValueKind value_kind(Op op, DType dt) {
  switch (op) {
    case Op::Min: case Op::Max:
      if (dtype_is_float(dt)) return ValueKind::F64;
      return (dt == DType::U8 || dt == DType::U16 || dt == DType::U32 || dt == DType::U64) ? ValueKind::U64 : ValueKind::I64;
    case Op::Count: case Op::NanCount: case Op::InfCount: case Op::NullCount: case Op::ArgMin: case Op::ArgMax:
    case Op::Histogram:
      return ValueKind::U64;
    case Op::AllFinite: case Op::AnyNan: case Op::AnyInf: return ValueKind::Bool;
    default: return ValueKind::F64;
  }
}
inline size_t value_size(ValueKind k) { return k == ValueKind::Bool ? 1 : 8; }

template <class T> class FoldOp {
 public:
  static constexpr bool kFloat = std::is_floating_point<T>::value;

  FoldOp(Op op, Isa isa, bool has_fill, double fill) : op_(op), isa_(isa) {
    if (!has_fill) return;
    if (kFloat) {
      fill_nan_ = std::isnan(fill);
      // The fill must exist in the dtype's domain (a float fill that rounds never matches).
      if (std::isfinite(fill) && std::fabs(fill) > double(std::numeric_limits<T>::max())) return;
      fill_t_ = T(fill);
      fill_ok_ = fill_nan_ || double(fill_t_) == fill;
    } else {
      const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);  // exclusive
      fill_ok_ = std::isfinite(fill) && std::floor(fill) == fill &&
                 fill >= double(std::numeric_limits<T>::lowest()) && fill < upper;
      if (fill_ok_) fill_t_ = T(fill), fill_ok_ = double(fill_t_) == fill;
    }
  }
  Op op() const { return op_; }
  bool fill_ok() const { return fill_ok_; }    // null_count: the fill exists in T's domain
  bool fill_nan() const { return fill_nan_; }  // null_count: the fill is NaN
  T fill_value() const { return fill_t_; }

  // Fold a dense block; arg indices are positions within the block.
  void block(Acc<T>& a, const T* x, size_t n) const {
    a.n += n;
    switch (op_) {
      case Op::Sum: case Op::Mean:
        if (kFloat) neumaier_add(a.s, a.c, lane_sum(x, n, Xform::Identity, 0, isa_));
        else a.isum += int_sum_of(x, n);
        break;
      case Op::NormL1: neumaier_add(a.s, a.c, lane_sum(x, n, Xform::Abs, 0, isa_)); break;
      case Op::NormL2: neumaier_add(a.s, a.c, lane_sum(x, n, Xform::Square, 0, isa_)); break;
      case Op::Min: case Op::Max: {
        const MinMax<T> m = min_max(x, n, isa_);
        if (m.lo < a.lo) a.lo = m.lo;
        if (m.hi > a.hi) a.hi = m.hi;
        a.nan |= m.has_nan;
        break;
      }
      case Op::Var: case Op::Std:
        a.n -= n;
        var_blocks(a, x, n);
        break;
      case Op::NanMean:
        if (kFloat && min_max(x, n, isa_).has_nan) {
          a.n -= n;
          for (size_t i = 0; i < n; ++i) one(a, x[i], 0);
        } else if (kFloat) {
          neumaier_add(a.s, a.c, lane_sum(x, n, Xform::Identity, 0, isa_));
        } else {
          a.isum += int_sum_of(x, n);
        }
        break;
      case Op::NanStd: {
        a.n -= n;
        if (kFloat && min_max(x, n, isa_).has_nan) {
          for (size_t i = 0; i < n; ++i) one(a, x[i], 0);
          break;
        }
        var_blocks(a, x, n);
        break;
      }
      case Op::Product:
        for (size_t i = 0; i < n; ++i) a.prod *= double(x[i]);
        break;
      case Op::AllFinite:
        if (kFloat) for (size_t i = 0; i < n; ++i) a.cnt += !std::isfinite(x[i]);
        break;
      case Op::AnyNan: case Op::NanCount:
        if (kFloat) for (size_t i = 0; i < n; ++i) a.cnt += x[i] != x[i];
        break;
      case Op::AnyInf: case Op::InfCount:
        if (kFloat) for (size_t i = 0; i < n; ++i) a.cnt += std::isinf(x[i]);
        break;
      case Op::NullCount:
        if (!fill_ok_) break;
        if (fill_nan_) { for (size_t i = 0; i < n; ++i) a.cnt += x[i] != x[i]; }
        else { for (size_t i = 0; i < n; ++i) a.cnt += x[i] == fill_t_; }
        break;
      case Op::ArgMin: case Op::ArgMax: {
        // One pass of chunk extrema: the first chunk holding the block's extremum (or the first
        // NaN) is then scanned for the first matching position while it is still in cache.
        constexpr size_t kChunk = 2048;
        Acc<T> b;
        size_t at = SIZE_MAX;
        for (size_t c = 0; c < n; c += kChunk) {
          const size_t m = n - c < kChunk ? n - c : kChunk;
          const MinMax<T> mm = min_max(x + c, m, isa_);
          if (mm.has_nan) {
            size_t i = c;
            while (x[i] == x[i]) ++i;
            b = Acc<T>();
            b.nan = true, b.idx = i;
            at = SIZE_MAX;
            break;
          }
          const T want = op_ == Op::ArgMin ? mm.lo : mm.hi;
          if (at == SIZE_MAX || (op_ == Op::ArgMin ? want < b.best : want > b.best)) b.best = want, at = c;
        }
        if (at != SIZE_MAX) {
          size_t i = at;
          while (!(x[i] == b.best)) ++i;
          b.idx = i;
        }
        merge_arg(a, b);
        break;
      }
      default: break;  // Count: n only
    }
  }

  // Add one element; `index` is its arg index (ignored by other ops).
  void one(Acc<T>& a, T v, uint64_t index) const {
    switch (op_) {
      case Op::NanMean:
        if (v != v) break;
        /* fallthrough */
      case Op::Sum: case Op::Mean:
        ++a.n;
        if (kFloat) neumaier_add(a.s, a.c, double(v));
        else a.isum += static_cast<__int128>(v);
        break;
      case Op::NormL1: ++a.n; neumaier_add(a.s, a.c, std::fabs(double(v))); break;
      case Op::NormL2: ++a.n; neumaier_add(a.s, a.c, double(v) * double(v)); break;
      case Op::Min: case Op::Max:
        ++a.n;
        if (v < a.lo) a.lo = v;
        if (v > a.hi) a.hi = v;
        a.nan |= v != v;
        break;
      case Op::NanStd:
        if (v != v) break;
        /* fallthrough */
      case Op::Var: case Op::Std: {
        ++a.n;
        const double d = double(v) - a.mean;
        a.mean += d / double(a.n);
        a.m2 += d * (double(v) - a.mean);
        break;
      }
      case Op::Product: ++a.n; a.prod *= double(v); break;
      case Op::AllFinite: ++a.n; if (kFloat) a.cnt += !std::isfinite(v); break;
      case Op::AnyNan: case Op::NanCount: ++a.n; a.cnt += v != v; break;
      case Op::AnyInf: case Op::InfCount: ++a.n; if (kFloat) a.cnt += std::isinf(v); break;
      case Op::NullCount:
        ++a.n;
        if (fill_ok_) a.cnt += fill_nan_ ? (v != v) : (v == fill_t_);
        break;
      case Op::ArgMin: case Op::ArgMax: {
        ++a.n;
        Acc<T> b;
        if (v != v) b.nan = true;
        b.best = v, b.idx = index;
        merge_arg(a, b);
        break;
      }
      default: ++a.n; break;
    }
  }

  // one(acc[j], x[j], index) for j < n, with the op dispatch hoisted out of the loop.
  void many(Acc<T>* acc, const T* x, size_t n, uint64_t index) const {
    switch (op_) {
      case Op::Sum: case Op::Mean:
        if (kFloat) {
          for (size_t j = 0; j < n; ++j) ++acc[j].n, neumaier_add(acc[j].s, acc[j].c, double(x[j]));
        } else {
          for (size_t j = 0; j < n; ++j) ++acc[j].n, acc[j].isum += static_cast<__int128>(x[j]);
        }
        break;
      case Op::Min: case Op::Max:
        for (size_t j = 0; j < n; ++j) {
          Acc<T>& a = acc[j];
          const T v = x[j];
          ++a.n;
          a.lo = v < a.lo ? v : a.lo;
          a.hi = v > a.hi ? v : a.hi;
          a.nan |= v != v;
        }
        break;
      case Op::Var: case Op::Std:
        for (size_t j = 0; j < n; ++j) {
          Acc<T>& a = acc[j];
          const double v = double(x[j]);
          ++a.n;
          const double d = v - a.mean;
          a.mean += d / double(a.n);
          a.m2 += d * (v - a.mean);
        }
        break;
      case Op::Count:
        for (size_t j = 0; j < n; ++j) ++acc[j].n;
        break;
      default:
        for (size_t j = 0; j < n; ++j) one(acc[j], x[j], index);
    }
  }

  void merge(Acc<T>& a, const Acc<T>& b) const {
    switch (op_) {
      case Op::Sum: case Op::Mean: case Op::NanMean: case Op::NormL1: case Op::NormL2:
        a.n += b.n;
        if (kFloat || op_ == Op::NormL1 || op_ == Op::NormL2) {
          neumaier_add(a.s, a.c, b.s);
          a.c += b.c;
        } else {
          a.isum += b.isum;
        }
        break;
      case Op::Min: case Op::Max:
        a.n += b.n;
        if (b.lo < a.lo) a.lo = b.lo;
        if (b.hi > a.hi) a.hi = b.hi;
        a.nan |= b.nan;
        break;
      case Op::Var: case Op::Std: case Op::NanStd:
        chan_merge(a.n, a.mean, a.m2, b.n, b.mean, b.m2);
        break;
      case Op::Product: a.n += b.n; a.prod *= b.prod; break;
      case Op::ArgMin: case Op::ArgMax: a.n += b.n; merge_arg(a, b); break;
      default: a.n += b.n; a.cnt += b.cnt; break;
    }
  }

  // Writes the final value (8 bytes, or 1 for Bool kinds).
  void finalize(const Acc<T>& a, uint8_t* out) const {
    const double nanv = std::numeric_limits<double>::quiet_NaN();
    switch (op_) {
      case Op::Sum: put_f64(out, kFloat ? neumaier_result(a.s, a.c) : int128_to_double(a.isum)); break;
      case Op::Mean: case Op::NanMean:
        put_f64(out, a.n == 0 ? nanv : (kFloat ? neumaier_result(a.s, a.c) : int128_to_double(a.isum)) / double(a.n));
        break;
      case Op::NormL1: put_f64(out, neumaier_result(a.s, a.c)); break;
      case Op::NormL2: put_f64(out, std::sqrt(neumaier_result(a.s, a.c))); break;
      case Op::Min: case Op::Max: {
        const T v = op_ == Op::Min ? a.lo : a.hi;
        if (kFloat) put_f64(out, a.nan ? nanv : double(v));
        else if (std::is_signed<T>::value) put_i64(out, int64_t(v));
        else put_u64(out, uint64_t(v));
        break;
      }
      case Op::Count: put_u64(out, a.n); break;
      case Op::Var: case Op::Std: case Op::NanStd: {
        const double var = a.n == 0 ? nanv : a.m2 / double(a.n);
        put_f64(out, op_ == Op::Var ? var : std::sqrt(var));
        break;
      }
      case Op::Product: put_f64(out, a.prod); break;
      case Op::AllFinite: out[0] = a.cnt == 0; break;
      case Op::AnyNan: case Op::AnyInf: out[0] = a.cnt > 0; break;
      case Op::NanCount: case Op::InfCount: case Op::NullCount: put_u64(out, a.cnt); break;
      case Op::ArgMin: case Op::ArgMax: put_u64(out, a.idx == UINT64_MAX ? 0 : a.idx); break;
      default: put_f64(out, nanv); break;
    }
  }

  static void put_f64(uint8_t* o, double v) { std::memcpy(o, &v, 8); }
  static void put_i64(uint8_t* o, int64_t v) { std::memcpy(o, &v, 8); }
  static void put_u64(uint8_t* o, uint64_t v) { std::memcpy(o, &v, 8); }
  static double int128_to_double(__int128 v) { return static_cast<double>(v); }

 private:
  __int128 int_sum_of(const T* x, size_t n) const {
    if constexpr (std::is_integral<T>::value) return int_sum(x, n, isa_);
    (void)x, (void)n;
    return 0;
  }
  // Mean / M2 per sub-block (the split depends only on n), Chan-merged in order. One pass of
  // shifted sums s1 = sum(x - K), s2 = sum((x - K)^2) with K = the sub-block's first element:
  // mean = K + s1/m, M2 = s2 - s1^2/m. The subtraction loses about log2(1 + s1^2/(m*M2)) bits,
  // so when s1^2/m > 2^10 * M2 (or M2 is not finite / negative) the sub-block is redone two-pass
  // (mean, then squared deviations from it, read from L1). Same kernels on every ISA.
  void var_blocks(Acc<T>& a, const T* x, size_t n) const {
    constexpr size_t kSub = 4096;
    for (size_t b = 0; b < n; b += kSub) {
      const size_t m = n - b < kSub ? n - b : kSub;
      const double k = static_cast<double>(x[b]);
      double s1 = 0, s2 = 0;
      shifted_sums(x + b, m, k, &s1, &s2, isa_);
      const double c = s1 * s1 / double(m);
      double mean = k + s1 / double(m);
      double m2 = s2 - c;
      if (!(std::isfinite(m2) && m2 >= 0 && std::isfinite(mean)) || c > m2 * 1024.0) {
        if (kFloat) mean = lane_sum(x + b, m, Xform::Identity, 0, isa_) / double(m);
        else mean = double(int_sum_of(x + b, m)) / double(m);
        m2 = lane_sum(x + b, m, Xform::SquaredDeviation, mean, isa_);
      }
      chan_merge(a.n, a.mean, a.m2, m, mean, m2);
    }
  }
  // Order-independent: the first NaN wins, else the extremum with the smallest index.
  void merge_arg(Acc<T>& a, const Acc<T>& b) const {
    if (b.idx == UINT64_MAX) return;
    if (b.nan) {
      if (!a.nan || b.idx < a.idx) a.nan = true, a.idx = b.idx;
      return;
    }
    if (a.nan) return;
    if (a.idx == UINT64_MAX) { a.best = b.best, a.idx = b.idx; return; }
    const bool better = op_ == Op::ArgMin ? b.best < a.best : b.best > a.best;
    if (better || (b.best == a.best && b.idx < a.idx)) a.best = b.best, a.idx = b.idx;
  }

  Op op_;
  Isa isa_;
  bool fill_ok_ = false, fill_nan_ = false;
  T fill_t_ = T(0);
};

}  // namespace fold
}  // namespace tet
