// The aggregate registry: per-op facts from ops.def (family, tier, result kind, merge rule) and
// the one dispatch from an op to its state family (fold/ops/*.h). Every consumer of the op
// algebra (the fold drivers of exec/fold_driver_impl.h and the shard merge today; grouped and
// device folds next) goes through it: make_cfg binds an op instance, with_family picks the
// family whose State / Soa functions the caller then calls directly.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fold/ops/arg.h"
#include "fold/ops/counts.h"
#include "fold/ops/extrema.h"
#include "fold/ops/moments.h"
#include "fold/ops/product.h"
#include "fold/ops/sum.h"
#include "fold/ops/unsupported.h"
#include "tet/dtype.h"
#include "tet/plan.h"

namespace tet {
namespace fold {

// State families with a streaming state, in dispatch order.
#define TET_FOLD_FAMILIES(X) X(Sum) X(Extrema) X(Moments) X(Arg) X(Counts) X(Product)

enum class Family : uint8_t {
#define TET_FAMILY_ENUM(F) F,
  TET_FOLD_FAMILIES(TET_FAMILY_ENUM)
#undef TET_FAMILY_ENUM
  None, OrderStat,
};
enum class Tier : uint8_t { None, Stream, Materialize };
enum class ValueRule : uint8_t { F64, Extremum, U64, Bool };
enum class MergeRule : uint8_t { None, Ordered, Exact };

struct OpTraits {
  Op op;
  uint32_t wire;
  const char* name;
  Family family;
  Tier tier;
  ValueRule value;
  MergeRule merge;
};

constexpr uint32_t kOpCount = uint32_t(Op::Correlation) + 1;

// Traits of a decoded op (plan_codec has checked the range); unknown codes get None's row.
const OpTraits& op_traits(Op op);
inline bool is_streaming(Op op) { return op_traits(op).tier == Tier::Stream; }
inline bool is_tier_c(Op op) { return op_traits(op).tier == Tier::Materialize; }

ValueKind value_kind(Op op, DType dt);
inline size_t value_size(ValueKind k) { return k == ValueKind::Bool ? 1 : 8; }

// Merging two states gives the same bits however the units were grouped (counts, extrema, arg,
// exact integer sums): shards may pre-combine. Otherwise (Neumaier, Chan, product) the bits are
// those of the canonical left fold in unit order, so a shard ships its unit states in order.
bool merge_is_exact(Op op, DType dt);

// Bytes of one encoded scalar state (fold/ops/<family>.h encode), for dtype storage type T.
template <class T> size_t state_bytes(Op op);

// fn(ops::<Family><T>{}) for the family (ops::Unsupported<T> for ops without a streaming state).
template <class T, class Fn> decltype(auto) with_family(Family family, Fn&& fn) {
  switch (family) {
#define TET_FAMILY_CASE(F) case Family::F: return fn(ops::F<T>());
    TET_FOLD_FAMILIES(TET_FAMILY_CASE)
#undef TET_FAMILY_CASE
    default: return fn(ops::Unsupported<T>());
  }
}

template <class T, class Fn> decltype(auto) with_family(Op op, Fn&& fn) {
  return with_family<T>(op_traits(op).family, fn);
}

template <class T> size_t state_bytes(Op op) {
  return with_family<T>(op, [](auto f) { return decltype(f)::kEncodedBytes; });
}

// Bytes of partial-fold state (the family's Soa) per output element, for dtype dt.
size_t partial_state_bytes(Op op, DType dt);

// One op instance for fold type T: the op, the kernels' ISA and null_count's fill, checked
// against T's domain (a fill outside it, or a float fill that rounds, never matches).
template <class T> OpCfg<T> make_cfg(Op op, Isa isa, bool has_fill, double fill) {
  OpCfg<T> cfg;
  cfg.op = op, cfg.isa = isa, cfg.rows = &row_kernels<T>(isa);
  if (!has_fill) return cfg;
  bool ok = false;
  T ft = T(0);
  if (std::is_floating_point<T>::value) {
    cfg.fill_nan = std::isnan(fill);
    if (std::isfinite(fill) && std::fabs(fill) > double(std::numeric_limits<T>::max())) return cfg;
    ft = T(fill);
    ok = cfg.fill_nan || double(ft) == fill;
  } else {
    const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);  // exclusive
    ok = std::isfinite(fill) && std::floor(fill) == fill && fill >= double(std::numeric_limits<T>::lowest()) && fill < upper;
    if (ok) ft = T(fill), ok = double(ft) == fill;
  }
  cfg.fill = ft, cfg.fill_ok = ok;
  return cfg;
}

}  // namespace fold
}  // namespace tet
