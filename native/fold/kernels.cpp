// Kernels compiled per ISA; see fold/isa_target.h for the conventions.
#include "fold/isa_target.h"
#include "fold/kernels.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace tet {
namespace fold {
namespace {

// Software prefetch of the lines kPrefetchAhead bytes past [p, p + bytes), once per loop step of
// the streaming folds: their loops issue few loads per instruction, and on the machines measured
// (2-core VMs) the hardware prefetcher alone kept too few lines in flight (min / max / var read
// memory at 70-80 % of a plain sum's rate; with the hint they match it). A prefetch never faults,
// so hints past the end of the data are harmless; the arithmetic is untouched.
constexpr size_t kPrefetchAhead = 2048;
TET_INLINE void prefetch_ahead(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p) + kPrefetchAhead;
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
}

template <Xform F> TET_INLINE double xform(double v, double c) {
  if (F == Xform::Identity) return v;
  if (F == Xform::Abs) return std::fabs(v);
  if (F == Xform::Square) return v * v;
  const double d = v - c;
  return d * d;
}

// The canonical order's one definition: f(x[i]) added to lanes[(lane0 + i) % kLanes], each
// lane's additions in index order. lane_sum is this from zeroed lanes, then lane_tree;
// lane_feed carries the lanes across calls, so a sequence of runs gives lane_sum's bits.
template <class T, Xform F> TET_INLINE void lanes_add(const T* x, size_t n, double c, double (&lanes)[kLanes], size_t lane0) {
  if (lane0 != 0) {
    const size_t head = n < kLanes - lane0 ? n : kLanes - lane0;
    for (size_t i = 0; i < head; ++i) lanes[lane0 + i] += xform<F>(static_cast<double>(x[i]), c);
    x += head, n -= head;
  }
  const size_t full = n / kLanes * kLanes;
  for (size_t g = 0; g < full; g += kLanes) {
    const T* p = x + g;
    prefetch_ahead(p, kLanes * sizeof(T));
    for (size_t j = 0; j < kLanes; ++j) lanes[j] += xform<F>(static_cast<double>(p[j]), c);
  }
  for (size_t i = full; i < n; ++i) lanes[i - full] += xform<F>(static_cast<double>(x[i]), c);
}

TET_INLINE double lanes_tree(double (&lanes)[kLanes]) {
  for (size_t s = kLanes / 2; s > 0; s >>= 1)
    for (size_t j = 0; j < s; ++j) lanes[j] += lanes[j + s];
  return lanes[0];
}

template <class T, Xform F> TET_INLINE double lane_sum_body(const T* x, size_t n, double c) {
  double lanes[kLanes] = {};
  lanes_add<T, F>(x, n, c, lanes, 0);
  return lanes_tree(lanes);
}

// (The lanes are copied in and out: through the pointer, the compiler could not keep them in
// registers when T is double.)
template <class T, Xform F> TET_INLINE void lane_feed_body(const T* x, size_t n, double c, double* acc, size_t lane0) {
  double lanes[kLanes];
  for (size_t j = 0; j < kLanes; ++j) lanes[j] = acc[j];
  lanes_add<T, F>(x, n, c, lanes, lane0 % kLanes);
  for (size_t j = 0; j < kLanes; ++j) acc[j] = lanes[j];
}

template <class T> TET_INLINE double lane_sum_switch(const T* x, size_t n, Xform f, double c) {
  switch (f) {
    case Xform::Identity: return lane_sum_body<T, Xform::Identity>(x, n, c);
    case Xform::Abs: return lane_sum_body<T, Xform::Abs>(x, n, c);
    case Xform::Square: return lane_sum_body<T, Xform::Square>(x, n, c);
    case Xform::SquaredDeviation: return lane_sum_body<T, Xform::SquaredDeviation>(x, n, c);
  }
  return 0;
}

template <class T> TET_INLINE void lane_feed_switch(const T* x, size_t n, Xform f, double c, double* acc, size_t lane0) {
  switch (f) {
    case Xform::Identity: return lane_feed_body<T, Xform::Identity>(x, n, c, acc, lane0);
    case Xform::Abs: return lane_feed_body<T, Xform::Abs>(x, n, c, acc, lane0);
    case Xform::Square: return lane_feed_body<T, Xform::Square>(x, n, c, acc, lane0);
    case Xform::SquaredDeviation: return lane_feed_body<T, Xform::SquaredDeviation>(x, n, c, acc, lane0);
  }
}

// shifted_sums' order: d = x[i] - k into l1, d * d into l2, lane (lane0 + i) % kLanes.
template <class T> TET_INLINE void shifted_lanes_add(const T* x, size_t n, double k, double (&l1)[kLanes], double (&l2)[kLanes],
                                                     size_t lane0) {
  if (lane0 != 0) {
    const size_t head = n < kLanes - lane0 ? n : kLanes - lane0;
    for (size_t i = 0; i < head; ++i) {
      const double d = static_cast<double>(x[i]) - k;
      l1[lane0 + i] += d;
      l2[lane0 + i] += d * d;
    }
    x += head, n -= head;
  }
  const size_t full = n / kLanes * kLanes;
  for (size_t g = 0; g < full; g += kLanes) {
    const T* p = x + g;
    prefetch_ahead(p, kLanes * sizeof(T));
    for (size_t j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(p[j]) - k;
      l1[j] += d;
      l2[j] += d * d;
    }
  }
  for (size_t i = full; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - k;
    l1[i - full] += d;
    l2[i - full] += d * d;
  }
}

template <class T> TET_INLINE void shifted_sums_body(const T* x, size_t n, double k, double* s1, double* s2) {
  double l1[kLanes] = {}, l2[kLanes] = {};
  shifted_lanes_add<T>(x, n, k, l1, l2, 0);
  *s1 = lanes_tree(l1);
  *s2 = lanes_tree(l2);
}

template <class T> TET_INLINE void shifted_feed_body(const T* x, size_t n, double k, double* a1, double* a2, size_t lane0) {
  double l1[kLanes], l2[kLanes];
  for (size_t j = 0; j < kLanes; ++j) l1[j] = a1[j], l2[j] = a2[j];
  shifted_lanes_add<T>(x, n, k, l1, l2, lane0 % kLanes);
  for (size_t j = 0; j < kLanes; ++j) a1[j] = l1[j], a2[j] = l2[j];
}

// min_max's order: element i < full (= n / L * L) kept by lane i % L (on ties, the lane's
// first), the lanes combined in lane order, then the elements from full on one by one. NaNs
// never win a comparison, so they leave lo / hi alone; a NaN is recorded as an all-ones mask of
// the value's width (an integer OR, which vectorises for f64 as for f32, unlike a select of
// the value). MinMaxFeed holds the same state between the runs of a block.
template <class T> using NanMask = typename MinMaxFeed<T>::Mask;

template <class T, size_t L = MinMaxFeed<T>::L>
TET_INLINE void mm_init(T (&lo)[L], T (&hi)[L], NanMask<T> (&nanm)[L]) {
  for (size_t j = 0; j < L; ++j) lo[j] = highest_of<T>(), hi[j] = lowest_of<T>(), nanm[j] = 0;
}

template <class T> TET_INLINE void mm_lane(T v, T& lo, T& hi, NanMask<T>& nanm) {
  lo = v < lo ? v : lo;
  hi = v > hi ? v : hi;
  if (std::is_floating_point<T>::value) nanm |= v != v ? ~NanMask<T>(0) : NanMask<T>(0);
}

// Lanes part of positions [at, at + n), all < full.
template <class T, size_t L = MinMaxFeed<T>::L>
TET_INLINE void mm_lanes_add(const T* x, size_t n, size_t at, T (&lo)[L], T (&hi)[L], NanMask<T> (&nanm)[L]) {
  size_t i = 0;
  for (; i < n && (at + i) % L != 0; ++i) {
    const size_t j = (at + i) % L;
    mm_lane(x[i], lo[j], hi[j], nanm[j]);
  }
  for (; i + L <= n; i += L) {
    const T* p = x + i;
    prefetch_ahead(p, L * sizeof(T));
    for (size_t j = 0; j < L; ++j) mm_lane(p[j], lo[j], hi[j], nanm[j]);
  }
  for (; i < n; ++i) mm_lane(x[i], lo[i % L], hi[i % L], nanm[i % L]);
}

template <class T, size_t L = MinMaxFeed<T>::L>
TET_INLINE MinMax<T> mm_combine(const T (&lo)[L], const T (&hi)[L], const NanMask<T> (&nanm)[L]) {
  MinMax<T> r{lo[0], hi[0], false};
  NanMask<T> any = 0;
  for (size_t j = 0; j < L; ++j) {
    r.lo = lo[j] < r.lo ? lo[j] : r.lo;
    r.hi = hi[j] > r.hi ? hi[j] : r.hi;
    any |= nanm[j];
  }
  r.has_nan = any != 0;
  return r;
}

template <class T> TET_INLINE void mm_tail(const T* x, size_t n, MinMax<T>& r) {
  for (size_t i = 0; i < n; ++i) {
    const T v = x[i];
    r.lo = v < r.lo ? v : r.lo;
    r.hi = v > r.hi ? v : r.hi;
    r.has_nan |= v != v;
  }
}

template <class T> TET_INLINE MinMax<T> min_max_body(const T* x, size_t n) {
  // L lanes (at least two vectors of them per accumulator: hides the min/max latency).
  constexpr size_t L = MinMaxFeed<T>::L;
  T lo[L], hi[L];
  NanMask<T> nanm[L];
  mm_init<T>(lo, hi, nanm);
  const size_t full = n / L * L;
  mm_lanes_add<T>(x, full, 0, lo, hi, nanm);
  MinMax<T> r = mm_combine<T>(lo, hi, nanm);
  mm_tail<T>(x + full, n - full, r);
  return r;
}

template <class T> TET_INLINE void min_max_feed_body(MinMaxFeed<T>& f, const T* x, size_t n, size_t at) {
  constexpr size_t L = MinMaxFeed<T>::L;
  size_t i = 0;
  if (at < f.full) {
    i = n < f.full - at ? n : f.full - at;
    T lo[L], hi[L];
    NanMask<T> nanm[L];
    for (size_t j = 0; j < L; ++j) lo[j] = f.lo[j], hi[j] = f.hi[j], nanm[j] = f.nanm[j];
    mm_lanes_add<T>(x, i, at, lo, hi, nanm);
    for (size_t j = 0; j < L; ++j) f.lo[j] = lo[j], f.hi[j] = hi[j], f.nanm[j] = nanm[j];
  }
  if (i < n) {
    if (!f.combined) f.r = mm_combine<T>(f.lo, f.hi, f.nanm), f.combined = true;
    mm_tail<T>(x + i, n - i, f.r);
  }
}

// Integer sums: narrow types accumulate in 64-bit lanes (exact for < 2^31 elements per pass);
// 64-bit types split into high and low 32-bit halves so the same holds.
template <class T> TET_INLINE __int128 int_sum_body(const T* x, size_t n) {
  constexpr size_t kPass = size_t(1) << 30;
  __int128 total = 0;
  for (size_t b = 0; b < n; b += kPass) {
    const size_t e = n - b < kPass ? n : b + kPass;
    if (sizeof(T) < 8) {
      using Acc = typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type;
      Acc s = 0;
      for (size_t i = b; i < e; ++i) s += static_cast<Acc>(x[i]);
      total += s;
    } else {
      uint64_t lo = 0;
      int64_t hi_s = 0;
      uint64_t hi_u = 0;
      for (size_t i = b; i < e; ++i) {
        const uint64_t u = static_cast<uint64_t>(x[i]);
        lo += u & 0xffffffffu;
        if (std::is_signed<T>::value) hi_s += static_cast<int64_t>(x[i]) >> 32;
        else hi_u += u >> 32;
      }
      total += static_cast<__int128>(lo);
      total += (std::is_signed<T>::value ? static_cast<__int128>(hi_s) : static_cast<__int128>(hi_u)) * (__int128(1) << 32);
    }
  }
  return total;
}

#define TET_DEFINE_ISA(SUFFIX, ATTR)                                                              \
  template <class T> ATTR __attribute__((noinline)) void shifted_feed_##SUFFIX(const T* x, size_t n, double k, double* a1, double* a2, size_t lane0) { \
    shifted_feed_body<T>(x, n, k, a1, a2, lane0);                                                 \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) void min_max_feed_##SUFFIX(MinMaxFeed<T>& f, const T* x, size_t n, size_t at) { \
    min_max_feed_body<T>(f, x, n, at);                                                            \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) double lane_sum_##SUFFIX(const T* x, size_t n, Xform f, double c) { \
    return lane_sum_switch<T>(x, n, f, c);                                                        \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) void lane_feed_##SUFFIX(const T* x, size_t n, Xform f, double c, double* acc, size_t lane0) { \
    lane_feed_switch<T>(x, n, f, c, acc, lane0);                                                  \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) void shifted_sums_##SUFFIX(const T* x, size_t n, double k, double* s1, double* s2) { \
    shifted_sums_body<T>(x, n, k, s1, s2);                                                        \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) MinMax<T> min_max_##SUFFIX(const T* x, size_t n) { \
    return min_max_body<T>(x, n);                                                                 \
  }                                                                                               \
  template <class T> ATTR __attribute__((noinline)) __int128 int_sum_##SUFFIX(const T* x, size_t n) { \
    return int_sum_body<T>(x, n);                                                                 \
  }

