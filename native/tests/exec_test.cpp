// tet::execute against independent long-double reference computations over a dense array, for
// every op, scalar and partial, several dtypes, strided selections and clipped edge tiles; plus
// thread-count independence (bit-for-bit), strategies, preview, spill and cancellation.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check.h"

// check.h's CHECK_THROWS_CODE names its parameter `code`, which collides with e.code().
#define EXPECT_CODE(expr, want) do { bool _t = false; try { expr; } catch (const tet::Error& _e) { _t = true; if (_e.code() != std::string(want)) { std::printf("  %s:%d code %s, want %s (%s)\n", __FILE__, __LINE__, _e.code().c_str(), want, _e.what()); ++tet_test::failures(); } } if (!_t) { std::printf("  %s:%d no throw: %s\n", __FILE__, __LINE__, #expr); ++tet_test::failures(); } } while (0)
#include "mem_source.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/host.h"
#include "tet/query.h"
#include "tet/writer.h"
#include "exec/quantile.h"

using namespace tet;
using tet_test::MemSource;
typedef long double LD;

namespace {

struct Dense {
  DType dt;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<LD> vals;  // exact value of each element (f16 widened)
};

template <class S> S rand_val(std::mt19937_64& rng, bool specials) {
  if (std::is_floating_point<S>::value) {
    std::uniform_real_distribution<double> u(-100, 100);
    const int r = int(rng() % 50);
    if (specials && r == 0) return S(NAN);
    if (specials && r == 1) return S(INFINITY);
    if (specials && r == 2) return S(-INFINITY);
    return S(u(rng));
  }
  return S(rng());
}

Dense make_dense(DType dt, std::vector<uint64_t> shape, uint64_t seed, bool specials) {
  Dense d{dt, shape, {}, {}};
  uint64_t n = 1;
  for (auto s : shape) n *= s;
  std::mt19937_64 rng(seed);
  const size_t es = dtype_size(dt);
  d.bytes.resize(n * es);
  d.vals.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t* p = &d.bytes[i * es];
    switch (dt) {
#define CASE(TAG, S)                          \
  case DType::TAG: {                          \
    S v = rand_val<S>(rng, specials);         \
    std::memcpy(p, &v, sizeof v);             \
    d.vals[i] = LD(v);                        \
    break;                                    \
  }
      CASE(F32, float) CASE(F64, double) CASE(I32, int32_t) CASE(I64, int64_t) CASE(U8, uint8_t)
      CASE(U16, uint16_t) CASE(I16, int16_t) CASE(U32, uint32_t) CASE(U64, uint64_t)
#undef CASE
      case DType::F16: {
        std::uniform_real_distribution<float> u(-100, 100);
        float f = u(rng);
        const int r = int(rng() % 50);
        if (specials && r == 0) f = NAN;
        if (specials && r == 1) f = INFINITY;
        uint16_t h = f32_to_f16(f);
        std::memcpy(p, &h, 2);
        d.vals[i] = LD(f16_to_f32(h));
        break;
      }
    }
  }
  return d;
}

struct Sel {
  std::vector<uint64_t> start, step, count;
};

QueryPlan make_plan(const Dense& d, const Sel& s, Op op, uint32_t mask) {
  QueryPlan p;
  p.ndim = uint32_t(d.shape.size());
  for (uint32_t a = 0; a < p.ndim; ++a) p.start[a] = s.start[a], p.step[a] = s.step[a], p.count[a] = s.count[a];
  p.op = op;
  p.reduce_mask = mask;
  const bool tier_c = op == Op::Median || op == Op::Quantile || op == Op::Histogram || op == Op::Covariance || op == Op::Correlation;
  p.strategy = op == Op::None ? Strategy::CappedInMemory : tier_c ? Strategy::InMemoryMaterialize : Strategy::StreamingFold;
  return p;
}

// group_by (plan GROUP): the group id of selected position i of the group axis, G groups, all present.
uint32_t group_of(uint64_t i, uint32_t groups) { return uint32_t((i * 5 + 1) % groups); }

// Fibers of the selection: out index (row-major over kept axes) -> values in fiber order. With a
// group axis `ga` (>= 0), the output is [groups, ...kept] and position i of ga goes to group_of(i).
std::vector<std::vector<LD>> fibers(const Dense& d, const Sel& s, uint32_t mask, std::vector<uint64_t>* kept_shape,
                                    int ga = -1, uint32_t groups = 1) {
  const uint32_t nd = uint32_t(d.shape.size());
  uint64_t out_len = 1;
  for (uint32_t a = 0; a < nd; ++a)
    if (!((mask >> a) & 1)) out_len *= s.count[a], kept_shape ? kept_shape->push_back(s.count[a]) : void();
  std::vector<std::vector<LD>> f(out_len * groups);
  std::vector<uint64_t> i(nd, 0);
  uint64_t total = 1;
  for (auto c : s.count) total *= c;
  for (uint64_t k = 0; k < total; ++k) {
    uint64_t src = 0, o = 0;
    for (uint32_t a = 0; a < nd; ++a) {
      src = src * d.shape[a] + s.start[a] + i[a] * s.step[a];
      if (!((mask >> a) & 1)) o = o * s.count[a] + i[a];
    }
    if (ga >= 0) o += group_of(i[uint32_t(ga)], groups) * out_len;
    f[o].push_back(d.vals[src]);  // row-major traversal keeps fiber order row-major too
    for (int a = int(nd) - 1; a >= 0; --a) {
      if (++i[a] < s.count[a]) break;
      i[a] = 0;
    }
  }
  return f;
}

bool isnanl(LD v) { return v != v; }

// Reference value of a streaming op on one fiber: as long double, plus "exact" flag.
LD reference(Op op, const std::vector<LD>& x, double fill) {
  const LD nan = std::numeric_limits<LD>::quiet_NaN();
  LD s = 0;
  bool any_nan = false;
  for (LD v : x) any_nan |= isnanl(v);
  switch (op) {
    case Op::Sum: for (LD v : x) s += v; return s;
    case Op::Mean: for (LD v : x) s += v; return s / x.size();
    case Op::Count: return x.size();
    case Op::Min: case Op::Max: {
      if (any_nan) return nan;
      LD m = x[0];
      for (LD v : x) m = op == Op::Min ? std::min(m, v) : std::max(m, v);
      return m;
    }
    case Op::Var: case Op::Std: case Op::NanStd: case Op::NanMean: {
      std::vector<LD> y;
      for (LD v : x) if (!(op == Op::NanStd || op == Op::NanMean) || !isnanl(v)) y.push_back(v);
      if (y.empty()) return nan;
      LD m = 0;
      for (LD v : y) m += v;
      m /= y.size();
      if (op == Op::NanMean) return m;
      LD q = 0;
      for (LD v : y) q += (v - m) * (v - m);
      q /= y.size();
      return op == Op::Var ? q : std::sqrt(q);
    }
    case Op::Product: { LD p = 1; for (LD v : x) p *= v; return p; }
    case Op::NormL1: for (LD v : x) s += std::fabs(v); return s;
    case Op::NormL2: for (LD v : x) s += v * v; return std::sqrt(s);
    case Op::AllFinite: for (LD v : x) if (!std::isfinite(v)) return 0; return 1;
    case Op::AnyNan: return any_nan;
    case Op::AnyInf: for (LD v : x) if (std::isinf(v)) return 1; return 0;
    case Op::NanCount: for (LD v : x) s += isnanl(v); return s;
    case Op::InfCount: for (LD v : x) s += std::isinf(v); return s;
    case Op::NullCount: for (LD v : x) s += std::isnan(fill) ? isnanl(v) : (v == LD(fill)); return s;
    case Op::ArgMin: case Op::ArgMax: {
      size_t b = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (isnanl(x[i])) return i;
        if (op == Op::ArgMin ? x[i] < x[b] : x[i] > x[b]) b = i;
      }
      return b;
    }
    case Op::Median: case Op::Quantile: {
      if (any_nan) return nan;
      std::vector<LD> y = x;
      std::sort(y.begin(), y.end());
      const double q = op == Op::Median ? 0.5 : 0.3;
      const LD pos = LD(q) * (y.size() - 1);
      const size_t k = size_t(std::floor(pos));
      if (k + 1 >= y.size()) return y[k];
      return y[k] + (y[k + 1] - y[k]) * (pos - k);
    }
    default: return nan;
  }
}

bool exact_op(Op op) {
  return op == Op::Min || op == Op::Max || op == Op::Count || op == Op::AllFinite || op == Op::AnyNan ||
         op == Op::AnyInf || op == Op::NanCount || op == Op::InfCount || op == Op::NullCount ||
         op == Op::ArgMin || op == Op::ArgMax;
}

LD got_value(const QueryResult& r, uint64_t i) {
  switch (r.values.kind) {
    case ValueKind::F64: { double v; std::memcpy(&v, &r.values.bytes[i * 8], 8); return v; }
    case ValueKind::I64: { int64_t v; std::memcpy(&v, &r.values.bytes[i * 8], 8); return LD(v); }
    case ValueKind::U64: { uint64_t v; std::memcpy(&v, &r.values.bytes[i * 8], 8); return LD(v); }
    case ValueKind::Bool: return r.values.bytes[i];
  }
  return 0;
}

int g_failures_reported = 0;
void check_fibers(const QueryResult& r, const std::vector<std::vector<LD>>& f, Op op, double fill, const Dense& d, uint32_t mask,
                  const char* what);

void compare_op(const Dense& d, const Sel& s, Op op, uint32_t mask, const char* what, double fill = 0, uint32_t threads = 0,
                std::vector<uint64_t> chunk = {3, 4, 2, 2, 2, 2, 2, 2}) {
  chunk.resize(d.shape.size());
  MemSource src(d.dt, d.shape, chunk, d.bytes);
  QueryPlan p = make_plan(d, s, op, mask);
  p.threads = threads;
  if (op == Op::NullCount) p.has_fill = true, p.fill = fill;
  if (op == Op::Quantile) p.q = 0.3;
  // round-trip through the wire codec (validates against the catalog)
  const std::vector<uint8_t> wire = encode_plan(p);
  p = decode_plan(wire.data(), wire.size(), src.catalog());
  QueryResult r = execute(src, p, {});
  std::vector<uint64_t> kept;
  const auto f = fibers(d, s, mask, &kept);
  CHECK(r.values.length == f.size());
  if (mask != (1u << d.shape.size()) - 1) CHECK(r.reduced_shape == kept);
  check_fibers(r, f, op, fill, d, mask, what);
}

