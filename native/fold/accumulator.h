// Scalar fold facade over the registry: FoldOp<T> binds an op to its state family (fold/ops/*.h)
// and grows a fold::Acc<T> by dense blocks, single elements or merges, finalizes it and encodes
// it. Acc<T> holds one State of every family (only the op's own is touched), so drivers and tests
// keep one state type per dtype while the algebra lives once per family.
// Merges are exact for counts, extrema and arg and use Neumaier sums / Chan's mean+M2 formula
// for the rest; callers merge in a fixed order for determinism.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fold/registry.h"

namespace tet {
namespace fold {

template <class T>
struct Acc : ops::Sum<T>::State, ops::Extrema<T>::State, ops::Moments<T>::State, ops::Arg<T>::State,
             ops::Counts<T>::State, ops::Product<T>::State, ops::Unsupported<T>::State {};

// The family F's part of an Acc.
template <class F, class T> typename F::State& part(Acc<T>& a) { return a; }
template <class F, class T> const typename F::State& part(const Acc<T>& a) { return a; }

template <class T> class FoldOp {
 public:
  static constexpr bool kFloat = std::is_floating_point<T>::value;

  FoldOp(Op op, Isa isa, bool has_fill, double fill) : family_(op_traits(op).family) {
    cfg_.op = op, cfg_.isa = isa, cfg_.rows = &row_kernels<T>(isa);
    if (!has_fill) return;
    bool ok = false;
    T ft = T(0);
    if (kFloat) {
      cfg_.fill_nan = std::isnan(fill);
      // The fill must exist in the dtype's domain (a float fill that rounds never matches).
      if (std::isfinite(fill) && std::fabs(fill) > double(std::numeric_limits<T>::max())) return;
      ft = T(fill);
      ok = cfg_.fill_nan || double(ft) == fill;
    } else {
      const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);  // exclusive
      ok = std::isfinite(fill) && std::floor(fill) == fill && fill >= double(std::numeric_limits<T>::lowest()) && fill < upper;
      if (ok) ft = T(fill), ok = double(ft) == fill;
    }
    cfg_.fill = ft, cfg_.fill_ok = ok;
  }
  Op op() const { return cfg_.op; }
  Family family() const { return family_; }
  const OpCfg<T>& cfg() const { return cfg_; }
  bool fill_ok() const { return cfg_.fill_ok; }    // null_count: the fill exists in T's domain
  bool fill_nan() const { return cfg_.fill_nan; }  // null_count: the fill is NaN
  T fill_value() const { return cfg_.fill; }

  // Fold a dense block; arg indices are positions within the block.
  void block(Acc<T>& a, const T* x, size_t n) const {
    visit([&](auto f) { using F = decltype(f); F::consume(cfg_, part<F>(a), x, n); });
  }
  // Add one element; `index` is its arg index (ignored by other ops).
  void one(Acc<T>& a, T v, uint64_t index) const {
    visit([&](auto f) { using F = decltype(f); F::consume_one(cfg_, part<F>(a), v, index); });
  }
  void merge(Acc<T>& a, const Acc<T>& b) const {
    visit([&](auto f) { using F = decltype(f); F::merge(cfg_, part<F>(a), part<F>(b)); });
  }
  // Writes the final value (8 bytes, or 1 for Bool kinds).
  void finalize(const Acc<T>& a, uint8_t* out) const {
    visit([&](auto f) { using F = decltype(f); F::finalize(cfg_, part<F>(a), out); });
  }
  // The op's state as state_bytes() little-endian bytes (layout kStateLayoutVersion), and back.
  size_t state_bytes() const { return fold::state_bytes<T>(cfg_.op); }
  void encode(const Acc<T>& a, uint8_t* out) const {
    visit([&](auto f) { using F = decltype(f); F::encode(part<F>(a), out); });
  }
  Acc<T> decode(const uint8_t* in) const {
    Acc<T> a;
    visit([&](auto f) { using F = decltype(f); part<F>(a) = F::decode(in); });
    return a;
  }

 private:
  template <class Fn> void visit(Fn&& fn) const { with_family<T>(family_, fn); }

  Family family_;
  OpCfg<T> cfg_;
};

}  // namespace fold
}  // namespace tet