#define TET_NOATTR
TET_DEFINE_ISA(scalar, TET_NOATTR)
#ifdef TET_X86
TET_DEFINE_ISA(avx2, TET_AVX2)
TET_DEFINE_ISA(avx512, TET_AVX512)
#endif

Isa detect() {
#ifdef TET_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::Avx2;
  return Isa::Scalar;
#elif defined(__aarch64__) || defined(__ARM_NEON)
  return Isa::Neon;  // baseline on arm64: the reference bodies compile to NEON
#else
  return Isa::Scalar;
#endif
}

}  // namespace

Isa best_isa() {
  static const Isa isa = detect();
  return isa;
}

bool isa_supported(Isa isa) {
  if (isa == Isa::Scalar) return true;
  const Isa best = best_isa();
  if (isa == Isa::Neon) return best == Isa::Neon;
  if (isa == Isa::Avx2) return best == Isa::Avx2 || best == Isa::Avx512;
  return best == Isa::Avx512;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
  }
  return "scalar";
}

// Returns name_<isa>(args...) for the ISA asked for: one of this file's builds above (scalar
// where the ISA is not compiled in). T is deduced from the arguments.
#ifdef TET_X86
#define TET_DISPATCH(isa, name, ...)                                  \
  do {                                                                \
    if (isa == Isa::Avx512) return name##_avx512(__VA_ARGS__);        \
    if (isa == Isa::Avx2) return name##_avx2(__VA_ARGS__);            \
    return name##_scalar(__VA_ARGS__);                                \
  } while (0)
