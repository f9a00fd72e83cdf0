// Per-output state for partial folds: each family (fold/ops/*.h) keeps a structure of arrays of
// its State over a box of output elements (only the columns its op needs, a few bytes per
// element), with get/put of one element's State. The algebra on it is the family's own:
// merging a State into element j, merging two boxes and finalizing are get, merge/finalize,
// put. RowScratch is the per-worker block scratch of the row kernels.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "fold/ops/common.h"

namespace tet {
namespace fold {

// Block scratch (one per worker): sized to the largest box, all zero between blocks.
struct RowScratch {
  std::vector<double> s, n;
  std::vector<int64_t> i;
  std::vector<uint8_t> e;  // arg: batch extrema (T values) and NaN flags, scratch per batch
  std::vector<uint8_t> ef;
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [begin, end) box ranges touched
  void reserve(size_t len, bool sum, bool count, bool isum) {
    if (sum && s.size() < len) s.resize(len, 0.0);
    if (count && n.size() < len) n.resize(len, 0.0);
    if (isum && i.size() < len) i.resize(len, 0);
  }
  // Sorts and coalesces the touched ranges into disjoint ones.
  void coalesce() {
    if (runs.size() < 2) return;
    std::sort(runs.begin(), runs.end());
    size_t k = 0;
    for (size_t r = 1; r < runs.size(); ++r) {
      if (runs[r].first <= runs[k].second) runs[k].second = std::max(runs[k].second, runs[r].second);
      else runs[++k] = runs[r];
    }
    runs.resize(k + 1);
  }
};

namespace ops {

// Families whose rows go straight into the state (no block scratch to flush).
template <class T> struct Unblocked {
  static bool blocked(const OpCfg<T>&) { return false; }
  static void reserve(const OpCfg<T>&, RowScratch&, size_t) {}
  template <class Soa> static void flush(const OpCfg<T>&, Soa&, RowScratch&) {}
};

// State b into element j.
template <class F, class T>
void soa_merge_state(const OpCfg<T>& k, typename F::Soa& d, size_t j, const typename F::State& b) {
  typename F::State x = F::get(k, d, j, 0);
  F::merge(k, x, b);
  F::put(k, d, j, x);
}

// d[dj + i] <- merge(d[dj + i], s[sj + i]) for i < n.
template <class F, class T>
void soa_merge(const OpCfg<T>& k, typename F::Soa& d, size_t dj, const typename F::Soa& s, size_t sj, size_t n) {
  for (size_t i = 0; i < n; ++i) soa_merge_state<F, T>(k, d, dj + i, F::get(k, s, sj + i, 0));
}

// Final value of element j; `fib_len` (elements per output) stands in for counts the SoA omits.
template <class F, class T>
void soa_finalize(const OpCfg<T>& k, const typename F::Soa& st, size_t j, uint64_t fib_len, uint8_t* out) {
  F::finalize(k, F::get(k, st, j, fib_len), out);
}

}  // namespace ops
}  // namespace fold
}  // namespace tet