// Compares a result's values with the reference of each fiber (exact, or within the op's tolerance).
void check_fibers(const QueryResult& r, const std::vector<std::vector<LD>>& f, Op op, double fill, const Dense& d, uint32_t mask,
                  const char* what) {
  for (size_t o = 0; o < f.size() && o < r.values.length; ++o) {
    LD want = reference(op, f[o], fill);
    if (op == Op::Product) want = LD(double(want));  // f64 product overflows to inf like numpy
    const LD got = got_value(r, o);
    bool ok;
    if (isnanl(want)) ok = isnanl(got);
    else if (std::isinf(want)) ok = got == want;
    else if (exact_op(op)) ok = got == want;
    else {
      LD scale = 0;
      for (LD v : f[o]) if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
      LD tol = 1e-12L * std::max<LD>(1, scale) * (op == Op::Product ? std::fabs(want) : f[o].size());
      if (op == Op::Var) tol = 1e-11L * std::max<LD>(1, scale * scale);
      ok = std::fabs(got - want) <= tol || (op == Op::Product && std::fabs(got - want) <= 1e-12L * std::fabs(want) * f[o].size());
    }
    if (!ok) {
      ++tet_test::failures();
      if (++g_failures_reported < 30)
        std::printf("  %s dtype %s op %u mask %u out %zu: got %.17Lg want %.17Lg\n", what, dtype_name(d.dt),
                    unsigned(op), mask, o, got, want);
    }
  }
}

const Op kStreamingOps[] = {Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Count, Op::Var, Op::Std, Op::Product,
                            Op::NormL1, Op::NormL2, Op::AllFinite, Op::AnyNan, Op::AnyInf, Op::ArgMin,
                            Op::ArgMax, Op::NanCount, Op::InfCount, Op::NullCount, Op::NanMean, Op::NanStd};
const DType kDtypes[] = {DType::F32, DType::F64, DType::F16, DType::I32, DType::I64, DType::U8,
                         DType::U16, DType::I16, DType::U32, DType::U64};

std::vector<Sel> selections() {
  return {
      Sel{{0, 0, 0}, {1, 1, 1}, {7, 10, 5}},  // full, clipped edge tiles
      Sel{{1, 2, 1}, {2, 3, 1}, {3, 3, 4}},   // strided
      Sel{{6, 0, 4}, {1, 5, 1}, {1, 2, 1}},   // last tiles only
      Sel{{0, 1, 0}, {4, 1, 2}, {2, 8, 3}},   // step >= chunk: skipped chunks
  };
}

}  // namespace

TEST_CASE("streaming ops match the reference: every dtype, op, selection and mask") {
  const uint32_t masks[] = {7, 1, 2, 4, 5, 6, 3};
  uint64_t seed = 1;
  for (DType dt : kDtypes) {
    const bool fl = dtype_is_float(dt);
    for (int specials = 0; specials < (fl ? 2 : 1); ++specials) {
      Dense d = make_dense(dt, {7, 10, 5}, seed++, specials);
      for (const Sel& s : selections())
        for (Op op : kStreamingOps)
          for (uint32_t m : masks) {
            if (op == Op::Product && !fl) continue;  // random 64-bit ints overflow f64 products
            const double fill = fl ? (specials ? NAN : double(d.vals[3])) : double(d.vals[5]);
            compare_op(d, s, op, m, specials ? "specials" : "plain", fill);
          }
    }
  }
}

// A grouped fold against the reference: output [G, ...kept], fiber (g, kept cell) = the elements
// whose group-axis position is in group g, in row-major order.
QueryResult compare_grouped(const Dense& d, const Sel& s, Op op, uint32_t mask, uint32_t ga, uint32_t threads, const char* what,
                            std::vector<uint64_t> chunk = {3, 4, 2}) {
  const uint32_t nd = uint32_t(d.shape.size());
  chunk.resize(nd, 2);
  MemSource src(d.dt, d.shape, chunk, d.bytes);
  mask |= 1u << ga;
  QueryPlan p = make_plan(d, s, op, mask);
  p.threads = threads;
  const double fill = d.vals.size() > 3 ? double(d.vals[3]) : 0;
  if (op == Op::NullCount) p.has_fill = true, p.fill = fill;
  const uint32_t groups = uint32_t(std::min<uint64_t>(3, s.count[ga]));
  p.group_axis = ga, p.groups = groups;
  for (uint64_t i = 0; i < s.count[ga]; ++i) p.group_ids.push_back(group_of(i, groups));
  const std::vector<uint8_t> wire = encode_plan(p);
  p = decode_plan(wire.data(), wire.size(), src.catalog());
  CHECK(p.grouped() && p.group_ids.size() == s.count[ga]);
  QueryResult r = execute(src, p, {});
  std::vector<uint64_t> shape{groups};
  const auto f = fibers(d, s, mask, &shape, int(ga), groups);
  CHECK(r.values.length == f.size());
  CHECK(r.reduced_shape == shape);
  check_fibers(r, f, op, fill, d, mask, what);
  return r;
}

TEST_CASE("grouped folds (GROUP) match the reference: every streaming op but arg_*, dtypes, selections, group axes, masks") {
  uint64_t seed = 500;
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I32, DType::I64, DType::U8}) {
    const bool fl = dtype_is_float(dt);
    for (int specials = 0; specials < (fl ? 2 : 1); ++specials) {
      Dense d = make_dense(dt, {7, 10, 5}, seed++, specials);
      for (const Sel& s : selections())
        for (uint32_t ga = 0; ga < 3; ++ga)
          for (uint32_t m : {0u, 1u, 2u, 4u, 7u})
            for (Op op : kStreamingOps) {
              if (op == Op::ArgMin || op == Op::ArgMax || (op == Op::Product && !fl)) continue;
              compare_grouped(d, s, op, m, ga, 0, specials ? "grouped specials" : "grouped");
            }
    }
  }
}

TEST_CASE("grouped folds are bit-identical for threads 1, 2, 3, 8 (big tiles, segments, every group axis)") {
  Dense d = make_dense(DType::F32, {24, 64, 40}, 77, true);
  for (uint32_t ga = 0; ga < 3; ++ga)
    for (uint32_t m : {0u, 1u, 4u, 7u})
      for (Op op : {Op::Sum, Op::Mean, Op::Var, Op::NanStd, Op::Min}) {
        const Sel s{{0, 0, 0}, {1, 1, 1}, {24, 64, 40}};
        const QueryResult one = compare_grouped(d, s, op, m, ga, 1, "grouped threads", {8, 32, 40});
        for (uint32_t t : {2u, 3u, 8u}) {
          const QueryResult r = compare_grouped(d, s, op, m, ga, t, "grouped threads", {8, 32, 40});
          CHECK(r.values.bytes == one.values.bytes);
        }
      }
}

TEST_CASE("GROUP section: malformed groups are TET_PLAN_INVALID") {
  Dense d = make_dense(DType::F32, {7, 10, 5}, 3, false);
  MemSource src(d.dt, d.shape, {3, 4, 2}, d.bytes);
  const Sel s{{0, 0, 0}, {1, 1, 1}, {7, 10, 5}};
  auto grouped = [&](Op op, uint32_t mask, uint32_t ga, uint32_t groups, std::vector<uint32_t> ids) {
    QueryPlan p = make_plan(d, s, op, mask);
    p.group_axis = ga, p.groups = groups, p.group_ids = std::move(ids);
    return encode_plan(p);
  };
  const std::vector<uint32_t> ten(10, 1);
  auto decode = [&](const std::vector<uint8_t>& w) { return decode_plan(w.data(), w.size(), src.catalog()); };
  CHECK(decode(grouped(Op::Mean, 2, 1, 2, ten)).grouped());
  EXPECT_CODE(decode(grouped(Op::Mean, 2, 1, 2, std::vector<uint32_t>(9, 0))), "TET_PLAN_INVALID");  // one id per position
  EXPECT_CODE(decode(grouped(Op::Mean, 2, 1, 1, ten)), "TET_PLAN_INVALID");                          // id 1 >= 1 group
  EXPECT_CODE(decode(grouped(Op::Mean, 1, 1, 2, ten)), "TET_PLAN_INVALID");                          // axis 1 not reduced
  EXPECT_CODE(decode(grouped(Op::Mean, 2, 1, 11, ten)), "TET_PLAN_INVALID");                         // 11 groups > 10 positions
  EXPECT_CODE(decode(grouped(Op::ArgMax, 2, 1, 2, ten)), "TET_PLAN_INVALID");
  EXPECT_CODE(decode(grouped(Op::Median, 2, 1, 2, ten)), "TET_PLAN_INVALID");
  std::vector<uint8_t> w = grouped(Op::Mean, 2, 1, 2, ten);
  w.resize(w.size() - 4);  // an id short of the count, section length fixed up
  const size_t sec = w.size() - (16 + 4 * 9) - 8;
  const uint32_t len = 16 + 4 * 9;
  std::memcpy(&w[sec + 4], &len, 4);
  EXPECT_CODE(decode(w), "TET_PLAN_INVALID");
}

TEST_CASE("integer product and small-int sums are exact") {
  Dense d = make_dense(DType::I16, {7, 10, 5}, 99, false);
  for (auto& v : d.vals) v = 0;
  for (size_t i = 0; i < d.vals.size(); ++i) {
    int16_t v = int16_t(int(i % 5) - 2);
    if (v == 0) v = 1;
    std::memcpy(&d.bytes[i * 2], &v, 2);
    d.vals[i] = v;
  }
  for (const Sel& s : selections()) compare_op(d, s, Op::Product, 7, "product");
  Dense big = make_dense(DType::I64, {7, 10, 5}, 5, false);
  compare_op(big, selections()[0], Op::Sum, 7, "i64 sum");
}

