// The aggregate registry (fold/registry.h, fold/ops/*.h): op traits agree with the wire and the
// hand-written rules; every state round-trips through its little-endian encoding bit-exactly;
// and shard equivalence at the state level: the units of a scalar fold split into k contiguous
// ranges (some empty), each range folded and encoded on its own, decoded and merged in unit
// order, finalize to the same bits as tet::execute over the same data.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "check.h"
#include "exec/fold_driver.h"
#include "fold/registry.h"
#include "mem_source.h"
#include "tet/file.h"
#include "tet/query.h"

using namespace tet;
using namespace tet::fold;
using tet_test::MemSource;

namespace {

// Bitwise equality of result arrays, except that any NaN equals any NaN for f64 results: IEEE
// 754 leaves the sign and payload of a propagated NaN open (x86 keeps the first operand's), and
// the compiler may commute the operands of a + b differently in different inlining contexts.
bool same_result(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, ValueKind kind) {
  if (a.size() != b.size()) return false;
  if (kind != ValueKind::F64) return a == b;
  for (size_t i = 0; i + 8 <= a.size(); i += 8) {
    double x, y;
    std::memcpy(&x, a.data() + i, 8), std::memcpy(&y, b.data() + i, 8);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(a.data() + i, b.data() + i, 8) != 0) return false;
  }
  return true;
}

constexpr Op kStreamOps[] = {Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Count, Op::Var, Op::Std, Op::Product,
                             Op::NormL1, Op::NormL2, Op::AllFinite, Op::AnyNan, Op::AnyInf, Op::ArgMin,
                             Op::ArgMax, Op::NanCount, Op::InfCount, Op::NullCount, Op::NanMean, Op::NanStd};

template <class T> std::vector<T> random_data(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point<T>::value) {
      const int r = int(rng() % 997);
      std::uniform_real_distribution<double> u(-1000, 1000);
      x[i] = r == 0 ? T(NAN) : r == 1 ? T(INFINITY) : r == 2 ? T(-INFINITY) : T(u(rng));
    } else {
      x[i] = T(rng());
    }
  }
  return x;
}

// The op instance (null_count gets a fill: NaN for floats, 0 for integers).
template <class T> OpCfg<T> make_op(Op op, Isa isa) {
  return make_cfg<T>(op, isa, op == Op::NullCount, std::is_floating_point<T>::value ? double(NAN) : 0.0);
}

template <class T> void check_round_trip() {
  for (Op op : kStreamOps) {
    const OpCfg<T> k = make_op<T>(op, best_isa());
    with_family<T>(op, [&](auto f) {
      using F = decltype(f);
      CHECK(F::kEncodedBytes == state_bytes<T>(op));
      for (size_t n : {size_t(0), size_t(1), size_t(33), size_t(5000)}) {
        const std::vector<T> x = random_data<T>(n, 77 + n);
        typename F::State s = F::identity(k);
        F::consume(k, s, x.data(), n);
        std::vector<uint8_t> a(F::kEncodedBytes + 1, 0xA5), b(F::kEncodedBytes + 1, 0x5A);
        F::encode(s, a.data());
        const typename F::State d = F::decode(a.data());
        F::encode(d, b.data());
        CHECK(std::memcmp(a.data(), b.data(), F::kEncodedBytes) == 0);
        CHECK(a[F::kEncodedBytes] == 0xA5 && b[F::kEncodedBytes] == 0x5A);  // exactly kEncodedBytes
        uint8_t o1[8] = {}, o2[8] = {};
        F::finalize(k, s, o1);
        F::finalize(k, d, o2);
        CHECK(std::memcmp(o1, o2, 8) == 0);
        // a default-constructed state (what the drivers start from) is the identity
        typename F::State z, zi = F::identity(k);
        std::vector<uint8_t> c(F::kEncodedBytes), ci(F::kEncodedBytes);
        F::encode(z, c.data()), F::encode(zi, ci.data());
        CHECK(c == ci);
      }
    });
  }
}

