// `where` evaluation over stored tables (cells/predicate.h): every op on every kind against a
// plain model that applies the spec's rules (tables_and_filters.md §4.1, §4.5) row by row, ANDs
// across columns, the edge literals, validation errors by code, and the pruning counts on an
// obs-like table (zone maps on a sorted timestamp, the block index on a unique string column,
// For frames on station ids).
//
// Build standalone (see native/cells/README.md):
//   g++ -std=c++17 -O2 -Inative/include -Inative -Inative/vendor/zstd/lib native/cells/*.cpp native/util/io.cpp
//     native/util/utf8.cpp native/util/xxh64.cpp native/exec/thread_pool.cpp -DXXH_NAMESPACE=ZSTD_
//     native/vendor/zstd/lib/common/xxhash.c native/tests/cells_where_test.cpp -o /tmp/w -lpthread
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/predicate.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "cells/where_wire.h"
#include "check.h"
#include "region_bytes.h"
#include "tet/error.h"

using namespace tet;
using namespace tet::cells;

namespace {

// ---- the model -------------------------------------------------------------------------------

struct ModelColumn {
  explicit ModelColumn(Kind k) : kind(k) {}
  Kind kind;
  std::vector<int64_t> i;  // bool (0/1), int, timestamp
  std::vector<double> f;
  std::vector<std::string> s;
  std::vector<uint8_t> ok;
};

int str_cmp(const std::string& a, const std::string& b) {  // binary byte order, by hand
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    const unsigned x = static_cast<unsigned char>(a[k]), y = static_cast<unsigned char>(b[k]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

// Literal → the model's comparable value (int columns take integral floats).
int64_t lit_i(const Literal& l) { return l.type == Literal::Type::Bool ? l.b : l.type == Literal::Type::Float ? int64_t(l.f) : l.i; }
double lit_f(const Literal& l) { return l.type == Literal::Type::Float ? l.f : double(l.i); }

template <class T>
bool cmp_holds(WhereOp op, int c) {  // c = sign of value - literal
  switch (op) {
    case WhereOp::Eq: return c == 0;
    case WhereOp::Ne: return c != 0;
    case WhereOp::Lt: return c < 0;
    case WhereOp::Le: return c <= 0;
    case WhereOp::Gt: return c > 0;
    default: return c >= 0;
  }
}

bool model_match(const ModelColumn& m, const Predicate& p, size_t r) {
  if (p.op == WhereOp::IsNull) return p.flag == !m.ok[r];
  if (!m.ok[r]) return false;  // nulls match nothing else
  if (m.kind == Kind::Float) {
    const double x = m.f[r];
    switch (p.op) {
      case WhereOp::Eq: return x == lit_f(p.value);
      case WhereOp::Ne: return x != lit_f(p.value);  // NaN != anything
      case WhereOp::Lt: return x < lit_f(p.value);
      case WhereOp::Le: return x <= lit_f(p.value);
      case WhereOp::Gt: return x > lit_f(p.value);
      case WhereOp::Ge: return x >= lit_f(p.value);
      case WhereOp::In:
      case WhereOp::NotIn: {
        bool any = false;
        for (const Literal& l : p.set) any = any || x == lit_f(l);
        return p.op == WhereOp::In ? any : !any;
      }
      case WhereOp::Range: {
        if (std::isnan(x)) return false;
        return (!p.lo || lit_f(*p.lo) <= x) && (!p.hi || x < lit_f(*p.hi));
      }
      case WhereOp::IsNan: return std::isnan(x) == p.flag;
      default: return false;
    }
  }
  if (m.kind == Kind::Str) {
    const std::string& x = m.s[r];
    switch (p.op) {
      case WhereOp::In:
      case WhereOp::NotIn: {
        bool any = false;
        for (const Literal& l : p.set) any = any || str_cmp(x, l.s) == 0;
        return p.op == WhereOp::In ? any : !any;
      }
      case WhereOp::Range: return (!p.lo || str_cmp(x, p.lo->s) >= 0) && (!p.hi || str_cmp(x, p.hi->s) < 0);
      case WhereOp::Prefix: return x.size() >= p.value.s.size() && str_cmp(x.substr(0, p.value.s.size()), p.value.s) == 0;
      default: return cmp_holds<int>(p.op, str_cmp(x, p.value.s));
    }
  }
  const int64_t x = m.i[r];  // bool as 0 / 1: false < true
  auto sign = [](int64_t a, int64_t b) { return a < b ? -1 : a > b ? 1 : 0; };
  switch (p.op) {
    case WhereOp::In:
    case WhereOp::NotIn: {
      bool any = false;
      for (const Literal& l : p.set) any = any || x == lit_i(l);
      return p.op == WhereOp::In ? any : !any;
    }
    case WhereOp::Range: return (!p.lo || lit_i(*p.lo) <= x) && (!p.hi || x < lit_i(*p.hi));
    default: return cmp_holds<int>(p.op, sign(x, lit_i(p.value)));
  }
}

std::vector<uint64_t> model_where(const std::vector<ModelColumn>& cols, const std::vector<Predicate>& preds, size_t rows) {
  std::vector<uint64_t> out;
  for (size_t r = 0; r < rows; ++r) {
    bool all = true;
    for (const Predicate& p : preds) all = all && model_match(cols[p.column], p, r);
    if (all) out.push_back(r);
  }
  return out;
}

// ---- tables --------------------------------------------------------------------------------

using Aligned = tet_test::AlignedBytes;

// Writes the model columns as one table (str columns with their metablocks) and opens the region.
struct Stored {
  std::vector<uint8_t> bytes;
  std::unique_ptr<Aligned> al;
  std::unique_ptr<TablesRegion> region;
};

Stored store(const std::vector<ModelColumn>& cols, const std::vector<std::string>& names) {
  RegionWriter w(memory_spool());
  std::vector<ColumnSchema> schema;
  for (size_t c = 0; c < cols.size(); ++c) schema.push_back(ColumnSchema{names[c], cols[c].kind});
  const uint32_t t = w.add_table("t", "", kNoAxis, schema);
  for (size_t c = 0; c < cols.size(); ++c) {
    const ModelColumn& m = cols[c];
    const size_t n = m.ok.size();
    if (m.kind == Kind::Float) {
      FloatBuilder b;
      b.push_many(m.f.data(), m.ok.data(), n);
      w.add_column(t, uint32_t(c), *b.finish());
    } else if (m.kind == Kind::Bool) {
      BoolBuilder b;
      std::vector<uint8_t> v(m.i.begin(), m.i.end());
      b.push_many(v.data(), m.ok.data(), n);
      w.add_column(t, uint32_t(c), *b.finish());
    } else if (m.kind == Kind::Str) {
      StrBuilder b;
      std::vector<std::string_view> v(m.s.begin(), m.s.end());
      b.push_many(v.data(), n, m.ok.data());
      CellRef root = b.finish();
      w.add_column(t, uint32_t(c), *root);
      if (const GlobalDictionary* g = b.global_dictionary()) w.add_metablock(t, uint32_t(c), MetablockKind::GlobalDictionary, g->encode());
      if (BlockIndex* ix = b.block_index()) w.add_metablock(t, uint32_t(c), MetablockKind::BlockIndex, ix->take_body());
    } else {
      IntBuilder b(m.kind);
      b.push_many(m.i.data(), m.ok.data(), n);
      w.add_column(t, uint32_t(c), *b.finish());
    }
  }
  Stored s;
  w.write([&](const void* p, size_t len) { s.bytes.insert(s.bytes.end(), (const uint8_t*)p, (const uint8_t*)p + len); });
  s.al = std::make_unique<Aligned>(s.bytes);
  s.region = std::make_unique<TablesRegion>(s.al->p, s.al->len);
  return s;
}

// A mixed table: every kind, blocks of different shapes (so several encodings), nulls.
constexpr size_t kRows = 6 * 2048 + 777;

std::vector<ModelColumn> mixed_columns(uint64_t seed) {
  std::mt19937_64 rng(seed);
  ModelColumn b(Kind::Bool), i(Kind::Int), f(Kind::Float), s(Kind::Str), ts(Kind::Timestamp);
  const double specials[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1.5, -2.25, 1e300};
  const char* const words[] = {"", "a", "ab", "abc", "\xc3\xa9t\xc3\xa9", "\xff\xfe", "zz", "a\x80", "m-long-value-beyond-eight"};
  int64_t t0 = 1700000000000000;
  for (size_t r = 0; r < kRows; ++r) {
    const unsigned shape = unsigned(r / 2048) % 4;
    const bool nulls = shape != 1;  // block 1, 5: no nulls
    auto present = [&] { return !nulls || rng() % 11 != 0; };
    // bool: constant-true blocks, and mixed ones
    bool ok = present();
    b.ok.push_back(ok), b.i.push_back(ok ? (shape == 2 ? 1 : int64_t(rng() % 2)) : 0);
    // int: a sequence, a constant, a narrow frame around 1000, full-range randoms with extremes
    ok = present();
    int64_t x = shape == 0 ? int64_t(r) : shape == 1 ? 42 : shape == 2 ? 1000 + int64_t(rng() % 50)
              : (rng() % 5 == 0 ? (rng() % 2 ? INT64_MIN : INT64_MAX) : int64_t(rng()));
    i.ok.push_back(ok), i.i.push_back(ok ? x : 0);
    // float: specials mixed in, a NaN-free block, a constant block
    ok = present();
    double y = shape == 1 ? 7.0 : shape == 0 ? double(int64_t(rng() % 100) - 50) / 4 : specials[rng() % 8];
    f.ok.push_back(ok), f.f.push_back(ok ? y : 0.0);
    // str: short words (Sym8 / dict), long unique-ish ones
    ok = present();
    std::string z = shape == 3 ? "event-" + std::to_string(rng() % 5000) : words[rng() % 9];
    s.ok.push_back(ok), s.s.push_back(ok ? z : "");
    // timestamp: sorted µs, no nulls
    ts.ok.push_back(1), ts.i.push_back(t0 += 1000000 * int64_t(1 + rng() % 3));
  }
  return {b, i, f, s, ts};
}

Predicate cmp(size_t col, WhereOp op, Literal v) {
  Predicate p;
  p.column = col, p.op = op, p.value = std::move(v);
  return p;
}
Predicate set_of(size_t col, WhereOp op, std::vector<Literal> vs) {
  Predicate p;
  p.column = col, p.op = op, p.set = std::move(vs);
  return p;
}
Predicate range(size_t col, std::optional<Literal> lo, std::optional<Literal> hi) {
  Predicate p;
  p.column = col, p.op = WhereOp::Range, p.lo = std::move(lo), p.hi = std::move(hi);
  return p;
}
Predicate flag(size_t col, WhereOp op, bool f) {
  Predicate p;
  p.column = col, p.op = op, p.flag = f;
  return p;
}

// Literals worth asking for on each column: present values, the specials, the edges.
std::vector<Literal> probe_literals(const ModelColumn& m) {
  std::vector<Literal> out;
  switch (m.kind) {
    case Kind::Bool: return {Literal::of_bool(false), Literal::of_bool(true)};
    case Kind::Float:
      for (double v : {0.0, -0.0, 7.0, 1.5, -2.25, double(INFINITY), -double(INFINITY), double(NAN), 1e300, 3.0, -12.5}) out.push_back(Literal::of_float(v));
      out.push_back(Literal::of_int(7));
      return out;
    case Kind::Str:
      for (const char* v : {"", "a", "ab", "abd", "\xc3\xa9t\xc3\xa9", "\xff", "\xff\xfe", "zz", "a\x80", "event-17", "event-", "m-long-value-beyond-eight", "~"})
        out.push_back(Literal::of_str(v));
      return out;
    default:
      for (int64_t v : {int64_t(0), int64_t(42), int64_t(41), int64_t(43), int64_t(1000), int64_t(1025), int64_t(2047), int64_t(5000),
                        int64_t(999), int64_t(1049), int64_t(1050), INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1})
        out.push_back(Literal::of_int(v));
      out.push_back(Literal::of_float(1000.0));
      if (m.kind == Kind::Timestamp) out = {Literal::of_int(m.i[0]), Literal::of_int(m.i[5000]), Literal::of_int(m.i[kRows - 1] + 1),
                                            Literal::of_int(m.i[3000] + 1), Literal::of_int(INT64_MIN), Literal::of_int(INT64_MAX)};
      return out;
  }
}

bool same(const WhereResult& got, const std::vector<uint64_t>& want, const char* what) {
  const std::vector<uint64_t> pos = got.rows.positions();
  const bool ok = pos == want && got.plan.selected == want.size() && got.rows.count() == want.size() &&
                  got.plan.blocks == got.plan.blocks_zonemap_resolved + got.plan.blocks_index_pruned + got.plan.blocks_decoded;
  if (!ok) std::printf("  mismatch: %s (got %zu rows, want %zu)\n", what, pos.size(), want.size());
  return ok;
}

std::string describe(const Predicate& p) {
  std::string s = "col " + std::to_string(p.column) + " " + where_op_name(p.op);
  auto lit = [](const Literal& l) {
    switch (l.type) {
      case Literal::Type::Bool: return std::string(l.b ? "true" : "false");
      case Literal::Type::Int: return std::to_string(l.i);
      case Literal::Type::Float: return std::to_string(l.f);
      default: return "'" + l.s + "'";
    }
  };
  if (p.op == WhereOp::Range) s += " [" + (p.lo ? lit(*p.lo) : "null") + ", " + (p.hi ? lit(*p.hi) : "null") + "]";
  else if (p.op == WhereOp::In || p.op == WhereOp::NotIn) s += " (" + std::to_string(p.set.size()) + " values)";
  else if (p.op == WhereOp::IsNull || p.op == WhereOp::IsNan) s += p.flag ? " true" : " false";
  else s += " " + lit(p.value);
  return s;
}

// Every single predicate this column admits, over the probe literals.
std::vector<Predicate> all_predicates(size_t col, const ModelColumn& m) {
  std::vector<Predicate> out;
  const std::vector<Literal> lits = probe_literals(m);
  for (WhereOp op : {WhereOp::Eq, WhereOp::Ne, WhereOp::Lt, WhereOp::Le, WhereOp::Gt, WhereOp::Ge})
    for (const Literal& l : lits) out.push_back(cmp(col, op, l));
  for (WhereOp op : {WhereOp::In, WhereOp::NotIn}) {
    out.push_back(set_of(col, op, {}));
    for (size_t k = 0; k < lits.size(); ++k) out.push_back(set_of(col, op, {lits[k]}));
    out.push_back(set_of(col, op, lits));
    for (size_t k = 0; k + 2 < lits.size(); k += 2) out.push_back(set_of(col, op, {lits[k], lits[k + 2], lits[k], lits[k + 1]}));
  }
  out.push_back(range(col, std::nullopt, std::nullopt));
  for (const Literal& a : lits) {
    out.push_back(range(col, a, std::nullopt));
    out.push_back(range(col, std::nullopt, a));
    for (const Literal& b : lits) out.push_back(range(col, a, b));
  }
  out.push_back(flag(col, WhereOp::IsNull, true));
  out.push_back(flag(col, WhereOp::IsNull, false));
  if (m.kind == Kind::Float) out.push_back(flag(col, WhereOp::IsNan, true)), out.push_back(flag(col, WhereOp::IsNan, false));
  if (m.kind == Kind::Str)
    for (const Literal& l : lits) out.push_back(cmp(col, WhereOp::Prefix, l));
  return out;
}

// ---- cases ---------------------------------------------------------------------------------

TEST_CASE("where: every op on every kind agrees with the model (nulls, NaN, -0.0, inf, bytes >= 0x80)") {
  const std::vector<ModelColumn> cols = mixed_columns(7);
  Stored st = store(cols, {"b", "i", "f", "s", "ts"});
  size_t cases = 0, bad = 0;
  for (size_t c = 0; c < cols.size(); ++c)
    for (const Predicate& p : all_predicates(c, cols[c])) {
      ++cases;
      const WhereResult got = evaluate_where(*st.region, 0, {p}, cases % 2 ? 1 : 0);
      if (!same(got, model_where(cols, {p}, kRows), describe(p).c_str())) ++bad;
    }
  std::printf("  %zu single predicates checked\n", cases);
  CHECK(bad == 0);
  CHECK(cases > 1000);
}

TEST_CASE("where: AND of 2-3 predicates across columns, empty results") {
  const std::vector<ModelColumn> cols = mixed_columns(11);
  Stored st = store(cols, {"b", "i", "f", "s", "ts"});
  std::vector<std::vector<Predicate>> pool(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) pool[c] = all_predicates(c, cols[c]);
  std::mt19937_64 rng(3);
  size_t bad = 0, empty = 0;
  for (int k = 0; k < 600; ++k) {
    std::vector<Predicate> preds;
    const int n = 2 + int(rng() % 2);
    for (int j = 0; j < n; ++j) {
      const auto& ps = pool[rng() % cols.size()];
      preds.push_back(ps[rng() % ps.size()]);
    }
    const std::vector<uint64_t> want = model_where(cols, preds, kRows);
    empty += want.empty();
    std::string what;
    for (const Predicate& p : preds) what += describe(p) + " AND ";
    if (!same(evaluate_where(*st.region, 0, preds), want, what.c_str())) ++bad;
  }
  CHECK(bad == 0);
  CHECK(empty > 20);  // empty results were exercised
  // Contradictions: nothing, and the plan says every block was settled without values.
  const WhereResult none = evaluate_where(*st.region, 0, {range(1, Literal::of_int(5), Literal::of_int(5)), cmp(2, WhereOp::Eq, Literal::of_float(1))});
  CHECK(none.plan.selected == 0 && none.rows.count() == 0 && none.plan.blocks_decoded == 0 && none.plan.payload_bytes_read == 0);
  const WhereResult in_none = evaluate_where(*st.region, 0, {set_of(3, WhereOp::In, {})});
  CHECK(in_none.plan.selected == 0 && in_none.plan.blocks_zonemap_resolved == in_none.plan.blocks);
  // No predicates: every row.
  const WhereResult all = evaluate_where(*st.region, 0, {});
  CHECK(all.plan.selected == kRows && all.rows.contains(kRows - 1) && !all.rows.contains(kRows));
}

TEST_CASE("where: edge literals on For frames and i64 extremes") {
  // Blocks: a For frame [1000, 1000 + 2^w), a full-range block, a constant at INT64_MIN.
  ModelColumn m(Kind::Int);
  std::mt19937_64 rng(5);
  for (size_t r = 0; r < 3 * 2048; ++r) {
    const size_t blk = r / 2048;
    const int64_t x = blk == 0 ? 1000 + int64_t(rng() % 200) : blk == 1 ? (r % 2 ? INT64_MIN : INT64_MAX) : INT64_MIN;
    m.i.push_back(x), m.ok.push_back(1);
  }
  Stored st = store({m}, {"x"});
  for (int64_t c : {INT64_MIN, INT64_MIN + 1, int64_t(-1), int64_t(999), int64_t(1000), int64_t(1199), int64_t(1200), int64_t(1255),
                    int64_t(1256), int64_t(4000), INT64_MAX - 1, INT64_MAX})
    for (WhereOp op : {WhereOp::Eq, WhereOp::Ne, WhereOp::Lt, WhereOp::Le, WhereOp::Gt, WhereOp::Ge}) {
      const Predicate p = cmp(0, op, Literal::of_int(c));
      CHECK(same(evaluate_where(*st.region, 0, {p}), model_where({m}, {p}, m.ok.size()), describe(p).c_str()));
    }
  // eq 5000 lies outside block 0's frame and block 2's constant: both settle from the header;
  // only block 1 (zone map [min, max]) is read.
  const WhereResult r = evaluate_where(*st.region, 0, {cmp(0, WhereOp::Eq, Literal::of_int(5000))});
  CHECK(r.plan.selected == 0 && r.plan.blocks_decoded == 1 && r.plan.blocks_zonemap_resolved == 2);
  // Integral floats are int literals; the range ends at the extremes.
  const Predicate q = range(0, Literal::of_float(-9223372036854775808.0), Literal::of_int(INT64_MAX));
  CHECK(same(evaluate_where(*st.region, 0, {q}), model_where({m}, {q}, m.ok.size()), "range [min, max)"));
}

TEST_CASE("where: a header AllFalse ends the block before another column's payload is read") {
  // k: sorted short keys (Sym8 blocks with zone maps); x: random ints (must be decoded).
  ModelColumn k(Kind::Str), x(Kind::Int);
  std::mt19937_64 rng(9);
  for (size_t r = 0; r < 4 * 2048; ++r) {
    char key[16];
    std::snprintf(key, sizeof key, "k%06zu", r);
    k.s.push_back(key), k.ok.push_back(1);
    x.i.push_back(int64_t(rng() % 1000)), x.ok.push_back(1);
  }
  Stored st = store({k, x}, {"k", "x"});
  const std::vector<ModelColumn> cols{k, x};
  // k < "k" holds nowhere: the Sym8 zone maps say so; x's payload is never read.
  const std::vector<Predicate> none{cmp(1, WhereOp::Eq, Literal::of_int(5)), cmp(0, WhereOp::Lt, Literal::of_str("k"))};
  const WhereResult a = evaluate_where(*st.region, 0, none);
  CHECK(same(a, {}, "x = 5 AND k < 'k'"));
  CHECK(a.plan.blocks_decoded == 0 && a.plan.payload_bytes_read == 0 && a.plan.blocks_zonemap_resolved == 4);
  // k in block 2's range: blocks 0, 1, 3 end at the header; only block 2 reads x (and k).
  const std::vector<Predicate> one{cmp(1, WhereOp::Lt, Literal::of_int(500)), range(0, Literal::of_str("k004200"), Literal::of_str("k004300"))};
  const WhereResult b = evaluate_where(*st.region, 0, one);
  CHECK(same(b, model_where(cols, one, 4 * 2048), "x < 500 AND k in [k004200, k004300)"));
  CHECK(b.plan.blocks_decoded == 1 && b.plan.blocks_zonemap_resolved == 3);
  // not_in with every key of the table outside the zone: all rows, no values read.
  const Predicate far = set_of(0, WhereOp::NotIn, {Literal::of_str("a"), Literal::of_str("z")});
  const WhereResult c = evaluate_where(*st.region, 0, {far});
  CHECK(c.plan.selected == 4 * 2048 && c.plan.blocks_decoded == 0 && c.plan.payload_bytes_read == 0);
}

TEST_CASE("where: validation rejects misuse by code") {
  const std::vector<ModelColumn> cols = mixed_columns(1);
  Stored st = store(cols, {"b", "i", "f", "s", "ts"});
  const TableInfo& t = st.region->tables()[0];
  CHECK_THROWS_CODE(validate_predicate(t, cmp(1, WhereOp::Prefix, Literal::of_str("a"))), "TET_QUERY_WHERE_OP");
  CHECK_THROWS_CODE(validate_predicate(t, flag(1, WhereOp::IsNan, true)), "TET_QUERY_WHERE_OP");
  CHECK_THROWS_CODE(validate_predicate(t, flag(3, WhereOp::IsNan, false)), "TET_QUERY_WHERE_OP");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(1, WhereOp::Eq, Literal::of_float(1.5))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(1, WhereOp::Eq, Literal::of_float(9223372036854775808.0))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(1, WhereOp::Eq, Literal::of_float(NAN))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(1, WhereOp::Eq, Literal::of_str("1"))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(4, WhereOp::Eq, Literal::of_float(1.0))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(0, WhereOp::Eq, Literal::of_int(1))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(2, WhereOp::Lt, Literal::of_bool(true))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(3, WhereOp::Eq, Literal::of_int(3))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, range(3, Literal::of_str("a"), Literal::of_int(3))), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, set_of(2, WhereOp::In, {Literal::of_float(1), Literal::of_str("x")})), "TET_QUERY_BAD_LITERAL");
  CHECK_THROWS_CODE(validate_predicate(t, set_of(1, WhereOp::In, std::vector<Literal>(65537, Literal::of_int(1)))), "TET_QUERY_TOO_LARGE");
  CHECK_THROWS_CODE(validate_predicate(t, cmp(9, WhereOp::Eq, Literal::of_int(1))), "TET_QUERY_UNKNOWN_COLUMN");
  CHECK_THROWS_CODE(evaluate_where(*st.region, 3, {}), "TET_QUERY_UNKNOWN_TABLE");
  validate_predicate(t, set_of(1, WhereOp::In, std::vector<Literal>(65536, Literal::of_int(1))));  // the limit itself is fine
  validate_predicate(t, cmp(2, WhereOp::Eq, Literal::of_int(3)));                                 // int literal on float
  validate_predicate(t, cmp(1, WhereOp::Eq, Literal::of_float(-9223372036854775808.0)));
}

