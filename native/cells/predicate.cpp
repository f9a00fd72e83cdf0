#include "cells/predicate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "cells/kernels.h"
#include "cells/metablocks.h"
#include "cells/str_kernels.h"
#include "exec/thread_pool.h"
#include "tet/error.h"
#include "util/bits.h"

namespace tet::cells {

namespace {

constexpr uint32_t kWords = kBlockLanes / 64;

// ---- lowering: a wire predicate becomes one or two tests a block kernel answers ----------------

// What a test asks of one column block. Never / Present settle without reading anything; Null
// reads the validity mask; the rest are kernels.
enum class Form : uint8_t { Never, Present, Null, Nan, NotNan, Cmp, In, NotIn, Str, StrNotIn };

struct Test {
  Form form = Form::Present;
  size_t column = 0;
  Physical phys = Physical::Int;
  CmpOp op = CmpOp::Eq;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::vector<int64_t> iset;
  std::vector<double> fset;
  StrPredicate sp;  // Str: the kernel's predicate; StrNotIn: the In it negates
  // eq / in on an int or str column: a per-value block index can rule blocks out.
  bool indexable() const {
    if (phys == Physical::Int) return (form == Form::Cmp && op == CmpOp::Eq) || form == Form::In;
    if (phys == Physical::Str) return form == Form::Str && (sp.op == StrOp::Eq || sp.op == StrOp::In);
    return false;
  }
};

[[noreturn]] void bad_literal(const ColumnSchema& c, WhereOp op, const char* want) {
  throw Error(Code::TET_QUERY_BAD_LITERAL, std::string("where: `") + where_op_name(op) + "` on " + kind_name(c.kind) +
                                               " column '" + c.name + "' takes " + want);
}
[[noreturn]] void bad_op(const ColumnSchema& c, WhereOp op, const char* why) {
  throw Error(Code::TET_QUERY_WHERE_OP, std::string("where: `") + where_op_name(op) + "` on " + kind_name(c.kind) +
                                            " column '" + c.name + "': " + why);
}

bool integral_in_i64(double f) {
  // [-2^63, 2^63): both ends exact in f64.
  return f == std::trunc(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0;
}

int64_t int_literal(const ColumnSchema& c, WhereOp op, const Literal& l) {
  if (l.type == Literal::Type::Int) return l.i;
  if (l.type == Literal::Type::Float && c.kind == Kind::Int && integral_in_i64(l.f)) return static_cast<int64_t>(l.f);
  bad_literal(c, op, c.kind == Kind::Int ? "an integer inside i64" : "an i64 in the column's stored unit");
}
double float_literal(const ColumnSchema& c, WhereOp op, const Literal& l) {
  if (l.type == Literal::Type::Float) return l.f;
  if (l.type == Literal::Type::Int) return static_cast<double>(l.i);  // numpy: the int as the f64 it rounds to
  bad_literal(c, op, "a number");
}
bool bool_literal(const ColumnSchema& c, WhereOp op, const Literal& l) {
  if (l.type != Literal::Type::Bool) bad_literal(c, op, "true or false");
  return l.b;
}
const std::string& str_literal(const ColumnSchema& c, WhereOp op, const Literal& l) {
  if (l.type != Literal::Type::Str) bad_literal(c, op, "a string");
  return l.s;
}

CmpOp cmp_of(WhereOp op) {
  switch (op) {
    case WhereOp::Eq: return CmpOp::Eq;
    case WhereOp::Ne: return CmpOp::Ne;
    case WhereOp::Lt: return CmpOp::Lt;
    case WhereOp::Le: return CmpOp::Le;
    case WhereOp::Gt: return CmpOp::Gt;
    default: return CmpOp::Ge;
  }
}
StrOp str_op_of(CmpOp op) {
  switch (op) {
    case CmpOp::Eq: return StrOp::Eq;
    case CmpOp::Ne: return StrOp::Ne;
    case CmpOp::Lt: return StrOp::Lt;
    case CmpOp::Le: return StrOp::Le;
    case CmpOp::Gt: return StrOp::Gt;
    default: return StrOp::Ge;
  }
}
bool is_cmp(WhereOp op) { return op <= WhereOp::Ge; }

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

Test simple(Form form, const Test& base) {
  Test t = base;
  t.form = form;
  return t;
}

// A membership over an already sorted, deduplicated set of T, shared by every kind: empty sets
// and singletons become Never / Present / eq / ne, so kernels see only real sets.
template <class T, class MakeCmp, class MakeSet>
Test lower_set(bool negate, const std::vector<T>& set, const Test& base, MakeCmp make_cmp, MakeSet make_set) {
  if (set.empty()) return simple(negate ? Form::Present : Form::Never, base);
  if (set.size() == 1) return make_cmp(negate ? CmpOp::Ne : CmpOp::Eq, set[0]);
  return make_set(negate);
}

void lower_bool(const ColumnSchema& c, const Predicate& p, const Test& base, std::vector<Test>& out) {
  auto cmp = [&](CmpOp op, bool v) { Test t = simple(Form::Cmp, base); t.op = op, t.b = v; return t; };
  if (is_cmp(p.op)) return out.push_back(cmp(cmp_of(p.op), bool_literal(c, p.op, p.value)));
  // in / not_in / range: which of the two values are accepted.
  bool accept[2] = {false, false};
  bool negate = false;
  if (p.op == WhereOp::Range) {
    const int lo = p.lo ? int(bool_literal(c, p.op, *p.lo)) : 0, hi = p.hi ? int(bool_literal(c, p.op, *p.hi)) : 2;
    for (int v = 0; v < 2; ++v) accept[v] = lo <= v && v < hi;
  } else {
    negate = p.op == WhereOp::NotIn;
    for (const Literal& l : p.set) accept[bool_literal(c, p.op, l)] = true;
  }
  std::vector<bool> set;
  for (int v = 0; v < 2; ++v)
    if (accept[v]) set.push_back(v == 1);
  if (set.size() == 2) return out.push_back(simple(negate ? Form::Never : Form::Present, base));
  out.push_back(lower_set(negate, set, base, cmp, [](bool) -> Test { return {}; }));
}

void lower_int(const ColumnSchema& c, const Predicate& p, const Test& base, std::vector<Test>& out) {
  auto cmp = [&](CmpOp op, int64_t v) { Test t = simple(Form::Cmp, base); t.op = op, t.i = v; return t; };
  if (is_cmp(p.op)) return out.push_back(cmp(cmp_of(p.op), int_literal(c, p.op, p.value)));
  if (p.op == WhereOp::Range) {
    const std::optional<int64_t> lo = p.lo ? std::optional<int64_t>(int_literal(c, p.op, *p.lo)) : std::nullopt;
    const std::optional<int64_t> hi = p.hi ? std::optional<int64_t>(int_literal(c, p.op, *p.hi)) : std::nullopt;
    if (lo && hi && *lo >= *hi) return out.push_back(simple(Form::Never, base));
    if (!lo && !hi) return out.push_back(simple(Form::Present, base));
    if (lo) out.push_back(cmp(CmpOp::Ge, *lo));
    if (hi) out.push_back(cmp(CmpOp::Lt, *hi));
    return;
  }
  std::vector<int64_t> set;
  set.reserve(p.set.size());
  for (const Literal& l : p.set) set.push_back(int_literal(c, p.op, l));
  sort_unique(set);
  out.push_back(lower_set(p.op == WhereOp::NotIn, set, base, cmp, [&](bool negate) {
    Test t = simple(negate ? Form::NotIn : Form::In, base);
    t.iset = std::move(set);
    return t;
  }));
}

void lower_float(const ColumnSchema& c, const Predicate& p, const Test& base, std::vector<Test>& out) {
  auto cmp = [&](CmpOp op, double v) { Test t = simple(Form::Cmp, base); t.op = op, t.f = v; return t; };
  if (is_cmp(p.op)) return out.push_back(cmp(cmp_of(p.op), float_literal(c, p.op, p.value)));
  if (p.op == WhereOp::IsNan) return out.push_back(simple(p.flag ? Form::Nan : Form::NotNan, base));
  if (p.op == WhereOp::Range) {
    // An open end is ±inf: Ge -inf keeps every number and no NaN (the open range's rule).
    const double lo = p.lo ? float_literal(c, p.op, *p.lo) : -INFINITY;
    const double hi = p.hi ? float_literal(c, p.op, *p.hi) : INFINITY;
    if (std::isnan(lo) || std::isnan(hi) || (p.lo && p.hi && !(lo < hi))) return out.push_back(simple(Form::Never, base));
    out.push_back(cmp(CmpOp::Ge, lo));
    if (p.hi) out.push_back(cmp(CmpOp::Lt, hi));
    return;
  }
  // NaN is no member (IEEE); -0.0 and 0.0 are one member.
  std::vector<double> set;
  set.reserve(p.set.size());
  for (const Literal& l : p.set) {
    const double v = float_literal(c, p.op, l);
    if (!std::isnan(v)) set.push_back(v == 0.0 ? 0.0 : v);
  }
  sort_unique(set);
  out.push_back(lower_set(p.op == WhereOp::NotIn, set, base, cmp, [&](bool negate) {
    Test t = simple(negate ? Form::NotIn : Form::In, base);
    t.fset = std::move(set);
    return t;
  }));
}

void lower_str(const ColumnSchema& c, const Predicate& p, const Test& base, std::vector<Test>& out) {
  auto cmp = [&](StrOp op, std::string v) {
    Test t = simple(Form::Str, base);
    t.sp.op = op, t.sp.literal = std::move(v);
    return t;
  };
  if (is_cmp(p.op)) return out.push_back(cmp(str_op_of(cmp_of(p.op)), str_literal(c, p.op, p.value)));
  if (p.op == WhereOp::Prefix) return out.push_back(cmp(StrOp::Prefix, str_literal(c, p.op, p.value)));
  if (p.op == WhereOp::Range) {
    const std::string* lo = p.lo ? &str_literal(c, p.op, *p.lo) : nullptr;
    const std::string* hi = p.hi ? &str_literal(c, p.op, *p.hi) : nullptr;
    if (lo && hi && !(*lo < *hi)) return out.push_back(simple(Form::Never, base));  // std::string orders bytes unsigned
    if (!lo && !hi) return out.push_back(simple(Form::Present, base));
    if (lo) out.push_back(cmp(StrOp::Ge, *lo));
    if (hi) out.push_back(cmp(StrOp::Lt, *hi));
    return;
  }
  std::vector<std::string> set;
  set.reserve(p.set.size());
  for (const Literal& l : p.set) set.push_back(str_literal(c, p.op, l));
  sort_unique(set);
  out.push_back(lower_set(
      p.op == WhereOp::NotIn, set, base, [&](CmpOp op, const std::string& v) { return cmp(str_op_of(op), v); },
      [&](bool negate) {
        Test t = simple(negate ? Form::StrNotIn : Form::Str, base);
        t.sp.op = StrOp::In;
        t.sp.set = std::move(set);
        return t;
      }));
}

void lower(const TableInfo& table, const Predicate& p, std::vector<Test>& out) {
  if (p.column >= table.columns.size())
    throw Error(Code::TET_QUERY_UNKNOWN_COLUMN, "where: column index " + std::to_string(p.column) + " is outside table '" +
                                                    table.name + "'");
  const ColumnSchema& c = table.columns[p.column].schema;
  Test base;
  base.column = p.column;
  base.phys = physical_of(c.kind);
  if (base.phys == Physical::Table) bad_op(c, p.op, "a table column has no values to compare");
  if ((p.op == WhereOp::In || p.op == WhereOp::NotIn) && p.set.size() > kMaxWhereSet)
    throw Error(Code::TET_QUERY_TOO_LARGE, std::string("where: `") + where_op_name(p.op) + "` on column '" + c.name + "' has " +
                                               std::to_string(p.set.size()) + " values (at most 65536)");
  if (p.op == WhereOp::Prefix && base.phys != Physical::Str) bad_op(c, p.op, "prefix applies to str columns only");
  if (p.op == WhereOp::IsNan && base.phys != Physical::Float) bad_op(c, p.op, "is_nan applies to float columns only");
  if (p.op == WhereOp::IsNull) return out.push_back(simple(p.flag ? Form::Null : Form::Present, base));
  switch (base.phys) {
    case Physical::Bool: return lower_bool(c, p, base, out);
    case Physical::Int: return lower_int(c, p, base, out);
    case Physical::Float: return lower_float(c, p, base, out);
    default: return lower_str(c, p, base, out);
  }
}

// ---- one block -------------------------------------------------------------------------------

// The rows of [0, len) as mask words.
void all_rows(uint64_t len, uint64_t* w) {
  for (uint32_t k = 0; k < kWords; ++k) {
    const uint64_t lo = uint64_t(k) * 64;
    w[k] = len >= lo + 64 ? ~uint64_t(0) : len <= lo ? 0 : (uint64_t(1) << (len - lo)) - 1;
  }
}

// What a test's header proves for its block (nothing read but the 64-byte cell).
std::optional<Resolved> probe(const Test& t, const Cell& c) {
  switch (t.form) {
    case Form::Never: return Resolved::AllFalse;
    case Form::Present: return Resolved::AllTrue;
    case Form::Null: return c.has(attr::kHasNulls) ? std::nullopt : std::optional<Resolved>(Resolved::AllFalse);
    case Form::Nan:
    case Form::NotNan: {
      // `is_nan` is `ne` against NaN's complement: settled by the NaN count or a Constant.
      const bool want = t.form == Form::Nan;
      if (c.enc_v() == Enc::Constant) return std::isnan(as_f64(c.meta[0])) == want ? Resolved::AllTrue : Resolved::AllFalse;
      if (c.meta[1] == 0) return want ? Resolved::AllFalse : Resolved::AllTrue;
      if (!c.has(attr::kHasNulls) && c.meta[1] == c.len) return want ? Resolved::AllTrue : Resolved::AllFalse;
      return std::nullopt;
    }
    case Form::Cmp:
      if (t.phys == Physical::Int) return probe_int(c, t.op, t.i);
      if (t.phys == Physical::Float) return probe_float(c, t.op, t.f);
      return probe_bool(c, t.op, t.b);
    case Form::In:
    case Form::NotIn:
      if (t.phys == Physical::Int) return probe_int_in(c, t.iset, t.form == Form::NotIn);
      return probe_float_in(c, t.fset, t.form == Form::NotIn);
    case Form::Str: return probe(c, t.sp);  // Sym8 zone maps; other encodings settle in compare()
    case Form::StrNotIn: {
      const auto r = probe(c, t.sp);
      if (!r) return std::nullopt;
      return *r == Resolved::AllTrue ? Resolved::AllFalse : Resolved::AllTrue;
    }
  }
  return std::nullopt;
}

// Kernels fill `m` with the present rows that match (AllTrue / AllFalse: the caller takes the
// validity instead). `reads_values` is false for a mask-only test (is_null).
// `decoded`: compare_int's (an int comparison's whole-block tier in `s`), else count 0.
Resolved run_kernel(const Test& t, const Cell& c, BlockMask& m, TierScratch& s, const DecodeContext& ctx, IntTier& decoded) {
  decoded.count = 0;
  switch (t.form) {
    case Form::Cmp:
      if (t.phys == Physical::Int) return compare_int(c, t.op, t.i, m, s, &decoded);
      if (t.phys == Physical::Float) return compare_float(c, t.op, t.f, m, s);
      return compare_bool(c, t.op, t.b, m, s);
    case Form::In:
    case Form::NotIn:
      if (t.phys == Physical::Int) return compare_int_in(c, t.iset, t.form == Form::NotIn, m, s);
      return compare_float_in(c, t.fset, t.form == Form::NotIn, m, s);
    case Form::Str: return compare(c, t.sp, m, ctx);
    case Form::StrNotIn: {
      const Resolved r = compare(c, t.sp, m, ctx);
      if (r != Resolved::Decoded) return r == Resolved::AllTrue ? Resolved::AllFalse : Resolved::AllTrue;
      uint64_t present[kWords];
      all_rows(c.len, present);
      if (const uint8_t* v = c.validity()) std::memcpy(present, v, kMaskBytes);
      for (uint32_t k = 0; k < kWords; ++k) m.words[k] = present[k] & ~m.words[k];
      return Resolved::Decoded;
    }
    case Form::Nan:
    case Form::NotNan: {
      const bool want = t.form == Form::Nan;
      double* x = s.as<double>();
      decode_rows(c, 0, static_cast<uint32_t>(c.len), x);
      std::memset(m.words, 0, sizeof m.words);
      const uint8_t* v = c.validity();
      for (uint32_t i = 0; i < c.len; ++i)
        m.words[i >> 6] |= uint64_t(row_valid(v, i) && std::isnan(x[i]) == want) << (i & 63);
      return Resolved::Decoded;
    }
    default: throw Error(Code::TET_INTERNAL, "where: a test without a kernel reached run_kernel");
  }
}

// How a block was settled.
enum class Settled : uint8_t { Resolved, IndexPruned, Decoded };
struct BlockOutcome {
  Settled how = Settled::Resolved;
  uint64_t bytes = 0;
  bool none = false;  // no row selected, known without counting (the block's words stay zero)
};

// Everything a block evaluation reads, prepared once per call.
struct Plan {
  std::vector<Test> tests;
  std::vector<size_t> phase2;            // test order for kernels: strings first
  std::vector<const Cell*> roots;        // per test
  std::vector<const DecodeContext*> ctx; // per test
  std::vector<size_t> slot;              // per test: its column's index among the distinct columns
  size_t columns = 0;                    // distinct columns the tests read
  std::vector<uint8_t> candidate;        // per block (empty: no index applies)
  // Int comparisons: (test, its column's runs of kSpanBlocks blocks) for skipping whole runs
  std::vector<std::pair<size_t, const std::vector<IntSpan>*>> span_tests;
  uint64_t rows = 0;
};

bool none_left(const uint64_t* w) {
  uint64_t any = 0;
  for (uint32_t k = 0; k < kWords; ++k) any |= w[k];
  return any == 0;
}

// A slot's scratch for evaluate_block: the tier decode space and the per-block state, sized once
// per query (no allocation per block).
struct EvalScratch {
  TierScratch tier;
  std::vector<const Cell*> cells;
  std::vector<int8_t> header;
  std::vector<uint8_t> read_mask, read_payload;
  // The last kernel run's whole-block tier of an int comparison, as it still is in `tier`: column
  // `decoded_column`'s block `decoded_block` (~0: none).
  IntTier decoded;
  size_t decoded_column = ~size_t(0);
  uint64_t decoded_block = ~uint64_t(0);
};

BlockOutcome evaluate_block(const Plan& plan, uint64_t block, uint64_t* out, EvalScratch& es) {
  BlockOutcome o;
  es.decoded_block = ~uint64_t(0);
  if (!plan.candidate.empty() && !plan.candidate[block]) return o.how = Settled::IndexPruned, o.none = true, o;
  const size_t n = plan.tests.size();
  TierScratch& scratch = es.tier;
  // Small per-block state (a few tests): settled-by-header flags and which column bytes were read.
  std::vector<const Cell*>& cells = es.cells;
  std::vector<int8_t>& header = es.header;  // -1 unknown, else the Resolved
  cells.assign(n, nullptr);
  header.assign(n, -1);
  for (size_t k = 0; k < n; ++k) {
    cells[k] = &block_at(*plan.roots[k], block);
    if (const auto r = probe(plan.tests[k], *cells[k])) {
      if (*r == Resolved::AllFalse) return o.none = true, o;  // nothing read: out stays zero
      header[k] = static_cast<int8_t>(*r);
    }
  }
  // Ask the caches for every line of the payloads the kernels below will read (the tests the
  // header leaves open; at most kPrefetchBytes each) before they run: a column's blocks lie apart
  // in the file (other columns' blocks between them), so the hardware prefetcher starts over at
  // each one and a kernel would otherwise wait for its lines one after another. A prefetch reads
  // nothing and never faults. (Q2b, 1 thread: 8.5-12.7 → 8.8-9.5 ms.)
  constexpr uint64_t kPrefetchBytes = 16384;
  for (size_t k : plan.phase2) {
    if (header[k] >= 0) continue;
    const char* p = reinterpret_cast<const char*>(cells[k]->payload);
    const uint64_t bytes = std::min<uint64_t>(cells[k]->payload_bytes, kPrefetchBytes);
    for (uint64_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at, 0, 3);
  }
  std::vector<uint8_t>& read_mask = es.read_mask;
  std::vector<uint8_t>& read_payload = es.read_payload;
  read_mask.assign(plan.columns, 0);
  read_payload.assign(plan.columns, 0);
  const uint64_t len = cells[0]->len;
  uint64_t acc[kWords];
  all_rows(len, acc);
  // AllTrue: the column's present rows.
  auto keep_present = [&](size_t k) {
    const uint8_t* v = cells[k]->validity();
    if (!v) return;
    read_mask[plan.slot[k]] = 1;
    for (uint32_t w = 0; w < kWords; ++w) {
      uint64_t bits;
      std::memcpy(&bits, v + 8 * w, 8);
      acc[w] &= bits;
    }
  };
  for (size_t k = 0; k < n; ++k)
    if (header[k] == static_cast<int8_t>(Resolved::AllTrue)) keep_present(k);
  bool decoded = false;
  BlockMask m;
  for (size_t k : plan.phase2) {
    if (header[k] >= 0) continue;
    if (none_left(acc)) break;
    const Test& t = plan.tests[k];
    const Cell& c = *cells[k];
    if (t.form == Form::Null) {  // the mask alone: rows without a present bit
      read_mask[plan.slot[k]] = 1;
      const uint8_t* v = c.validity();
      for (uint32_t w = 0; w < kWords; ++w) {
        uint64_t bits;
        std::memcpy(&bits, v + 8 * w, 8);
        acc[w] &= ~bits;
      }
      all_rows(len, m.words);
      for (uint32_t w = 0; w < kWords; ++w) acc[w] &= m.words[w];
      continue;
    }
    const Resolved r = run_kernel(t, c, m, scratch, *plan.ctx[k], es.decoded);
    // Only the last kernel's decode is still in the scratch.
    es.decoded_block = es.decoded.count == c.len ? block : ~uint64_t(0);
    es.decoded_column = t.column;
    if (r == Resolved::AllFalse) {
      std::memset(acc, 0, sizeof acc);
      break;
    }
    if (r == Resolved::AllTrue) {
      keep_present(k);
      continue;
    }
    decoded = true;
    read_payload[plan.slot[k]] = 1;
    for (uint32_t w = 0; w < kWords; ++w) acc[w] &= m.words[w];
  }
  std::memcpy(out, acc, sizeof acc);
  o.how = decoded ? Settled::Decoded : Settled::Resolved;
  for (size_t k = 0; k < n; ++k) {
    const size_t s = plan.slot[k];
    if (read_payload[s]) o.bytes += cells[k]->payload_bytes, read_payload[s] = read_mask[s] = 0;
    else if (read_mask[s]) o.bytes += kMaskBytes, read_mask[s] = 0;
  }
  return o;
}

// Blocks a column's per-value block index allows for this eq / in test (sorted flags).
void allow_by_index(const BlockIndex& ix, const Test& t, uint64_t blocks, std::vector<uint8_t>& candidate) {
  if (ix.block_count() != blocks) throw_invalid("a block index covers a different number of blocks than its column");
  std::vector<uint8_t> hit(blocks, 0);
  auto mark = [&](const std::vector<uint32_t>& bs) {
    for (uint32_t b : bs) {
      if (b >= blocks) throw_invalid("a block index names a block past its column");
      hit[b] = 1;
    }
  };
  if (t.phys == Physical::Int) {
    if (t.form == Form::Cmp) mark(ix.lookup(t.i));
    for (int64_t v : t.iset) mark(ix.lookup(v));
  } else if (t.sp.op == StrOp::Eq) {
    mark(ix.lookup(std::string_view(t.sp.literal)));
  } else {
    for (const std::string& v : t.sp.set) mark(ix.lookup(std::string_view(v)));
  }
  if (candidate.empty()) candidate.assign(blocks, 1);
  for (uint64_t b = 0; b < blocks; ++b) candidate[b] &= hit[b];
}

}  // namespace

const char* where_op_name(WhereOp op) {
  static const char* const kNames[] = {"eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "range", "prefix", "is_null", "is_nan"};
  const auto i = static_cast<size_t>(op);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "?";
}

void validate_predicate(const TableInfo& table, const Predicate& p) {
  std::vector<Test> ignored;
  lower(table, p, ignored);
}

RowSet::RowSet(uint64_t rows) : rows_(rows), words_((rows + kBlockLanes - 1) / kBlockLanes * kWords, 0) {}

uint64_t RowSet::count() const {
  uint64_t n = 0;
  for (uint64_t w : words_) n += static_cast<uint64_t>(tet::popcount64(w));
  return n;
}

std::vector<uint64_t> RowSet::positions() const {
  std::vector<uint64_t> out;
  out.reserve(count());
  for_each([&](uint64_t r) { out.push_back(r); });
  return out;
}

std::vector<uint64_t> RowSet::runs() const {
  std::vector<uint64_t> out;
  bool open = false;  // a run is open at the current bit
  for (size_t w = 0; w < words_.size(); ++w) {
    const uint64_t base = uint64_t(w) * 64;
    uint64_t bits = words_[w];
    // Whole words inside or outside a run need no bit scan (the common case on long axes).
    if (bits == (open ? ~uint64_t(0) : 0)) continue;
    uint64_t at = 0;  // bits below `at` are settled
    while (at < 64) {
      // the next bit where the state flips: the first set bit (closed) or clear bit (open) from `at`
      const uint64_t look = (open ? ~bits : bits) >> at;
      if (look == 0) break;
      at += uint64_t(__builtin_ctzll(look));
      out.push_back(base + at);  // opens a run at a set bit, closes one at a clear bit
      open = !open;
    }
  }
  if (open) out.push_back(rows_);  // padding bits are zero, so a run still open ends at rows_
  return out;
}

// Blocks b and b + 1 of a plan of one string test through compare_huffman_pair; false (nothing
// written) where it does not apply: a header probe settles a block, or the pair is not two
// GlobalHuffman blocks with rows to test. The outcomes are evaluate_block's for a decoded test:
// the matching present rows, the payload bytes read.
bool huffman_pair(const Plan& plan, uint64_t b, RowSet& rows, std::vector<BlockOutcome>& outcomes, std::vector<uint32_t>& counts) {
  const Test& t = plan.tests[0];
  const Cell& c0 = block_at(*plan.roots[0], b);
  const Cell& c1 = block_at(*plan.roots[0], b + 1);
  if (probe(t, c0) || probe(t, c1)) return false;
  BlockMask m[2];
  if (!compare_huffman_pair(c0, c1, t.sp, m[0], m[1], *plan.ctx[0])) return false;
  const Cell* cells[2] = {&c0, &c1};
  for (int k = 0; k < 2; ++k) {
    uint64_t* w = rows.block_words(b + k);
    all_rows(cells[k]->len, w);
    uint32_t n = 0;
    for (uint32_t j = 0; j < kWords; ++j) w[j] &= m[k].words[j], n += uint32_t(tet::popcount64(w[j]));
    outcomes[b + k] = BlockOutcome{Settled::Decoded, cells[k]->payload_bytes, false};
    counts[b + k] = n;
  }
  return true;
}

// ---- WhereEvaluator --------------------------------------------------------------------------

struct WhereEvaluator::Impl {
  Plan plan;
  WhereResult res;
  uint64_t blocks = 0;
  enum class Mode : uint8_t { Never, All, Tests } mode = Mode::Tests;
  bool pair_strings = false;
  std::vector<CellRef> held;  // column roots the plan points into
  std::vector<BlockOutcome> outcomes;
  std::vector<uint32_t> counts;
  std::vector<std::unique_ptr<EvalScratch>> scratch;

  void block_range(uint64_t first, uint64_t last, EvalScratch& es);
};

WhereEvaluator::WhereEvaluator(const TablesRegion& region, size_t table, const std::vector<Predicate>& preds)
    : impl_(std::make_unique<Impl>()) {
  if (table >= region.tables().size())
    throw Error(Code::TET_QUERY_UNKNOWN_TABLE, "where: table index " + std::to_string(table) + " is outside the file");
  Impl& m = *impl_;
  const TableInfo& info = region.tables()[table];
  Plan& plan = m.plan;
  for (const Predicate& p : preds) lower(info, p, plan.tests);
  plan.rows = info.rows;
  m.blocks = (info.rows + kBlockLanes - 1) / kBlockLanes;
  m.res.rows = RowSet(info.rows);
  m.res.plan.rows = info.rows;
  m.res.plan.blocks = m.blocks;
  m.outcomes.resize(m.blocks);
  m.counts.assign(m.blocks, 0);
  if (std::any_of(plan.tests.begin(), plan.tests.end(), [](const Test& t) { return t.form == Form::Never; })) {
    m.mode = Impl::Mode::Never;  // settled by the predicates alone
    return;
  }
  if (plan.tests.empty()) {
    m.mode = Impl::Mode::All;
    return;
  }
  // Column roots (validated on first use), contexts and block indexes, once per column.
  std::vector<size_t> column_of_slot;
  std::vector<const BlockIndex*> index_of_slot;
  for (size_t k = 0; k < plan.tests.size(); ++k) {
    const size_t col = plan.tests[k].column;
    auto it = std::find(column_of_slot.begin(), column_of_slot.end(), col);
    size_t s = static_cast<size_t>(it - column_of_slot.begin());
    if (it == column_of_slot.end()) {
      CellRef root = region.column(table, col);
      if (!root || root->len != info.rows || block_count(*root) != m.blocks)
        throw_invalid("column '" + info.columns[col].schema.name + "' does not span its table's rows");
      m.held.push_back(root);
      column_of_slot.push_back(col);
      index_of_slot.push_back(region.block_index(table, col));
    }
    plan.slot.push_back(s);
    plan.roots.push_back(m.held[s].get());
    plan.ctx.push_back(&region.context(table, col));
  }
  plan.columns = column_of_slot.size();
  for (size_t k = 0; k < plan.tests.size(); ++k) {
    const Test& t = plan.tests[k];
    if (t.indexable() && index_of_slot[plan.slot[k]]) allow_by_index(*index_of_slot[plan.slot[k]], t, m.blocks, plan.candidate);
  }
  // Without a per-value index (whose pruning where_plan counts per block), a run of blocks whose
  // header bounds settle an int comparison false is skipped whole: its blocks are the ones a
  // probe would settle (zone-map resolved), without reading their headers one by one.
  if (plan.candidate.empty())
    for (size_t k = 0; k < plan.tests.size(); ++k)
      if (plan.tests[k].form == Form::Cmp && plan.tests[k].phys == Physical::Int)
        plan.span_tests.emplace_back(k, &region.int_spans(table, plan.tests[k].column));
  for (int strings_first = 1; strings_first >= 0; --strings_first)
    for (size_t k = 0; k < plan.tests.size(); ++k)
      if ((plan.tests[k].phys == Physical::Str) == (strings_first == 1)) plan.phase2.push_back(k);
  // One string test and no block index: GlobalHuffman blocks go through the kernel two at a time
  // (their streams walked interleaved), each outcome what evaluate_block gives that block alone.
  m.pair_strings = plan.tests.size() == 1 && plan.tests[0].form == Form::Str && plan.candidate.empty();
}

WhereEvaluator::~WhereEvaluator() = default;

uint64_t WhereEvaluator::blocks() const { return impl_->blocks; }
const RowSet& WhereEvaluator::rows() const { return impl_->res.rows; }

bool WhereEvaluator::reads_column(size_t column) const {
  const auto& tests = impl_->plan.tests;
  return std::any_of(tests.begin(), tests.end(), [&](const Test& t) { return t.column == column; });
}

const IntTier* WhereEvaluator::decoded(uint32_t slot, size_t column, uint64_t block) const {
  if (slot >= impl_->scratch.size()) return nullptr;
  const EvalScratch& es = *impl_->scratch[slot];
  return es.decoded_block == block && es.decoded_column == column ? &es.decoded : nullptr;
}

void WhereEvaluator::reserve_slots(uint32_t slots) {
  auto& scratch = impl_->scratch;
  while (scratch.size() < std::max<uint32_t>(1, slots)) scratch.push_back(std::make_unique<EvalScratch>());
}

void WhereEvaluator::evaluate(uint64_t first, uint64_t last, uint32_t slot) {
  Impl& m = *impl_;
  if (slot >= m.scratch.size()) throw Error(Code::TET_INTERNAL, "where: evaluation slot without scratch");
  m.block_range(first, std::min(last, m.blocks), *m.scratch[slot]);
}

void WhereEvaluator::Impl::block_range(uint64_t first, uint64_t last, EvalScratch& es) {
  for (uint64_t b = first; b < last; ++b) {
    uint64_t* w = res.rows.block_words(b);
    if (mode == Mode::Never) {
      outcomes[b].none = true;  // Resolved, nothing read; the words stay zero
      continue;
    }
    if (mode == Mode::All) {
      const uint32_t len = uint32_t(std::min<uint64_t>(kBlockLanes, plan.rows - b * kBlockLanes));
      all_rows(len, w);
      counts[b] = len;
      continue;
    }
    const uint64_t span = b / kSpanBlocks;
    bool never = false;
    for (const auto& [k, spans] : plan.span_tests)
      if (span < spans->size() && int_span_never((*spans)[span], plan.tests[k].op, plan.tests[k].i)) never = true;
    if (never) {
      outcomes[b].none = true;  // counts stay 0
      continue;
    }
    if (pair_strings && b + 1 < last && huffman_pair(plan, b, res.rows, outcomes, counts)) {
      ++b;
      continue;
    }
    outcomes[b] = evaluate_block(plan, b, w, es);
    uint32_t n = 0;
    if (!outcomes[b].none)
      for (uint32_t k = 0; k < kBlockLanes / 64; ++k) n += tet::popcount64(w[k]);
    counts[b] = n;
  }
}

WhereResult WhereEvaluator::finish() {
  Impl& m = *impl_;
  WhereResult res = std::move(m.res);
  if (m.mode == Impl::Mode::Never || m.mode == Impl::Mode::All) res.plan.blocks_zonemap_resolved = m.blocks;
  else
    for (const BlockOutcome& o : m.outcomes) {
      res.plan.blocks_zonemap_resolved += o.how == Settled::Resolved;
      res.plan.blocks_index_pruned += o.how == Settled::IndexPruned;
      res.plan.blocks_decoded += o.how == Settled::Decoded;
      res.plan.payload_bytes_read += o.bytes;
    }
  uint64_t selected = 0;
  for (uint32_t n : m.counts) selected += n;
  res.rows.set_block_counts(std::move(m.counts));
  res.plan.selected = selected;
  return res;
}

WhereResult evaluate_where(const TablesRegion& region, size_t table, const std::vector<Predicate>& preds, uint32_t threads,
                           const std::atomic<bool>* cancel) {
  WhereEvaluator we(region, table, preds);
  const uint64_t blocks = we.blocks();
  exec::ThreadPool& pool = exec::ThreadPool::instance();
  // Items of kBlocksPerItem blocks: most blocks of a selective where are settled by their header
  // in nanoseconds, so an item per block would be mostly dispatch.
  constexpr uint64_t kBlocksPerItem = kSpanBlocks;
  const uint64_t items = (blocks + kBlocksPerItem - 1) / kBlocksPerItem;
  we.reserve_slots(pool.participants(items, threads));
  auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
  auto run = [&](uint64_t item, uint32_t slot) {
    if (cancelled()) return;
    we.evaluate(item * kBlocksPerItem, (item + 1) * kBlocksPerItem, slot);
  };
  if (threads == 1 || items <= 1) {
    for (uint64_t i = 0; i < items; ++i) run(i, 0);
  } else {
    pool.parallel_for(items, threads, run);
  }
  if (cancelled()) throw Error(Code::TET_CANCELLED, "where: the evaluation was cancelled");
  return we.finish();
}

}  // namespace tet::cells
