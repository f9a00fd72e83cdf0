// Sum family: sum, mean, nan_mean, norm_l1, norm_l2. Floats (and the norms of every dtype) sum
// canonical lane sums of each block with a Neumaier-compensated f64 pair; integer sum / mean /
// nan_mean sum exactly in __int128. Partial folds add rows into f64 (or int64) block arrays
// folded into the state once per unit.
#pragma once
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Sum {
  static constexpr bool kFloat = std::is_floating_point<T>::value;
  static constexpr bool kSmallInt = std::is_integral<T>::value && sizeof(T) <= 4;

  struct State {
    uint64_t n = 0;          // elements summed (non-NaN ones for nan_mean)
    double s = 0, c = 0;     // Neumaier sum and its correction
    __int128 isum = 0;       // exact integer sum
  };
  static constexpr size_t kEncodedBytes = 8 + 8 + 8 + 16;

  // Integer sum / mean / nan_mean are exact; the norms always sum f64 lanes.
  static bool exact_int(Op op) { return !kFloat && op != Op::NormL1 && op != Op::NormL2; }
  static Xform xform(Op op) { return op == Op::NormL1 ? Xform::Abs : op == Op::NormL2 ? Xform::Square : Xform::Identity; }

  static State identity(const OpCfg<T>&) { return State(); }
  // Ops of one class consume (and merge) identically, so one pass can share their states.
  static uint32_t consume_class(const OpCfg<T>& k) {
    return uint32_t(kFloat && k.op == Op::NanMean) | uint32_t(exact_int(k.op)) << 1 | uint32_t(xform(k.op)) << 2;
  }

  static void consume(const OpCfg<T>& k, State& a, const T* x, size_t n) {
    if (kFloat && k.op == Op::NanMean && min_max(x, n, k.isa).has_nan) {
      for (size_t i = 0; i < n; ++i) consume_one(k, a, x[i], 0);
      return;
    }
    a.n += n;
    if (exact_int(k.op)) a.isum += int_sum_of(x, n, k.isa);
    else neumaier_add(a.s, a.c, lane_sum(x, n, xform(k.op), 0, k.isa));
  }
  // A unit run by run (its rows read straight from the mapping), with consume's bits over their
  // concatenation (the run interface of a family: RunAcc, runs_ok, begin_runs with the unit's
  // length, consume_run with the run's position in it, end_runs): the lanes carried across runs
  // (lane_feed), exact integer sums per run. Not nan_mean of floats: its consume looks at the
  // whole unit for a NaN first.
  struct RunAcc {
    double lanes[kLanes] = {};
    uint64_t n = 0;
    __int128 isum = 0;
  };
  static bool runs_ok(const OpCfg<T>& k) { return !(kFloat && k.op == Op::NanMean); }
  static void begin_runs(const OpCfg<T>&, RunAcc&, uint64_t) {}
  static void consume_run(const OpCfg<T>& k, RunAcc& r, const T* x, size_t n, uint64_t at) {
    r.n += n;
    if (exact_int(k.op)) r.isum += int_sum_of(x, n, k.isa);
    else lane_feed(x, n, xform(k.op), 0, r.lanes, size_t(at), k.isa);
  }
  static void end_runs(const OpCfg<T>& k, RunAcc& r, State& a) {
    a.n += r.n;
    if (exact_int(k.op)) a.isum += r.isum;
    else neumaier_add(a.s, a.c, lane_tree(r.lanes));
  }

  static void consume_one(const OpCfg<T>& k, State& a, T v, uint64_t) {
    if (k.op == Op::NanMean && v != v) return;
    ++a.n;
    if (exact_int(k.op)) a.isum += static_cast<__int128>(v);
    else neumaier_add(a.s, a.c, k.op == Op::NormL1 ? std::fabs(double(v)) : k.op == Op::NormL2 ? double(v) * double(v) : double(v));
  }
  static void merge(const OpCfg<T>& k, State& a, const State& b) {
    a.n += b.n;
    if (exact_int(k.op)) {
      a.isum += b.isum;
    } else {
      neumaier_add(a.s, a.c, b.s);
      a.c += b.c;
    }
  }
  static void finalize(const OpCfg<T>& k, const State& a, uint8_t* out) {
    const double sum = exact_int(k.op) ? static_cast<double>(a.isum) : neumaier_result(a.s, a.c);
    switch (k.op) {
      case Op::Mean: case Op::NanMean:
        put_f64(out, a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / double(a.n));
        break;
      case Op::NormL2: put_f64(out, std::sqrt(sum)); break;
      default: put_f64(out, sum); break;
    }
  }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.n), wire::put(p, a.s), wire::put(p, a.c), wire::put(p, a.isum); }
  static State decode(const uint8_t* p) {
    State a;
    a.n = wire::get<uint64_t>(p), a.s = wire::get<double>(p), a.c = wire::get<double>(p), a.isum = wire::get<__int128>(p);
    return a;
  }

  // Partial state. Layouts: f64 sums (s, c), nan_mean of floats (s, c, n), exact integer sums
  // (isum; rows of <= 32-bit integers go through an int64 block).
  enum class Kind { F64, NanF64, SmallInt, BigInt };
  static Kind kind(Op op) {
    if (!exact_int(op)) return kFloat && op == Op::NanMean ? Kind::NanF64 : Kind::F64;
    return kSmallInt ? Kind::SmallInt : Kind::BigInt;
  }
  struct Soa {
    std::vector<double> s, c, n;
    std::vector<__int128> isum;
  };
  static size_t soa_bytes(const OpCfg<T>& k) { return kind(k.op) == Kind::NanF64 ? 24 : 16; }
  static bool blocked(const OpCfg<T>& k) { return kind(k.op) != Kind::BigInt; }
  static void reserve(const OpCfg<T>& k, RowScratch& b, size_t len) {
    const Kind kd = kind(k.op);
    b.reserve(len, kd == Kind::F64 || kd == Kind::NanF64, kd == Kind::NanF64, kd == Kind::SmallInt);
  }
  static void init(const OpCfg<T>& k, Soa& st, size_t len) {
    switch (kind(k.op)) {
      case Kind::NanF64: st.n.assign(len, 0.0); /* fallthrough */
      case Kind::F64: st.s.assign(len, 0.0), st.c.assign(len, 0.0); break;
      default: st.isum.assign(len, 0); break;
    }
  }
  static void consume_rows(const OpCfg<T>& k, Soa& st, RowScratch& b, size_t j0, const T* const* xs, const uint64_t*,
                           size_t rows, size_t n) {
    switch (kind(k.op)) {
      case Kind::F64: k.rows->add(b.s.data() + j0, xs, rows, n, xform(k.op)); break;
      case Kind::NanF64: k.rows->add_nan(b.s.data() + j0, b.n.data() + j0, xs, rows, n); break;
      case Kind::SmallInt: k.rows->isum(b.i.data() + j0, xs, rows, n); break;
      case Kind::BigInt:
        for (size_t i = 0; i < rows; ++i) {
          const T* x = xs[i];
          __int128* sum = st.isum.data() + j0;
          for (size_t j = 0; j < n; ++j) sum[j] += static_cast<__int128>(x[j]);
        }
        return;
    }
    b.runs.emplace_back(j0, j0 + n);
  }
  // Folds the block into the state (once per touched element) and zeroes it.
  static void flush(const OpCfg<T>& k, Soa& st, RowScratch& b) {
    if (b.runs.empty()) return;
    b.coalesce();
    const Kind kd = kind(k.op);
    for (const auto& r : b.runs) {
      const size_t j0 = r.first, n = r.second - r.first;
      if (kd == Kind::F64 || kd == Kind::NanF64) {
        double* bs = b.s.data() + j0;
        double* s = st.s.data() + j0;
        double* c = st.c.data() + j0;
        for (size_t j = 0; j < n; ++j) neumaier_add(s[j], c[j], bs[j]), bs[j] = 0.0;
        if (kd == Kind::NanF64) {
          double* bn = b.n.data() + j0;
          double* sn = st.n.data() + j0;
          for (size_t j = 0; j < n; ++j) sn[j] += bn[j], bn[j] = 0.0;
        }
      } else if (kd == Kind::SmallInt) {
        int64_t* bi = b.i.data() + j0;
        __int128* s = st.isum.data() + j0;
        for (size_t j = 0; j < n; ++j) s[j] += bi[j], bi[j] = 0;
      }
    }
    b.runs.clear();
  }
  // Layouts without a count hold every element of the fiber: n = fib_len.
  static State get(const OpCfg<T>& k, const Soa& st, size_t j, uint64_t fib_len) {
    State a;
    const Kind kd = kind(k.op);
    if (kd == Kind::F64 || kd == Kind::NanF64) {
      a.s = st.s[j], a.c = st.c[j];
      a.n = kd == Kind::NanF64 ? uint64_t(st.n[j]) : fib_len;
    } else {
      a.isum = st.isum[j], a.n = fib_len;
    }
    return a;
  }
  static void put(const OpCfg<T>& k, Soa& st, size_t j, const State& a) {
    const Kind kd = kind(k.op);
    if (kd == Kind::F64 || kd == Kind::NanF64) {
      st.s[j] = a.s, st.c[j] = a.c;
      if (kd == Kind::NanF64) st.n[j] = double(a.n);
    } else {
      st.isum[j] = a.isum;
    }
  }

 private:
  static __int128 int_sum_of(const T* x, size_t n, Isa isa) {
    if constexpr (std::is_integral<T>::value) return int_sum(x, n, isa);
    (void)x, (void)n, (void)isa;
    return 0;
  }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