TEST_CASE("where: run directory, piecewise sequence and sparse bool columns agree with the model") {
  // obs-shaped: ts in runs of 5000 equal hours (a run directory at rest), station ids wrapping
  // every 10^4 with nulls (sequence and piecewise sequence blocks), qc flags 1 % false with nulls
  // (sparse bool blocks).
  constexpr size_t kN = 30 * 2048 + 99;
  const int64_t t0 = 1577836800000000, hour = 3600000000;
  ModelColumn ts(Kind::Timestamp), station(Kind::Int), qc(Kind::Bool);
  for (size_t r = 0; r < kN; ++r) {
    ts.i.push_back(t0 + int64_t(r / 5000) * hour), ts.ok.push_back(1);
    station.ok.push_back(r % 37 != 0), station.i.push_back(station.ok.back() ? int64_t(r % 10000) : 0);
    uint64_t h = 11 * r + 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull, h = (h ^ (h >> 27)) * 0x94d049bb133111ebull, h ^= h >> 31;
    qc.ok.push_back(r % 53 != 0), qc.i.push_back(qc.ok.back() ? int64_t(h % 100 != 0) : 0);
  }
  const std::vector<ModelColumn> cols = {ts, station, qc};
  Stored st = store(cols, {"ts", "station_id", "qc_ok"});
  CHECK((st.region->encodings_used(0, 0) >> unsigned(Enc::RunDirectory)) & 1);
  CHECK(st.region->tables()[0].columns[0].cell_count == 1);
  CHECK((st.region->encodings_used(0, 1) >> unsigned(Enc::PiecewiseSequence)) & 1);
  CHECK((st.region->encodings_used(0, 2) >> unsigned(Enc::SparseBool)) & 1);
  std::vector<Predicate> preds;
  for (size_t c = 0; c < cols.size(); ++c)
    for (const Predicate& p : all_predicates(c, cols[c])) preds.push_back(p);
  // ts literals on and between the runs' values.
  for (int64_t v : {t0 - 1, t0, t0 + hour, t0 + 3 * hour, t0 + 3 * hour + 1, t0 + 12 * hour, t0 + 13 * hour}) {
    for (WhereOp op : {WhereOp::Eq, WhereOp::Ne, WhereOp::Lt, WhereOp::Le, WhereOp::Gt, WhereOp::Ge})
      preds.push_back(cmp(0, op, Literal::of_int(v)));
    preds.push_back(range(0, Literal::of_int(v), Literal::of_int(v + 2 * hour)));
    preds.push_back(set_of(0, WhereOp::In, {Literal::of_int(v), Literal::of_int(v + hour)}));
  }
  size_t bad = 0;
  for (const Predicate& p : preds)
    if (!same(evaluate_where(*st.region, 0, {p}), model_where(cols, {p}, kN), describe(p).c_str())) ++bad;
  const std::vector<Predicate> both = {range(0, Literal::of_int(t0 + 2 * hour), Literal::of_int(t0 + 5 * hour)),
                                       cmp(1, WhereOp::Lt, Literal::of_int(300)), cmp(2, WhereOp::Eq, Literal::of_bool(false))};
  if (!same(evaluate_where(*st.region, 0, both), model_where(cols, both, kN), "ts range AND station AND qc")) ++bad;
  std::printf("  %zu predicates over run-shaped columns checked\n", preds.size() + 1);
  CHECK(bad == 0);
}