TEST_CASE("tier-C ops match the reference (median, quantile)") {
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::U8, DType::F16}) {
    Dense d = make_dense(dt, {7, 10, 5}, 11, false);
    for (const Sel& s : selections())
      for (uint32_t m : {7u, 1u, 2u, 4u, 6u}) {
        compare_op(d, s, Op::Median, m, "median");
        compare_op(d, s, Op::Quantile, m, "quantile");
      }
  }
}

TEST_CASE("median with NaN is NaN; quantile endpoints") {
  Dense d = make_dense(DType::F64, {7, 10, 5}, 12, true);
  compare_op(d, selections()[0], Op::Median, 7, "median nan");
  compare_op(d, selections()[0], Op::Median, 4, "median nan partial");
}

namespace {
// np.histogram reference written from its definition: bin i holds edges[i] <= v < edges[i+1],
// the last bin also holds v == edges[bins]; edges = linspace(lo, hi, bins + 1).
std::vector<uint64_t> ref_hist(const std::vector<LD>& x, uint32_t bins, bool has_range, double lo, double hi, std::vector<double>* edges_out) {
  if (!has_range) {
    bool any = false;
    for (LD v : x) if (std::isfinite(v)) { lo = any ? std::min<double>(lo, v) : double(v); hi = any ? std::max<double>(hi, v) : double(v); any = true; }
    if (lo == hi) lo -= 0.5, hi += 0.5;
  }
  std::vector<double> e(bins + 1);
  for (uint32_t i = 0; i <= bins; ++i) e[i] = lo + (hi - lo) * double(i) / bins;
  e[bins] = hi;
  std::vector<uint64_t> c(bins, 0);
  for (LD v : x) {
    if (!(v >= lo && v <= hi)) continue;
    uint32_t b = bins - 1;
    for (uint32_t i = 0; i < bins; ++i) if (v >= e[i] && v < e[i + 1]) { b = i; break; }
    ++c[b];
  }
  if (edges_out) *edges_out = e;
  return c;
}
}  // namespace

TEST_CASE("histogram scalar and partial match np.histogram semantics") {
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::U8}) {
    Dense d = make_dense(dt, {7, 10, 5}, 21, false);
    MemSource src(dt, d.shape, {3, 4, 2}, d.bytes);
    for (const Sel& s : selections())
      for (uint32_t m : {7u, 4u, 3u})
        for (int ranged = 0; ranged < 2; ++ranged) {
          QueryPlan p = make_plan(d, s, Op::Histogram, m);
          p.bins = 7;
          p.hist_range = ranged;
          p.hist_min = -50, p.hist_max = 60;
          if (dt == DType::U8) p.hist_min = 10, p.hist_max = 200;
          QueryResult r = execute(src, p, {});
          const auto f = fibers(d, s, m, nullptr);
          CHECK(r.values.kind == ValueKind::U64);
          CHECK(r.values.length == f.size() * 7);
          for (size_t o = 0; o < f.size(); ++o) {
            std::vector<double> e;
            const auto want = ref_hist(f[o], 7, ranged, p.hist_min, p.hist_max, &e);
            for (uint32_t b = 0; b < 7; ++b) {
              uint64_t got;
              std::memcpy(&got, &r.values.bytes[(o * 7 + b) * 8], 8);
              if (got != want[b]) { ++tet_test::failures(); std::printf("  hist %s o %zu b %u: %llu vs %llu\n", dtype_name(dt), o, b, (unsigned long long)got, (unsigned long long)want[b]); }
            }
            if (m == 7) {
              CHECK(r.hist_edges.size() == 8);
              for (size_t i = 0; i < 8 && i < r.hist_edges.size(); ++i) CHECK_NEAR(r.hist_edges[i], e[i], 1e-12 * std::fabs(e[i]) + 1e-12);
            }
          }
        }
  }
}

TEST_CASE("histogram hand case: last bin closed, outside values dropped") {
  const double v[] = {0, 1, 1, 2, 3, 3, -1, 4};
  std::vector<uint8_t> bytes(sizeof v);
  std::memcpy(bytes.data(), v, sizeof v);
  MemSource src(DType::F64, {8}, {3}, bytes);
  QueryPlan p;
  p.step.fill(1);
  p.ndim = 1, p.count[0] = 8, p.op = Op::Histogram, p.reduce_mask = 1, p.bins = 3, p.hist_range = true;
  p.hist_min = 0, p.hist_max = 3, p.strategy = Strategy::InMemoryMaterialize;
  QueryResult r = execute(src, p, {});
  uint64_t c[3];
  std::memcpy(c, r.values.bytes.data(), 24);
  CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3);
}

TEST_CASE("covariance and correlation (population, obs axis 0 and 1)") {
  Dense d = make_dense(DType::F64, {9, 6}, 31, false);
  MemSource src(DType::F64, d.shape, {4, 4}, d.bytes);
  for (uint32_t obs = 0; obs < 2; ++obs)
    for (Op op : {Op::Covariance, Op::Correlation}) {
      Sel s{{1, 0}, {1, 1}, {8, 6}};
      QueryPlan p = make_plan(d, s, op, 0);
      p.obs_axis = obs;
      QueryResult r = execute(src, p, {});
      const uint64_t rows = 8, cols = 6, order = obs == 0 ? cols : rows, nobs = obs == 0 ? rows : cols;
      CHECK(r.cov_order == order);
      auto at = [&](uint64_t var, uint64_t k) { return obs == 0 ? d.vals[(1 + k) * 6 + var] : d.vals[(1 + var) * 6 + k]; };
      std::vector<LD> cov(order * order);
      for (uint64_t i = 0; i < order; ++i)
        for (uint64_t j = 0; j < order; ++j) {
          LD mi = 0, mj = 0;
          for (uint64_t k = 0; k < nobs; ++k) mi += at(i, k), mj += at(j, k);
          mi /= nobs, mj /= nobs;
          LD c = 0;
          for (uint64_t k = 0; k < nobs; ++k) c += (at(i, k) - mi) * (at(j, k) - mj);
          cov[i * order + j] = c / nobs;
        }
      for (uint64_t i = 0; i < order; ++i)
        for (uint64_t j = 0; j < order; ++j) {
          LD want = cov[i * order + j];
          if (op == Op::Correlation) want /= std::sqrt(cov[i * order + i] * cov[j * order + j]);
          CHECK_NEAR(double(got_value(r, i * order + j)), double(want), 1e-9 * std::max<double>(1, std::fabs(double(want))));
        }
    }
}

namespace {
std::vector<uint8_t> run_bytes(const ChunkSource& src, QueryPlan p, uint32_t threads) {
  p.threads = threads;
  QueryResult r = execute(src, p, {});
  std::vector<uint8_t> out = r.values.bytes;
  out.insert(out.end(), r.preview.begin(), r.preview.end());
  return out;
}
}  // namespace

TEST_CASE("results are bit-identical for threads 1, 2, 3, 8 (multi-unit tiles, partial segments)") {
  // one huge tile (split into units, shared through the tile cache) and many small tiles
  Dense big = make_dense(DType::F32, {1000, 700}, 41, false);
  for (auto chunk : {std::vector<uint64_t>{1000, 700}, std::vector<uint64_t>{128, 96}}) {
    for (bool copy : {false, true}) {
      MemSource src(DType::F32, big.shape, chunk, big.bytes, copy);
      for (Op op : {Op::Sum, Op::Mean, Op::Var, Op::Std, Op::NormL2, Op::ArgMax, Op::Min, Op::NanStd})
        for (uint32_t m : {3u, 1u, 2u}) {
          Sel s{{0, 0}, {1, 1}, {1000, 700}};
          QueryPlan p = make_plan(big, s, op, m);
          p.preview_max = 10;
          const auto ref = run_bytes(src, p, 1);
          for (uint32_t t : {2u, 3u, 8u}) CHECK(run_bytes(src, p, t) == ref);
        }
    }
  }
  // accuracy on the big tile against the reference
  Sel s{{0, 0}, {1, 1}, {1000, 700}};
  for (Op op : {Op::Sum, Op::Var, Op::ArgMin}) compare_op(big, s, op, 3, "big");
}

TEST_CASE("zstd tiles over one unit: each tile decoded once by one thread, bits equal for threads 1, 2, 3, 8") {
  // A 700000-element tile (6 units) and a 600+400-row split (4 + 3 units): every compressed tile
  // is one task, its units folded in the fixed decomposition; the sum is checked against an
  // extended-precision reference and across thread counts.
  Dense big = make_dense(DType::F32, {1000, 700}, 43, false);
  LD ref_sum = 0;
  for (LD v : big.vals) ref_sum += v;
  const std::string path = "/tmp/tet_exec_zstd_" + std::to_string(::getpid()) + ".tet";
  for (uint64_t rows : {uint64_t(1000), uint64_t(600)}) {
    {
      auto w = tet::Writer::create(path);
      tet::DatasetSpec spec;
      spec.name = "data";
      spec.dtype = DType::F32;
      spec.shape = big.shape;
      spec.chunk_shape = {rows, 700};
      spec.codec = tet::CodecChoice::Zstd;
      const uint32_t id = w->add_dataset(spec);
      for (uint64_t r0 = 0, c = 0; r0 < 1000; r0 += rows, ++c) {
        const uint64_t nr = std::min<uint64_t>(rows, 1000 - r0);
        w->write_chunk(id, {c, 0}, big.bytes.data() + r0 * 700 * 4, nr * 700 * 4);
      }
      w->commit();
    }
    auto file = tet::File::open(path);
    CHECK(file->catalog().entries[0].codec == tet::Codec::Zstd);
    Sel s{{0, 0}, {1, 1}, {1000, 700}};
    for (Op op : {Op::Sum, Op::Var, Op::ArgMax, Op::Min}) {
      QueryPlan p = make_plan(big, s, op, 3);
      const auto ref = run_bytes(*file, p, 1);
      for (uint32_t t : {2u, 3u, 8u}) CHECK(run_bytes(*file, p, t) == ref);
      if (op == Op::Sum) {
        p.threads = 2;
        const QueryResult r = execute(*file, p, {});
        const LD got = got_value(r, 0);
        CHECK(fabsl(got - ref_sum) <= 1e-9L * fabsl(ref_sum) + 1e-6L);
        CHECK(rows == 1000 ? r.stats.threads_used == 1 : r.stats.threads_used >= 1);
      }
    }
  }
  ::unlink(path.c_str());
}

