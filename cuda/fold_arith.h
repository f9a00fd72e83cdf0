// The fold arithmetic of the device backend as __host__ __device__ functions: compiled by nvcc
// for the kernels (cuda/kernels.cuh) and by g++ for the host tests
// (native/tests/cuda_arith_test.cpp), so the host build tests the very code the GPU runs.
//
// Every function mirrors one piece of the CPU fold (native/fold): the same block decomposition
// (units of exec::kUnitElems elements, kLanes = 32 canonical f64 lanes in a fixed pairwise tree,
// min/max lanes of 64 bytes, var sub-blocks of 4096 with the shifted-sum / two-pass rule, row
// batches of at most 8 rows), the same f64 / Neumaier / Chan operations in the same order, no
// contraction (nvcc: --fmad=false; g++: the pragma below). Results are therefore bit-identical
// to the CPU's unit states; what the device does differently is only *who* computes a lane
// (one GPU thread per lane instead of one SIMD lane), never the order of the additions inside it.
//
// No Node, no CUDA runtime, no allocation: plain arithmetic on caller-owned values.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tet_cuda_abi.h"

#if defined(__CUDACC__)
#define TET_HD __host__ __device__ __forceinline__
#else
#define TET_HD inline
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#endif

namespace tet {
namespace dev {

// Wire codes of the ops and dtypes the backend folds (tet::Op of include/tet/plan.h and
// tet::DType of include/tet/dtype.h; cuda_arith_test checks that they agree).
enum class Op : uint32_t {
  Sum = 1, Mean = 2, Min = 3, Max = 4, Count = 5, Var = 6, Std = 7, Product = 8, NormL1 = 9, NormL2 = 10,
  AllFinite = 11, AnyNan = 12, AnyInf = 13, NanCount = 16, InfCount = 17, NanMean = 19, NanStd = 20,
};
enum class Family : uint32_t { Sum, Extrema, Moments, Counts, Product, None };

TET_HD Family family_of(uint32_t op) {
  switch (op) {
    case 1: case 2: case 9: case 10: case 19: return Family::Sum;
    case 3: case 4: return Family::Extrema;
    case 6: case 7: case 20: return Family::Moments;
    case 5: case 11: case 12: case 13: case 16: case 17: return Family::Counts;
    case 8: return Family::Product;
    default: return Family::None;  // arg_min / arg_max, null_count, tier C: CPU only
  }
}

constexpr uint32_t kLanes = 32;        // fold/kernels.h kLanes
constexpr uint64_t kUnitElems = 1u << 17;  // exec/work_units.h kUnitElems
constexpr uint32_t kVarSub = 4096;     // fold/ops/moments.h var_blocks sub-block
constexpr uint32_t kMaxRows = 8;       // fold/row_kernels.h kMaxRows

enum class Xform : uint32_t { Identity = 0, Abs = 1, Square = 2, SquaredDeviation = 3 };

template <class T> TET_HD constexpr bool is_float() { return std::is_floating_point<T>::value; }
template <class T> TET_HD T highest() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}
template <class T> TET_HD T lowest() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

// binary16 -> binary32, exact (the CPU's f16 table is built from tet::f16_to_f32; the host test
// compares all 65536 patterns). NaN payloads keep their top 10 bits, as the table does.
TET_HD float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    uint32_t e = 113;
    while ((mant & 0x400u) == 0) mant <<= 1, --e;
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Primitives of fold/ops/common.h

TET_HD void neumaier_add(double& s, double& c, double v) {
  const double t = s + v;
  if (std::fabs(s) >= std::fabs(v)) c += (s - t) + v;
  else c += (v - t) + s;
  s = t;
}
TET_HD double neumaier_result(double s, double c) { return std::isfinite(s) ? s + c : s; }

TET_HD void chan_merge(uint64_t& na, double& ma, double& m2a, uint64_t nb, double mb, double m2b) {
  if (nb == 0) return;
  if (na == 0) { na = nb, ma = mb, m2a = m2b; return; }
  const double n = double(na) + double(nb);
  const double delta = mb - ma;
  ma = ma + delta * (double(nb) / n);
  m2a = m2a + m2b + delta * delta * (double(na) * double(nb) / n);
  na += nb;
}

TET_HD double xform(double v, Xform f, double c) {
  if (f == Xform::Identity) return v;
  if (f == Xform::Abs) return std::fabs(v);
  if (f == Xform::Square) return v * v;
  const double d = v - c;
  return d * d;
}

// ---------------------------------------------------------------------------------------------
// Canonical lane sums (fold/kernels.cpp lane_sum_body / shifted_sums_body). Lane j sums
// f(x[g*32 + j]) over the full groups g in order, then its tail element; the 32 lanes combine in
// the pairwise tree lanes[j] += lanes[j + s], s = 16, 8, 4, 2, 1 (lane_tree; on the device the
// same tree is five __shfl_down_sync steps, lane j < s adding lane j + s).

template <class T> TET_HD double lane_part(const T* x, uint64_t n, uint32_t lane, Xform f, double c) {
  const uint64_t full = n / kLanes * kLanes;
  double acc = 0;
  for (uint64_t g = 0; g < full; g += kLanes) acc += xform(double(x[g + lane]), f, c);
  if (full + lane < n) acc += xform(double(x[full + lane]), f, c);
  return acc;
}

template <class T> TET_HD void shifted_part(const T* x, uint64_t n, uint32_t lane, double k, double& s1, double& s2) {
  const uint64_t full = n / kLanes * kLanes;
  double a = 0, b = 0;
  for (uint64_t g = 0; g < full; g += kLanes) {
    const double d = double(x[g + lane]) - k;
    a += d;
    b += d * d;
  }
  if (full + lane < n) {
    const double d = double(x[full + lane]) - k;
    a += d;
    b += d * d;
  }
  s1 = a, s2 = b;
}

// The pairwise tree over 32 lane values (in place; the result is lanes[0]).
TET_HD double lane_tree(double* lanes) {
  for (uint32_t s = kLanes / 2; s > 0; s >>= 1)
    for (uint32_t j = 0; j < s; ++j) lanes[j] += lanes[j + s];
  return lanes[0];
}

// Host-side composition (tests, the host stub module): all lanes then the tree.
template <class T> TET_HD double lane_sum(const T* x, uint64_t n, Xform f, double c) {
  double lanes[kLanes];
  for (uint32_t j = 0; j < kLanes; ++j) lanes[j] = lane_part(x, n, j, f, c);
  return lane_tree(lanes);
}
template <class T> TET_HD void shifted_sums(const T* x, uint64_t n, double k, double& s1, double& s2) {
  double l1[kLanes], l2[kLanes];
  for (uint32_t j = 0; j < kLanes; ++j) shifted_part(x, n, j, k, l1[j], l2[j]);
  s1 = lane_tree(l1), s2 = lane_tree(l2);
}

// ---------------------------------------------------------------------------------------------
// Min / max (fold/kernels.cpp min_max_body): L lanes of 64 bytes (at least 8); lane j keeps
// `v < lo ? v : lo` over the full groups, the lanes combine in lane order keeping the earlier on
// ties (which decides -0 versus +0), then the tail in element order.

template <class T> TET_HD constexpr uint32_t minmax_lanes() { return 64 / sizeof(T) < 8 ? 8 : uint32_t(64 / sizeof(T)); }

template <class T> struct MinMax {
  T lo, hi;
  bool nan;
};

template <class T> TET_HD MinMax<T> minmax_lane(const T* x, uint64_t n, uint32_t lane) {
  constexpr uint32_t L = minmax_lanes<T>();
  const uint64_t full = n / L * L;
  MinMax<T> r{highest<T>(), lowest<T>(), false};
  for (uint64_t g = 0; g < full; g += L) {
    const T v = x[g + lane];
    r.lo = v < r.lo ? v : r.lo;
    r.hi = v > r.hi ? v : r.hi;
    r.nan |= v != v;
  }
  return r;
}

// Lane results (L of them, in lane order), then the tail: the `tail_n` (< L) elements after the
// last full group, in element order.
template <class T> TET_HD MinMax<T> minmax_combine(const MinMax<T>* lanes, const T* tail, uint64_t tail_n) {
  constexpr uint32_t L = minmax_lanes<T>();
  MinMax<T> r = lanes[0];
  for (uint32_t j = 1; j < L; ++j) {
    r.lo = lanes[j].lo < r.lo ? lanes[j].lo : r.lo;
    r.hi = lanes[j].hi > r.hi ? lanes[j].hi : r.hi;
    r.nan |= lanes[j].nan;
  }
  for (uint64_t i = 0; i < tail_n; ++i) {
    const T v = tail[i];
    r.lo = v < r.lo ? v : r.lo;
    r.hi = v > r.hi ? v : r.hi;
    r.nan |= v != v;
  }
  return r;
}

template <class T> TET_HD MinMax<T> min_max(const T* x, uint64_t n) {
  MinMax<T> lanes[minmax_lanes<T>()];
  for (uint32_t j = 0; j < minmax_lanes<T>(); ++j) lanes[j] = minmax_lane(x, n, j);
  const uint64_t full = n / minmax_lanes<T>() * minmax_lanes<T>();
  return minmax_combine(lanes, x + full, n - full);
}

// ---------------------------------------------------------------------------------------------
// Exact integer sums: any order gives the same value. A 64-bit element splits into its low 32
// bits (summed unsigned) and its high half (arithmetic shift), exact for < 2^31 elements.
struct IntParts {
  uint64_t lo = 0;
  int64_t hi = 0;  // signed T: sum of x >> 32; unsigned: of the high words (as u64 bits)
};
template <class T> TET_HD void int_part_add(IntParts& p, T v) {
  if (sizeof(T) < 8) {
    p.hi += int64_t(v);  // |v| < 2^32, < 2^31 elements: exact in int64
  } else {
    const uint64_t u = uint64_t(v);
    p.lo += u & 0xffffffffu;
    if (std::is_signed<T>::value) p.hi += int64_t(v) >> 32;
    else p.hi = int64_t(uint64_t(p.hi) + (u >> 32));
  }
}
TET_HD void int_part_merge(IntParts& a, const IntParts& b) {
  a.lo += b.lo;
  a.hi = int64_t(uint64_t(a.hi) + uint64_t(b.hi));
}
template <class T> TET_HD __int128 int_parts_value(const IntParts& p) {
  if (sizeof(T) < 8) return __int128(p.hi);
  const __int128 hi = std::is_signed<T>::value ? __int128(p.hi) : __int128(uint64_t(p.hi));
  return __int128(p.lo) + hi * (__int128(1) << 32);
}

// ---------------------------------------------------------------------------------------------
// Scalar unit states, field for field those of fold/ops/<family>.h (cuda_arith_test compares
// them through the families' own encode).

struct SumState {
  uint64_t n = 0;
  double s = 0, c = 0;
  __int128 isum = 0;
};
template <class T> struct ExtState {
  T lo = highest<T>(), hi = lowest<T>();
  bool nan = false;
};
struct MomState {
  uint64_t n = 0;
  double mean = 0, m2 = 0;
};
struct CountState {
  uint64_t n = 0, cnt = 0;
};
struct ProdState {
  double prod = 1;
};

template <class T> TET_HD bool sum_exact_int(uint32_t op) { return !is_float<T>() && op != 9 && op != 10; }
TET_HD Xform sum_xform(uint32_t op) { return op == 9 ? Xform::Abs : op == 10 ? Xform::Square : Xform::Identity; }

// The counts predicate of one element (fold/ops/counts.h count_into; integers count nothing).
template <class T> TET_HD uint64_t count_pred(uint32_t op, T v) {
  if (!is_float<T>()) return 0;
  const double d = double(v);
  switch (op) {
    case 11: return !std::isfinite(d);
    case 12: case 16: return v != v;
    case 13: case 17: return std::isinf(d);
    default: return 0;
  }
}

// Sequential element steps (consume_one), used by nan_mean / nan_std on a unit with a NaN.
template <class T> TET_HD void sum_one(uint32_t op, SumState& a, T v) {
  if (op == 19 && v != v) return;
  ++a.n;
  if (sum_exact_int<T>(op)) a.isum += static_cast<__int128>(v);
  else neumaier_add(a.s, a.c, op == 9 ? std::fabs(double(v)) : op == 10 ? double(v) * double(v) : double(v));
}
template <class T> TET_HD void mom_one(uint32_t op, MomState& a, T v) {
  if (op == 20 && v != v) return;
  ++a.n;
  const double d = double(v) - a.mean;
  a.mean += d / double(a.n);
  a.m2 += d * (double(v) - a.mean);
}

// One var sub-block (m <= kVarSub elements at x) from its shifted sums (K = x[0]): the
// shifted-sum mean and M2, or the two-pass redo when the shifted form lost too many bits
// (fold/ops/moments.h var_blocks). `lane_sum` / `int_sum` are the redo's passes.
struct SubMoments {
  double mean, m2;
  bool redo;  // the caller must run the two-pass redo (mean_of, then m2 with SquaredDeviation)
};
TET_HD SubMoments sub_moments(double shift, double s1, double s2, uint64_t m) {
  const double c = s1 * s1 / double(m);
  SubMoments r{shift + s1 / double(m), s2 - c, false};
  r.redo = !(std::isfinite(r.m2) && r.m2 >= 0 && std::isfinite(r.mean)) || c > r.m2 * 1024.0;
  return r;
}
template <class T> TET_HD double sub_mean_two_pass(const T* x, uint64_t m) {
  if (is_float<T>()) return lane_sum(x, m, Xform::Identity, 0) / double(m);
  IntParts p;
  for (uint64_t i = 0; i < m; ++i) int_part_add(p, x[i]);
  return double(int_parts_value<T>(p)) / double(m);
}

template <class T> TET_HD bool has_nan(const T* x, uint64_t n) {
  if (!is_float<T>()) return false;
  return min_max(x, n).nan;
}

// Whole-unit folds (the CPU's F::consume on one unit's dense elements), host compositions of
// the per-lane pieces above; the kernels run the same pieces one lane per thread.
template <class T> TET_HD SumState sum_unit(uint32_t op, const T* x, uint64_t n) {
  SumState a;
  if (is_float<T>() && op == 19 && has_nan(x, n)) {
    for (uint64_t i = 0; i < n; ++i) sum_one(op, a, x[i]);
    return a;
  }
  a.n = n;
  if (sum_exact_int<T>(op)) {
    IntParts p;
    for (uint64_t i = 0; i < n; ++i) int_part_add(p, x[i]);
    a.isum = int_parts_value<T>(p);
  } else {
    neumaier_add(a.s, a.c, lane_sum(x, n, sum_xform(op), 0));
  }
  return a;
}

template <class T> TET_HD MomState mom_unit(uint32_t op, const T* x, uint64_t n) {
  MomState a;
  if (is_float<T>() && op == 20 && has_nan(x, n)) {
    for (uint64_t i = 0; i < n; ++i) mom_one(op, a, x[i]);
    return a;
  }
  for (uint64_t b = 0; b < n; b += kVarSub) {
    const uint64_t m = n - b < kVarSub ? n - b : kVarSub;
    const double sh = double(x[b]);
    double s1, s2;
    shifted_sums(x + b, m, sh, s1, s2);
    SubMoments sm = sub_moments(sh, s1, s2, m);
    if (sm.redo) {
      sm.mean = sub_mean_two_pass(x + b, m);
      sm.m2 = lane_sum(x + b, m, Xform::SquaredDeviation, sm.mean);
    }
    chan_merge(a.n, a.mean, a.m2, m, sm.mean, sm.m2);
  }
  return a;
}

template <class T> TET_HD ExtState<T> ext_unit(const T* x, uint64_t n) {
  const MinMax<T> m = min_max(x, n);
  ExtState<T> a;
  if (m.lo < a.lo) a.lo = m.lo;
  if (m.hi > a.hi) a.hi = m.hi;
  a.nan = m.nan;
  return a;
}

template <class T> TET_HD CountState count_unit(uint32_t op, const T* x, uint64_t n) {
  CountState a;
  a.n = n;
  for (uint64_t i = 0; i < n; ++i) a.cnt += count_pred(op, x[i]);
  return a;
}

template <class T> TET_HD ProdState prod_unit(const T* x, uint64_t n) {
  ProdState a;
  for (uint64_t i = 0; i < n; ++i) a.prod *= double(x[i]);
  return a;
}

// State merges (the families' merge), for the last-axis-reduced partial path.
template <class T> TET_HD void sum_merge(uint32_t op, SumState& a, const SumState& b) {
  a.n += b.n;
  if (sum_exact_int<T>(op)) {
    a.isum += b.isum;
  } else {
    neumaier_add(a.s, a.c, b.s);
    a.c += b.c;
  }
}
template <class T> TET_HD void ext_merge(ExtState<T>& a, const ExtState<T>& b) {
  if (b.lo < a.lo) a.lo = b.lo;
  if (b.hi > a.hi) a.hi = b.hi;
  a.nan |= b.nan;
}

// ---------------------------------------------------------------------------------------------
// Partial folds, per output element (fold/row_kernels_impl.h, fold/ops/*.h consume_rows / flush).
// A batch is k <= kMaxRows rows with the same box range; element j sees the rows' values
// v[0..k) in row order. Sums, NaN-skipping sums, extrema, integer sums, counts and products are
// row-sequential (so the batch split does not matter); var forms one two-pass block per batch
// (so it does, and the kernels take the CPU's batch boundaries).

TET_HD void row_add(double& s, double v, Xform f) { s += xform(v, f, 0); }
TET_HD void row_add_nan(double& s, double& c, double v) {
  const bool ok = v == v;
  s += ok ? v : 0.0;
  c += ok ? 1.0 : 0.0;
}
template <class T> TET_HD void row_ext(T& e, uint8_t& f, T v, bool is_min) {
  e = is_min ? (v < e ? v : e) : (v > e ? v : e);
  f |= uint8_t(v != v);
}

// fold/row_kernels_impl.h var_k for one element over k rows (values already widened to double).
TET_HD void row_var_batch(double& cnt, double& mean, double& m2, const double* v, uint32_t k, bool nan_skip) {
  double s = 0, c = 0;
  for (uint32_t i = 0; i < k; ++i) {
    if (nan_skip) {
      const bool ok = v[i] == v[i];
      s += ok ? v[i] : 0.0;
      c += ok ? 1.0 : 0.0;
    } else {
      s += v[i];
    }
  }
  if (!nan_skip) c = double(k);
  const double mb = c > 0 ? s / c : 0.0;
  double q = 0;
  for (uint32_t i = 0; i < k; ++i) {
    const double d = nan_skip ? (v[i] == v[i] ? v[i] - mb : 0.0) : v[i] - mb;
    q += d * d;
  }
  const double na = cnt, ma = mean, m2a = m2;
  const double nn = na + c;
  const double delta = mb - ma;
  const double w = nn > 0 ? c / nn : 0.0;
  const double cross = na > 0 && c > 0 ? delta * delta * (na * w) : 0.0;
  mean = na == 0 ? mb : (c == 0 ? ma : ma + delta * w);
  m2 = na == 0 ? q : (c == 0 ? m2a : m2a + q + cross);
  cnt = nn;
}

// End of a unit for the f64 sum layouts: the block sum enters the Neumaier state (Sum::flush).
TET_HD void flush_sum(double& s, double& c, double& block) {
  neumaier_add(s, c, block);
  block = 0.0;
}

// ---------------------------------------------------------------------------------------------
// Partial jobs (tet_cuda_partial_job): one box element and its events in order, with the CPU's
// row steps above. The block of the blocked sum layouts (fold/soa.h RowScratch: the f64 block,
// the NaN-skipping counts, the small-integer block) lives in the caller's registers: zero before
// the first event and after every flush (a job always ends with its last unit's flush).

// The sum family's partial layout (fold/ops/sum.h Sum::kind).
enum class SumKind : uint32_t { F64, NanF64, SmallInt, BigInt };
template <class T> TET_HD SumKind sum_kind(uint32_t op) {
  if (!sum_exact_int<T>(op)) return is_float<T>() && op == 19 ? SumKind::NanF64 : SumKind::F64;
  return sizeof(T) <= 4 ? SumKind::SmallInt : SumKind::BigInt;
}

// A stored element as the fold type (f16 bits widen to f32, as the CPU's load does).
template <class S, class T> TET_HD T widen(S x) {
  if constexpr (sizeof(S) == 2 && std::is_same<T, float>::value) return f16_to_f32(x);
  else return T(x);
}

// Element j's events [ev, ev + n_ev) against the job's batches and tiles (base pointers of the
// staged tile elements); col as tet_cuda_partial_job documents it.
template <class S, class T>
TET_HD void partial_element(uint32_t op, void* const* col, uint64_t j, const uint32_t* ev, uint64_t n_ev,
                            const tet_cuda_batch* batches, const S* const* tiles) {
  const Family fam = family_of(op);
  const SumKind sk = sum_kind<T>(op);
  const Xform xf = sum_xform(op);
  double bs = 0, bn = 0;
  int64_t bi = 0;
  bool touched = false;
  T v[kMaxRows];
  for (uint64_t e = 0; e < n_ev; ++e) {
    if (ev[e] == TET_CUDA_FLUSH) {
      if (fam == Family::Sum && touched) {
        if (sk == SumKind::F64 || sk == SumKind::NanF64) {
          neumaier_add(static_cast<double*>(col[0])[j], static_cast<double*>(col[1])[j], bs);
          bs = 0;
          if (sk == SumKind::NanF64) static_cast<double*>(col[2])[j] += bn, bn = 0;
        } else if (sk == SumKind::SmallInt) {
          static_cast<__int128*>(col[0])[j] += bi;
          bi = 0;
        }
      }
      touched = false;
      continue;
    }
    const tet_cuda_batch& b = batches[ev[e]];
    const uint64_t o = j - b.j0;
    const S* x = tiles[b.tile];
    const uint32_t k = b.k < kMaxRows ? b.k : kMaxRows;
    for (uint32_t i = 0; i < k; ++i) v[i] = widen<S, T>(x[b.row[i] + o]);
    touched = true;
    switch (fam) {
      case Family::Sum:
        if (sk == SumKind::F64) {
          for (uint32_t i = 0; i < k; ++i) row_add(bs, double(v[i]), xf);
        } else if (sk == SumKind::NanF64) {
          for (uint32_t i = 0; i < k; ++i) row_add_nan(bs, bn, double(v[i]));
        } else if (sk == SumKind::SmallInt) {
          for (uint32_t i = 0; i < k; ++i) bi += int64_t(v[i]);
        } else {
          __int128& a = static_cast<__int128*>(col[0])[j];
          for (uint32_t i = 0; i < k; ++i) a += static_cast<__int128>(v[i]);
        }
        break;
      case Family::Extrema: {
        T& m = static_cast<T*>(col[0])[j];
        uint8_t f = 0;
        for (uint32_t i = 0; i < k; ++i) row_ext(m, f, v[i], op == 3);
        if (is_float<T>()) static_cast<uint8_t*>(col[1])[j] |= f;
        break;
      }
      case Family::Moments: {
        double d[kMaxRows];
        for (uint32_t i = 0; i < k; ++i) d[i] = double(v[i]);
        row_var_batch(static_cast<double*>(col[0])[j], static_cast<double*>(col[1])[j], static_cast<double*>(col[2])[j], d,
                      k, is_float<T>() && op == 20);
        break;
      }
      case Family::Counts:
        if (op != 5) {
          uint64_t& u = static_cast<uint64_t*>(col[0])[j];
          for (uint32_t i = 0; i < k; ++i) u += count_pred<T>(op, v[i]);
        }
        break;
      case Family::Product: {
        double& p = static_cast<double*>(col[0])[j];
        for (uint32_t i = 0; i < k; ++i) p *= double(v[i]);
        break;
      }
      default: break;
    }
  }
}

// fn(S{}, T{}) for a dtype wire code: the stored type S and the fold type T (f16: its bits, f32);
// TET_CUDA_ERR_ARGS for a code no module folds. Host side, for both modules' entry points.
template <class Fn> inline int by_dtype(uint32_t dtype, Fn&& fn) {
  switch (dtype) {
    case 1: return fn(float(), float());
    case 2: return fn(double(), double());
    case 3: return fn(int32_t(), int32_t());
    case 4: return fn(int64_t(), int64_t());
    case 5: return fn(uint8_t(), uint8_t());
    case 6: return fn(uint16_t(), uint16_t());
    case 7: return fn(int16_t(), int16_t());
    case 8: return fn(uint32_t(), uint32_t());
    case 9: return fn(uint16_t(), float());
    case 10: return fn(uint64_t(), uint64_t());
    default: return TET_CUDA_ERR_ARGS;
  }
}

template <class T> TET_HD void partial_col_bytes(uint32_t op, uint32_t out[4]);

// Why a partial job is malformed (nullptr: it is not): every index and range checked against
// the job's own sizes, and every column the op's layout has present, before a kernel reads
// anything. Host side, for both modules.
template <class T> inline const char* partial_job_invalid(const tet_cuda_partial_job* job) {
  if (job == nullptr || job->struct_size < sizeof(tet_cuda_partial_job)) return "job struct too small";
  uint32_t cb[4];
  partial_col_bytes<T>(job->op, cb);
  for (int c = 0; c < 4; ++c)
    if (cb[c] != 0 && job->col[c] == nullptr) return "a partial column of the op's layout is missing";
  for (uint64_t b = 0; b < job->n_batches; ++b) {
    const tet_cuda_batch& x = job->batches[b];
    if (x.tile >= job->n_tiles || x.k == 0 || x.k > kMaxRows || x.n == 0) return "batch shape";
    if (x.j0 > job->box_len || x.n > job->box_len - x.j0) return "batch outside the box";
    const uint64_t elems = job->tiles[x.tile].elems;
    for (uint32_t i = 0; i < x.k; ++i)
      if (x.row[i] > elems || x.n > elems - x.row[i]) return "batch row outside its tile";
  }
  for (uint64_t s = 0; s < job->n_spans; ++s) {
    const tet_cuda_span& sp = job->spans[s];
    if (sp.n == 0 || sp.n > TET_CUDA_SPAN_MAX || sp.j0 > job->box_len || sp.n > job->box_len - sp.j0) return "span outside the box";
    if (sp.ev0 > sp.ev1 || sp.ev1 > job->n_events) return "span events out of range";
    for (uint64_t e = sp.ev0; e < sp.ev1; ++e) {
      const uint32_t ev = job->events[e];
      if (ev == TET_CUDA_FLUSH) continue;
      if (ev >= job->n_batches) return "event names no batch";
      const tet_cuda_batch& x = job->batches[ev];
      if (sp.j0 < x.j0 || sp.j0 + sp.n > x.j0 + x.n) return "span not inside its batch";
    }
  }
  return nullptr;
}

// Bytes per box element of each partial column (0: no such column), as tet_cuda_partial_job lays
// them out.
template <class T> TET_HD void partial_col_bytes(uint32_t op, uint32_t out[4]) {
  out[0] = out[1] = out[2] = out[3] = 0;
  switch (family_of(op)) {
    case Family::Sum: {
      const SumKind sk = sum_kind<T>(op);
      if (sk == SumKind::F64 || sk == SumKind::NanF64) out[0] = out[1] = 8, out[2] = sk == SumKind::NanF64 ? 8 : 0;
      else out[0] = 16;
      break;
    }
    case Family::Extrema: out[0] = sizeof(T), out[1] = is_float<T>() ? 1 : 0; break;
    case Family::Moments: out[0] = out[1] = out[2] = 8; break;
    case Family::Counts: out[0] = op == 5 ? 0 : 8; break;
    case Family::Product: out[0] = 8; break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoded states: the families' little-endian encode (fold/ops/*.h), the ABI's state format
// (cuda/tet_cuda_abi.h). The backends run on little-endian hosts only (x86-64, arm64).

template <class V> TET_HD void put_le(uint8_t*& p, V v) {
  std::memcpy(p, &v, sizeof(V));
  p += sizeof(V);
}
TET_HD void encode(const SumState& a, uint8_t* p) {
  put_le(p, a.n), put_le(p, a.s), put_le(p, a.c);
  const unsigned __int128 u = static_cast<unsigned __int128>(a.isum);
  put_le(p, uint64_t(u)), put_le(p, uint64_t(u >> 64));
}
template <class T> TET_HD void encode(const ExtState<T>& a, uint8_t* p) { put_le(p, a.lo), put_le(p, a.hi), put_le(p, uint8_t(a.nan ? 1 : 0)); }
TET_HD void encode(const MomState& a, uint8_t* p) { put_le(p, a.n), put_le(p, a.mean), put_le(p, a.m2); }
TET_HD void encode(const CountState& a, uint8_t* p) { put_le(p, a.n), put_le(p, a.cnt); }
TET_HD void encode(const ProdState& a, uint8_t* p) { put_le(p, a.prod); }

// Encoded state bytes of an op for value type T (0: the op has no device state).
template <class T> TET_HD uint32_t encoded_bytes(uint32_t op) {
  switch (family_of(op)) {
    case Family::Sum: return 40;
    case Family::Extrema: return 2 * sizeof(T) + 1;
    case Family::Moments: return 24;
    case Family::Counts: return 16;
    case Family::Product: return 8;
    default: return 0;
  }
}

// One unit folded and encoded (the host stub module's whole fold; the CUDA kernels compute the
// same states lane-parallel).
template <class T> TET_HD void fold_unit_encoded(uint32_t op, const T* x, uint64_t n, uint8_t* out) {
  switch (family_of(op)) {
    case Family::Sum: encode(sum_unit<T>(op, x, n), out); break;
    case Family::Extrema: encode(ext_unit<T>(x, n), out); break;
    case Family::Moments: encode(mom_unit<T>(op, x, n), out); break;
    case Family::Counts: encode(count_unit<T>(op, x, n), out); break;
    case Family::Product: encode(prod_unit<T>(x, n), out); break;
    default: break;
  }
}

// Ops with a device state, as a bit mask over the op wire codes (the scalar capability).
constexpr uint64_t kScalarOpMask = (1ull << 1) | (1ull << 2) | (1ull << 3) | (1ull << 4) | (1ull << 5) | (1ull << 6) |
                                   (1ull << 7) | (1ull << 8) | (1ull << 9) | (1ull << 10) | (1ull << 11) | (1ull << 12) |
                                   (1ull << 13) | (1ull << 16) | (1ull << 17) | (1ull << 19) | (1ull << 20);
// Partial folds: the same ops (the last axis kept: row batches; reduced: runs as scalar units).
constexpr uint64_t kPartialOpMask = kScalarOpMask;
// Dtype wire codes (tet::DType): f32 1, f64 2, i32 3, i64 4, u8 5, u16 6, i16 7, u32 8, f16 9, u64 10.
constexpr uint32_t kDtypeMask = 0x7feu;

}  // namespace dev
}  // namespace tet
