// Product family: the f64 product, in element order within a block and in merge order across
// blocks (mergeable; bit-identical in a fixed merge order).
#pragma once
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Product : Unblocked<T> {
  struct State {
    double prod = 1;
  };
  static constexpr size_t kEncodedBytes = 8;

  static State identity(const OpCfg<T>&) { return State(); }
  static void consume(const OpCfg<T>&, State& a, const T* x, size_t n) {
    for (size_t i = 0; i < n; ++i) a.prod *= double(x[i]);
  }
  static void consume_one(const OpCfg<T>&, State& a, T v, uint64_t) { a.prod *= double(v); }
  static void merge(const OpCfg<T>&, State& a, const State& b) { a.prod *= b.prod; }
  static void finalize(const OpCfg<T>&, const State& a, uint8_t* out) { put_f64(out, a.prod); }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.prod); }
  static State decode(const uint8_t* p) {
    State a;
    a.prod = wire::get<double>(p);
    return a;
  }

  struct Soa {
    std::vector<double> p;
  };
  static size_t soa_bytes(const OpCfg<T>&) { return 8; }
  static void init(const OpCfg<T>&, Soa& st, size_t len) { st.p.assign(len, 1.0); }
  static void consume_rows(const OpCfg<T>&, Soa& st, RowScratch&, size_t j0, const T* const* xs, const uint64_t*,
                           size_t rows, size_t n) {
    for (size_t i = 0; i < rows; ++i) {
      const T* __restrict x = xs[i];
      double* __restrict p = st.p.data() + j0;
      for (size_t j = 0; j < n; ++j) p[j] *= double(x[j]);
    }
  }
  static State get(const OpCfg<T>&, const Soa& st, size_t j, uint64_t) {
    State a;
    a.prod = st.p[j];
    return a;
  }
  static void put(const OpCfg<T>&, Soa& st, size_t j, const State& a) { st.p[j] = a.prod; }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