#else
#define TET_DISPATCH(isa, name, ...) \
  do {                               \
    (void)isa;                       \
    return name##_scalar(__VA_ARGS__); \
  } while (0)
#endif

template <class T> double lane_sum(const T* x, size_t n, Xform f, double center, Isa isa) {
  TET_DISPATCH(isa, lane_sum, x, n, f, center);
}

template <class T> void lane_feed(const T* x, size_t n, Xform f, double center, double* lanes, size_t lane0, Isa isa) {
  TET_DISPATCH(isa, lane_feed, x, n, f, center, lanes, lane0);
}

double lane_tree(const double* lanes) {
  double l[kLanes];
  for (size_t j = 0; j < kLanes; ++j) l[j] = lanes[j];
  return lanes_tree(l);
}

template <class T> void shifted_sums(const T* x, size_t n, double k, double* s1, double* s2, Isa isa) {
  TET_DISPATCH(isa, shifted_sums, x, n, k, s1, s2);
}

template <class T> void shifted_feed(const T* x, size_t n, double k, double* l1, double* l2, size_t lane0, Isa isa) {
  TET_DISPATCH(isa, shifted_feed, x, n, k, l1, l2, lane0);
}

template <class T> void MinMaxFeed<T>::begin(size_t n) {
  mm_init<T>(lo, hi, nanm);
  full = n / L * L;
  combined = false;
}