TEST_CASE("partial folds on big tiles: row batches, units split mid-row, segments, every op and dtype") {
  // Tiles over kUnitElems elements whose rows do not divide it: units end in the middle of a
  // row, so row batches break and block counts differ between the outputs of one block.
  struct Shape { std::vector<uint64_t> shape, chunk; std::vector<uint32_t> masks; };
  const Shape shapes[] = {
      {{700, 300}, {700, 300}, {1, 2, 3}},
      {{40, 30, 200}, {40, 30, 200}, {1, 2, 3, 4, 5, 6, 7}},
      {{900, 70}, {256, 64}, {1, 2, 3}},  // several groups and reduced tiles, clipped edges
  };
  uint64_t seed = 500;
  for (const Shape& sh : shapes)
    for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I32, DType::U8, DType::I64, DType::U16}) {
      const bool fl = dtype_is_float(dt);
      for (int specials = 0; specials < (fl ? 2 : 1); ++specials) {
        Dense d = make_dense(dt, sh.shape, seed++, specials);
        Sel full;
        for (uint64_t c : sh.shape) full.start.push_back(0), full.step.push_back(1), full.count.push_back(c);
        Sel strided = full;
        strided.start[0] = 1, strided.step[0] = 2, strided.count[0] = (sh.shape[0] - 1) / 2;
        strided.step.back() = 3, strided.count.back() = sh.shape.back() / 3;
        for (const Sel* s : {&full, &strided})
          for (Op op : kStreamingOps)
            for (uint32_t m : sh.masks) {
              if (op == Op::Product && !fl) continue;
              const double fill = fl ? (specials ? NAN : double(d.vals[3])) : double(d.vals[5]);
              compare_op(d, *s, op, m, "big tiles", fill, 0, sh.chunk);
            }
      }
    }
}

TEST_CASE("partial folds are bit-identical for threads 1, 2, 3, 8 (dtypes, NaN, 3-d masks)") {
  for (DType dt : {DType::F64, DType::I32, DType::F32}) {
    Dense d = make_dense(dt, {60, 50, 90}, 77, dtype_is_float(dt));
    for (auto chunk : {std::vector<uint64_t>{60, 50, 90}, std::vector<uint64_t>{16, 20, 32}}) {
      MemSource src(dt, d.shape, chunk, d.bytes);
      for (Op op : {Op::Sum, Op::Mean, Op::NanMean, Op::Var, Op::NanStd, Op::Min, Op::Max, Op::ArgMin, Op::Product,
                    Op::NanCount, Op::NormL1})
        for (uint32_t m : {1u, 2u, 3u, 4u, 5u, 6u}) {
          Sel s{{0, 0, 0}, {1, 1, 1}, {60, 50, 90}};
          QueryPlan p = make_plan(d, s, op, m);
          const auto ref = run_bytes(src, p, 1);
          for (uint32_t t : {2u, 3u, 8u}) CHECK(run_bytes(src, p, t) == ref);
        }
    }
  }
}

