// The op table, expanded from ops.def, and the rules that depend on the dtype.
#include "fold/registry.h"

#include <type_traits>

namespace tet {
namespace fold {
namespace {

namespace col {
constexpr Tier none = Tier::None, stream = Tier::Stream, materialize = Tier::Materialize;
}
namespace val {
constexpr ValueRule f64 = ValueRule::F64, extremum = ValueRule::Extremum, u64 = ValueRule::U64, boolean = ValueRule::Bool;
}
namespace mrg {
constexpr MergeRule none = MergeRule::None, ordered = MergeRule::Ordered, exact = MergeRule::Exact;
}

constexpr OpTraits kOps[] = {
#define TET_OP(Id, wire, name, family, tier, value, merge, doc, scalar_field, partial_field) \
  {Op::Id, wire, #name, Family::family, col::tier, val::value, mrg::merge},
#include "fold/ops.def"
#undef TET_OP
};

static_assert(sizeof(kOps) / sizeof(kOps[0]) == kOpCount, "ops.def: one row per tet::Op");
constexpr bool wire_matches(size_t i) {
  return i == sizeof(kOps) / sizeof(kOps[0]) ||
         (uint32_t(kOps[i].op) == kOps[i].wire && kOps[i].wire == uint32_t(i) && wire_matches(i + 1));
}
static_assert(wire_matches(0), "ops.def: rows in wire order, wire code == tet::Op value");

}  // namespace

const OpTraits& op_traits(Op op) {
  const uint32_t i = uint32_t(op);
  return i < kOpCount ? kOps[i] : kOps[0];
}

ValueKind value_kind(Op op, DType dt) {
  switch (op_traits(op).value) {
    case ValueRule::Extremum:
      if (dtype_is_float(dt)) return ValueKind::F64;
      return (dt == DType::U8 || dt == DType::U16 || dt == DType::U32 || dt == DType::U64) ? ValueKind::U64 : ValueKind::I64;
    case ValueRule::U64: return ValueKind::U64;
    case ValueRule::Bool: return ValueKind::Bool;
    default: return ValueKind::F64;
  }
}

bool merge_is_exact(Op op, DType dt) {
  const OpTraits& t = op_traits(op);
  if (t.merge == MergeRule::Exact) return true;
  // integer sum / mean / nan_mean sum exactly in __int128
  return t.family == Family::Sum && !dtype_is_float(dt) && op != Op::NormL1 && op != Op::NormL2;
}

size_t partial_state_bytes(Op op, DType dt) {
  auto of = [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    const OpCfg<T> cfg = make_cfg<T>(op, Isa::Scalar, false, 0);
    return with_family<T>(op, [&](auto f) { return decltype(f)::soa_bytes(cfg); });
  };
  switch (dt) {
    case DType::F32: case DType::F16: return of((float*)nullptr);
    case DType::F64: return of((double*)nullptr);
    case DType::U8: return of((uint8_t*)nullptr);
    case DType::U16: return of((uint16_t*)nullptr);
    case DType::I16: return of((int16_t*)nullptr);
    case DType::I32: return of((int32_t*)nullptr);
    case DType::U32: return of((uint32_t*)nullptr);
    case DType::I64: return of((int64_t*)nullptr);
    case DType::U64: return of((uint64_t*)nullptr);
    default: return 0;
  }
}

}  // namespace fold
}  // namespace tet
