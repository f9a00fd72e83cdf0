// Table queries (query/table_query.h) against a plain model written here: every reduction on
// every kind over several selections (none, empty, partial blocks, scattered rows, whole blocks),
// with nulls, NaN, -0.0 and ±inf; group_by on one and several keys, calendar buckets (month
// boundaries, leap years, before 1970), widths on ints beyond 2^53 and on floats with ±inf, null
// and NaN key placement; rows with order_by (ties, nulls last, NaN largest, desc), limit 0 and an
// offset past the end; validation errors by code. The model works row by row on the plain
// values (sorting, long-double sums, a walked calendar); it shares no code with the engine.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/column.h"
#include "cells/predicate.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "check.h"
#include "query/table_query.h"
#include "region_bytes.h"
#include "tet/error.h"

using namespace tet;
using namespace tet::cells;
using namespace tet::query;

namespace {

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- the table ---------------------------------------------------------------------------------

struct ModelColumn {
  std::string name;
  Kind kind;
  std::vector<int64_t> i;  // bool (0/1), int, date, timestamp, time
  std::vector<double> f;
  std::vector<std::string> s;
  std::vector<uint8_t> ok;
};

enum Col : size_t { R, M, B, I, F, S, D, TS, TM, BIG, G, NCOLS };

constexpr size_t kRows = 5 * 2048 + 333;
constexpr int64_t kDay = 86400LL * 1000000;

std::vector<ModelColumn> make_columns() {
  std::vector<ModelColumn> c = {{"r", Kind::Int},  {"m", Kind::Int},  {"b", Kind::Bool},      {"i", Kind::Int},
                                {"f", Kind::Float}, {"s", Kind::Str}, {"d", Kind::Date},      {"ts", Kind::Timestamp},
                                {"tm", Kind::Time}, {"big", Kind::Int}, {"g", Kind::Int}};
  const double specials[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 2.5, -2.5, 0.5};
  const char* const words[] = {"", "a", "ab", "abc", "b", "\xc3\xa9t\xc3\xa9", "zz", "ab\x01"};
  for (size_t r = 0; r < kRows; ++r) {
    const uint64_t h = mix(r), h2 = mix(r + 1000003);
    const unsigned blk = unsigned(r / 2048);
    auto push_i = [&](size_t col, bool ok, int64_t v) { c[col].ok.push_back(ok), c[col].i.push_back(ok ? v : 0); };
    push_i(R, true, int64_t(r));
    push_i(M, true, int64_t(h % 7));
    push_i(B, h % 9 != 0, int64_t((h >> 8) % 3 == 0));
    // i: a sequence block, a constant block, a narrow frame, random small values; nulls except block 1
    const int64_t iv = blk == 0 ? int64_t(r) : blk == 1 ? 42 : blk == 2 ? 1000 + int64_t(h % 50) : int64_t(h % 2001) - 1000;
    push_i(I, blk == 1 || h % 11 != 0, iv);
    // f: quarters (NaN-free) except block 3, which mixes in the specials
    const double fv = blk == 3 ? specials[(h >> 4) % 8] : double(int64_t(h % 400) - 200) / 4;
    c[F].ok.push_back(h % 13 != 0), c[F].f.push_back(c[F].ok.back() ? fv : 0.0);
    c[S].ok.push_back(h % 10 != 0), c[S].s.push_back(c[S].ok.back() ? words[(h >> 12) % 8] : "");
    // d: days from 1890 to 2110 (before 1970, leap years, Feb 29); ts: µs over the same span;
    // tm: µs of the day
    push_i(D, h2 % 17 != 0, int64_t(h2 % 80000) - 29000);
    push_i(TS, h2 % 19 != 0, int64_t(h2 % (80000ULL * uint64_t(kDay))) - 29000 * kDay);
    push_i(TM, h2 % 23 != 0, int64_t(h % uint64_t(kDay)));
    // big: around ±2^60 (beyond 2^53), steps that a double cannot tell apart
    const int64_t base = (h & 1) ? (int64_t(1) << 60) : -(int64_t(1) << 60);
    push_i(BIG, h % 29 != 0, base + int64_t((h >> 3) % 10) - 5);
    push_i(G, h % 6 != 0, int64_t((h >> 20) % 4));
  }
  return c;
}

struct Stored {
  std::vector<ModelColumn> cols;
  std::unique_ptr<tet_test::AlignedBytes> al;
  std::unique_ptr<TablesRegion> region;
};

const Stored& stored() {
  static Stored s = [] {
    Stored st;
    st.cols = make_columns();
    RegionWriter w(memory_spool());
    std::vector<ColumnSchema> schema;
    for (const ModelColumn& m : st.cols) schema.push_back(ColumnSchema{m.name, m.kind});
    const uint32_t t = w.add_table("t", "", kNoAxis, schema);
    for (size_t c = 0; c < st.cols.size(); ++c) {
      const ModelColumn& m = st.cols[c];
      if (m.kind == Kind::Float) {
        FloatBuilder b;
        b.push_many(m.f.data(), m.ok.data(), m.ok.size());
        w.add_column(t, uint32_t(c), *b.finish());
      } else if (m.kind == Kind::Bool) {
        BoolBuilder b;
        std::vector<uint8_t> v(m.i.begin(), m.i.end());
        b.push_many(v.data(), m.ok.data(), m.ok.size());
        w.add_column(t, uint32_t(c), *b.finish());
      } else if (m.kind == Kind::Str) {
        StrBuilder b;
        std::vector<std::string_view> v(m.s.begin(), m.s.end());
        b.push_many(v.data(), v.size(), m.ok.data());
        CellRef root = b.finish();
        w.add_column(t, uint32_t(c), *root);
        if (const GlobalDictionary* g = b.global_dictionary()) w.add_metablock(t, uint32_t(c), MetablockKind::GlobalDictionary, g->encode());
        if (BlockIndex* ix = b.block_index()) w.add_metablock(t, uint32_t(c), MetablockKind::BlockIndex, ix->take_body());
      } else {
        IntBuilder b(m.kind);
        b.push_many(m.i.data(), m.ok.data(), m.ok.size());
        w.add_column(t, uint32_t(c), *b.finish());
      }
    }
    st.al = std::make_unique<tet_test::AlignedBytes>(tet_test::region_bytes(w));
    st.region = std::make_unique<TablesRegion>(st.al->p, st.al->len);
    return st;
  }();
  return s;
}

// ---- selections --------------------------------------------------------------------------------

struct Selection {
  const char* name;
  std::vector<Predicate> where;
  bool (*holds)(const std::vector<ModelColumn>&, size_t);
};

Predicate pred(size_t col, WhereOp op, Literal v) {
  Predicate p;
  p.column = col, p.op = op, p.value = std::move(v);
  return p;
}
Predicate range(size_t col, int64_t lo, int64_t hi) {
  Predicate p;
  p.column = col, p.op = WhereOp::Range, p.lo = Literal::of_int(lo), p.hi = Literal::of_int(hi);
  return p;
}

std::vector<Selection> selections() {
  return {
      {"all", {}, [](const std::vector<ModelColumn>&, size_t) { return true; }},
      {"empty", {pred(R, WhereOp::Lt, Literal::of_int(0))}, [](const std::vector<ModelColumn>&, size_t) { return false; }},
      {"partial blocks", {range(R, 1000, 5000)}, [](const std::vector<ModelColumn>&, size_t r) { return r >= 1000 && r < 5000; }},
      {"scattered", {pred(M, WhereOp::Eq, Literal::of_int(3))}, [](const std::vector<ModelColumn>& c, size_t r) { return c[M].i[r] == 3; }},
      {"whole blocks", {range(R, 2048, 4 * 2048)}, [](const std::vector<ModelColumn>&, size_t r) { return r >= 2048 && r < 4 * 2048; }},
      {"specials block", {range(R, 3 * 2048, 4 * 2048), pred(M, WhereOp::Ne, Literal::of_int(0))},
       [](const std::vector<ModelColumn>& c, size_t r) { return r >= 3 * 2048 && r < 4 * 2048 && c[M].i[r] != 0; }},
      {"one row", {pred(R, WhereOp::Eq, Literal::of_int(6500))}, [](const std::vector<ModelColumn>&, size_t r) { return r == 6500; }},
  };
}

std::vector<size_t> selected_rows(const Selection& s) {
  std::vector<size_t> out;
  for (size_t r = 0; r < kRows; ++r)
    if (s.holds(stored().cols, r)) out.push_back(r);
  return out;
}

TableQueryResult run(const TableQueryPlan& p, uint32_t threads = 2) {
  return run_table_query(*stored().region, p, ExecLimits{threads, 0});
}

// ---- the reduction model -----------------------------------------------------------------------

const std::vector<Op> kNumericOps = {Op::Sum,     Op::Mean,     Op::Min,      Op::Max,       Op::Count,     Op::Var,
                                     Op::Std,     Op::Product,  Op::NormL1,   Op::NormL2,    Op::AllFinite, Op::AnyNan,
                                     Op::AnyInf,  Op::NanCount, Op::InfCount, Op::NullCount, Op::NanMean,   Op::NanStd,
                                     Op::Median,  Op::Quantile};

// Population variance by two passes in long double; NaN when empty or any NaN.
double model_var(const std::vector<double>& x) {
  if (x.empty()) return NAN;
  long double s = 0;
  for (double v : x) s += v;
  const long double mean = s / x.size();
  long double m2 = 0;
  for (double v : x) m2 += (v - mean) * (v - mean);
  return double(m2 / x.size());
}

double model_quantile(std::vector<double> x, double q) {  // numpy 'linear'
  if (x.empty()) return NAN;
  for (double v : x)
    if (std::isnan(v)) return NAN;
  std::sort(x.begin(), x.end());
  const double pos = q * double(x.size() - 1);
  const size_t k = size_t(std::floor(pos));
  if (k + 1 >= x.size()) return x[k];
  return x[k] + (x[k + 1] - x[k]) * (pos - double(k));
}

// The op over the present values x of `rows` selected rows (values as f64; ints here are small).
double model_reduce(Op op, const std::vector<double>& x, size_t rows, double q) {
  auto any = [&](bool (*f)(double)) { return std::any_of(x.begin(), x.end(), f); };
  std::vector<double> no_nan;
  for (double v : x)
    if (!std::isnan(v)) no_nan.push_back(v);
  long double s = 0, a = 0, sq = 0, prod = 1;
  for (double v : x) s += v, a += std::fabs(v), sq += (long double)v * v, prod *= v;
  switch (op) {
    case Op::Count: return double(x.size());
    case Op::NullCount: return double(rows - x.size());
    case Op::Sum: return double(s);
    case Op::Mean: return x.empty() ? NAN : double(s / x.size());
    case Op::Min: case Op::Max: {
      if (x.empty() || any([](double v) { return std::isnan(v); })) return NAN;
      return op == Op::Min ? *std::min_element(x.begin(), x.end()) : *std::max_element(x.begin(), x.end());
    }
    case Op::Var: return model_var(x);
    case Op::Std: return std::sqrt(model_var(x));
    case Op::Product: return double(prod);
    case Op::NormL1: return double(a);
    case Op::NormL2: return double(std::sqrt(sq));
    case Op::AllFinite: return !any([](double v) { return !std::isfinite(v); });
    case Op::AnyNan: return any([](double v) { return std::isnan(v); });
    case Op::AnyInf: return any([](double v) { return std::isinf(v); });
    case Op::NanCount: return double(std::count_if(x.begin(), x.end(), [](double v) { return std::isnan(v); }));
    case Op::InfCount: return double(std::count_if(x.begin(), x.end(), [](double v) { return std::isinf(v); }));
    case Op::NanMean: {
      long double t = 0;
      for (double v : no_nan) t += v;
      return no_nan.empty() ? NAN : double(t / no_nan.size());
    }
    case Op::NanStd: return std::sqrt(model_var(no_nan));
    case Op::Median: return model_quantile(x, 0.5);
    case Op::Quantile: return model_quantile(x, q);
    default: return NAN;
  }
}

// Same value: NaN = NaN, infinities by sign, finite ones within a relative tolerance.
bool same(double got, double want, double tol = 1e-9) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

// Whether the product of the nonzero finite factors leaves the f64 range.
bool product_overflows(const std::vector<double>& x) {
  long double lg = 0;
  for (double v : x)
    if (v != 0 && std::isfinite(v)) lg += std::log2(std::fabs((long double)v));
  return lg > 1000;
}

// Entry k of a result column as f64 (exact integers stay exact below 2^53); nullopt when null.
std::optional<double> as_double(const ValueColumn& v, size_t k) {
  if (!v.present(k)) return std::nullopt;
  switch (v.type) {
    case ValueColumn::Type::Bool: return double(v.b[k]);
    case ValueColumn::Type::I64: return double(v.i[k]);
    case ValueColumn::Type::U64: return double(v.u[k]);
    case ValueColumn::Type::F64: return v.f[k];
    case ValueColumn::Type::I128: return double(v.wide[k]);
    default: return std::nullopt;
  }
}

int failures_before = 0;
void report(const char* what, const char* sel, Op op, size_t col) {
  if (tet_test::failures() != failures_before)
    std::printf("    ^ %s: selection '%s', op %d, column %zu\n", what, sel, int(op), col);
  failures_before = tet_test::failures();
}

// One ungrouped reduction against the model.
void check_numeric(const Selection& sel, Op op, size_t col) {
  const auto& cols = stored().cols;
  const std::vector<size_t> rows = selected_rows(sel);
  std::vector<double> x;
  __int128 exact = 0;
  for (size_t r : rows)
    if (cols[col].ok[r]) {
      const double v = cols[col].kind == Kind::Float ? cols[col].f[r] : double(cols[col].i[r]);
      x.push_back(v);
      exact += cols[col].i.empty() ? 0 : cols[col].i[r];
    }
  TableQueryPlan p;
  p.where = sel.where, p.op = op, p.column = col, p.q = 0.3;
  const TableQueryResult res = run(p);
  CHECK(res.rows_selected == rows.size());
  CHECK(res.values.size() == 1);
  const double want = model_reduce(op, x, rows.size(), 0.3);
  const std::optional<double> got = as_double(res.values, 0);
  if (op == Op::Sum && cols[col].kind != Kind::Float) {
    CHECK(res.values.type == ValueColumn::Type::I128 && res.values.wide[0] == exact);
  } else if ((op == Op::Min || op == Op::Max) && cols[col].kind != Kind::Float && x.empty()) {
    CHECK(!got);  // int / bool over nothing: no value (the binding prints NaN / null)
  } else if (op == Op::Product && product_overflows(x)) {
    // in f64 the running product overflows, and then whether a zero factor gives 0 or inf * 0 =
    // NaN depends on the order of the factors: only the class is fixed
    const bool zero = std::count(x.begin(), x.end(), 0.0) > 0;
    CHECK(got && (zero ? (*got == 0 || std::isnan(*got)) : (std::isinf(*got) || std::isnan(*got))));
  } else {
    const bool ok = got && same(*got, want);
    if (!ok) std::printf("    got %.17g want %.17g\n", got ? *got : -999.0, want);
    CHECK(ok);
  }
  // one thread and two give the same bits
  const TableQueryResult one = run(p, 1);
  const std::optional<double> g1 = as_double(one.values, 0);
  CHECK(bool(g1) == bool(got));
  if (g1 && got) CHECK(std::memcmp(&*g1, &*got, 8) == 0 || (std::isnan(*g1) && std::isnan(*got)));
  report("numeric", sel.name, op, col);
}

TEST_CASE("every reduction on int, float and bool columns, over every selection") {
  for (const Selection& sel : selections())
    for (size_t col : {size_t(B), size_t(I), size_t(F), size_t(G)})
      for (Op op : kNumericOps) check_numeric(sel, op, col);
}

// A where that tests the folded column: the fold reads the values the where decoded (its tier)
// instead of the payload; with a second int test after it, what the scratch holds last is the
// other column's decode, which the fold must not take for its own.
TEST_CASE("a where on the folded column (the where's decoded values reused), alone and beside other tests") {
  const std::vector<Selection> on_folded = {
      {"i < 0", {pred(I, WhereOp::Lt, Literal::of_int(0))}, [](const std::vector<ModelColumn>& c, size_t r) { return c[I].ok[r] && c[I].i[r] < 0; }},
      {"i >= 1020", {pred(I, WhereOp::Ge, Literal::of_int(1020))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[I].ok[r] && c[I].i[r] >= 1020; }},
      {"i != 42, r >= 3000", {pred(I, WhereOp::Ne, Literal::of_int(42)), pred(R, WhereOp::Ge, Literal::of_int(3000))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[I].ok[r] && c[I].i[r] != 42 && r >= 3000; }},
      {"r >= 3000, i > -500", {pred(R, WhereOp::Ge, Literal::of_int(3000)), pred(I, WhereOp::Gt, Literal::of_int(-500))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[I].ok[r] && c[I].i[r] > -500 && r >= 3000; }},
      {"m = 3", {pred(M, WhereOp::Eq, Literal::of_int(3))}, [](const std::vector<ModelColumn>& c, size_t r) { return c[M].i[r] == 3; }},
      {"r < 2100", {pred(R, WhereOp::Lt, Literal::of_int(2100))}, [](const std::vector<ModelColumn>&, size_t r) { return r < 2100; }},
      // both tests decode (m: a radix frame, r: a sequence) in the same blocks, in both orders
      {"m != 0, r >= 3000", {pred(M, WhereOp::Ne, Literal::of_int(0)), pred(R, WhereOp::Ge, Literal::of_int(3000))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[M].i[r] != 0 && r >= 3000; }},
      {"r >= 3000, m != 0", {pred(R, WhereOp::Ge, Literal::of_int(3000)), pred(M, WhereOp::Ne, Literal::of_int(0))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[M].i[r] != 0 && r >= 3000; }},
      {"i < 1000, r >= 500", {pred(I, WhereOp::Lt, Literal::of_int(1000)), pred(R, WhereOp::Ge, Literal::of_int(500))},
       [](const std::vector<ModelColumn>& c, size_t r) { return c[I].ok[r] && c[I].i[r] < 1000 && r >= 500; }},
  };
  for (const Selection& sel : on_folded)
    for (size_t col : {size_t(I), size_t(M), size_t(R)})
      for (Op op : kNumericOps) check_numeric(sel, op, col);
}

TEST_CASE("exact integer sums beyond 2^53") {
  for (const Selection& sel : selections()) {
    __int128 want = 0;
    for (size_t r : selected_rows(sel))
      if (stored().cols[BIG].ok[r]) want += stored().cols[BIG].i[r];
    TableQueryPlan p;
    p.where = sel.where, p.op = Op::Sum, p.column = BIG;
    const TableQueryResult res = run(p);
    CHECK(res.values.type == ValueColumn::Type::I128 && res.values.wide.size() == 1 && res.values.wide[0] == want);
    p.op = Op::Min;
    int64_t lo = INT64_MAX;
    bool anyv = false;
    for (size_t r : selected_rows(sel))
      if (stored().cols[BIG].ok[r]) lo = std::min(lo, stored().cols[BIG].i[r]), anyv = true;
    const TableQueryResult mn = run(p);
    CHECK(mn.values.type == ValueColumn::Type::I64);
    CHECK(mn.values.present(0) == anyv);
    if (anyv) CHECK(mn.values.i[0] == lo);
    report("big sum", sel.name, Op::Sum, BIG);
  }
}

int str_cmp(const std::string& a, const std::string& b) {  // unsigned bytes, by hand
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k)
    if (a[k] != b[k]) return (unsigned char)a[k] < (unsigned char)b[k] ? -1 : 1;
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

TEST_CASE("min, max, count and null_count on str, date, timestamp and time; other ops are kind errors") {
  const auto& cols = stored().cols;
  for (const Selection& sel : selections()) {
    const std::vector<size_t> rows = selected_rows(sel);
    for (size_t col : {size_t(S), size_t(D), size_t(TS), size_t(TM)}) {
      size_t n = 0;
      std::optional<std::string> slo, shi;
      std::optional<int64_t> ilo, ihi;
      for (size_t r : rows) {
        if (!cols[col].ok[r]) continue;
        ++n;
        if (col == S) {
          const std::string& v = cols[S].s[r];
          if (!slo || str_cmp(v, *slo) < 0) slo = v;
          if (!shi || str_cmp(v, *shi) > 0) shi = v;
        } else {
          const int64_t v = cols[col].i[r];
          if (!ilo || v < *ilo) ilo = v;
          if (!ihi || v > *ihi) ihi = v;
        }
      }
      TableQueryPlan p;
      p.where = sel.where, p.column = col;
      p.op = Op::Count;
      CHECK(run(p).values.u.at(0) == n);
      p.op = Op::NullCount;
      CHECK(run(p).values.u.at(0) == rows.size() - n);
      for (Op op : {Op::Min, Op::Max}) {
        p.op = op;
        const TableQueryResult res = run(p);
        CHECK(res.values.size() == 1);
        CHECK(res.values.present(0) == (n > 0));  // over nothing: null
        if (n == 0) continue;
        if (col == S) CHECK(std::string(res.values.s.at(0)) == (op == Op::Min ? *slo : *shi));
        else CHECK(res.values.type == ValueColumn::Type::I64 && res.values.i.at(0) == (op == Op::Min ? *ilo : *ihi));
      }
      for (Op op : {Op::Sum, Op::Mean, Op::Var, Op::Median, Op::NanCount, Op::Histogram}) {
        p.op = op;
        CHECK_THROWS_CODE(run(p), "TET_QUERY_COLUMN_KIND");
      }
      report("non-numeric", sel.name, Op::Min, col);
    }
  }
}

TEST_CASE("count of rows, and histogram against numpy's rule") {
  for (const Selection& sel : selections()) {
    const std::vector<size_t> rows = selected_rows(sel);
    TableQueryPlan p;
    p.where = sel.where, p.count_rows = true;
    CHECK(run(p).values.u.at(0) == rows.size());
    // histogram over [-50, 50) in 8 bins, the last bin closed; NaN and out-of-range values skipped
    p.count_rows = false, p.op = Op::Histogram, p.column = F, p.bins = 8, p.hist_range = true, p.hist_min = -50, p.hist_max = 50;
    std::vector<uint64_t> want(8, 0);
    for (size_t r : rows) {
      const double v = stored().cols[F].f[r];
      if (!stored().cols[F].ok[r] || !(v >= -50 && v <= 50)) continue;
      want[v == 50 ? 7 : size_t((v + 50) / 12.5)]++;
    }
    const TableQueryResult h = run(p);
    CHECK(h.values.u == want);
    CHECK(h.hist_edges.size() == 9 && h.hist_edges.front() == -50 && h.hist_edges.back() == 50);
    report("histogram", sel.name, Op::Histogram, F);
  }
}

// ---- group_by ----------------------------------------------------------------------------------

// A model key part: null last, then NaN after every number; ints exact, floats with -0 = 0.
struct KeyPart {
  bool null = false, nan = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
};
int cmp_part(const KeyPart& a, const KeyPart& b, Physical ph) {
  if (a.null != b.null) return a.null ? 1 : -1;
  if (a.null) return 0;
  if (ph == Physical::Str) return str_cmp(a.s, b.s);
  if (ph == Physical::Float) {
    if (a.nan != b.nan) return a.nan ? 1 : -1;
    if (a.nan) return 0;
    return a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
  }
  return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
}

// Month starts (days since 1970-01-01) from 1800 to 2200, walked month by month.
const std::vector<int64_t>& month_starts() {
  static std::vector<int64_t> m = [] {
    std::vector<int64_t> out;
    int64_t day = 0;
    // days from 1800-01-01 to 1970-01-01
    for (int y = 1800; y < 1970; ++y) day -= ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 366 : 365;
    for (int y = 1800; y < 2200; ++y)
      for (int mo = 0; mo < 12; ++mo) {
        out.push_back(day);
        static const int len[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        day += len[mo] + (mo == 1 && leap ? 1 : 0);
      }
    return out;
  }();
  return m;
}
int64_t model_floor(int64_t v, int64_t w) {  // by __int128 and a remainder fix-up
  __int128 q = __int128(v) / w;
  if (__int128(q) * w > v) --q;
  return int64_t(q * w);
}
int64_t model_day_bucket(int64_t days, TimeBucket b) {
  if (b == TimeBucket::Day) return days;
  const auto& ms = month_starts();
  const size_t k = size_t(std::upper_bound(ms.begin(), ms.end(), days) - ms.begin()) - 1;
  return b == TimeBucket::Month ? ms[k] : ms[k - k % 12];
}
int64_t model_bucket(Kind kind, TimeBucket b, int64_t v) {
  if (kind == Kind::Date) return model_day_bucket(v, b);
  if (b == TimeBucket::Hour) return model_floor(v, 3600LL * 1000000);
  if (b == TimeBucket::Minute) return model_floor(v, 60LL * 1000000);
  return model_day_bucket(model_floor(v, kDay) / kDay, b) * kDay;
}

KeyPart model_key(const GroupKey& g, size_t r) {
  const ModelColumn& c = stored().cols[g.column];
  KeyPart k;
  if (!c.ok[r]) {
    k.null = true;
    return k;
  }
  if (c.kind == Kind::Str) k.s = c.s[r];
  else if (c.kind == Kind::Float) {
    double v = c.f[r];
    if (g.transform == KeyTransform::WidthFloat) v = std::floor(v / g.width_float) * g.width_float;
    k.nan = std::isnan(v), k.f = v == 0 ? 0.0 : v;
  } else {
    k.i = c.i[r];
    if (g.transform == KeyTransform::WidthInt) k.i = model_floor(k.i, g.width_int);
    if (g.transform == KeyTransform::Bucket) k.i = model_bucket(c.kind, g.bucket, k.i);
  }
  return k;
}

struct ModelGroup {
  std::vector<KeyPart> key;
  std::vector<size_t> rows;
};

std::vector<ModelGroup> model_groups(const std::vector<GroupKey>& keys, const std::vector<size_t>& rows) {
  std::vector<Physical> ph;
  for (const GroupKey& g : keys) ph.push_back(physical_of(stored().cols[g.column].kind));
  auto less = [&](const std::vector<KeyPart>& a, const std::vector<KeyPart>& b) {
    for (size_t p = 0; p < a.size(); ++p)
      if (int c = cmp_part(a[p], b[p], ph[p])) return c < 0;
    return false;
  };
  std::map<std::vector<KeyPart>, std::vector<size_t>, decltype(less)> m(less);
  for (size_t r : rows) {
    std::vector<KeyPart> k;
    for (const GroupKey& g : keys) k.push_back(model_key(g, r));
    m[k].push_back(r);
  }
  std::vector<ModelGroup> out;
  for (auto& e : m) out.push_back({e.first, e.second});
  return out;
}

bool key_matches(const ValueColumn& got, size_t k, const KeyPart& want, Physical ph) {
  if (got.present(k) == want.null) return false;
  if (want.null) return true;
  switch (ph) {
    case Physical::Str: return std::string(got.s.at(k)) == want.s;
    case Physical::Float:
      return want.nan ? std::isnan(got.f[k]) : got.f[k] == want.f && !std::signbit(got.f[k] == 0 ? got.f[k] : 1.0);
    case Physical::Bool: return int64_t(got.b[k]) == want.i;
    default: return got.i[k] == want.i;
  }
}

void check_grouped(const char* what, const Selection& sel, const std::vector<GroupKey>& keys, Op op, size_t col) {
  const auto& cols = stored().cols;
  const std::vector<ModelGroup> groups = model_groups(keys, selected_rows(sel));
  TableQueryPlan p;
  p.where = sel.where, p.op = op, p.column = col, p.group_by = keys, p.q = 0.3;
  const TableQueryResult res = run(p);
  CHECK(res.group_keys.size() == keys.size());
  CHECK(res.group_counts.size() == groups.size());
  CHECK(res.values.size() == groups.size());
  if (res.group_counts.size() != groups.size() || res.values.size() != groups.size()) {
    std::printf("    %s: %zu groups, want %zu\n", what, res.group_counts.size(), groups.size());
    report(what, sel.name, op, col);
    return;
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    CHECK(res.group_counts[g] == groups[g].rows.size());
    for (size_t p2 = 0; p2 < keys.size(); ++p2) {
      const bool km = key_matches(res.group_keys[p2], g, groups[g].key[p2], physical_of(cols[keys[p2].column].kind));
      if (!km) std::printf("    group %zu part %zu: got present %d i %lld want null %d i %lld s '%s'\n", g, p2, int(res.group_keys[p2].present(g)),
        res.group_keys[p2].type == ValueColumn::Type::I64 ? (long long)res.group_keys[p2].i[g] : res.group_keys[p2].type == ValueColumn::Type::Bool ? (long long)res.group_keys[p2].b[g] : -1LL,
        int(groups[g].key[p2].null), (long long)groups[g].key[p2].i, groups[g].key[p2].s.c_str());
      CHECK(km);
    }
    std::vector<double> x;
    for (size_t r : groups[g].rows)
      if (cols[col].ok[r]) x.push_back(cols[col].kind == Kind::Float ? cols[col].f[r] : double(cols[col].i[r]));
    const std::optional<double> got = as_double(res.values, g);
    const double want = model_reduce(op, x, groups[g].rows.size(), 0.3);
    if ((op == Op::Min || op == Op::Max) && cols[col].kind != Kind::Float && x.empty()) CHECK(!got);
    else CHECK(got && same(*got, want));
  }
  // the same groups with one thread
  const TableQueryResult one = run(p, 1);
  CHECK(one.group_counts == res.group_counts);
  report(what, sel.name, op, col);
}

TEST_CASE("group_by one key: int, bool, str (nulls last) and float (NaN after numbers, -0 = 0)") {
  for (const Selection& sel : selections())
    for (size_t key : {size_t(G), size_t(B), size_t(S), size_t(F)})
      for (Op op : {Op::Count, Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Std, Op::NullCount, Op::Median, Op::AnyNan}) {
        GroupKey k;
        k.column = key;
        check_grouped("one key", sel, {k}, op, key == F ? size_t(I) : size_t(F));
      }
}

TEST_CASE("group_by two keys: observed combinations only, ordered part by part, nulls last") {
  GroupKey s, b, g, f;
  s.column = S, b.column = B, g.column = G, f.column = F;
  for (const Selection& sel : selections()) {
    check_grouped("s,b", sel, {s, b}, Op::Mean, F);
    check_grouped("g,s", sel, {g, s}, Op::Mean, F);
    check_grouped("f,b", sel, {f, b}, Op::Count, I);
  }
}

// With three or four keys, groups whose first parts are null once came out of order ((null,
// null, null) before (null, null, false)) in the GCC 12 -O2 / -O3 builds while the key
// comparison read its null flags as bools (see query/table_query.cpp, KeyColumns::compare).
TEST_CASE("group_by three and four keys: ordered part by part, nulls last") {
  GroupKey s, b, g, f;
  s.column = S, b.column = B, g.column = G, f.column = F;
  for (const Selection& sel : selections()) {
    check_grouped("g,s,b", sel, {g, s, b}, Op::Count, I);
    check_grouped("b,s,g", sel, {b, s, g}, Op::Mean, F);
    check_grouped("g,g,b", sel, {g, g, b}, Op::Mean, F);
    check_grouped("b,g,s,f", sel, {b, g, s, f}, Op::Sum, I);
  }
}

TEST_CASE("group_by calendar buckets on date and timestamp columns (before 1970, leap years)") {
  for (const Selection& sel : {selections()[0], selections()[2], selections()[3]}) {
    for (TimeBucket tb : {TimeBucket::Year, TimeBucket::Month, TimeBucket::Day}) {
      GroupKey k;
      k.column = D, k.transform = KeyTransform::Bucket, k.bucket = tb;
      check_grouped("date bucket", sel, {k}, Op::Count, R);
    }
    for (TimeBucket tb : {TimeBucket::Year, TimeBucket::Month, TimeBucket::Day, TimeBucket::Hour, TimeBucket::Minute}) {
      GroupKey k;
      k.column = TS, k.transform = KeyTransform::Bucket, k.bucket = tb;
      check_grouped("timestamp bucket", sel, {k}, Op::Sum, I);
    }
  }
  // the bucket starts by hand: 1969-12-31T23:59:59.999999Z is in 1969-12 (day -1); 2000-02-29
  // (day 11016) is in 2000-02 (day 10988) of 2000 (day 10957); 1900-03-01 (day -25508) is in
  // 1900-03, 1900 not being a leap year
  CHECK(bucket_start(Kind::Timestamp, TimeUnit::Us, TimeBucket::Month, -1) == -31 * kDay);
  CHECK(bucket_start(Kind::Timestamp, TimeUnit::Us, TimeBucket::Day, -1) == -kDay);
  CHECK(bucket_start(Kind::Timestamp, TimeUnit::Us, TimeBucket::Hour, -1) == -3600LL * 1000000);
  CHECK(bucket_start(Kind::Date, TimeUnit::Us, TimeBucket::Month, 11016) == 10988);
  CHECK(bucket_start(Kind::Date, TimeUnit::Us, TimeBucket::Year, 11016) == 10957);
  CHECK(bucket_start(Kind::Date, TimeUnit::Us, TimeBucket::Month, -25508) == -25508);
  CHECK(bucket_start(Kind::Date, TimeUnit::Us, TimeBucket::Month, -25509) == -25508 - 28);
  CHECK(bucket_start(Kind::Timestamp, TimeUnit::S, TimeBucket::Year, 951782400) == 946684800);  // 2000-02-29 → 2000-01-01
}

TEST_CASE("group_by width: exact on ints beyond 2^53, floor(v / w) * w on floats with ±inf") {
  for (const Selection& sel : selections()) {
    for (int64_t w : {int64_t(1), int64_t(3), int64_t(7), int64_t(1) << 59}) {
      GroupKey k;
      k.column = BIG, k.transform = KeyTransform::WidthInt, k.width_int = w;
      check_grouped("int width", sel, {k}, Op::Count, BIG);
    }
    for (double w : {0.5, 3.0, 1e10}) {
      GroupKey k;
      k.column = F, k.transform = KeyTransform::WidthFloat, k.width_float = w;
      check_grouped("float width", sel, {k}, Op::Count, F);
    }
  }
  CHECK(width_floor(-7, 3) == -9);
  CHECK(width_floor((int64_t(1) << 60) + 4, 3) == (int64_t(1) << 60) + 2);  // 2^60 = 1 mod 3
  CHECK_THROWS_CODE(width_floor(INT64_MIN, 3), "TET_QUERY_INVALID");
  // ±inf keys exist among the float widths (block 3 holds them)
  GroupKey k;
  k.column = F, k.transform = KeyTransform::WidthFloat, k.width_float = 0.5;
  TableQueryPlan p;
  p.op = Op::Count, p.column = F, p.group_by = {k};
  const TableQueryResult res = run(p);
  const ValueColumn& keys = res.group_keys.at(0);
  CHECK(keys.size() >= 4);
  CHECK(keys.f.front() == -INFINITY);
  // the last keys: +inf, NaN, null
  CHECK(keys.size() >= 3 && keys.f[keys.size() - 3] == INFINITY && std::isnan(keys.f[keys.size() - 2]) && !keys.present(keys.size() - 1));
}

// ---- the dense-key path against the hashed one --------------------------------------------------

// A single int key without a transform whose values span ≤ 2^20, and a single str key whose blocks
// hold global-dictionary codes, find their groups through an array (query/table_query.cpp,
// DenseKey); every other key hashes its key words. The same keys reach the hashed path as an int
// key with width 1 (floor(v / 1) * 1 = v) and as the same strings stored without a global
// dictionary. Both paths must give bit-identical results: the same groups, counts and value bits,
// over several work units (many groups per unit), with nulls, NaN and ±inf, at 1 and 2 threads.
struct DenseTable {
  std::unique_ptr<tet_test::AlignedBytes> al;
  std::unique_ptr<TablesRegion> region;
  bool global_dict = false;
  uint64_t huffman_blocks = 0;  // GlobalHuffman blocks of ks (decoded two at a time by the dense path)
  uint64_t huffman_blocks_no_nulls = 0;  // the same of ksn
};
// DKSN / DKLN: the words of DKS / DKL with no nulls (blocks without a validity mask)
enum DenseCol : size_t { DM, DKI, DKS, DKL, DF, DI, DB, DKSN, DKLN };
constexpr size_t kDenseRows = 100 * 2048 + 77;  // > 64 blocks: several units

const DenseTable& dense_table() {
  static DenseTable d = [] {
    DenseTable t;
    std::vector<int64_t> m(kDenseRows), ki(kDenseRows), iv(kDenseRows), blk(kDenseRows);
    std::vector<uint8_t> ki_ok(kDenseRows), s_ok(kDenseRows), f_ok(kDenseRows), i_ok(kDenseRows);
    std::vector<std::string> words(kDenseRows);
    std::vector<double> f(kDenseRows);
    const double specials[] = {NAN, INFINITY, -INFINITY, -0.0};
    for (size_t r = 0; r < kDenseRows; ++r) {
      const uint64_t h = mix(r + 77), h2 = mix(h);
      m[r] = int64_t(h % 5);
      ki[r] = int64_t(h2 % 20000) - 10000, ki_ok[r] = h2 % 97 != 0;                 // 20000 values
      // 3000 strings, skewed (a product of two uniforms): the column's codes are Huffman-coded
      words[r] = "w" + std::to_string((h >> 20) % 3000 * ((h >> 44) % 3000) / 3000), s_ok[r] = (h >> 40) % 53 != 0;
      blk[r] = int64_t(r / 2048 % 3);  // every third block: 1
      f[r] = (h >> 8) % 1009 == 0 ? specials[(h >> 30) % 4] : std::ldexp(double(int64_t(h2 >> 11) - (int64_t(1) << 52)), int((h >> 50) % 41) - 72);  // 53-bit mantissas, 2^-20..2^20: sums round
      f_ok[r] = (h >> 12) % 31 != 0;
      iv[r] = int64_t(h2 >> 4) % 1000001 - 500000, i_ok[r] = (h >> 16) % 37 != 0;
    }
    RegionWriter w(memory_spool());
    const uint32_t tb = w.add_table("d", "", kNoAxis,
                                    {ColumnSchema{"m", Kind::Int}, ColumnSchema{"ki", Kind::Int}, ColumnSchema{"ks", Kind::Str},
                                     ColumnSchema{"kl", Kind::Str}, ColumnSchema{"f", Kind::Float}, ColumnSchema{"i", Kind::Int},
                                     ColumnSchema{"b", Kind::Int}, ColumnSchema{"ksn", Kind::Str}, ColumnSchema{"kln", Kind::Str}});
    auto ints = [&](uint32_t col, const std::vector<int64_t>& v, const uint8_t* ok) {
      IntBuilder b(Kind::Int);
      b.push_many(v.data(), ok, v.size());
      w.add_column(tb, col, *b.finish());
    };
    ints(DM, m, nullptr);
    ints(DKI, ki, ki_ok.data());
    ints(DI, iv, i_ok.data());
    ints(DB, blk, nullptr);
    std::vector<std::string_view> sv(words.begin(), words.end());
    for (int variant = 0; variant < 4; ++variant) {
      const bool global = variant % 2 == 0, with_nulls = variant < 2;
      StrBuilderOptions o;
      o.allow_global_dict = global;
      StrBuilder b(o);
      b.push_many(sv.data(), sv.size(), with_nulls ? s_ok.data() : nullptr);
      CellRef root = b.finish();
      const uint32_t col = with_nulls ? (global ? DKS : DKL) : (global ? DKSN : DKLN);
      w.add_column(tb, col, *root);
      if (global)
        for (uint64_t k = 0; k < block_count(*root); ++k)
          (with_nulls ? t.huffman_blocks : t.huffman_blocks_no_nulls) += block_at(*root, k).enc_v() == Enc::GlobalHuffman;
      if (const GlobalDictionary* g = b.global_dictionary()) {
        if (global) t.global_dict = true;
        w.add_metablock(tb, col, MetablockKind::GlobalDictionary, g->encode());
      }
    }
    FloatBuilder fb;
    fb.push_many(f.data(), f_ok.data(), f.size());
    w.add_column(tb, DF, *fb.finish());
    t.al = std::make_unique<tet_test::AlignedBytes>(tet_test::region_bytes(w));
    t.region = std::make_unique<TablesRegion>(t.al->p, t.al->len);
    return t;
  }();
  return d;
}

bool same_bits(const ValueColumn& a, const ValueColumn& b) {
  if (a.type != b.type || a.size() != b.size() || a.valid != b.valid || a.i != b.i || a.u != b.u || a.b != b.b || a.wide != b.wide)
    return false;
  // Bits, but any NaN equals any NaN: which operand's NaN an inf - inf or a NaN sum propagates (its
  // sign) is the compiler's choice of operand order for a commutative add, not the arithmetic's.
  if (a.f.size() != b.f.size()) return false;
  for (size_t k = 0; k < a.f.size(); ++k)
    if (std::memcmp(&a.f[k], &b.f[k], 8) != 0 && !(std::isnan(a.f[k]) && std::isnan(b.f[k]))) return false;
  for (size_t k = 0; k < a.s.size(); ++k)
    if (a.s.at(k) != b.s.at(k)) return false;
  return true;
}

TEST_CASE("group_by dense keys (int range, global dictionary) are bit-identical to hashed keys") {
  const DenseTable& d = dense_table();
  CHECK(d.global_dict);  // else the str comparison below would be hashed against hashed
  CHECK(d.huffman_blocks > 10);
  CHECK(d.huffman_blocks_no_nulls > 10);  // every row present: the codes decode straight into the indices
  Predicate scattered, blocks;
  scattered.column = DM, scattered.op = WhereOp::Ne, scattered.value = Literal::of_int(0);
  blocks.column = DB, blocks.op = WhereOp::Ne, blocks.value = Literal::of_int(1);  // every third block empty
  GroupKey ki, ki_w1, ks, kl, ksn, kln;
  ki.column = DKI;
  ki_w1.column = DKI, ki_w1.transform = KeyTransform::WidthInt, ki_w1.width_int = 1;
  ks.column = DKS;
  kl.column = DKL;
  ksn.column = DKSN;
  kln.column = DKLN;
  const std::pair<GroupKey, GroupKey> pairs[] = {{ki, ki_w1}, {ks, kl}, {ksn, kln}};
  int compared = 0;
  for (int filtered : {0, 1, 2})
    for (const auto& [fast, hashed] : pairs)
      for (size_t col : {size_t(DF), size_t(DI)})
        for (Op op : {Op::Mean, Op::Sum, Op::Var, Op::Min, Op::Max, Op::Count, Op::NullCount, Op::NanMean, Op::Median, Op::Product}) {
          TableQueryPlan p;
          if (filtered == 1) p.where = {scattered};
          if (filtered == 2) p.where = {blocks};
          p.op = op, p.column = col;
          p.group_by = {fast};
          const TableQueryResult a1 = run_table_query(*d.region, p, ExecLimits{1, 0});
          const TableQueryResult a2 = run_table_query(*d.region, p, ExecLimits{2, 0});
          p.group_by = {hashed};
          const TableQueryResult h = run_table_query(*d.region, p, ExecLimits{2, 0});
          bool ok = h.group_counts.size() > 1000 && a1.group_counts == h.group_counts && a2.group_counts == h.group_counts &&
                    a1.group_keys.size() == 1 && h.group_keys.size() == 1 && same_bits(a1.values, h.values) &&
                    same_bits(a2.values, h.values) && a1.units > 1;
          if (ok) {
            // the keys: the width-1 key is the same int column; the str keys the same strings
            ok = same_bits(a1.group_keys[0], h.group_keys[0]) && same_bits(a2.group_keys[0], h.group_keys[0]);
          }
          if (!ok && a1.values.f.size() == h.values.f.size())
            for (size_t z = 0, shown = 0; z < h.values.f.size() && shown < 3; ++z)
              if (std::memcmp(&a1.values.f[z], &h.values.f[z], 8) != 0 && !(std::isnan(a1.values.f[z]) && std::isnan(h.values.f[z])))
                std::printf("      group %zu (count %llu): dense %.17g hashed %.17g\n", z, (unsigned long long)h.group_counts[z], a1.values.f[z], h.values.f[z]), ++shown;
          if (!ok) std::printf("    dense vs hashed: key col %zu, value col %zu, op %d, where %d (a1=h %d, a2=h %d, counts %d %d, units %u)\n", fast.column, col, int(op), int(filtered), int(same_bits(a1.values, h.values)), int(same_bits(a2.values, h.values)), int(a1.group_counts == h.group_counts), int(a2.group_counts == h.group_counts), unsigned(a1.units));
          CHECK(ok);
          ++compared;
        }
  CHECK(compared == 180);
}

TEST_CASE("zero groups after an empty where") {
  GroupKey k;
  k.column = S;
  TableQueryPlan p;
  p.where = selections()[1].where, p.op = Op::Mean, p.column = F, p.group_by = {k};
  const TableQueryResult res = run(p);
  CHECK(res.group_counts.empty() && res.values.size() == 0 && res.group_keys.size() == 1 && res.group_keys[0].size() == 0);
}

// ---- rows --------------------------------------------------------------------------------------

// Ascending order of one column's values: nulls last (in both directions), NaN largest, -0 = 0.
int model_order(size_t col, size_t a, size_t b, bool desc) {
  const ModelColumn& c = stored().cols[col];
  if (c.ok[a] != c.ok[b]) return c.ok[a] ? -1 : 1;
  if (!c.ok[a]) return 0;
  int v = 0;
  if (c.kind == Kind::Str) v = str_cmp(c.s[a], c.s[b]);
  else if (c.kind == Kind::Float) {
    const double x = c.f[a], y = c.f[b];
    v = std::isnan(x) != std::isnan(y) ? (std::isnan(x) ? 1 : -1) : std::isnan(x) ? 0 : x < y ? -1 : x > y ? 1 : 0;
  } else v = c.i[a] < c.i[b] ? -1 : c.i[a] > c.i[b] ? 1 : 0;
  return desc ? -v : v;
}

void check_rows(const char* what, const Selection& sel, const std::vector<OrderKey>& order, uint64_t limit, uint64_t offset) {
  const auto& cols = stored().cols;
  std::vector<size_t> rows = selected_rows(sel);
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
    for (const OrderKey& o : order)
      if (int c = model_order(o.column, a, b, o.desc)) return c < 0;
    return false;
  });
  std::vector<size_t> want;
  for (size_t k = size_t(offset); k < rows.size() && want.size() < limit; ++k) want.push_back(rows[k]);
  TableQueryPlan p;
  p.mode = TableQueryPlan::Mode::Rows;
  p.where = sel.where, p.columns = {F, S, I, TS}, p.order_by = order, p.limit = limit, p.offset = offset;
  const TableQueryResult res = run(p);
  CHECK(res.row_numbers.size() == want.size());
  CHECK(res.rows.size() == 4);
  if (res.row_numbers.size() == want.size() && res.rows.size() == 4) {
    for (size_t k = 0; k < want.size(); ++k) {
      const size_t r = want[k];
      CHECK(res.row_numbers[k] == r);
      const ValueColumn &f = res.rows[0], &s = res.rows[1], &i = res.rows[2], &ts = res.rows[3];
      CHECK(f.present(k) == bool(cols[F].ok[r]) && s.present(k) == bool(cols[S].ok[r]) && i.present(k) == bool(cols[I].ok[r]));
      if (f.present(k)) CHECK(std::memcmp(&f.f[k], &cols[F].f[r], 8) == 0);  // -0.0 stays -0.0
      if (s.present(k)) CHECK(std::string(s.s.at(k)) == cols[S].s[r]);
      if (i.present(k)) CHECK(i.i[k] == cols[I].i[r]);
      if (ts.present(k)) CHECK(ts.i[k] == cols[TS].i[r]);
    }
  }
  report(what, sel.name, Op::None, 0);
}