// Storage S, fold type T (f16 is stored as uint16_t and folded as float).
template <class S, class T> void check_shards(DType dt, uint64_t seed) {
  // Three tiles of 250000, 250000 and 200001 elements: two units each (kUnitElems = 2^17).
  const uint64_t n = 700001, chunk = 250000;
  std::mt19937_64 rng(seed);
  std::vector<S> stored(n);
  std::vector<T> vals(n);
  const std::vector<T> r = random_data<T>(n, seed);
  for (uint64_t i = 0; i < n; ++i) {
    if constexpr (!std::is_same<S, T>::value) {
      stored[i] = f32_to_f16(float(r[i]));
      vals[i] = f16_to_f32(stored[i]);
    } else {
      stored[i] = r[i], vals[i] = r[i];
    }
  }
  std::vector<uint8_t> bytes(n * sizeof(S));
  std::memcpy(bytes.data(), stored.data(), bytes.size());
  const MemSource src(dt, {n}, {chunk}, bytes);

  struct Unit {
    uint64_t begin, end;  // global element range
  };
  std::vector<Unit> units;  // the driver's decomposition: per tile, kUnitElems-element units
  for (uint64_t t0 = 0; t0 < n; t0 += chunk) {
    const uint64_t t1 = std::min(n, t0 + chunk);
    for (uint64_t e = t0; e < t1; e += exec::kUnitElems) units.push_back({e, std::min(t1, e + exec::kUnitElems)});
  }
  CHECK(units.size() == 6);

  for (Op op : kStreamOps) {
    QueryPlan p;
    p.ndim = 1, p.start[0] = 0, p.step[0] = 1, p.count[0] = n;
    p.op = op, p.reduce_mask = 1, p.strategy = Strategy::StreamingFold;
    p.has_fill = op == Op::NullCount;
    p.fill = std::is_floating_point<T>::value ? double(NAN) : 0.0;
    std::vector<std::vector<uint8_t>> engine;
    for (uint32_t threads : {1u, 0u}) {
      p.threads = threads;
      engine.push_back(execute(src, p, {}).values.bytes);
    }
    CHECK(engine[0] == engine[1]);  // one compiled path: same bits, NaNs included
    const OpCfg<T> k = make_cfg<T>(op, best_isa(), p.has_fill, p.fill);
    with_family<T>(op, [&](auto f) {
      using F = decltype(f);
      const bool exact = merge_is_exact(op, dt);
      for (size_t shards : {size_t(1), size_t(2), size_t(3), size_t(7)}) {
        // Shard s owns units [u0, u1) and ships them encoded: one state per unit (any op), and
        // for exactly-mergeable ops also the range pre-combined into one state.
        std::vector<std::vector<uint8_t>> wire_units, wire_ranges;
        for (size_t s = 0; s < shards; ++s) {
          const size_t u0 = units.size() * s / shards, u1 = units.size() * (s + 1) / shards;
          std::vector<uint8_t> seq((u1 - u0) * F::kEncodedBytes), one(F::kEncodedBytes);
          typename F::State range = F::identity(k);
          for (size_t u = u0; u < u1; ++u) {
            typename F::State st = F::identity(k);
            F::consume(k, st, vals.data() + units[u].begin, units[u].end - units[u].begin);
            if constexpr (std::is_same<F, ops::Arg<T>>::value)
              if (st.idx != UINT64_MAX) st.idx += units[u].begin;  // the driver's logical index
            F::encode(st, seq.data() + (u - u0) * F::kEncodedBytes);
            F::merge(k, range, st);
          }
          F::encode(range, one.data());
          wire_units.push_back(seq), wire_ranges.push_back(one);
        }
        typename F::State total = F::identity(k), combined = F::identity(k);
        for (size_t s = 0; s < shards; ++s) {
          for (size_t i = 0; i < wire_units[s].size() / std::max<size_t>(1, F::kEncodedBytes); ++i)
            F::merge(k, total, F::decode(wire_units[s].data() + i * F::kEncodedBytes));
          F::merge(k, combined, F::decode(wire_ranges[s].data()));
        }
        std::vector<uint8_t> out(engine[0].size()), out2(engine[0].size());
        F::finalize(k, total, out.data());
        const ValueKind kind = value_kind(op, dt);
        if (!same_result(out, engine[0], kind)) {
          uint64_t x = 0, y = 0;
          std::memcpy(&x, out.data(), std::min<size_t>(8, out.size())), std::memcpy(&y, engine[0].data(), std::min<size_t>(8, out.size()));
          std::printf("  %s dtype %s shards %zu: unit-ordered merge differs from execute (%016llx vs %016llx)\n", op_traits(op).name,
                      dtype_name(dt), shards, (unsigned long long)x, (unsigned long long)y);
        }
        CHECK(same_result(out, engine[0], kind));
        if (exact) {
          F::finalize(k, combined, out2.data());
          if (!same_result(out2, engine[0], kind))
            std::printf("  %s dtype %s shards %zu: pre-combined shards differ\n", op_traits(op).name, dtype_name(dt), shards);
          CHECK(same_result(out2, engine[0], kind));
        }
      }
    });
  }
}

}  // namespace

