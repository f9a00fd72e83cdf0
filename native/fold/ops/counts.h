// Counts family: count, all_finite, any_nan, any_inf, nan_count, inf_count, null_count. Integer
// counters, so merges are exact. null_count matches the fill value (make_cfg checks that the fill
// exists in T's domain; a fill that does not never matches).
#pragma once
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Counts : Unblocked<T> {
  static constexpr bool kFloat = std::is_floating_point<T>::value;

  struct State {
    uint64_t n = 0;    // elements (count)
    uint64_t cnt = 0;  // elements matching the op's predicate
  };
  static constexpr size_t kEncodedBytes = 16;

  static State identity(const OpCfg<T>&) { return State(); }
  static void consume(const OpCfg<T>& k, State& a, const T* x, size_t n) {
    a.n += n;
    count_into<false>(k, &a.cnt, x, n);
  }
  static void consume_one(const OpCfg<T>& k, State& a, T v, uint64_t) { consume(k, a, &v, 1); }
  // A unit run by run (see Sum::RunAcc): counts add exactly.
  using RunAcc = State;
  static bool runs_ok(const OpCfg<T>&) { return true; }
  static void begin_runs(const OpCfg<T>&, RunAcc&, uint64_t) {}
  static void consume_run(const OpCfg<T>& k, RunAcc& r, const T* x, size_t n, uint64_t) { consume(k, r, x, n); }
  static void end_runs(const OpCfg<T>& k, RunAcc& r, State& a) { merge(k, a, r); }
  static void merge(const OpCfg<T>&, State& a, const State& b) { a.n += b.n, a.cnt += b.cnt; }
  static void finalize(const OpCfg<T>& k, const State& a, uint8_t* out) {
    switch (k.op) {
      case Op::Count: put_u64(out, a.n); break;
      case Op::AllFinite: out[0] = a.cnt == 0; break;
      case Op::AnyNan: case Op::AnyInf: out[0] = a.cnt > 0; break;
      default: put_u64(out, a.cnt); break;
    }
  }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.n), wire::put(p, a.cnt); }
  static State decode(const uint8_t* p) {
    State a;
    a.n = wire::get<uint64_t>(p), a.cnt = wire::get<uint64_t>(p);
    return a;
  }

  // Partial state: the counter (u); count needs none (every output counts fib_len elements).
  struct Soa {
    std::vector<uint64_t> u;
  };
  static size_t soa_bytes(const OpCfg<T>& k) { return k.op == Op::Count ? 0 : 8; }
  static void init(const OpCfg<T>& k, Soa& st, size_t len) {
    if (k.op != Op::Count) st.u.assign(len, 0);
  }
  static void consume_rows(const OpCfg<T>& k, Soa& st, RowScratch&, size_t j0, const T* const* xs, const uint64_t*,
                           size_t rows, size_t n) {
    if (k.op == Op::Count) return;
    for (size_t i = 0; i < rows; ++i) count_into<true>(k, st.u.data() + j0, xs[i], n);
  }
  static State get(const OpCfg<T>& k, const Soa& st, size_t j, uint64_t fib_len) {
    State a;
    a.n = fib_len;
    if (k.op != Op::Count) a.cnt = st.u[j];
    return a;
  }
  static void put(const OpCfg<T>& k, Soa& st, size_t j, const State& a) {
    if (k.op != Op::Count) st.u[j] = a.cnt;
  }

 private:
  // Adds the predicate of x[j] to u[0] (Each = false) or to u[j] (Each = true).
  template <bool Each> static void count_into(const OpCfg<T>& k, uint64_t* __restrict u, const T* __restrict x, size_t n) {
    constexpr size_t s = Each ? 1 : 0;
    switch (k.op) {
      case Op::AllFinite:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j * s] += !std::isfinite(x[j]);
        break;
      case Op::AnyNan: case Op::NanCount:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j * s] += x[j] != x[j];
        break;
      case Op::AnyInf: case Op::InfCount:
        if (kFloat) for (size_t j = 0; j < n; ++j) u[j * s] += std::isinf(x[j]);
        break;
      case Op::NullCount:
        if (!k.fill_ok) break;
        if (k.fill_nan) { for (size_t j = 0; j < n; ++j) u[j * s] += x[j] != x[j]; }
        else { const T f = k.fill; for (size_t j = 0; j < n; ++j) u[j * s] += x[j] == f; }
        break;
      default: break;
    }
  }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