TEST_CASE("rows: storage order, order_by (ties, nulls last, NaN largest, desc), limit and offset") {
  const std::vector<std::vector<OrderKey>> orders = {
      {}, {{F, false}}, {{F, true}}, {{S, false}, {I, true}}, {{B, true}, {D, false}}, {{G, false}}, {{G, true}},
      {{TS, true}}, {{B, false}, {G, true}, {S, false}, {F, true}}};
  for (const Selection& sel : selections())
    for (const auto& o : orders) {
      check_rows("rows", sel, o, 1000, 0);
      check_rows("rows limit 17 offset 5", sel, o, 17, 5);
      check_rows("rows limit 0", sel, o, 0, 0);
      check_rows("rows offset past end", sel, o, 10, kRows + 1);
      check_rows("rows all", sel, o, kMaxRowsLimit, 0);
    }
}

// ---- validation ---------------------------------------------------------------------------------

TEST_CASE("validation errors by code") {
  TableQueryPlan p;
  p.op = Op::Sum, p.column = NCOLS;
  CHECK_THROWS_CODE(run(p), "TET_QUERY_UNKNOWN_COLUMN");
  p.column = F, p.table = 1;
  CHECK_THROWS_CODE(run(p), "TET_QUERY_UNKNOWN_TABLE");
  p.table = 0, p.op = Op::ArgMax;
  CHECK_THROWS_CODE(run(p), "TET_QUERY_UNSUPPORTED");
  GroupKey k;
  k.column = G;
  p.op = Op::Histogram, p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_UNSUPPORTED");
  p.op = Op::Quantile, p.q = 1.5, p.group_by.clear();
  CHECK_THROWS_CODE(run(p), "TET_QUERY_INVALID");
  p.op = Op::Count, p.group_by = {k, k, k, k, k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_INVALID");
  k.column = TM, k.transform = KeyTransform::Bucket, k.bucket = TimeBucket::Day;
  p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_COLUMN_KIND");  // bucket on time
  k.column = D, k.bucket = TimeBucket::Hour;
  p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_COLUMN_KIND");  // hour bucket on date
  k.column = F, k.transform = KeyTransform::WidthInt, k.width_int = 2;
  p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_COLUMN_KIND");  // int width on a float column
  k.column = I, k.width_int = 0;
  p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_INVALID");
  k.column = F, k.transform = KeyTransform::WidthFloat, k.width_float = INFINITY;
  p.group_by = {k};
  CHECK_THROWS_CODE(run(p), "TET_QUERY_INVALID");
  TableQueryPlan rows;
  rows.mode = TableQueryPlan::Mode::Rows, rows.columns = {F}, rows.limit = kMaxRowsLimit + 1;
  CHECK_THROWS_CODE(run(rows), "TET_QUERY_INVALID");
  rows.limit = 10, rows.group_by = {GroupKey{}};
  CHECK_THROWS_CODE(run(rows), "TET_QUERY_INVALID");
  // a memory budget too small for the values a median gathers
  TableQueryPlan med;
  med.op = Op::Median, med.column = F;
  CHECK_THROWS_CODE(run_table_query(*stored().region, med, ExecLimits{1, 1024}), "TET_BUDGET_EXCEEDED");
}

// ---- cancellation --------------------------------------------------------------------------------

TEST_CASE("a set cancel flag stops every table query path with TET_CANCELLED") {
  std::atomic<bool> cancel{true};
  const ExecLimits limits{2, 0, &cancel};
  TableQueryPlan sum;
  sum.op = Op::Sum, sum.column = F;
  CHECK_THROWS_CODE(run_table_query(*stored().region, sum, limits), "TET_CANCELLED");
  TableQueryPlan filtered = sum;
  filtered.where = {range(R, 1000, 5000)};
  CHECK_THROWS_CODE(run_table_query(*stored().region, filtered, limits), "TET_CANCELLED");
  TableQueryPlan grouped = sum;
  GroupKey k;
  k.column = G;
  grouped.group_by = {k};
  CHECK_THROWS_CODE(run_table_query(*stored().region, grouped, limits), "TET_CANCELLED");
  TableQueryPlan rows;
  rows.mode = TableQueryPlan::Mode::Rows, rows.columns = {F}, rows.limit = 10;
  rows.order_by = {OrderKey{F, true}};
  CHECK_THROWS_CODE(run_table_query(*stored().region, rows, limits), "TET_CANCELLED");
  // the same plans answer once the flag is clear
  cancel.store(false);
  CHECK(run_table_query(*stored().region, sum, limits).rows_selected == kRows);
  CHECK(run_table_query(*stored().region, rows, limits).rows.size() == 1);
}

}  // namespace

TEST_MAIN()