namespace {
// numpy.quantile(x, q) (method 'linear') from its definition on a sorted copy: NaN if any NaN;
// virtual index q*(n-1), a = y[floor], b = y[floor+1], numpy's _lerp(a, b, t).
template <class T> double numpy_quantile(std::vector<T> y, double q) {
  for (const T& v : y)
    if (v != v) return NAN;
  std::sort(y.begin(), y.end());
  const double virt = q * double(y.size() - 1);
  const double f = std::floor(virt);
  const size_t k = size_t(f);
  const double a = double(y[k]);
  if (k + 1 >= y.size()) return a;
  const double b = double(y[k + 1]), t = virt - f;
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

template <class T> void check_quantiles(const std::vector<T>& x, const char* what) {
  for (double q : {0.0, 0.3, 0.5, 0.999, 1.0, 1.0 / 3}) {
    const double want = numpy_quantile(x, q);
    for (uint32_t threads : {1u, 2u, 0u}) {
      uint32_t used = 0;
      const double got = exec::parallel_quantile<T>(x.data(), x.size(), q, threads, {}, used);
      const bool ok = (want != want) ? got != got : got == want;
      if (!ok) {
        ++tet_test::failures();
        std::printf("  quantile %s q %.4f threads %u: got %.17g want %.17g\n", what, q, threads, got, want);
      }
    }
  }
}
}  // namespace

TEST_CASE("parallel median/quantile equal a sort-based numpy model (duplicates, NaN, inf, all equal)") {
  const size_t n = (size_t(1) << 20) + 12345;  // above the small-input cutoff
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> nd(3, 2);
  {
    std::vector<float> x(n);
    for (auto& v : x) v = float(nd(rng));
    check_quantiles(x, "f32 normal");
    for (size_t i = 0; i < n; i += 7) x[i] = (i / 7) % 2 ? INFINITY : -INFINITY;  // ~14% +-inf
    check_quantiles(x, "f32 with inf");
    for (size_t i = 0; i < n; i += 5) x[i] = (i / 5) % 2 ? 0.0f : -0.0f;
    check_quantiles(x, "f32 with signed zeros");
    x[n / 3] = NAN;
    check_quantiles(x, "f32 with NaN");
  }
  {
    std::vector<double> x(n);
    for (auto& v : x) v = std::round(nd(rng) * 10) / 10;  // heavy duplicates
    check_quantiles(x, "f64 duplicates");
    std::vector<double> eq(n, 2.5);
    check_quantiles(eq, "f64 all equal");
    std::vector<double> asc(n);
    for (size_t i = 0; i < n; ++i) asc[i] = double(i) * 0.25;
    check_quantiles(asc, "f64 ascending");
    // The fixed-stride sample sees only one value: the bracket misses and radix select decides.
    std::vector<double> trap(n);
    for (auto& v : trap) v = nd(rng);
    const size_t m = size_t(1) << 18;
    for (size_t i = 0; i < m; ++i) trap[i * n / m] = 1000.0;
    check_quantiles(trap, "f64 sample trap");
  }
  {
    std::vector<int32_t> x(n);
    for (auto& v : x) v = int32_t(rng() % 2001) - 1000;
    check_quantiles(x, "i32 small range");
    for (auto& v : x) v = int32_t(uint32_t(rng()));
    check_quantiles(x, "i32 full range");
    std::vector<uint8_t> u(n);
    for (auto& v : u) v = uint8_t(rng() % 3);
    check_quantiles(u, "u8 three values");
    std::vector<int64_t> big(n);
    for (auto& v : big) v = int64_t(rng() >> 1) - (int64_t(1) << 62);
    check_quantiles(big, "i64 wide");
    std::vector<uint16_t> h(n);
    for (auto& v : h) v = uint16_t(rng());
    check_quantiles(h, "u16");
  }
  {
    // Radix select to the last bit: the sample sees only 7s (bracket misses) and one top-bits
    // bucket holds more than the gather limit; rank k is the last 0, so k + 1 is found in the
    // next bucket (the 1s).
    const size_t big = 5000000, m = size_t(1) << 18;
    std::vector<int32_t> x(big, 1);
    std::vector<uint8_t> sampled(big, 0);
    for (size_t i = 0; i < m; ++i) sampled[i * big / m] = 1, x[i * big / m] = 7;
    size_t zeros = 0;
    const size_t k = (big - 1) / 2;
    for (size_t i = 0; i < big && zeros < k + 1; ++i)
      if (!sampled[i]) x[i] = 0, ++zeros;
    uint32_t used = 0;
    CHECK(exec::parallel_quantile<int32_t>(x.data(), x.size(), 0.5, 0, {}, used) == numpy_quantile(x, 0.5));
    CHECK(numpy_quantile(x, 0.5) == 0.5);
    CHECK(exec::parallel_quantile<int32_t>(x.data(), x.size(), 0.25, 0, {}, used) == numpy_quantile(x, 0.25));
    CHECK(exec::parallel_quantile<int32_t>(x.data(), x.size(), 0.99, 0, {}, used) == numpy_quantile(x, 0.99));
  }
  // through execute: tiles read in place (in memory) or a temp-spill buffer; full and strided
  Dense d = make_dense(DType::F32, {1100, 2000}, 31, false);
  for (bool copy : {false, true}) {
    MemSource src(DType::F32, d.shape, {600, 512}, d.bytes, copy);
    for (const Sel& s : {Sel{{0, 0}, {1, 1}, {1100, 2000}}, Sel{{1, 3}, {1, 2}, {1099, 998}}})
      for (Op op : {Op::Median, Op::Quantile})
        for (Strategy st : {Strategy::InMemoryMaterialize, Strategy::TempSpillMaterialize}) {
          QueryPlan p = make_plan(d, s, op, 3);
          p.q = 0.7;
          p.strategy = st;
          p.temp_dir = "/tmp";
          p.preview_max = 5;
          QueryResult r = execute(src, p, {});
          double got;
          std::memcpy(&got, r.values.bytes.data(), 8);
          const auto f = fibers(d, s, 3, nullptr);
          const std::vector<float> vals(f[0].begin(), f[0].end());
          CHECK(got == numpy_quantile(vals, op == Op::Median ? 0.5 : 0.7));
          CHECK(r.preview_length == 5);
          for (uint64_t i = 0; i < 5 && r.preview.size() == 20; ++i) {
            float pv;
            std::memcpy(&pv, &r.preview[i * 4], 4);
            CHECK(pv == vals[i]);
          }
        }
  }
}

TEST_CASE("var/std have no cancellation on data with a large mean") {
  std::vector<double> v(300001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1e9 + double(i % 7);
  std::vector<uint8_t> bytes(v.size() * 8);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  MemSource src(DType::F64, {v.size()}, {50000}, bytes);
  QueryPlan p;
  p.step.fill(1);
  p.ndim = 1, p.count[0] = v.size(), p.op = Op::Var, p.reduce_mask = 1;
  QueryResult r = execute(src, p, {});
  LD m = 0, q = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) q += (x - m) * (x - m);
  CHECK_NEAR(double(got_value(r, 0)), double(q / v.size()), 1e-9);
}

TEST_CASE("sequential chunks equal parallel chunks; stats") {
  Dense d = make_dense(DType::F64, {7, 10, 5}, 51, false);
  MemSource src(DType::F64, d.shape, {3, 4, 2}, d.bytes);
  Sel s = selections()[0];
  QueryPlan p = make_plan(d, s, Op::Mean, 7);
  const auto par = execute(src, p, {});
  p.io_mode = IoMode::SequentialChunks;
  const auto seq = execute(src, p, {});
  CHECK(seq.values.bytes == par.values.bytes);
  // sequential visits tiles in order, in rounds of a task per participant spread over the pool
  CHECK(seq.stats.threads_used == par.stats.threads_used);
  CHECK(seq.stats.io_mode == IoMode::SequentialChunks);
  CHECK(par.stats.chunks_read == 3 * 3 * 3);
  p.io_mode = IoMode::LinearScan;  // not a File: falls back to sequential chunks
  const auto lin = execute(src, p, {});
  CHECK(lin.values.bytes == par.values.bytes);
  CHECK(lin.stats.io_mode == IoMode::SequentialChunks);
  CHECK(std::string(par.stats.simd) == host_info().simd);
}

TEST_CASE("linear scan reads through ChunkSource::read_range; other layouts fall back to tiles") {
  // 2 x 3 tiles of 300 x 700 f32 (multi-unit tiles: 210000 elements > kUnitElems), clipped edges.
  Dense d = make_dense(DType::F32, {550, 1800}, 71, false);
  MemSource fwd(DType::F32, d.shape, {300, 700}, d.bytes, false, /*forward=*/true);
  MemSource rev(DType::F32, d.shape, {300, 700}, d.bytes);
  StoredExtent ext;
  CHECK(fwd.stored_extent(0, ext) && ext.offset == 4096 && ext.bytes == d.bytes.size());
  CHECK(!rev.stored_extent(0, ext));
  for (Op op : {Op::Sum, Op::Mean, Op::Var, Op::Min, Op::ArgMax, Op::NanCount, Op::Product}) {
    QueryPlan p;
    p.step.fill(1);
    p.ndim = 2, p.count[0] = 550, p.count[1] = 1800, p.op = op, p.reduce_mask = 3;
    const QueryResult tiles = execute(fwd, p, {});
    CHECK(tiles.stats.io_mode == IoMode::ParallelChunks);
    p.io_mode = IoMode::LinearScan;
    const uint64_t reads0 = fwd.range_reads.load(), fetches0 = fwd.fetches.load();
    const QueryResult lin = execute(fwd, p, {});
    CHECK(lin.stats.io_mode == IoMode::LinearScan);
    CHECK(lin.values.bytes == tiles.values.bytes);
    CHECK(lin.stats.chunks_read == tiles.stats.chunks_read && lin.stats.stored_bytes_read == tiles.stats.stored_bytes_read);
    CHECK(fwd.range_reads.load() > reads0 && fwd.fetches.load() == fetches0);  // no tile() call
    const QueryResult back = execute(rev, p, {});  // reverse payload order: tile reads, in payload order
    CHECK(back.stats.io_mode == IoMode::SequentialChunks);
    CHECK(back.values.bytes == tiles.values.bytes);
    CHECK(rev.range_reads.load() == 0);
    // a partial selection is not a linear scan either
    p.count[1] = 1799;
    const QueryResult part = execute(fwd, p, {});
    CHECK(part.stats.io_mode == IoMode::SequentialChunks);
  }
  CHECK(fwd.range_bytes.load() % d.bytes.size() == 0 && fwd.sequential_hints.load() == 7);
}

// A 2-D dataset "data" of d written to `path` in row tiles of tile_rows (the last one clipped),
// the tiles in grid order or (reverse) last first.
void write_row_tiles(const std::string& path, const Dense& d, uint64_t tile_rows, bool reverse = false,
                     tet::CodecChoice codec = tet::CodecChoice::Raw) {
  auto w = tet::Writer::create(path);
  tet::DatasetSpec spec;
  const uint64_t rows = d.shape[0], cols = d.shape[1], es = d.bytes.size() / (rows * cols);
  spec.name = "data", spec.dtype = d.dt, spec.shape = d.shape, spec.chunk_shape = {tile_rows, cols}, spec.codec = codec;
  const uint32_t id = w->add_dataset(spec);
  const uint64_t tiles = (rows + tile_rows - 1) / tile_rows;
  for (uint64_t k = 0; k < tiles; ++k) {
    const uint64_t c = reverse ? tiles - 1 - k : k, r0 = c * tile_rows, nr = std::min(tile_rows, rows - r0);
    w->write_chunk(id, {c, 0}, d.bytes.data() + r0 * cols * es, nr * cols * es);
  }
  w->commit();
}

TEST_CASE("linear scan on files: grid-order raw payloads scan the fd; reverse order and zstd fall back") {
  // [1000, 700] f64, row tiles of 300 (clipped last tile), two units per tile.
  Dense d = make_dense(DType::F64, {1000, 700}, 81, true);
  const std::string base = "/tmp/tet_exec_linear_" + std::to_string(::getpid());
  struct Layout {
    const char* name;
    bool reverse;
    tet::CodecChoice codec;
    IoMode want;
  };
  const Layout layouts[] = {{"grid", false, tet::CodecChoice::Raw, IoMode::LinearScan},
                            {"reverse", true, tet::CodecChoice::Raw, IoMode::SequentialChunks},
                            {"zstd", false, tet::CodecChoice::Zstd, IoMode::SequentialChunks}};
  std::vector<uint8_t> want_sum;
  for (const Layout& l : layouts) {
    const std::string path = base + "_" + l.name + ".tet";
    write_row_tiles(path, d, 300, l.reverse, l.codec);
    auto f = File::open(path);
    StoredExtent ext;
    CHECK(f->stored_extent(0, ext) == (l.want == IoMode::LinearScan));
    for (Op op : {Op::Sum, Op::Var, Op::ArgMin, Op::NanCount}) {
      QueryPlan p;
      p.step.fill(1);
      p.ndim = 2, p.count[0] = 1000, p.count[1] = 700, p.op = op, p.reduce_mask = 3;
      const QueryResult tiles = execute(*f, p, {});
      p.io_mode = IoMode::LinearScan;
      const QueryResult lin = execute(*f, p, {});
      if (lin.stats.io_mode != l.want) std::printf("  %s: io_mode %u\n", l.name, unsigned(lin.stats.io_mode));
      CHECK(lin.stats.io_mode == l.want);
      CHECK(lin.values.bytes == tiles.values.bytes);
      CHECK(lin.stats.chunks_read == 4);
      if (op == Op::Sum) {
        if (want_sum.empty()) want_sum = lin.values.bytes;
        CHECK(lin.values.bytes == want_sum);  // same bits whatever the layout
      }
    }
    f.reset();
    ::unlink(path.c_str());
  }
}

TEST_CASE("parallel chunks of a whole raw dataset read by pread or through the mapping: same bits, same stats") {
  // [1000, 700] f64 in row tiles of 300 (clipped last tile): 4 tiles of 2 units, stored in grid
  // order, so each unit is one byte range of the file.
  Dense d = make_dense(DType::F64, {1000, 700}, 91, false);
  const std::string path = "/tmp/tet_exec_readpath_" + std::to_string(::getpid()) + ".tet";
  write_row_tiles(path, d, 300);
  // the mean, independently (a long double sum), compared loosely
  long double total = 0;
  for (size_t i = 0; i < d.bytes.size() / 8; ++i) {
    double v;
    std::memcpy(&v, d.bytes.data() + 8 * i, 8);
    total += v;
  }
  const double want = double(total / (1000.0L * 700.0L));
  for (Op op : {Op::Sum, Op::Mean, Op::Var, Op::Min, Op::ArgMin, Op::NanCount}) {
    QueryPlan p;
    p.step.fill(1);
    p.ndim = 2, p.count[0] = 1000, p.count[1] = 700, p.op = op, p.reduce_mask = 3;
    auto f = File::open(path);
    ExecContext first;  // Auto: the first scan of the dataset through f measures
    const QueryResult auto1 = execute(*f, p, first);  // 8 units: too few to consider pread
    CHECK(!auto1.stats.read_pread);
    const QueryResult auto2 = execute(*f, p, first);  // later scans read through the mapping
    ExecContext mapped, copied;
    mapped.read_path = ReadPath::Mapped, copied.read_path = ReadPath::Pread;
    const QueryResult m = execute(*f, p, mapped);
    const QueryResult c = execute(*f, p, copied);
    CHECK(!m.stats.read_pread && c.stats.read_pread && !auto2.stats.read_pread);
    CHECK(m.values.bytes == c.values.bytes && auto1.values.bytes == m.values.bytes && auto2.values.bytes == m.values.bytes);
    for (const QueryResult* r : {&auto1, &auto2, &c}) {
      CHECK(r->stats.chunks_read == 4 && r->stats.stored_bytes_read == m.stats.stored_bytes_read);
      CHECK(r->stats.io_mode == IoMode::ParallelChunks);
    }
    if (op == Op::Mean) {
      double got;
      std::memcpy(&got, c.values.bytes.data(), 8);
      CHECK(std::fabs(got - want) <= 1e-12 * std::fabs(want) + 1e-12);
    }
    // a run of rows across two tiles (each tile's part one byte range): only those bytes, by
    // pread, fold to the mapped result; so do rows with a step and a column range of at least
    // a page a row (a pread a row); a narrower column range (1600 bytes a row) stays mapped
    {
      QueryPlan rows = p;
      rows.start[0] = 310, rows.count[0] = 580;
      const QueryResult rm = execute(*f, rows, mapped), rc = execute(*f, rows, copied);
      CHECK(rc.stats.read_pread && rm.values.bytes == rc.values.bytes && rc.stats.chunks_read == 2);
      QueryPlan strided = p;
      strided.start[0] = 7, strided.step[0] = 3, strided.count[0] = 331;  // rows 7, 10, ..., 997
      const QueryResult sm = execute(*f, strided, mapped), sc = execute(*f, strided, copied);
      CHECK(sc.stats.read_pread && sm.values.bytes == sc.values.bytes && sc.stats.chunks_read == 4);
      // what the pread scans read, for the binding to map in after the answer: each selected
      // row's bytes (runs 2 rows apart never merge), ascending; a row run merges within a tile
      {
        const Catalog& cat = f->catalog();
        auto payload = [&](uint64_t t) { return cat.entries[cat.datasets[0].chunk_to_entry[t]].payload_offset; };
        std::vector<std::pair<uint64_t, uint64_t>> want_spans;
        for (uint64_t r = 7; r < 1000; r += 3) want_spans.emplace_back(payload(r / 300) + (r % 300) * 5600, 5600);
        CHECK(sc.stats.pread_spans == want_spans);
        CHECK(sm.stats.pread_spans.empty());
        uint64_t bytes = 0;
        for (const auto& sp : rc.stats.pread_spans) bytes += sp.second;
        CHECK(bytes == 580u * 5600u && !rc.stats.pread_spans.empty() && rc.stats.pread_spans.size() <= 2);
        CHECK(rc.stats.pread_spans.front().first == payload(1) + 10 * 5600);
        for (const auto& sp : sc.stats.pread_spans) f->populate(sp.first, sp.second);
        f->populate(cat.file_len - 10, 1000);  // clipped at the end of the file
        f->populate(cat.file_len + 10, 1000);  // past it: nothing
        const QueryResult after = execute(*f, strided, mapped);
        CHECK(after.values.bytes == sm.values.bytes);
      }
      QueryPlan wide = p;
      wide.start[1] = 5, wide.count[1] = 600;  // 4800 bytes a row
      const QueryResult wm = execute(*f, wide, mapped), wc = execute(*f, wide, copied);
      CHECK(wc.stats.read_pread && wm.values.bytes == wc.values.bytes);
      QueryPlan cols = p;
      cols.start[1] = 5, cols.count[1] = 200;
      const QueryResult cm = execute(*f, cols, mapped), cc = execute(*f, cols, copied);
      CHECK(!cc.stats.read_pread && cm.values.bytes == cc.values.bytes);
      if (op == Op::Mean) {  // the strided rows' mean, independently
        long double part = 0;
        for (uint64_t r = 7; r < 1000; r += 3)
          for (uint64_t c = 0; c < 700; ++c) {
            double v;
            std::memcpy(&v, d.bytes.data() + 8 * (r * 700 + c), 8);
            part += v;
          }
        double got;
        std::memcpy(&got, sc.values.bytes.data(), 8);
        const double want_rows = double(part / (331.0L * 700.0L));
        CHECK(std::fabs(got - want_rows) <= 1e-12 * std::fabs(want_rows) + 1e-12);
      }
    }
    // a read that fails is an error, not a crash: the file shrinks under the open handle
    if (op == Op::Sum) {
      auto g = File::open(path);
      CHECK(::truncate(path.c_str(), 4096) == 0);
      bool threw = false;
      try {
        execute(*g, p, copied);
      } catch (const tet::Error& e) {
        threw = e.code() == "TET_IO_FILE_CHANGED";  // as a read through the mapping says
      }
      CHECK(threw);
      g.reset();
      f.reset();
      write_row_tiles(path, d, 300);  // again, for the next op
    }
  }
  ::unlink(path.c_str());
}

TEST_CASE("rows with a step folded where they lie in the mapping: the bits of the gathered (pread) unit, units cut mid-row") {
  // [600, 5000] in row tiles of 300, every 2nd row from row 1: 150 rows of 5000 a tile, so
  // 750000 elements in 6 units of 2^17; a unit after a tile's first starts mid-row (unit 1 at
  // element 1072 of a row, its next run at lane 3928 % 32 = 24), and a row is 5000 % 32 = 8
  // lanes over a multiple of 32. Mapped units fold run by run (sum family, counts, min / max,
  // var / std), pread units as one gathered buffer: the same bits; the sum against an
  // independent long-double (or exact) sum.
  for (DType dt : {DType::F32, DType::I32, DType::F64}) {
    Dense d = make_dense(dt, {600, 5000}, 101, false);
    const std::string path = "/tmp/tet_exec_rowruns_" + std::to_string(::getpid()) + ".tet";
    write_row_tiles(path, d, 300);
    long double want = 0;
    for (uint64_t r = 1; r < 600; r += 2)
      for (uint64_t c = 0; c < 5000; ++c) want += d.vals[r * 5000 + c];
    for (Op op : {Op::Sum, Op::Mean, Op::NormL1, Op::NormL2, Op::NanMean, Op::NanCount, Op::Min, Op::Max, Op::Var,
                  Op::Std, Op::NanStd}) {
      QueryPlan p;
      p.step.fill(1);
      p.ndim = 2, p.start[0] = 1, p.step[0] = 2, p.count[0] = 300, p.count[1] = 5000, p.op = op, p.reduce_mask = 3;
      auto f = File::open(path);
      ExecContext mapped, copied;
      mapped.read_path = ReadPath::Mapped, copied.read_path = ReadPath::Pread;
      const QueryResult m = execute(*f, p, mapped), c = execute(*f, p, copied);
      CHECK(!m.stats.read_pread && c.stats.read_pread && m.values.bytes == c.values.bytes);
      // several ops in one pass (reductions): each value that op's own fold's, mapped (run by run
      // where every lane takes runs; an arg op makes the pass gather) and by pread alike
      if (op == Op::Sum) {
        for (bool with_arg : {false, true}) {
          QueryPlan multi = p;
          multi.op = Op::Min;
          multi.more.clear();
          for (Op o : {Op::Max, Op::Mean, Op::Std, Op::NanCount, with_arg ? Op::ArgMax : Op::NormL2}) {
            AggSpec g;
            g.op = o;
            multi.more.push_back(g);
          }
          const QueryResult mm = execute(*f, multi, mapped), mc = execute(*f, multi, copied);
          CHECK(mm.values.bytes == mc.values.bytes && mm.more_values.size() == 5 && mc.more_values.size() == 5);
          QueryPlan one = p;
          one.op = Op::Min;
          CHECK(execute(*f, one, mapped).values.bytes == mm.values.bytes);
          for (size_t i = 0; i < 5 && i < mm.more_values.size() && i < mc.more_values.size(); ++i) {
            one.op = multi.more[i].op;
            CHECK(mm.more_values[i].bytes == mc.more_values[i].bytes);
            CHECK(execute(*f, one, copied).values.bytes == mm.more_values[i].bytes);
          }
        }
      }
      if (op == Op::Sum && dt != DType::F64) {
        double got;
        std::memcpy(&got, m.values.bytes.data(), 8);
        if (dt == DType::I32) CHECK(got == double(want));
        else CHECK(std::fabs(got - double(want)) <= 1e-9 * std::fabs(double(want)) + 1e-6);
      }
    }
    ::unlink(path.c_str());
  }
}

TEST_CASE("a dataset's first scan of 64 units or more times both reads and folds every unit once") {
  // [1024, 8192] f32 in tiles of 256 rows: 64 units (four are folded by the measurement). The
  // measurement's verdict forced by its margin as well: a tiny one chooses pread once both pairs
  // are timed (the units already read through the mapping stay folded, the rest are read by
  // pread), a huge one the mapping; either way every unit is folded once, every tile counted once.
  Dense d = make_dense(DType::F32, {1024, 8192}, 93, false);
  const std::string path = "/tmp/tet_exec_readpath64_" + std::to_string(::getpid()) + ".tet";
  write_row_tiles(path, d, 256);
  for (Op op : {Op::Sum, Op::Min, Op::ArgMax, Op::Var}) {
    QueryPlan p;
    p.step.fill(1);
    p.ndim = 2, p.count[0] = 1024, p.count[1] = 8192, p.op = op, p.reduce_mask = 3;
    auto f = File::open(path);
    const QueryResult first = execute(*f, p, {}), second = execute(*f, p, {});
    ExecContext mapped;
    mapped.read_path = ReadPath::Mapped;
    const QueryResult m = execute(*f, p, mapped);
    CHECK(first.values.bytes == m.values.bytes && second.values.bytes == m.values.bytes);
    if (second.stats.read_pread || first.stats.chunks_read != 4 || second.stats.chunks_read != 4) std::printf("    op %d: pread %d %d chunks %llu %llu mapped %llu\n", int(op), int(first.stats.read_pread), int(second.stats.read_pread), (unsigned long long)first.stats.chunks_read, (unsigned long long)second.stats.chunks_read, (unsigned long long)m.stats.chunks_read);
    CHECK(!second.stats.read_pread && first.stats.chunks_read == 4 && second.stats.chunks_read == 4);
    ExecContext to_pread, to_map;
    to_pread.pread_margin = 1e-9, to_map.pread_margin = 1e9;
    const QueryResult a = execute(*File::open(path), p, to_pread), b = execute(*File::open(path), p, to_map);
    CHECK(a.stats.read_pread && !b.stats.read_pread);
    CHECK(a.values.bytes == m.values.bytes && b.values.bytes == m.values.bytes);
    CHECK(a.stats.chunks_read == 4 && b.stats.chunks_read == 4 && m.stats.chunks_read == 4);
  }
  ::unlink(path.c_str());
}

TEST_CASE("one tile of 16 units in sequential chunks: the first scan measures both reads across the pool, every read gives the same bits") {
  // [256, 8192] f32, one tile: 16 units of 2^17 elements, the fewest a first scan measures.
  Dense d = make_dense(DType::F32, {256, 8192}, 97, false);
  const std::string path = "/tmp/tet_exec_readpath16_" + std::to_string(::getpid()) + ".tet";
  write_row_tiles(path, d, 256);
  for (Op op : {Op::Sum, Op::Max, Op::ArgMin, Op::Var}) {
    QueryPlan p;
    p.step.fill(1);
    p.ndim = 2, p.count[0] = 256, p.count[1] = 8192, p.op = op, p.reduce_mask = 3;
    p.io_mode = IoMode::SequentialChunks;
    auto f = File::open(path);
    const QueryResult first = execute(*f, p, {});
    ExecContext mapped, copied;
    mapped.read_path = ReadPath::Mapped, copied.read_path = ReadPath::Pread;
    const QueryResult m = execute(*f, p, mapped), c = execute(*f, p, copied);
    CHECK(first.values.bytes == m.values.bytes && c.values.bytes == m.values.bytes);
    CHECK(c.stats.read_pread && !m.stats.read_pread);
    CHECK(first.stats.chunks_read == 1 && c.stats.chunks_read == 1 && m.stats.chunks_read == 1);
  }
  // The sum against an independent long-double sum of the same values.
  QueryPlan p;
  p.step.fill(1);
  p.ndim = 2, p.count[0] = 256, p.count[1] = 8192, p.op = Op::Sum, p.reduce_mask = 3;
  p.io_mode = IoMode::SequentialChunks;
  ExecContext copied;
  copied.read_path = ReadPath::Pread;
  const QueryResult r = execute(*File::open(path), p, copied);
  long double want = 0;
  for (size_t i = 0; i < d.bytes.size() / 4; ++i) {
    float v;
    std::memcpy(&v, d.bytes.data() + 4 * i, 4);
    want += v;
  }
  double got;
  std::memcpy(&got, r.values.bytes.data(), 8);
  CHECK(std::fabs(double(want) - got) <= 1e-9 * std::fabs(double(want)) + 1e-9);
  ::unlink(path.c_str());
}

TEST_CASE("strided selection touches only chunks the progression lands in") {
  Dense d = make_dense(DType::F32, {100}, 61, false);
  MemSource src(DType::F32, {100}, {10}, d.bytes);
  QueryPlan p;
  p.step.fill(1);
  p.ndim = 1, p.start[0] = 5, p.step[0] = 30, p.count[0] = 4, p.op = Op::Sum, p.reduce_mask = 1;  // 5,35,65,95
  QueryResult r = execute(src, p, {});
  CHECK(r.stats.chunks_read == 4);
  CHECK(src.fetches == 4);
}

TEST_CASE("preview: first elements in logical order, f16 widened; capped strategy") {
  for (DType dt : {DType::F32, DType::F16, DType::I64, DType::U8}) {
    Dense d = make_dense(dt, {7, 10, 5}, 71, false);
    MemSource src(dt, d.shape, {3, 4, 2}, d.bytes);
    Sel s = selections()[1];
    QueryPlan p = make_plan(d, s, Op::None, 0);
    p.preview_max = 20;
    QueryResult r = execute(src, p, {});
    const auto f = fibers(d, s, 7, nullptr);
    CHECK(r.preview_length == 20);
    const size_t es = dt == DType::F16 ? 4 : dtype_size(dt);
    CHECK(r.preview.size() == 20 * es);
    CHECK(r.values.length == 0);
    for (size_t i = 0; i < 20; ++i) {
      LD got;
      if (dt == DType::F32 || dt == DType::F16) { float v; std::memcpy(&v, &r.preview[i * 4], 4); got = v; }
      else if (dt == DType::I64) { int64_t v; std::memcpy(&v, &r.preview[i * 8], 8); got = LD(v); }
      else got = r.preview[i];
      CHECK(got == f[0][i]);
    }
    // preview alongside a fold and a tier-C op
    p = make_plan(d, s, Op::Sum, 7);
    p.preview_max = 1000;  // more than the selection
    r = execute(src, p, {});
    CHECK(r.preview_length == f[0].size());
    p = make_plan(d, s, Op::Median, 7);
    p.preview_max = 5;
    QueryResult r2 = execute(src, p, {});
    CHECK(r2.preview.size() == 5 * es);
    CHECK(std::memcmp(r2.preview.data(), r.preview.data(), 5 * es) == 0);
  }
}

TEST_CASE("caller-owned output: the preview written in place equals the native-owned one, every selection and threads") {
  for (DType dt : {DType::F32, DType::F16, DType::I64, DType::U8, DType::F64}) {
    Dense d = make_dense(dt, {7, 10, 5}, 73, false);
    MemSource src(dt, d.shape, {3, 4, 2}, d.bytes);
    const size_t es = dt == DType::F16 ? 4 : dtype_size(dt);
    for (const Sel& s : selections()) {
      QueryPlan p = make_plan(d, s, Op::None, 0);
      p.strategy = Strategy::CappedInMemory;
      p.preview_max = UINT64_MAX;
      const QueryResult owned = execute(src, p, {});
      for (uint32_t threads : {1u, 3u, 8u}) {
        p.threads = threads;
        std::vector<uint8_t> out(owned.preview_length * es + 2, 0xAB);  // one guard byte each side
        ExecContext ctx;
        ctx.has_output = true;
        ctx.output = out.data() + 1;
        ctx.output_bytes = owned.preview_length * es;
        const QueryResult r = execute(src, p, ctx);
        CHECK(r.preview.empty());
        CHECK(r.preview_length == owned.preview_length);
        CHECK(std::memcmp(out.data() + 1, owned.preview.data(), owned.preview.size()) == 0);
        CHECK(out.front() == 0xAB && out.back() == 0xAB);
      }
      // the wrong size is refused before any tile is read
      ExecContext bad;
      bad.has_output = true;
      std::vector<uint8_t> small(owned.preview.size() + es);
      bad.output = small.data();
      bad.output_bytes = small.size();
      EXPECT_CODE(execute(src, p, bad), "TET_PLAN_INVALID");
    }
    // a reduction cannot take an output
    QueryPlan sum = make_plan(d, selections()[0], Op::Sum, 7);
    ExecContext ctx;
    ctx.has_output = true;
    EXPECT_CODE(execute(src, sum, ctx), "TET_PLAN_INVALID");
  }
  // cancellation still throws with an output
  Dense d = make_dense(DType::F32, {7, 10, 5}, 75, false);
  MemSource src(DType::F32, d.shape, {3, 4, 2}, d.bytes);
  QueryPlan p = make_plan(d, selections()[0], Op::None, 0);
  p.strategy = Strategy::CappedInMemory;
  p.preview_max = UINT64_MAX;
  std::vector<uint8_t> out(execute(src, p, {}).preview.size());
  std::atomic<bool> cancel{true};
  ExecContext ctx;
  ctx.cancel = &cancel;
  ctx.has_output = true;
  ctx.output = out.data();
  ctx.output_bytes = out.size();
  EXPECT_CODE(execute(src, p, ctx), "TET_CANCELLED");
}

TEST_CASE("caller-owned output of partial reductions: values equal the native-owned ones; wrong size is refused") {
  for (DType dt : kDtypes) {
    Dense d = make_dense(dt, {7, 10, 5}, 77, true);
    MemSource src(dt, d.shape, {3, 4, 2}, d.bytes);
    for (const Sel& s : selections()) {
      for (Op op : {Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Var, Op::ArgMax, Op::Count, Op::NanCount, Op::Product}) {
        for (uint32_t mask : {1u, 2u, 4u, 5u, 6u}) {
          QueryPlan p = make_plan(d, s, op, mask);
          p.preview_max = 4;
          const QueryResult owned = execute(src, p, {});
          CHECK(owned.values.bytes.size() == owned.values.length * 8);
          for (uint32_t threads : {1u, 3u}) {
            p.threads = threads;
            std::vector<uint8_t> out(owned.values.bytes.size() + 2, 0xAB);  // one guard byte each side
            ExecContext ctx;
            ctx.has_output = true;
            ctx.output = out.data() + 1;
            ctx.output_bytes = owned.values.bytes.size();
            const QueryResult r = execute(src, p, ctx);
            CHECK(r.values.bytes.empty() && r.values.kind == owned.values.kind && r.values.length == owned.values.length);
            CHECK(r.reduced_shape == owned.reduced_shape);
            CHECK(r.preview == owned.preview && r.preview_length == owned.preview_length);
            CHECK(out.front() == 0xAB && out.back() == 0xAB);
            CHECK(std::memcmp(out.data() + 1, owned.values.bytes.data(), owned.values.bytes.size()) == 0);
          }
          ExecContext bad;
          std::vector<uint8_t> small(owned.values.bytes.size() - 8 + 1);
          bad.has_output = true;
          bad.output = small.data();
          bad.output_bytes = small.size();
          EXPECT_CODE(execute(src, p, bad), "TET_PLAN_INVALID");
        }
      }
    }
  }
  // bool values, tier C and scalar reductions have no caller-owned output
  Dense d = make_dense(DType::F32, {7, 10, 5}, 78, false);
  MemSource src(DType::F32, d.shape, {3, 4, 2}, d.bytes);
  std::vector<uint8_t> out(7 * 10 * 8);
  ExecContext ctx;
  ctx.has_output = true, ctx.output = out.data(), ctx.output_bytes = out.size();
  for (Op op : {Op::AnyNan, Op::Median, Op::Histogram}) {
    QueryPlan p = make_plan(d, selections()[0], op, 4);
    if (op == Op::Histogram) p.bins = 1;
    EXPECT_CODE(execute(src, p, ctx), "TET_PLAN_INVALID");
  }
}

TEST_CASE("temp spill materialize equals in-memory; file is gone") {
  Dense d = make_dense(DType::F32, {7, 10, 5}, 81, false);
  MemSource src(DType::F32, d.shape, {3, 4, 2}, d.bytes);
  const std::string dir = "/tmp/tet_exec_test_tmp_" + std::to_string(::getpid());
  std::string cmd = "mkdir -p " + dir;
  CHECK(std::system(cmd.c_str()) == 0);
  for (uint32_t m : {7u, 1u}) {
    QueryPlan p = make_plan(d, selections()[1], Op::Median, m);
    const auto mem = execute(src, p, {});
    p.strategy = Strategy::TempSpillMaterialize;
    p.temp_dir = dir;
    const auto tmp = execute(src, p, {});
    CHECK(tmp.values.bytes == mem.values.bytes);
  }
  cmd = "rmdir " + dir;  // fails when a temp file was left behind
  CHECK(std::system(cmd.c_str()) == 0);
  QueryPlan p = make_plan(d, selections()[1], Op::Median, 7);
  p.strategy = Strategy::TempSpillMaterialize;
  p.temp_dir = "/nonexistent/dir";
  EXPECT_CODE(execute(src, p, {}), "TET_IO_OPEN");
}

TEST_CASE("mmap spill writes the selection row-major, dtype-native, atomically") {
  for (DType dt : {DType::F64, DType::F16, DType::U16}) {
    Dense d = make_dense(dt, {7, 10, 5}, 91, false);
    MemSource src(dt, d.shape, {3, 4, 2}, d.bytes);
    Sel s = selections()[1];
    QueryPlan p = make_plan(d, s, Op::None, 0);
    p.strategy = Strategy::MmapSpill;
    p.spill_path = "/tmp/tet_exec_spill_" + std::to_string(::getpid()) + ".bin";
    p.preview_max = 3;
    QueryResult r = execute(src, p, {});
    std::ifstream in(p.spill_path, std::ios::binary);
    std::vector<uint8_t> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t es = dtype_size(dt);
    std::vector<uint8_t> want;
    for (uint64_t i = 0; i < s.count[0]; ++i)
      for (uint64_t j = 0; j < s.count[1]; ++j)
        for (uint64_t k = 0; k < s.count[2]; ++k) {
          const uint64_t src_i = ((s.start[0] + i * s.step[0]) * 10 + s.start[1] + j * s.step[1]) * 5 + s.start[2] + k * s.step[2];
          want.insert(want.end(), &d.bytes[src_i * es], &d.bytes[src_i * es] + es);
        }
    CHECK(got == want);
    CHECK(r.stats.spill_bytes == want.size());
    CHECK(r.preview_length == 3);
    ::unlink(p.spill_path.c_str());
  }
}

TEST_CASE("cancellation throws TET_CANCELLED") {
  Dense d = make_dense(DType::F32, {7, 10, 5}, 101, false);
  MemSource src(DType::F32, d.shape, {3, 4, 2}, d.bytes);
  std::atomic<bool> cancel{true};
  ExecContext ctx;
  ctx.cancel = &cancel;
  for (Op op : {Op::Sum, Op::Median}) {
    QueryPlan p = make_plan(d, selections()[0], op, 7);
    EXPECT_CODE(execute(src, p, ctx), "TET_CANCELLED");
    p.reduce_mask = 1;
    EXPECT_CODE(execute(src, p, ctx), "TET_CANCELLED");
  }
}

TEST_CASE("many threads run queries concurrently on the shared pool") {
  Dense d = make_dense(DType::F32, {300, 200}, 111, false);
  MemSource src(DType::F32, d.shape, {64, 64}, d.bytes);
  Sel s{{0, 0}, {1, 1}, {300, 200}};
  const QueryPlan p1 = make_plan(d, s, Op::Var, 3), p2 = make_plan(d, s, Op::Mean, 1);
  const auto r1 = execute(src, p1, {}).values.bytes, r2 = execute(src, p2, {}).values.bytes;
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (execute(src, t % 2 ? p1 : p2, {}).values.bytes != (t % 2 ? r1 : r2)) ++bad;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(bad == 0);
}

TEST_CASE("host_info reports cores, RAM and the ISA") {
  const HostInfo h = host_info();
  CHECK(h.cores >= 1);
  CHECK(h.total_ram_bytes > 0);
  CHECK(h.available_ram_bytes > 0 && h.available_ram_bytes <= h.total_ram_bytes);
  CHECK(!h.simd.empty());
}


namespace {
// Results equal bit for bit, or (partial folds: per-run row batches differ from the box's
// strided rows) every f64 value within rel 1e-12.
struct Out {
  ValueKind kind;
  std::vector<uint8_t> values, preview;
};
Out run_out(const ChunkSource& src, QueryPlan p, uint32_t threads) {
  p.threads = threads;
  QueryResult r = execute(src, p, {});
  return Out{r.values.kind, r.values.bytes, r.preview};
}
bool same_or_close(const Out& x, const Out& y, bool loose) {
  if (x.preview != y.preview || x.kind != y.kind) return false;
  const std::vector<uint8_t>&a = x.values, &b = y.values;
  if (a == b) return true;
  if (!loose || x.kind != ValueKind::F64 || a.size() != b.size() || a.size() % 8) return false;
  for (size_t i = 0; i < a.size(); i += 8) {
    double x, y;
    std::memcpy(&x, &a[i], 8), std::memcpy(&y, &b[i], 8);
    if (x == y || (x != x && y != y)) continue;
    if (!(std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y)))) return false;
  }
  return true;
}
// The plan p with axes `which` (bit a) turned into index lists of the same positions.
QueryPlan as_indices(QueryPlan p, uint32_t which) {
  for (uint32_t a = 0; a < p.ndim; ++a)
    if ((which >> a) & 1) p.set_indices(a, p.positions(a));
  return p;
}
}  // namespace

