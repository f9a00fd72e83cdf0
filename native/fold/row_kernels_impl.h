// Row kernels (row_kernels.h), compiled per ISA; see fold/isa_target.h for the conventions.
// Internal to fold/: the definitions, instantiated (TET_ROW_KERNELS_INSTANTIATE) by the
// row_kernels_<dtypes>.cpp files, three storage types each, so a 2-core build compiles them side
// by side instead of as one long translation unit.
#pragma once
#include "fold/isa_target.h"
#include "fold/row_kernels.h"

#include <cmath>
#include <type_traits>

namespace tet {
namespace fold {
namespace {

// Calls NAME<..., K>(ARGS) with K = k as a compile-time constant (1..kMaxRows).
#define TET_BY_ROWS(k, CALL)            \
  switch (k) {                          \
    case 1: { constexpr size_t K = 1; CALL; } break; \
    case 2: { constexpr size_t K = 2; CALL; } break; \
    case 3: { constexpr size_t K = 3; CALL; } break; \
    case 4: { constexpr size_t K = 4; CALL; } break; \
    case 5: { constexpr size_t K = 5; CALL; } break; \
    case 6: { constexpr size_t K = 6; CALL; } break; \
    case 7: { constexpr size_t K = 7; CALL; } break; \
    default: { constexpr size_t K = 8; CALL; } break; \
  }

template <class T, Xform F> TET_INLINE double xf(T x) {
  const double v = static_cast<double>(x);
  if (F == Xform::Abs) return std::fabs(v);
  if (F == Xform::Square) return v * v;
  return v;
}

template <class T, Xform F, size_t K> TET_INLINE void add_k(double* __restrict s, const T* const* xs, size_t n) {
  const T* __restrict r[K];
  for (size_t i = 0; i < K; ++i) r[i] = xs[i];
  for (size_t j = 0; j < n; ++j) {
    double a = s[j];
    for (size_t i = 0; i < K; ++i) a += xf<T, F>(r[i][j]);
    s[j] = a;
  }
}

template <class T> TET_INLINE void add_body(double* s, const T* const* xs, size_t k, size_t n, Xform f) {
  if (f == Xform::Abs) { TET_BY_ROWS(k, (add_k<T, Xform::Abs, K>(s, xs, n))) }
  else if (f == Xform::Square) { TET_BY_ROWS(k, (add_k<T, Xform::Square, K>(s, xs, n))) }
  else { TET_BY_ROWS(k, (add_k<T, Xform::Identity, K>(s, xs, n))) }
}

template <class T, size_t K> TET_INLINE void add_nan_k(double* __restrict s, double* __restrict c, const T* const* xs, size_t n) {
  const T* __restrict r[K];
  for (size_t i = 0; i < K; ++i) r[i] = xs[i];
  for (size_t j = 0; j < n; ++j) {
    double a = s[j], b = c[j];
    for (size_t i = 0; i < K; ++i) {
      const double v = static_cast<double>(r[i][j]);
      const bool ok = v == v;
      a += ok ? v : 0.0;
      b += ok ? 1.0 : 0.0;
    }
    s[j] = a, c[j] = b;
  }
}

template <class T> TET_INLINE void add_nan_body(double* s, double* c, const T* const* xs, size_t k, size_t n) {
  TET_BY_ROWS(k, (add_nan_k<T, K>(s, c, xs, n)))
}

template <class T, bool Min, size_t K> TET_INLINE void ext_k(T* __restrict e, uint8_t* __restrict f, const T* const* xs, size_t n) {
  const T* __restrict r[K];
  for (size_t i = 0; i < K; ++i) r[i] = xs[i];
  for (size_t j = 0; j < n; ++j) {
    T a = e[j];
    for (size_t i = 0; i < K; ++i) a = Min ? (r[i][j] < a ? r[i][j] : a) : (r[i][j] > a ? r[i][j] : a);
    e[j] = a;
  }
  if (std::is_floating_point<T>::value && f != nullptr) {
    for (size_t j = 0; j < n; ++j) {
      uint8_t a = 0;
      for (size_t i = 0; i < K; ++i) a |= static_cast<uint8_t>(r[i][j] != r[i][j]);
      f[j] |= a;
    }
  }
}

template <class T> TET_INLINE void ext_body(T* e, uint8_t* f, const T* const* xs, size_t k, size_t n, bool is_min) {
  if (is_min) { TET_BY_ROWS(k, (ext_k<T, true, K>(e, f, xs, n))) }
  else { TET_BY_ROWS(k, (ext_k<T, false, K>(e, f, xs, n))) }
}

template <class T, size_t K> TET_INLINE void isum_k(int64_t* __restrict s, const T* const* xs, size_t n) {
  const T* __restrict r[K];
  for (size_t i = 0; i < K; ++i) r[i] = xs[i];
  for (size_t j = 0; j < n; ++j) {
    int64_t a = s[j];
    for (size_t i = 0; i < K; ++i) a += static_cast<int64_t>(r[i][j]);
    s[j] = a;
  }
}

template <class T> TET_INLINE void isum_body(int64_t* s, const T* const* xs, size_t k, size_t n) {
  TET_BY_ROWS(k, (isum_k<T, K>(s, xs, n)))
}

template <class T, bool NanSkip, size_t K>
TET_INLINE void var_k(double* __restrict cnt, double* __restrict mean, double* __restrict m2, const T* const* xs, size_t n) {
  const T* __restrict r[K];
  for (size_t i = 0; i < K; ++i) r[i] = xs[i];
  for (size_t j = 0; j < n; ++j) {
    double s = 0, c = 0;
    for (size_t i = 0; i < K; ++i) {
      const double v = static_cast<double>(r[i][j]);
      if (NanSkip) {
        const bool ok = v == v;
        s += ok ? v : 0.0;
        c += ok ? 1.0 : 0.0;
      } else {
        s += v;
      }
    }
    if (!NanSkip) c = double(K);
    const double mb = c > 0 ? s / c : 0.0;
    double q = 0;
    for (size_t i = 0; i < K; ++i) {
      const double v = static_cast<double>(r[i][j]);
      const double d = NanSkip ? (v == v ? v - mb : 0.0) : v - mb;
      q += d * d;
    }
    // Chan: (na, ma, m2a) + (c, mb, q); an empty side takes the other unchanged
    const double na = cnt[j], ma = mean[j], m2a = m2[j];
    const double nn = na + c;
    const double delta = mb - ma;
    const double w = nn > 0 ? c / nn : 0.0;
    const double cross = na > 0 && c > 0 ? delta * delta * (na * w) : 0.0;
    mean[j] = na == 0 ? mb : (c == 0 ? ma : ma + delta * w);
    m2[j] = na == 0 ? q : (c == 0 ? m2a : m2a + q + cross);
    cnt[j] = nn;
  }
}

template <class T>
TET_INLINE void var_body(double* cnt, double* mean, double* m2, const T* const* xs, size_t k, size_t n, bool nan_skip) {
  if (nan_skip) { TET_BY_ROWS(k, (var_k<T, true, K>(cnt, mean, m2, xs, n))) }
  else { TET_BY_ROWS(k, (var_k<T, false, K>(cnt, mean, m2, xs, n))) }
}

#define TET_ROW_ISA(SUFFIX, ATTR)                                                                          \
  template <class T> ATTR __attribute__((noinline)) void add_##SUFFIX(double* s, const T* const* x, size_t k, size_t n, Xform f) { \
    add_body<T>(s, x, k, n, f);                                                                            \
  }                                                                                                        \
  template <class T>                                                                                       \
  ATTR __attribute__((noinline)) void add_nan_##SUFFIX(double* s, double* c, const T* const* x, size_t k, size_t n) { \
    add_nan_body<T>(s, c, x, k, n);                                                                        \
  }                                                                                                        \
  template <class T>                                                                                       \
  ATTR __attribute__((noinline)) void ext_##SUFFIX(T* e, uint8_t* f, const T* const* x, size_t k, size_t n, bool mn) { \
    ext_body<T>(e, f, x, k, n, mn);                                                                        \
  }                                                                                                        \
  template <class T> ATTR __attribute__((noinline)) void isum_##SUFFIX(int64_t* s, const T* const* x, size_t k, size_t n) { \
    isum_body<T>(s, x, k, n);                                                                              \
  }                                                                                                        \
  template <class T>                                                                                       \
  ATTR __attribute__((noinline)) void var_##SUFFIX(double* c, double* m, double* q, const T* const* x, size_t k, size_t n, bool ns) { \
    var_body<T>(c, m, q, x, k, n, ns);                                                                     \
  }                                                                                                        \
  template <class T> const RowKernels<T> kRows_##SUFFIX = {add_##SUFFIX<T>, add_nan_##SUFFIX<T>, \
                                                           ext_##SUFFIX<T>, isum_##SUFFIX<T>, var_##SUFFIX<T>};

#define TET_NOATTR
TET_ROW_ISA(scalar, TET_NOATTR)
#ifdef TET_X86
TET_ROW_ISA(avx2, TET_AVX2)
TET_ROW_ISA(avx512, TET_AVX512)
#endif

}  // namespace

template <class T> const RowKernels<T>& row_kernels(Isa isa) {
#ifdef TET_X86
  if (isa == Isa::Avx512) return kRows_avx512<T>;
  if (isa == Isa::Avx2) return kRows_avx2<T>;
#endif
  (void)isa;
  return kRows_scalar<T>;
}

#define TET_ROW_KERNELS_INSTANTIATE(T) template const RowKernels<T>& row_kernels<T>(Isa);

}  // namespace fold
}  // namespace tet