TEST_CASE("where: pruning on an obs-like table (zone maps, block index, For frames)") {
  constexpr size_t kObs = 300 * 2048;
  ModelColumn ts(Kind::Timestamp), station(Kind::Int), event(Kind::Str);
  const int64_t t0 = 1704067200000000;  // 2024-01-01T00:00:00Z in µs
  const int64_t hour = 3600000000, day = 24 * hour;
  for (size_t r = 0; r < kObs; ++r) {
    ts.i.push_back(t0 + int64_t(r) * hour), ts.ok.push_back(1);  // hourly, sorted
    station.i.push_back(int64_t(r % 10000)), station.ok.push_back(1);
    char id[32];
    std::snprintf(id, sizeof id, "ev-%016llx", (unsigned long long)(r * 0x9e3779b97f4a7c15ull));
    event.s.push_back(id), event.ok.push_back(1);
  }
  Stored st = store({ts, station, event}, {"ts", "station_id", "event_id"});
  bool indexed = false;
  for (const MetablockRef& m : st.region->metablocks(0, 2)) indexed = indexed || m.kind == uint16_t(MetablockKind::BlockIndex);
  CHECK(indexed);
  CellRef ts_root = st.region->column(0, 0);

  // One day of ts: blocks wholly outside the day read nothing.
  const int64_t lo = t0 + 40 * day, hi = lo + day;
  const Predicate one_day = range(0, Literal::of_int(lo), Literal::of_int(hi));
  const WhereResult d = evaluate_where(*st.region, 0, {one_day});
  CHECK(same(d, model_where({ts, station, event}, {one_day}, kObs), "one day"));
  uint64_t straddling = 0, inside = 0;  // blocks holding a day edge inside (min < edge <= max)
  for (uint64_t b = 0; b < block_count(*ts_root); ++b) {
    const uint64_t first = b * 2048, last = std::min<uint64_t>(kObs, first + 2048) - 1;
    const int64_t mn = ts.i[first], mx = ts.i[last];
    straddling += (mn < lo && lo <= mx) || (mn < hi && hi <= mx);
    inside += mn >= lo && mx < hi;
  }
  CHECK(d.plan.blocks_decoded <= straddling);
  CHECK(d.plan.payload_bytes_read <= straddling * 2048 * 8);  // only straddling blocks' payloads
  std::printf("  one-day range: rows %llu selected %llu blocks %llu zonemap %llu index %llu decoded %llu (straddling %llu, inside %llu) bytes %llu\n",
              (unsigned long long)d.plan.rows, (unsigned long long)d.plan.selected, (unsigned long long)d.plan.blocks,
              (unsigned long long)d.plan.blocks_zonemap_resolved, (unsigned long long)d.plan.blocks_index_pruned,
              (unsigned long long)d.plan.blocks_decoded, (unsigned long long)straddling, (unsigned long long)inside,
              (unsigned long long)d.plan.payload_bytes_read);

  // event_id = one value: the block index leaves at most 2 blocks to read.
  const Predicate ev = cmp(2, WhereOp::Eq, Literal::of_str(event.s[123457]));
  const WhereResult e = evaluate_where(*st.region, 0, {ev});
  CHECK(same(e, {123457}, "event_id eq"));
  CHECK(e.plan.blocks_decoded <= 2 && e.plan.blocks_index_pruned >= e.plan.blocks - 2);
  std::printf("  event_id eq: blocks %llu index-pruned %llu decoded %llu zonemap %llu bytes %llu\n",
              (unsigned long long)e.plan.blocks, (unsigned long long)e.plan.blocks_index_pruned,
              (unsigned long long)e.plan.blocks_decoded, (unsigned long long)e.plan.blocks_zonemap_resolved,
              (unsigned long long)e.plan.payload_bytes_read);
  // in over three ids, one absent: still pruned by the index.
  const Predicate ev3 = set_of(2, WhereOp::In, {Literal::of_str(event.s[5]), Literal::of_str(event.s[600000]), Literal::of_str("ev-none")});
  const WhereResult e3 = evaluate_where(*st.region, 0, {ev3});
  CHECK(same(e3, {5, 600000}, "event_id in"));
  CHECK(e3.plan.blocks_decoded <= 3);

  // station_id = 17: each block spans 2048 consecutive ids (mod 10^4), so most blocks are
  // settled from their header (zone map / For frame) and only those that hold 17 are read.
  const Predicate s17 = cmp(1, WhereOp::Eq, Literal::of_int(17));
  const WhereResult s = evaluate_where(*st.region, 0, {s17});
  CHECK(same(s, model_where({ts, station, event}, {s17}, kObs), "station 17"));
  uint64_t holding = 0;
  for (uint64_t b = 0; b * 2048 < kObs; ++b) {
    bool has = false;
    for (uint64_t r = b * 2048; r < std::min<uint64_t>(kObs, b * 2048 + 2048); ++r) has = has || station.i[r] == 17;
    holding += has;
  }
  CHECK(s.plan.blocks_decoded <= holding && s.plan.blocks_zonemap_resolved >= s.plan.blocks - holding);
  std::printf("  station_id = 17: blocks %llu zonemap %llu decoded %llu (blocks holding 17: %llu) selected %llu bytes %llu\n",
              (unsigned long long)s.plan.blocks, (unsigned long long)s.plan.blocks_zonemap_resolved,
              (unsigned long long)s.plan.blocks_decoded, (unsigned long long)holding, (unsigned long long)s.plan.selected,
              (unsigned long long)s.plan.payload_bytes_read);

  // AND: the day's range settles blocks outside it before event_id's payload is read.
  const Predicate pre = cmp(2, WhereOp::Prefix, Literal::of_str("ev-0"));
  const WhereResult both = evaluate_where(*st.region, 0, {one_day, pre});
  CHECK(same(both, model_where({ts, station, event}, {one_day, pre}, kObs), "day AND prefix"));
  CHECK(both.plan.blocks_decoded <= straddling + inside);
  std::printf("  day AND prefix: decoded %llu zonemap %llu bytes %llu selected %llu\n", (unsigned long long)both.plan.blocks_decoded,
              (unsigned long long)both.plan.blocks_zonemap_resolved, (unsigned long long)both.plan.payload_bytes_read,
              (unsigned long long)both.plan.selected);
}


