// The aggregate registry: per-op facts from ops.def (family, tier, result kind, merge rule) and
// the one dispatch from an op to its state family (fold/ops/*.h). Every consumer of the op
// algebra (FoldOp / PartialOp today; grouped, sharded and device folds next) goes through it.
#pragma once
#include <cstddef>
#include <cstdint>

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

}  // namespace fold
}  // namespace tet
