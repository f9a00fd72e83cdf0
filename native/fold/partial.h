// Partial-fold facade over the registry: PartialOp<T> binds an op to its family's structure of
// arrays (fold/soa.h) over a box of output elements (a few bytes per element instead of one
// fold::Acc), grown by the family's row kernels over the kept inner run (out[j] op= x[j],
// SIMD-friendly), by per-run accumulators (reduced last axis), or by merging another box state
// (segments, in a fixed order).
//
// Sums go through a block: a unit's rows accumulate into plain f64 block arrays, folded into the
// state once per element with a Neumaier add at the end of the unit. Var/std treat each batch of
// up to kMaxRows rows as a two-pass block (mean, then squared deviations) merged per element with
// Chan's formula. Everything is element-wise and batches depend on the plan only, so results do
// not depend on the ISA or the thread count.
#pragma once
#include <cstdint>

#include "fold/accumulator.h"
#include "fold/soa.h"

namespace tet {
namespace fold {

// One SoA of every family (only the op's own is allocated).
template <class T>
struct PState : ops::Sum<T>::Soa, ops::Extrema<T>::Soa, ops::Moments<T>::Soa, ops::Arg<T>::Soa,
                ops::Counts<T>::Soa, ops::Product<T>::Soa, ops::Unsupported<T>::Soa {
  size_t len = 0;
};
using PBlock = RowScratch;

template <class F, class T> typename F::Soa& soa(PState<T>& s) { return s; }
template <class F, class T> const typename F::Soa& soa(const PState<T>& s) { return s; }

template <class T> class PartialOp {
 public:
  PartialOp(Op op, Isa isa, bool has_fill, double fill) : fo_(op, isa, has_fill, fill) {}
  Op op() const { return fo_.op(); }
  const FoldOp<T>& fold_op() const { return fo_; }

  // Bytes of state per output element (for the segment memory cap).
  size_t state_bytes() const {
    return visit([&](auto f) { return decltype(f)::soa_bytes(cfg()); });
  }
  // The block arrays this op uses.
  void reserve_block(PBlock& b, size_t len) const {
    visit([&](auto f) { decltype(f)::reserve(cfg(), b, len); });
  }
  bool blocked() const {
    return visit([&](auto f) { return decltype(f)::blocked(cfg()); });
  }
  void init(PState<T>& st, size_t len) const {
    st.len = len;
    visit([&](auto f) { using F = decltype(f); F::init(cfg(), soa<F>(st), len); });
  }
  void release(PState<T>& st) const { st = PState<T>(); }

  // Pass 1 (and the only pass for unblocked ops): k <= kMaxRows rows xs[i][0..n) of fiber
  // indices fibs[i], in fiber-visit order, into box elements [j0, j0 + n). Blocked ops record
  // the range in b.runs.
  void rows(PState<T>& st, PBlock& b, size_t j0, const T* const* xs, const uint64_t* fibs, size_t k, size_t n) const {
    visit([&](auto f) { using F = decltype(f); F::consume_rows(cfg(), soa<F>(st), b, j0, xs, fibs, k, n); });
  }
  // Folds the block into the state (once per touched element) and zeroes it.
  void flush(PState<T>& st, PBlock& b) const {
    visit([&](auto f) { using F = decltype(f); F::flush(cfg(), soa<F>(st), b); });
  }
  // A per-run accumulator (reduced last axis) into element j; arg indices already global.
  void merge_acc(PState<T>& st, size_t j, const Acc<T>& a) const {
    visit([&](auto f) { using F = decltype(f); ops::soa_merge_state<F, T>(cfg(), soa<F>(st), j, part<F>(a)); });
  }
  // dst[dj + k] <- merge(dst[dj + k], src[sj + k]) for k < n.
  void merge(PState<T>& d, size_t dj, const PState<T>& s, size_t sj, size_t n) const {
    visit([&](auto f) { using F = decltype(f); ops::soa_merge<F, T>(cfg(), soa<F>(d), dj, soa<F>(s), sj, n); });
  }
  // Element j's state as fold_op().state_bytes() encoded bytes (the family's State codec;
  // `fib_len` stands in for counts the SoA omits), and back into element j of an init'ed box.
  void encode(const PState<T>& st, size_t j, uint64_t fib_len, uint8_t* out) const {
    visit([&](auto f) { using F = decltype(f); F::encode(F::get(cfg(), soa<F>(st), j, fib_len), out); });
  }
  void decode(PState<T>& st, size_t j, const uint8_t* in) const {
    visit([&](auto f) { using F = decltype(f); F::put(cfg(), soa<F>(st), j, F::decode(in)); });
  }
  // Final value of element j (8 bytes, or 1 for Bool kinds); `fib_len` = elements per output.
  void finalize(const PState<T>& st, size_t j, uint64_t fib_len, uint8_t* out) const {
    visit([&](auto f) { using F = decltype(f); ops::soa_finalize<F, T>(cfg(), soa<F>(st), j, fib_len, out); });
  }

 private:
  const OpCfg<T>& cfg() const { return fo_.cfg(); }
  template <class Fn> decltype(auto) visit(Fn&& fn) const { return with_family<T>(fo_.family(), fn); }

  FoldOp<T> fo_;
};

}  // namespace fold
}  // namespace tet