TEST_CASE("where: runs of 32 blocks that an int comparison's header bounds settle are skipped whole") {
  // 200 blocks = 7 runs (the last one short): a sorted int column, and one whose blocks 32..63
  // are all null, the others random within 1000 values of a per-block base.
  constexpr size_t kRows = 200 * 2048 - 77;
  ModelColumn sorted(Kind::Int), holes(Kind::Int);
  uint64_t x = 7;
  for (size_t r = 0; r < kRows; ++r) {
    sorted.i.push_back(int64_t(r) * 3 - 100000), sorted.ok.push_back(1);
    const bool null_run = r / 2048 >= 32 && r / 2048 < 64;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    holes.i.push_back(null_run ? 0 : int64_t(r / 2048) * 1000 + int64_t((x >> 33) % 1000)), holes.ok.push_back(null_run ? 0 : 1);
  }
  Stored st = store({sorted, holes}, {"sorted", "holes"});
  // The cached spans: bounds by hand from the model (each run's min and max, For frames may be wider).
  const std::vector<IntSpan>& sp = st.region->int_spans(0, 0);
  CHECK(sp.size() == 7);
  bool bounds_ok = true;
  for (size_t k = 0; k < sp.size(); ++k) {
    const size_t first = k * 32 * 2048, last = std::min(kRows, (k + 1) * 32 * 2048) - 1;
    bounds_ok = bounds_ok && sp[k].known && sp[k].any && sp[k].lo <= sorted.i[first] && sp[k].hi >= sorted.i[last];
  }
  CHECK(bounds_ok);
  const std::vector<IntSpan>& hs = st.region->int_spans(0, 1);
  CHECK(hs.size() == 7 && !hs[1].any && hs[0].any);  // run 1 (blocks 32..63) holds no value
  // Ranges at run edges, single values, and comparisons every run or no run satisfies.
  const int64_t edge = sorted.i[32 * 2048];
  const std::vector<std::vector<Predicate>> wheres = {
      {range(0, Literal::of_int(edge), Literal::of_int(edge + 3 * 2048 * 32))},
      {range(0, Literal::of_int(edge - 3), Literal::of_int(edge + 1))},
      {cmp(0, WhereOp::Eq, Literal::of_int(sorted.i[kRows - 1]))},
      {cmp(0, WhereOp::Lt, Literal::of_int(-100000))},
      {cmp(0, WhereOp::Ge, Literal::of_int(-100000))},
      {cmp(0, WhereOp::Ne, Literal::of_int(5))},
      {cmp(1, WhereOp::Lt, Literal::of_int(3000))},
      {cmp(1, WhereOp::Gt, Literal::of_int(150000)), cmp(0, WhereOp::Gt, Literal::of_int(0))},
      {cmp(1, WhereOp::Eq, Literal::of_int(0))},  // the null run has 0 lanes, never a match
  };
  bool ok = true;
  for (const auto& w : wheres) {
    const WhereResult r = evaluate_where(*st.region, 0, w);
    ok = ok && same(r, model_where({sorted, holes}, w, kRows), "runs");
    ok = ok && r.plan.blocks_zonemap_resolved + r.plan.blocks_decoded + r.plan.blocks_index_pruned == r.plan.blocks;
  }
  CHECK(ok);
  // A run outside a range is settled from its header bounds: nothing decoded there.
  const WhereResult one = evaluate_where(*st.region, 0, wheres[1]);
  CHECK(one.plan.blocks_decoded <= 2 && one.plan.payload_bytes_read <= 2 * 2048 * 8);
}