template <class T> void MinMaxFeed<T>::feed(const T* x, size_t n, size_t at, Isa isa) {
  TET_DISPATCH(isa, min_max_feed, *this, x, n, at);
}

template <class T> MinMax<T> MinMaxFeed<T>::end() {
  if (!combined) r = mm_combine<T>(lo, hi, nanm), combined = true;
  return r;
}

template <class T> MinMax<T> min_max(const T* x, size_t n, Isa isa) {
  TET_DISPATCH(isa, min_max, x, n);
}

template <class T> __int128 int_sum(const T* x, size_t n, Isa isa) {
  TET_DISPATCH(isa, int_sum, x, n);
}

#define TET_INSTANTIATE(T)                                                  \
  template double lane_sum<T>(const T*, size_t, Xform, double, Isa);         \
  template void lane_feed<T>(const T*, size_t, Xform, double, double*, size_t, Isa); \
  template void shifted_sums<T>(const T*, size_t, double, double*, double*, Isa); \
  template void shifted_feed<T>(const T*, size_t, double, double*, double*, size_t, Isa); \
  template struct MinMaxFeed<T>;                                                 \
  template MinMax<T> min_max<T>(const T*, size_t, Isa);
TET_INSTANTIATE(float)
TET_INSTANTIATE(double)
TET_INSTANTIATE(uint8_t)
TET_INSTANTIATE(uint16_t)
TET_INSTANTIATE(int16_t)
TET_INSTANTIATE(int32_t)
TET_INSTANTIATE(uint32_t)
TET_INSTANTIATE(int64_t)
TET_INSTANTIATE(uint64_t)
template __int128 int_sum<uint8_t>(const uint8_t*, size_t, Isa);
template __int128 int_sum<uint16_t>(const uint16_t*, size_t, Isa);
template __int128 int_sum<int16_t>(const int16_t*, size_t, Isa);
template __int128 int_sum<int32_t>(const int32_t*, size_t, Isa);
template __int128 int_sum<uint32_t>(const uint32_t*, size_t, Isa);
template __int128 int_sum<int64_t>(const int64_t*, size_t, Isa);
template __int128 int_sum<uint64_t>(const uint64_t*, size_t, Isa);

}  // namespace fold
}  // namespace tet
