// Element-wise row kernels for partial folds (out[j] op= x[j] over a contiguous kept run), built
// for several ISAs like kernels.cpp and chosen at run time. Every lane does the same operations
// in the same order on every ISA (no reassociation, no contraction), so results are identical.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fold/kernels.h"

namespace tet {
namespace fold {

// Each kernel folds k <= kMaxRows rows xs[0..k) (each n elements) into the same outputs, row
// after row: out[j] = op(op(out[j], xs[0][j]), xs[1][j]) ... exactly as k single-row calls would,
// but with one load and store of out[j] per k rows.
constexpr size_t kMaxRows = 8;

template <class T> struct RowKernels {
  // s[j] += f(double(x[j])) for Identity / Abs / Square.
  void (*add)(double* s, const T* const* xs, size_t k, size_t n, Xform f);
  // NaN-skipping: s[j] += x[j] and c[j] += 1 for non-NaN x[j].
  void (*add_nan)(double* s, double* c, const T* const* xs, size_t k, size_t n);
  // e[j] = min/max(e[j], x[j]) over non-NaN x; f[j] |= isnan(x[j]) (floats, f may be null).
  void (*ext)(T* e, uint8_t* f, const T* const* xs, size_t k, size_t n, bool is_min);
  // s[j] += x[j] (integers of at most 32 bits, exact in int64 for < 2^31 rows per block).
  void (*isum)(int64_t* s, const T* const* xs, size_t k, size_t n);
  // Variance: the k rows form a block per element (count c, two-pass mean and M2, NaN skipped
  // with nan_skip) merged into (cnt[j], mean[j], m2[j]) with Chan's formula.
  void (*var)(double* cnt, double* mean, double* m2, const T* const* xs, size_t k, size_t n, bool nan_skip);
};

template <class T> const RowKernels<T>& row_kernels(Isa isa);

}  // namespace fold
}  // namespace tet