TEST_CASE("registry: traits follow the wire and the value-kind rules") {
  for (uint32_t i = 0; i < kOpCount; ++i) {
    const OpTraits& t = op_traits(Op(i));
    CHECK(t.wire == i && uint32_t(t.op) == i && t.name != nullptr);
    const bool c = i >= uint32_t(Op::Median);
    CHECK(is_tier_c(Op(i)) == c);
    CHECK(is_streaming(Op(i)) == (i != 0 && !c));
    CHECK((t.merge == MergeRule::None) == (i == 0 || c));
  }
  CHECK(std::string(op_traits(Op::NanStd).name) == "nan_std");
  CHECK(value_kind(Op::Max, DType::U64) == ValueKind::U64);
  CHECK(value_kind(Op::Min, DType::I16) == ValueKind::I64);
  CHECK(value_kind(Op::Min, DType::F16) == ValueKind::F64);
  CHECK(value_kind(Op::ArgMax, DType::F32) == ValueKind::U64);
  CHECK(value_kind(Op::Histogram, DType::F32) == ValueKind::U64);
  CHECK(value_kind(Op::AllFinite, DType::I32) == ValueKind::Bool);
  CHECK(value_kind(Op::Median, DType::I32) == ValueKind::F64);
  CHECK(merge_is_exact(Op::Sum, DType::I64) && !merge_is_exact(Op::Sum, DType::F32));
  CHECK(!merge_is_exact(Op::NormL1, DType::I32) && merge_is_exact(Op::ArgMin, DType::F64));
  CHECK(state_bytes<float>(Op::Sum) == 40 && state_bytes<uint8_t>(Op::Min) == 3 && state_bytes<double>(Op::ArgMax) == 17);
}

TEST_CASE("registry: every state round-trips through its encoding bit-exactly") {
  check_round_trip<float>();
  check_round_trip<double>();
  check_round_trip<uint8_t>();
  check_round_trip<uint16_t>();
  check_round_trip<int16_t>();
  check_round_trip<int32_t>();
  check_round_trip<uint32_t>();
  check_round_trip<int64_t>();
  check_round_trip<uint64_t>();
}

TEST_CASE("registry: shard equivalence, k contiguous unit ranges merged in unit order == execute") {
  check_shards<float, float>(DType::F32, 1);
  check_shards<double, double>(DType::F64, 2);
  check_shards<uint16_t, float>(DType::F16, 3);
  check_shards<uint8_t, uint8_t>(DType::U8, 4);
  check_shards<uint16_t, uint16_t>(DType::U16, 5);
  check_shards<int16_t, int16_t>(DType::I16, 6);
  check_shards<int32_t, int32_t>(DType::I32, 7);
  check_shards<uint32_t, uint32_t>(DType::U32, 8);
  check_shards<int64_t, int64_t>(DType::I64, 9);
  check_shards<uint64_t, uint64_t>(DType::U64, 10);
}

TEST_MAIN()