TEST_CASE("index-list axes listing a box's positions are bit-identical to the box (every op, strategy, threads)") {
  // Step > 1 boxes become multi-run pieces (one run per position); step 1 boxes merge into one run.
  struct Shape { std::vector<uint64_t> shape, chunk; };
  const Shape shapes[] = {{{7, 10, 5}, {3, 4, 2}}, {{700, 300}, {700, 300}}, {{900, 70}, {256, 64}}};
  uint64_t seed = 900;
  for (const Shape& sh : shapes)
    for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I64, DType::U8}) {
      const bool fl = dtype_is_float(dt);
      Dense d = make_dense(dt, sh.shape, seed++, fl);
      MemSource src(dt, d.shape, sh.chunk, d.bytes);
      const uint32_t nd = uint32_t(sh.shape.size()), all = (1u << nd) - 1;
      Sel box;
      for (uint64_t c : sh.shape) box.start.push_back(0), box.step.push_back(1), box.count.push_back(c);
      Sel strided = box;
      strided.start[0] = 1, strided.step[0] = 2, strided.count[0] = (sh.shape[0] - 1) / 2;
      strided.step.back() = 3, strided.count.back() = sh.shape.back() / 3;
      Sel window = box;  // unit step, offset: a merged single run per chunk
      window.start.back() = 1, window.count.back() = sh.shape.back() - 2;
      for (const Sel* sel : {&strided, &window, &box}) {
        std::vector<Op> ops(std::begin(kStreamingOps), std::end(kStreamingOps));
        for (Op op : {Op::Median, Op::Quantile, Op::Histogram}) ops.push_back(op);
        if (nd == 2) ops.push_back(Op::Covariance), ops.push_back(Op::Correlation);
        for (Op op : ops) {
          if (op == Op::Product && !fl) continue;
          const bool cov = op == Op::Covariance || op == Op::Correlation;
          for (uint32_t m = cov ? 0 : 1; m <= (cov ? 0 : all); ++m) {
            if (sh.shape[0] >= 700 && m != all && m != 1 && op != Op::Sum && op != Op::ArgMin) continue;
            QueryPlan p = make_plan(d, *sel, op, m);
            if (op == Op::NullCount) p.has_fill = true, p.fill = double(d.vals[5]);
            if (op == Op::Quantile) p.q = 0.3;
            if (op == Op::Histogram) p.bins = 7;
            p.preview_max = 9;
            const Out ref = run_out(src, p, 1);
            // bit-identical except f64 values of partial streaming folds (see same_or_close)
            const bool loose = !cov && m != all && op != Op::Median && op != Op::Quantile && op != Op::Histogram;
            for (uint32_t which : {all, 1u, 1u << (nd - 1)}) {
              QueryPlan q = as_indices(p, which);
              const auto w = encode_plan(q);
              q = decode_plan(w.data(), w.size(), src.catalog());
              CHECK(q.has_index_axes());
              const Out got = run_out(src, q, 1);
              if (!same_or_close(got, ref, loose)) {
                ++tet_test::failures();
                if (++g_failures_reported < 30)
                  std::printf("  index list != box: dtype %s op %u mask %u which %u\n", dtype_name(dt), unsigned(op), m, which);
              }
              if (op == Op::Sum || op == Op::ArgMax || op == Op::Median)
                CHECK(same_or_close(run_out(src, q, 3), run_out(src, p, 3), loose));
            }
          }
        }
      }
    }
}

