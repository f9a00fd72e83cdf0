// Extrema family: min, max. The state keeps both extrema of the non-NaN elements and whether any
// element was NaN (a NaN anywhere makes a float min/max NaN, like numpy); results keep the
// dtype's domain (i64 / u64 for integers). Merges are exact.
#pragma once
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Extrema : Unblocked<T> {
  static constexpr bool kFloat = std::is_floating_point<T>::value;

  struct State {
    T lo = highest_of<T>(), hi = lowest_of<T>();
    bool nan = false;
  };
  static constexpr size_t kEncodedBytes = 2 * sizeof(T) + 1;

  static State identity(const OpCfg<T>&) { return State(); }
  // min and max keep the same state: one pass shares it.
  static uint32_t consume_class(const OpCfg<T>&) { return 0; }
  static void consume(const OpCfg<T>& k, State& a, const T* x, size_t n) { take(a, min_max(x, n, k.isa)); }
  // A unit run by run (see Sum::RunAcc): MinMaxFeed keeps min_max's lanes and tail, so the
  // same element wins every tie (+0 / -0 too).
  using RunAcc = MinMaxFeed<T>;
  static bool runs_ok(const OpCfg<T>&) { return true; }
  static void begin_runs(const OpCfg<T>&, RunAcc& r, uint64_t len) { r.begin(size_t(len)); }
  static void consume_run(const OpCfg<T>& k, RunAcc& r, const T* x, size_t n, uint64_t at) { r.feed(x, n, size_t(at), k.isa); }
  static void end_runs(const OpCfg<T>&, RunAcc& r, State& a) { take(a, r.end()); }
  // A block's extrema into the state.
  static void take(State& a, const MinMax<T>& m) {
    if (m.lo < a.lo) a.lo = m.lo;
    if (m.hi > a.hi) a.hi = m.hi;
    a.nan |= m.has_nan;
  }
  static void consume_one(const OpCfg<T>&, State& a, T v, uint64_t) {
    if (v < a.lo) a.lo = v;
    if (v > a.hi) a.hi = v;
    a.nan |= v != v;
  }
  static void merge(const OpCfg<T>&, State& a, const State& b) {
    if (b.lo < a.lo) a.lo = b.lo;
    if (b.hi > a.hi) a.hi = b.hi;
    a.nan |= b.nan;
  }
  static void finalize(const OpCfg<T>& k, const State& a, uint8_t* out) {
    const T v = k.op == Op::Min ? a.lo : a.hi;
    if (kFloat) put_f64(out, a.nan ? std::numeric_limits<double>::quiet_NaN() : double(v));
    else if (std::is_signed<T>::value) put_i64(out, int64_t(v));
    else put_u64(out, uint64_t(v));
  }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.lo), wire::put(p, a.hi), wire::put(p, a.nan); }
  static State decode(const uint8_t* p) {
    State a;
    a.lo = wire::get<T>(p), a.hi = wire::get<T>(p), a.nan = wire::get<bool>(p);
    return a;
  }

  // Partial state: the op's extremum (v) and, for floats, NaN seen (f).
  struct Soa {
    std::vector<T> v;
    std::vector<uint8_t> f;
  };
  static size_t soa_bytes(const OpCfg<T>&) { return sizeof(T) + 1; }
  static void init(const OpCfg<T>& k, Soa& st, size_t len) {
    st.v.assign(len, k.op == Op::Min ? highest_of<T>() : lowest_of<T>());
    if (kFloat) st.f.assign(len, 0);
  }
  static void consume_rows(const OpCfg<T>& k, Soa& st, RowScratch&, size_t j0, const T* const* xs, const uint64_t*,
                           size_t rows, size_t n) {
    k.rows->ext(st.v.data() + j0, kFloat ? st.f.data() + j0 : nullptr, xs, rows, n, k.op == Op::Min);
  }
  static State get(const OpCfg<T>&, const Soa& st, size_t j, uint64_t) {
    State a;
    a.lo = a.hi = st.v[j];
    a.nan = kFloat && st.f[j] != 0;
    return a;
  }
  static void put(const OpCfg<T>& k, Soa& st, size_t j, const State& a) {
    st.v[j] = k.op == Op::Min ? a.lo : a.hi;
    if (kFloat) st.f[j] = uint8_t(a.nan);
  }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
