// Arg family: arg_min, arg_max. The first NaN wins (numpy), else the extremum with the smallest
// index, so the merge is exact and order independent. Indices are positions within what was
// consumed; the driver rebases them to logical indices before merging.
#pragma once
#include <algorithm>
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Arg : Unblocked<T> {
  struct State {
    T best = T(0);              // the extremum so far
    uint64_t idx = UINT64_MAX;  // its index (the first NaN's when nan); UINT64_MAX = none yet
    bool nan = false;
  };
  static constexpr size_t kEncodedBytes = sizeof(T) + 8 + 1;

  static State identity(const OpCfg<T>&) { return State(); }

  // One pass of chunk extrema: the first chunk holding the block's extremum (or the first NaN)
  // is then scanned for the first matching position while it is still in cache.
  static void consume(const OpCfg<T>& k, State& a, const T* x, size_t n) {
    constexpr size_t kChunk = 2048;
    State b;
    size_t at = SIZE_MAX;
    for (size_t c = 0; c < n; c += kChunk) {
      const size_t m = n - c < kChunk ? n - c : kChunk;
      const MinMax<T> mm = min_max(x + c, m, k.isa);
      if (mm.has_nan) {
        size_t i = c;
        while (x[i] == x[i]) ++i;
        b = State();
        b.nan = true, b.idx = i;
        at = SIZE_MAX;
        break;
      }
      const T want = k.op == Op::ArgMin ? mm.lo : mm.hi;
      if (at == SIZE_MAX || (k.op == Op::ArgMin ? want < b.best : want > b.best)) b.best = want, at = c;
    }
    if (at != SIZE_MAX) {
      size_t i = at;
      while (!(x[i] == b.best)) ++i;
      b.idx = i;
    }
    merge(k, a, b);
  }
  static void consume_one(const OpCfg<T>& k, State& a, T v, uint64_t index) {
    State b;
    if (v != v) b.nan = true;
    b.best = v, b.idx = index;
    merge(k, a, b);
  }
  static void merge(const OpCfg<T>& k, State& a, const State& b) {
    if (b.idx == UINT64_MAX) return;
    if (b.nan) {
      if (!a.nan || b.idx < a.idx) a.nan = true, a.idx = b.idx;
      return;
    }
    if (a.nan) return;
    if (a.idx == UINT64_MAX) { a.best = b.best, a.idx = b.idx; return; }
    const bool better = k.op == Op::ArgMin ? b.best < a.best : b.best > a.best;
    if (better || (b.best == a.best && b.idx < a.idx)) a.best = b.best, a.idx = b.idx;
  }
  static void finalize(const OpCfg<T>&, const State& a, uint8_t* out) { put_u64(out, a.idx == UINT64_MAX ? 0 : a.idx); }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.best), wire::put(p, a.idx), wire::put(p, a.nan); }
  static State decode(const uint8_t* p) {
    State a;
    a.best = wire::get<T>(p), a.idx = wire::get<uint64_t>(p), a.nan = wire::get<bool>(p);
    return a;
  }

  // Partial state: best (v), index (u), NaN seen (f). An empty element's best is the batch
  // extremum identity, so every batch ties or beats it.
  struct Soa {
    std::vector<T> v;
    std::vector<uint64_t> u;
    std::vector<uint8_t> f;
  };
  static size_t soa_bytes(const OpCfg<T>&) { return sizeof(T) + 9; }
  static void init(const OpCfg<T>& k, Soa& st, size_t len) {
    st.v.assign(len, k.op == Op::ArgMin ? highest_of<T>() : lowest_of<T>()), st.u.assign(len, UINT64_MAX), st.f.assign(len, 0);
  }
  // Batch extrema first (vectorised); only elements where the batch may win (or ties, or NaN)
  // replay the rows in order with the exact rule.
  static void consume_rows(const OpCfg<T>& k, Soa& st, RowScratch& b, size_t j0, const T* const* xs,
                           const uint64_t* fibs, size_t rows, size_t n) {
    constexpr bool kFloat = std::is_floating_point<T>::value;
    // Sized independently: a recycled scratch may come from another dtype's batches.
    if (b.e.size() < n * sizeof(T)) b.e.resize(n * sizeof(T));
    if (b.ef.size() < n) b.ef.resize(n);
    T* ex = reinterpret_cast<T*>(b.e.data());
    uint8_t* ef = b.ef.data();
    const bool mn = k.op == Op::ArgMin;
    std::fill(ex, ex + n, mn ? highest_of<T>() : lowest_of<T>());
    std::fill(ef, ef + n, uint8_t(0));
    k.rows->ext(ex, kFloat ? ef : nullptr, xs, rows, n, mn);
    const T* best = st.v.data() + j0;
    const uint8_t* nan = st.f.data() + j0;
    // mask (in ef): this batch may change element j. An earlier NaN stays unless the batch has
    // one too; else the batch matters when it has a NaN or its extremum ties or beats the state
    // (an empty state holds the identity, which every batch ties or beats).
    for (size_t j = 0; j < n; ++j) {
      const uint8_t beats = mn ? uint8_t(!(best[j] < ex[j])) : uint8_t(!(best[j] > ex[j]));
      ef[j] = uint8_t((ef[j] | beats) & (ef[j] | uint8_t(nan[j] == 0)));
    }
    for (size_t j = 0; j < n;) {
      if (j + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, ef + j, 8);
        if (w == 0) { j += 8; continue; }
      }
      if (ef[j])
        for (size_t i = 0; i < rows; ++i) arg_row(mn, st, j0 + j, xs[i] + j, 1, fibs[i]);
      ++j;
    }
  }
  static State get(const OpCfg<T>&, const Soa& st, size_t j, uint64_t) {
    State a;
    a.best = st.v[j], a.idx = st.u[j], a.nan = st.f[j] != 0;
    return a;
  }
  static void put(const OpCfg<T>&, Soa& st, size_t j, const State& a) {
    st.v[j] = a.best, st.u[j] = a.idx, st.f[j] = uint8_t(a.nan);
  }

 private:
  static void arg_row(bool mn, Soa& st, size_t j0, const T* x, size_t n, uint64_t fib) {
    T* best = st.v.data() + j0;
    uint64_t* idx = st.u.data() + j0;
    uint8_t* nan = st.f.data() + j0;
    for (size_t j = 0; j < n; ++j) {
      const T v = x[j];
      if (v != v) {
        if (!nan[j] || fib < idx[j]) nan[j] = 1, idx[j] = fib;
        continue;
      }
      if (nan[j]) continue;
      if (idx[j] == UINT64_MAX || (mn ? v < best[j] : v > best[j]) || (v == best[j] && fib < idx[j]))
        best[j] = v, idx[j] = fib;
    }
  }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
