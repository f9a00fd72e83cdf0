// What every op family (fold/ops/*.h) shares: the per-op configuration a family sees, the
// compensated-sum and Chan merge primitives, identities of T, and the little-endian state codec.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fold/kernels.h"
#include "fold/row_kernels.h"
#include "tet/plan.h"

namespace tet {
namespace fold {

// Version of every encoded state layout (ops/*.h encode/decode); bump on any layout change.
constexpr uint32_t kStateLayoutVersion = 1;

// One op instance as the families see it: the op, the ISA of the kernels, and null_count's fill
// (already checked against T's domain by make_cfg, fold/registry.h).
template <class T> struct OpCfg {
  Op op = Op::None;
  Isa isa = Isa::Scalar;
  const RowKernels<T>* rows = nullptr;
  bool fill_ok = false, fill_nan = false;
  T fill = T(0);
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

inline void put_f64(uint8_t* o, double v) { std::memcpy(o, &v, 8); }
inline void put_i64(uint8_t* o, int64_t v) { std::memcpy(o, &v, 8); }
inline void put_u64(uint8_t* o, uint64_t v) { std::memcpy(o, &v, 8); }

// Fixed little-endian state encoding, independent of the host's byte order.
namespace wire {
template <size_t N> inline void put_bytes(uint8_t*& p, const void* v) {
  const uint8_t* b = static_cast<const uint8_t*>(v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  for (size_t i = 0; i < N; ++i) p[i] = b[N - 1 - i];
#else
  std::memcpy(p, b, N);
#endif
  p += N;
}
template <size_t N> inline void get_bytes(const uint8_t*& p, void* v) {
  uint8_t* b = static_cast<uint8_t*>(v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  for (size_t i = 0; i < N; ++i) b[i] = p[N - 1 - i];
#else
  std::memcpy(b, p, N);
#endif
  p += N;
}
// Arithmetic values and bool (one byte 0/1); __int128 as low then high 64-bit word.
template <class U> inline void put(uint8_t*& p, U v) {
  if constexpr (std::is_same<U, bool>::value) {
    *p++ = v ? 1 : 0;
  } else if constexpr (std::is_same<U, __int128>::value) {
    const uint64_t lo = uint64_t(static_cast<unsigned __int128>(v)), hi = uint64_t(static_cast<unsigned __int128>(v) >> 64);
    put_bytes<8>(p, &lo), put_bytes<8>(p, &hi);
  } else {
    put_bytes<sizeof(U)>(p, &v);
  }
}
template <class U> inline U get(const uint8_t*& p) {
  if constexpr (std::is_same<U, bool>::value) {
    return *p++ != 0;
  } else if constexpr (std::is_same<U, __int128>::value) {
    uint64_t lo, hi;
    get_bytes<8>(p, &lo), get_bytes<8>(p, &hi);
    return static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
  } else {
    U v;
    get_bytes<sizeof(U)>(p, &v);
    return v;
  }
}
}  // namespace wire

}  // namespace fold
}  // namespace tet
