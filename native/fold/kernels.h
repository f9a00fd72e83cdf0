// Fold kernels over dense contiguous runs: a scalar reference and SIMD builds of the same
// bodies, chosen at run time. Sums use a canonical order (element i feeds f64 lane i % 32; lanes
// combine in a fixed pairwise tree), so every ISA and every thread count gives identical bits.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tet {
namespace fold {

enum class Isa : uint32_t { Scalar = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };

Isa best_isa();                 // detected once per process
bool isa_supported(Isa isa);    // compiled in and supported by this CPU
const char* isa_name(Isa isa);  // "scalar" | "avx2" | "avx512" | "neon"

constexpr size_t kLanes = 32;

// How each element enters a lane sum.
enum class Xform : uint32_t { Identity = 0, Abs = 1, Square = 2, SquaredDeviation = 3 };

// Canonical lane sum of f(double(x[i])) for i < n; `center` is the mean for SquaredDeviation.
// Defined for float, double and every integer storage type (int8 excluded: not a .tet dtype).
template <class T> double lane_sum(const T* x, size_t n, Xform f, double center, Isa isa);

// One pass of the two canonical lane sums of d = double(x[i]) - k and d * d (same lane order
// and tree as lane_sum), for single-pass shifted variance.
template <class T> void shifted_sums(const T* x, size_t n, double k, double* s1, double* s2, Isa isa);

// Min / max of the non-NaN elements, and whether any element is NaN (floats only; integers
// never set has_nan). With no non-NaN element, lo = +max / hi = lowest of T.
template <class T> struct MinMax {
  T lo, hi;
  bool has_nan;
};
template <class T> MinMax<T> min_max(const T* x, size_t n, Isa isa);

// Exact integer sum (any length).
template <class T> __int128 int_sum(const T* x, size_t n, Isa isa);

}  // namespace fold
}  // namespace tet