TEST_CASE("progress: total = the selection's bytes before the first tile, done = the same after one pass") {
  // Hand-computed: elements of each selection x 4 bytes; every tile of the selection counted
  // once by the pass the I/O stats count, whatever the op, the I/O mode or the strategy.
  Dense d = make_dense(DType::F32, {7, 10, 5}, 19, false);
  MemSource src(DType::F32, d.shape, {3, 4, 2}, d.bytes);
  MemSource fwd(DType::F32, d.shape, {3, 4, 2}, d.bytes, false, /*forward=*/true);
  for (const Sel& s : selections()) {
    const uint64_t bytes = s.count[0] * s.count[1] * s.count[2] * 4;
    struct Case { Op op; uint32_t mask; IoMode io; const MemSource* from; };
    for (const Case& c : {Case{Op::Sum, 7, IoMode::ParallelChunks, &src}, Case{Op::Mean, 2, IoMode::ParallelChunks, &src},
                          Case{Op::Max, 7, IoMode::SequentialChunks, &src}, Case{Op::Var, 7, IoMode::LinearScan, &fwd},
                          Case{Op::Median, 7, IoMode::ParallelChunks, &src}, Case{Op::Median, 1, IoMode::ParallelChunks, &src},
                          Case{Op::None, 0, IoMode::ParallelChunks, &src}}) {
      QueryPlan p = make_plan(d, s, c.op, c.mask);
      p.io_mode = c.io;
      if (c.op == Op::None) p.preview_max = UINT64_MAX;
      Progress progress;
      ExecContext ctx;
      ctx.progress = &progress;
      const QueryResult r = execute(*c.from, p, ctx);
      CHECK(progress.total.load() == bytes);
      CHECK(progress.done.load() == bytes);
      CHECK(r.stats.chunks_read > 0);
    }
  }
  // No Progress: nothing to count, the same result.
  QueryPlan p = make_plan(d, selections()[1], Op::Sum, 7);
  Progress progress;
  ExecContext ctx;
  ctx.progress = &progress;
  CHECK(execute(src, p, {}).values.bytes == execute(src, p, ctx).values.bytes);
}

TEST_MAIN()