// Runs by hand from a position list: a new run wherever a position does not follow its predecessor.
std::vector<uint64_t> runs_of(const std::vector<uint64_t>& pos) {
  std::vector<uint64_t> out;
  for (size_t k = 0; k < pos.size(); ++k) {
    if (k == 0 || pos[k] != pos[k - 1] + 1) {
      if (k) out.push_back(pos[k - 1] + 1);
      out.push_back(pos[k]);
    }
  }
  if (!pos.empty()) out.push_back(pos.back() + 1);
  return out;
}

TEST_CASE("where: RowSet::runs equals the runs of its positions (word edges, full words, the table's end)") {
  const std::vector<ModelColumn> cols = mixed_columns(3);
  Stored st = store(cols, {"b", "i", "f", "s", "ts"});
  size_t bad = 0, cases = 0;
  for (size_t c = 0; c < cols.size(); ++c)
    for (const Predicate& p : all_predicates(c, cols[c])) {
      if (++cases % 7) continue;  // a spread of them: the runs, not the predicates, are under test
      const WhereResult r = evaluate_where(*st.region, 0, {p});
      if (r.rows.runs() != runs_of(r.rows.positions())) ++bad, std::printf("  runs differ: %s\n", describe(p).c_str());
    }
  CHECK(bad == 0);
  // every row (one run to the end), no row, and a run ending exactly at a word and a block edge
  CHECK(evaluate_where(*st.region, 0, {}).rows.runs() == (std::vector<uint64_t>{0, kRows}));
  CHECK(evaluate_where(*st.region, 0, {set_of(1, WhereOp::In, {})}).rows.runs().empty());
  const WhereResult seq = evaluate_where(*st.region, 0, {range(1, Literal::of_int(64), Literal::of_int(2048))});  // block 0 is a sequence
  CHECK(seq.rows.runs() == runs_of(seq.rows.positions()));
  CHECK(seq.rows.runs().size() >= 2 && seq.rows.runs()[0] == 64);
}

