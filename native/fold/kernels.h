// Fold kernels over dense contiguous runs: a scalar reference and SIMD builds of the same
// bodies, chosen at run time. Sums use a canonical order (element i feeds f64 lane i % 32; lanes
// combine in a fixed pairwise tree), so every ISA and every thread count gives identical bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

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

// The same order run by run: f(double(x[i])) added to lanes[(lane0 + i) % 32], the 32 lanes
// carried by the caller (zeroed to start). Feeding a sequence of runs, each at lane0 = its
// position in the sequence, then lane_tree(lanes) gives lane_sum of the concatenation, bit for
// bit (a unit's row runs folded straight from the mapping, without gathering them).
template <class T> void lane_feed(const T* x, size_t n, Xform f, double center, double* lanes, size_t lane0, Isa isa);
double lane_tree(const double* lanes);  // lane_sum's fixed pairwise combination of 32 lanes

// One pass of the two canonical lane sums of d = double(x[i]) - k and d * d (same lane order
// and tree as lane_sum), for single-pass shifted variance.
template <class T> void shifted_sums(const T* x, size_t n, double k, double* s1, double* s2, Isa isa);

// shifted_sums run by run, as lane_feed is lane_sum run by run: d = double(x[i]) - k into
// l1[(lane0 + i) % 32], d * d into l2[...]; lane_tree of each gives shifted_sums' s1 / s2.
template <class T> void shifted_feed(const T* x, size_t n, double k, double* l1, double* l2, size_t lane0, Isa isa);

// +inf (floats) or max: the identity of a running minimum; lowest_of: of a running maximum.
template <class T> constexpr T highest_of() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}
template <class T> constexpr T lowest_of() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

// Min / max of the non-NaN elements, and whether any element is NaN (floats only; integers
// never set has_nan). With no non-NaN element, lo = +max / hi = lowest of T.
template <class T> struct MinMax {
  T lo, hi;
  bool has_nan;
};
template <class T> MinMax<T> min_max(const T* x, size_t n, Isa isa);

// min_max of a block of n elements given as runs in order (feed(x, m, at): the run at position
// at), with min_max's bits: its lanes, their combination and its tail kept the same way (on
// ties, +0 / -0 included, the same element wins). begin(n) first; end() once.
template <class T> struct MinMaxFeed {
  static constexpr size_t L = 128 / sizeof(T) < 16 ? 16 : 128 / sizeof(T);  // min_max's lanes
  using Mask = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  T lo[L], hi[L];
  Mask nanm[L];
  size_t full = 0;  // positions below go to the lanes; the rest are the tail
  bool combined = false;
  MinMax<T> r{};
  void begin(size_t n);
  void feed(const T* x, size_t m, size_t at, Isa isa);
  MinMax<T> end();
};

// Exact integer sum (any length).
template <class T> __int128 int_sum(const T* x, size_t n, Isa isa);

}  // namespace fold
}  // namespace tet