TEST_CASE("where wire: round trip, column names, and every malformed form by code") {
  const std::vector<ModelColumn> cols = mixed_columns(5);
  Stored st = store(cols, {"b", "i", "f", "s", "ts"});
  const TableInfo& t = st.region->tables()[0];
  const std::vector<Predicate> preds{cmp(1, WhereOp::Ge, Literal::of_int(INT64_MIN)), range(2, Literal::of_float(-1.5), std::nullopt),
                                     set_of(3, WhereOp::NotIn, {Literal::of_str("a"), Literal::of_str("\xff\xfe")}),
                                     flag(2, WhereOp::IsNan, false), flag(0, WhereOp::IsNull, false), cmp(3, WhereOp::Prefix, Literal::of_str("ev")),
                                     cmp(0, WhereOp::Eq, Literal::of_bool(true))};
  const std::vector<uint8_t> wire = encode_where_wire(t, preds);
  const WhereRuns w = evaluate_where_wire(*st.region, "t", wire.data(), wire.size());
  const std::vector<uint64_t> want = model_where(cols, preds, kRows);
  CHECK(w.runs == runs_of(want));
  CHECK(w.plan.selected == want.size() && w.plan.rows == kRows);
  const std::vector<Predicate> back = decode_where_wire(t, wire.data(), wire.size());
  CHECK(back.size() == preds.size() && back[1].lo && !back[1].hi && back[2].set.size() == 2 && back[3].flag == false);
  CHECK(back[0].value.i == INT64_MIN && back[5].value.s == "ev" && back[2].set[1].s == "\xff\xfe");

  auto code_of = [&](std::vector<uint8_t> b) -> std::string {
    try {
      decode_where_wire(t, b.data(), b.size());
    } catch (const Error& e) {
      return e.code();
    }
    return "none";
  };
  std::vector<uint8_t> one = encode_where_wire(t, {cmp(1, WhereOp::Eq, Literal::of_int(7))});
  // header: magic, version, count, reserved
  for (size_t at : {size_t(0), size_t(4), size_t(12)}) {
    std::vector<uint8_t> b = one;
    b[at] ^= 1;
    CHECK(code_of(b) == "TET_PLAN_INVALID");
  }
  { std::vector<uint8_t> b = one; b[8] = 0x10; b[9] = 0x10; CHECK(code_of(b) == "TET_PLAN_INVALID"); }  // 4112 predicates
  // every truncation, and a trailing byte
  for (size_t n = 0; n < one.size(); ++n) CHECK(code_of(std::vector<uint8_t>(one.begin(), one.begin() + long(n))) == "TET_PLAN_INVALID");
  { std::vector<uint8_t> b = one; b.push_back(0); CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  // predicate bytes: op 12, flag 2, reserved, a flag on eq
  { std::vector<uint8_t> b = one; b[16] = 12; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[17] = 2; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[18] = 1; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[17] = 1; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  // name "i" at 20..24 + 1 byte; literal count at 25; type at 29
  { std::vector<uint8_t> b = one; b[24] = 'q'; CHECK(code_of(b) == "TET_QUERY_UNKNOWN_COLUMN"); }
  { std::vector<uint8_t> b = one; b[20] = 0xff; b[21] = 0xff; b[22] = 0xff; b[23] = 0xff; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[25] = 2; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[29] = 0; CHECK(code_of(b) == "TET_PLAN_INVALID"); }  // absent outside a range
  { std::vector<uint8_t> b = one; b[29] = 9; CHECK(code_of(b) == "TET_PLAN_INVALID"); }
  { std::vector<uint8_t> b = one; b[29] = 3; CHECK(code_of(b) == "TET_QUERY_BAD_LITERAL"); }  // 7's bits as an f64: a denormal, not an integer
  // a bool literal byte of 2, a range with one literal, an in over the limit, literal checks
  std::vector<uint8_t> bb = encode_where_wire(t, {cmp(0, WhereOp::Eq, Literal::of_bool(true))});
  bb.back() = 2;
  CHECK(code_of(bb) == "TET_PLAN_INVALID");
  std::vector<uint8_t> rg = encode_where_wire(t, {range(1, Literal::of_int(1), std::nullopt)});
  rg[25] = 1, rg.pop_back();
  CHECK(code_of(rg) == "TET_PLAN_INVALID");
  std::vector<uint8_t> in = encode_where_wire(t, {set_of(1, WhereOp::In, {})});
  in[25] = 0x01, in[26] = 0x00, in[27] = 0x01;  // 65537 values announced
  CHECK(code_of(in) == "TET_PLAN_INVALID");
  std::vector<uint8_t> lit = encode_where_wire(t, {cmp(3, WhereOp::Eq, Literal::of_int(1))});
  CHECK(code_of(lit) == "TET_QUERY_BAD_LITERAL");
  std::vector<uint8_t> op = encode_where_wire(t, {flag(1, WhereOp::IsNan, true)});
  CHECK(code_of(op) == "TET_QUERY_WHERE_OP");
  CHECK_THROWS_CODE(evaluate_where_wire(*st.region, "nope", one.data(), one.size()), "TET_QUERY_UNKNOWN_TABLE");
  // cancellation before the first block
  std::atomic<bool> cancel{true};
  CHECK_THROWS_CODE(evaluate_where_wire(*st.region, "t", one.data(), one.size(), 0, &cancel), "TET_CANCELLED");
}

}  // namespace

TEST_MAIN()
