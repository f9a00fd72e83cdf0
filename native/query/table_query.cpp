#include "query/table_query.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "cells/str_codec.h"
#include "cells/str_kernels.h"
#include "exec/thread_pool.h"
#include "fold/order_stats.h"
#include "fold/registry.h"
#include "query/keys.h"
#include "query/table_scan.h"
#include "util/xxh64.h"

namespace tet::query {

using namespace cells;

// ---- interning ---------------------------------------------------------------------------------

uint32_t StrInterner::intern(std::string_view s) {
  const uint64_t h = xxh64(s.data(), s.size(), 0);
  for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const uint32_t slot = slots_[i];
    if (slot == 0) {
      strs_.push(s);
      hashes_.push_back(h);
      slots_[i] = uint32_t(strs_.size());
      if (strs_.size() * 2 > slots_.size()) {
        std::vector<uint32_t> next(slots_.size() * 2, 0);
        const uint64_t m = next.size() - 1;
        for (uint32_t id = 0; id < hashes_.size(); ++id) {
          uint64_t k = hashes_[id] & m;
          while (next[k] != 0) k = (k + 1) & m;
          next[k] = id + 1;
        }
        slots_.swap(next);
        mask_ = m;
      }
      return uint32_t(strs_.size() - 1);
    }
    if (hashes_[slot - 1] == h && strs_.at(slot - 1) == s) return slot - 1;
  }
}

// ---- calendar and widths -------------------------------------------------------------------------

namespace {

int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Howard Hinnant's civil_from_days / days_from_civil (proleptic Gregorian), in i64.
void civil_from_days(int64_t z, int64_t& y, unsigned& m) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  m = unsigned(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t ticks_per_second(TimeUnit u) {
  switch (u) {
    case TimeUnit::S: return 1;
    case TimeUnit::Ms: return 1000;
    case TimeUnit::Us: return 1000000;
    default: return 1000000000;
  }
}

int64_t checked_i64(__int128 v, const char* what) {
  if (v < __int128(std::numeric_limits<int64_t>::min()) || v > __int128(std::numeric_limits<int64_t>::max()))
    throw Error(Code::TET_QUERY_INVALID, std::string(what) + " lies outside the i64 range");
  return int64_t(v);
}

}  // namespace

int64_t bucket_start(Kind kind, TimeUnit unit, TimeBucket bucket, int64_t v) {
  const int64_t per_day = kind == Kind::Date ? 1 : 86400 * ticks_per_second(unit);
  if (kind == Kind::Timestamp && (bucket == TimeBucket::Hour || bucket == TimeBucket::Minute)) {
    const int64_t w = (bucket == TimeBucket::Hour ? 3600 : 60) * ticks_per_second(unit);
    return checked_i64(__int128(floor_div(v, w)) * w, "the start of a bucket");
  }
  const int64_t days = floor_div(v, per_day);
  int64_t start_days = days;
  if (bucket != TimeBucket::Day) {
    int64_t y;
    unsigned m;
    civil_from_days(days, y, m);
    start_days = days_from_civil(y, bucket == TimeBucket::Year ? 1 : m, 1);
  }
  return checked_i64(__int128(start_days) * per_day, "the start of a bucket");
}

int64_t width_floor(int64_t v, int64_t w) { return checked_i64(__int128(floor_div(v, w)) * w, "a width key"); }

size_t ValueColumn::size() const {
  switch (type) {
    case Type::Bool: return b.size();
    case Type::I64: return i.size();
    case Type::U64: return u.size();
    case Type::F64: return f.size();
    case Type::I128: return wide.size();
    case Type::Str: return s.size();
  }
  return 0;
}

namespace {

// ---- what an op needs of its column, and what it returns ---------------------------------------

enum class Need : uint8_t { Counts, Stream, Gather, StrExtrema };

bool numeric_kind(Kind k) { return k == Kind::Int || k == Kind::Float || k == Kind::Bool; }

[[noreturn]] void column_kind_error(const ColumnSchema& c, const std::string& what) {
  throw Error(Code::TET_QUERY_COLUMN_KIND, what + " does not apply to " + kind_name(c.kind) + " column '" + c.name + "'");
}

Need need_of(Op op, const ColumnSchema& c, bool count_rows) {
  if (count_rows || op == Op::Count || op == Op::NullCount) return Need::Counts;
  switch (op) {
    case Op::Min: case Op::Max:
      return c.kind == Kind::Str ? Need::StrExtrema : Need::Stream;
    case Op::Median: case Op::Quantile: case Op::Histogram:
      if (!numeric_kind(c.kind) || (op == Op::Histogram && c.kind == Kind::Bool))
        column_kind_error(c, std::string("`") + fold::op_traits(op).name + "`");
      return Need::Gather;
    case Op::ArgMin: case Op::ArgMax: case Op::Covariance: case Op::Correlation: case Op::None:
      throw Error(Code::TET_QUERY_UNSUPPORTED, std::string("`") + fold::op_traits(op).name + "` is not a table reduction");
    default:
      if (!numeric_kind(c.kind)) column_kind_error(c, std::string("`") + fold::op_traits(op).name + "`");
      return Need::Stream;
  }
}

ValueColumn::Type result_type(Op op, const ColumnSchema& c, bool count_rows) {
  if (count_rows) return ValueColumn::Type::U64;
  switch (op) {
    case Op::Count: case Op::NullCount: case Op::NanCount: case Op::InfCount: case Op::Histogram:
      return ValueColumn::Type::U64;
    case Op::AnyNan: case Op::AnyInf: case Op::AllFinite: return ValueColumn::Type::Bool;
    case Op::Sum: return c.kind == Kind::Float ? ValueColumn::Type::F64 : ValueColumn::Type::I128;
    case Op::Min: case Op::Max:
      switch (physical_of(c.kind)) {
        case Physical::Float: return ValueColumn::Type::F64;
        case Physical::Bool: return ValueColumn::Type::Bool;
        case Physical::Str: return ValueColumn::Type::Str;
        default: return ValueColumn::Type::I64;
      }
    default: return ValueColumn::Type::F64;
  }
}

// ---- one accumulator: a family state plus counts, gathered values, string bounds ---------------

template <class F> struct Acc {
  typename F::State st;
  uint64_t rows = 0, present = 0;
  std::vector<double> gathered;
  std::string lo, hi;  // str min / max (when str_set)
  bool str_set = false;
};

struct QueryCtx {
  const TableBlocks& tb;
  const TableQueryPlan& plan;
  const RowSet* sel;
  BudgetMeter& meter;
  uint32_t threads;
  const std::atomic<bool>* cancel;
  // Set where the where is evaluated unit by unit inside the fold (run_scalar): `sel` is its
  // rows, each unit's blocks evaluated just before the unit folds them.
  cells::WhereEvaluator* where_eval = nullptr;
};

template <class T, class F> class Reducer {
 public:
  Reducer(const QueryCtx& q, Need need) : q_(q), need_(need), phys_(physical_of(q.tb.schema(q.plan.column).kind)) {
    cfg_ = fold::make_cfg<T>(q.plan.op, fold::best_isa(), false, 0.0);
  }
  Acc<F> identity() const {
    Acc<F> a;
    a.st = F::identity(cfg_);
    return a;
  }

  // One block of the ungrouped fold: the selected present values as one run. `decoded`: the
  // block's tier as the where decoded it (the values are read from it).
  void block(Acc<F>& a, const Cell& blk, const BlockMask& sel, uint32_t nsel, CompactRows& cr,
             const cells::IntTier* decoded = nullptr) const {
    a.rows += nsel;
    if (nsel == 0 || q_.plan.count_rows) return;
    BlockMask pm;
    const uint32_t np = present_rows(blk, sel, pm);
    if (need_ == Need::Counts) {
      a.present += np;
      return;
    }
    if (np == 0) return;
    const bool all = nsel == blk.len;
    if (need_ == Need::StrExtrema) {
      if (all) {
        if (auto mm = min_max(blk, q_.tb.context(q_.plan.column))) str_bound(a, mm->first), str_bound(a, mm->second);
      } else {
        cr.load(blk, phys_, pm, q_.tb.context(q_.plan.column), false);
        for (size_t k = 0; k < cr.str_rows.size(); ++k) str_bound(a, cr.str(k));
      }
      a.present += np;
      return;
    }
    if (all && encoded_fold(a, blk, *cr.scratch)) return;
    cr.load(blk, phys_, pm, q_.tb.context(q_.plan.column), false, decoded);
    a.present += np;
    const T* x = values(cr);
    if (need_ == Need::Gather) {
      q_.meter.add(uint64_t(np) * 8, "the values median / quantile / histogram gather");
      for (uint32_t k = 0; k < np; ++k) a.gathered.push_back(double(x[k]));
      return;
    }
    F::consume(cfg_, a.st, x, np);
  }

  // One row of a grouped fold (the row is selected; `present` says whether its value is).
  void row(Acc<F>& a, const CompactRows& cr, size_t k) const {
    ++a.rows;
    if (q_.plan.count_rows || cr.valid[k] == 0) return;
    ++a.present;
    switch (need_) {
      case Need::Counts: return;
      case Need::StrExtrema: str_bound(a, cr.str(k)); return;
      case Need::Gather: a.gathered.push_back(double(values(cr)[k])); return;
      case Need::Stream: F::consume_one(cfg_, a.st, values(cr)[k], 0); return;
    }
  }

  // merge(a, b) for a b whose counters and state come apart (the tight fold's arrays; no
  // gathered values or string bounds).
  void merge_state(Acc<F>& a, uint64_t rows, uint64_t present, const typename F::State& st) const {
    a.rows += rows;
    if (present == 0) return;
    a.present += present;
    F::merge(cfg_, a.st, st);
  }

  void merge(Acc<F>& a, Acc<F>& b) const {
    a.rows += b.rows;
    if (b.present == 0) return;
    if (need_ == Need::StrExtrema && b.str_set) str_bound(a, b.lo), str_bound(a, b.hi);
    a.present += b.present;
    F::merge(cfg_, a.st, b.st);
    if (need_ == Need::Gather) {
      if (a.gathered.empty()) a.gathered.swap(b.gathered);
      else a.gathered.insert(a.gathered.end(), b.gathered.begin(), b.gathered.end());
    }
  }

  // The op's value of `a`, appended to `out` (whose type is result_type).
  void finalize(Acc<F>& a, ValueColumn& out) const {
    const Op op = q_.plan.op;
    if (q_.plan.count_rows) return out.u.push_back(a.rows);
    switch (op) {
      case Op::Count: return out.u.push_back(a.present);
      case Op::NullCount: return out.u.push_back(a.rows - a.present);
      case Op::Median: case Op::Quantile: {
        const double q = op == Op::Median ? 0.5 : q_.plan.q;
        out.f.push_back(a.gathered.empty() ? std::numeric_limits<double>::quiet_NaN()
                                           : fold::quantile_inplace(a.gathered.data(), a.gathered.size(), q));
        return;
      }
      case Op::Sum:
        if constexpr (std::is_same<F, fold::ops::Sum<int64_t>>::value) return out.wide.push_back(a.st.isum);
        break;
      case Op::Min: case Op::Max: {
        const bool none = a.present == 0;
        if (out.type != ValueColumn::Type::F64) out.valid.push_back(none ? 0 : 1);
        if (out.type == ValueColumn::Type::Str) {
          const std::string& v = op == Op::Min ? a.lo : a.hi;
          return out.s.push(none ? std::string_view() : std::string_view(v));
        }
        if (none) {
          if (out.type == ValueColumn::Type::F64) return out.f.push_back(std::numeric_limits<double>::quiet_NaN());
          if (out.type == ValueColumn::Type::Bool) return out.b.push_back(0);
          return out.i.push_back(0);
        }
        break;
      }
      default: break;
    }
    uint8_t v[8] = {0};
    F::finalize(cfg_, a.st, v);
    double d;
    int64_t i;
    uint64_t u;
    std::memcpy(&d, v, 8), std::memcpy(&i, v, 8), std::memcpy(&u, v, 8);
    switch (out.type) {
      case ValueColumn::Type::F64: out.f.push_back(d); break;
      case ValueColumn::Type::U64: out.u.push_back(u); break;
      case ValueColumn::Type::I64: out.i.push_back(i); break;
      case ValueColumn::Type::Bool: out.b.push_back(op == Op::Min || op == Op::Max ? uint8_t(i != 0) : v[0]); break;
      default: throw Error(Code::TET_INTERNAL, "table query: result type");
    }
  }

  Physical phys() const { return phys_; }
  Need need() const { return need_; }

 private:
  const T* values(const CompactRows& cr) const {
    if constexpr (std::is_same<T, double>::value) return cr.f.data();
    else return cr.i.data();
  }
  static void str_bound(Acc<F>& a, std::string_view s) {
    if (!a.str_set) {
      a.lo.assign(s.data(), s.size()), a.hi.assign(s.data(), s.size()), a.str_set = true;
      return;
    }
    if (str_order(s, a.lo) < 0) a.lo.assign(s.data(), s.size());
    if (str_order(s, a.hi) > 0) a.hi.assign(s.data(), s.size());
  }

  // A whole Int-stored block through the cell kernels (encoded-domain for For / Delta /
  // Constant / Sequence); false when the op has no such path.
  bool encoded_fold(Acc<F>& a, const Cell& blk, TierScratch& scratch) const {
    if constexpr (std::is_same<F, fold::ops::Sum<int64_t>>::value) {
      if (!F::exact_int(q_.plan.op)) return false;
      const IntSum s = phys_ == Physical::Bool ? sum_bool(blk, scratch) : sum_int(blk, scratch);
      a.st.n += s.valid, a.st.isum += s.sum, a.present += s.valid;
      return true;
    } else if constexpr (std::is_same<F, fold::ops::Extrema<int64_t>>::value) {
      if (phys_ != Physical::Int) return false;
      const IntMinMax m = min_max_int(blk, scratch);
      if (m.valid) {
        if (m.min < a.st.lo) a.st.lo = m.min;
        if (m.max > a.st.hi) a.st.hi = m.max;
      }
      a.present += m.valid;
      return true;
    } else {
      (void)a, (void)blk, (void)scratch;
      return false;
    }
  }
  const QueryCtx& q_;
  Need need_;
  Physical phys_;
  fold::OpCfg<T> cfg_;
};


// ---- the tight grouped fold ------------------------------------------------------------------------

// Grouped folds whose per-row step is a few counters and one sum: count / null_count / the
// count of rows (counters only), and sum / mean / nan_mean of the Sum family (a Neumaier pair
// on f64 values, an exact i128 sum on Int-stored and bool values). tight_fold keeps their
// states as arrays by local id and runs the rows of a block in one loop, with the arithmetic of
// Reducer::row + Sum<T>::consume_one in the same order; the partial keeps the arrays (no Acc per
// group and unit) and merges them as Reducer::merge would the Accs the row-by-row fold builds,
// so the results are those bits.
enum class TightFold : uint8_t { None, Rows, Counts, FloatSum, FloatNanSum, ExactSum };

template <class F> TightFold tight_fold_of(const TableQueryPlan& plan, Need need) {
  if (plan.count_rows) return TightFold::Rows;
  if (need == Need::Counts) return TightFold::Counts;
  if (need != Need::Stream || !(plan.op == Op::Sum || plan.op == Op::Mean || plan.op == Op::NanMean)) return TightFold::None;
  if constexpr (std::is_same<F, fold::ops::Sum<double>>::value) return plan.op == Op::NanMean ? TightFold::FloatNanSum : TightFold::FloatSum;
  else if constexpr (std::is_same<F, fold::ops::Sum<int64_t>>::value) return TightFold::ExactSum;
  else return TightFold::None;
}

// By local id: the Acc counters (rows, present) and the Sum state (n, s + c or isum), one
// record a group (a row's update touches one cache line, however many groups there are).
struct GroupSum {
  uint64_t rows = 0, present = 0, n = 0;
  double s = 0.0, c = 0.0;
  __int128 isum = 0;
};
struct GroupSums {
  std::vector<GroupSum> g;
  void add_group() { g.emplace_back(); }
  // Group i's family state (`st` is the identity; counting folds keep it).
  template <class T, class S> S state(S st, uint32_t i) const {
    if constexpr (std::is_same<S, typename fold::ops::Sum<T>::State>::value) st.n = g[i].n, st.s = g[i].s, st.c = g[i].c, st.isum = g[i].isum;
    return st;
  }
};

// Rows [0, n) of a loaded block: row j into group gid[j]; `value` holds the value column's
// selected rows (valid per row; f / i values unless counting). One pass per fold kind, each row's
// states updated together.
template <class T>
void tight_fold(TightFold how, GroupSums& sums, const uint32_t* gid, const CompactRows& value, uint32_t n) {
  GroupSum* st = sums.g.data();
  if (how == TightFold::Rows) {  // no value column
    for (uint32_t j = 0; j < n; ++j) ++st[gid[j]].rows;
    return;
  }
  const uint8_t* ok = value.valid.data();
  if (how == TightFold::Counts) {
    for (uint32_t j = 0; j < n; ++j) {
      GroupSum& a = st[gid[j]];
      ++a.rows, a.present += ok[j];
    }
    return;
  }
  if (how == TightFold::ExactSum) {
    const int64_t* x = value.i.data();
    for (uint32_t j = 0; j < n; ++j) {
      GroupSum& a = st[gid[j]];
      ++a.rows;
      if (ok[j]) ++a.present, ++a.n, a.isum += x[j];
    }
    return;
  }
  const double* x = value.f.data();
  if (how == TightFold::FloatNanSum) {
    for (uint32_t j = 0; j < n; ++j) {
      GroupSum& a = st[gid[j]];
      ++a.rows;
      if (!ok[j]) continue;
      ++a.present;
      const double v = x[j];
      if (v != v) continue;
      ++a.n;
      fold::neumaier_add(a.s, a.c, v);
    }
    return;
  }
  // FloatSum: n is the present count (finish_tight sets it once per unit, not per row).
  for (uint32_t j = 0; j < n; ++j) {
    GroupSum& a = st[gid[j]];
    ++a.rows;
    if (!ok[j]) continue;
    ++a.present;
    fold::neumaier_add(a.s, a.c, x[j]);
  }
}

// The end of a unit's tight fold: FloatSum counts n only as `present` (every present value is
// summed), so it is filled in here.
void finish_tight(TightFold how, GroupSums& sums) {
  if (how == TightFold::FloatSum)
    for (GroupSum& g : sums.g) g.n = g.present;
}

uint32_t block_len(const TableBlocks& tb, uint64_t b) {
  return uint32_t(std::min<uint64_t>(kBlockLanes, tb.rows - b * kBlockLanes));
}

// Per-slot scratch of a pass: the tier decode space and compact rows for the value column and
// each key / order column.
struct SlotScratch {
  explicit SlotScratch(size_t keys) : keys(keys) {
    value.scratch = &tier;
    for (CompactRows& k : this->keys) k.scratch = &tier;
  }
  TierScratch tier;
  CompactRows value;
  std::vector<CompactRows> keys;
  std::vector<std::vector<uint64_t>> words;
  std::vector<std::vector<uint8_t>> nulls;
  std::vector<uint32_t> dense_idx, dense_local, codes, gid;  // run_grouped's dense key (DenseKey)
  // A GlobalHuffman key decodes two blocks at once (their lookup chains overlap): the second
  // block's codes wait here for its turn.
  std::vector<uint32_t> codes_next;
  uint64_t codes_next_block = ~uint64_t(0);
  size_t groups_hint = 0;                                    // groups of the slot's last unit
};

std::vector<std::unique_ptr<SlotScratch>> slot_scratch(const Units& units, uint32_t threads, size_t keys) {
  std::vector<std::unique_ptr<SlotScratch>> out(std::max<uint32_t>(1, exec::ThreadPool::instance().participants(units.count, threads)));
  for (auto& s : out) {
    s = std::make_unique<SlotScratch>(keys);
    s->words.resize(keys), s->nulls.resize(keys);
  }
  return out;
}

// ---- ungrouped reductions ------------------------------------------------------------------------

void histogram_of(const TableQueryPlan& plan, std::vector<double>& x, TableQueryResult& res) {
  double lo = plan.hist_min, hi = plan.hist_max;
  if (!plan.hist_range && !fold::finite_range(x.data(), x.size(), lo, hi)) lo = 0, hi = 1;
  fold::histogram_range_fix(lo, hi);
  res.hist_edges.resize(size_t(plan.bins) + 1);
  fold::histogram_edges(lo, hi, plan.bins, res.hist_edges.data());
  res.values.u.assign(plan.bins, 0);
  fold::histogram_count(x.data(), x.size(), plan.bins, lo, hi, res.hist_edges.data(), res.values.u.data());
}

template <class T, class F>
void run_scalar(const QueryCtx& q, const Reducer<T, F>& red, TableQueryResult& res) {
  const Units units(q.tb.blocks);
  res.units = units.count;
  Acc<F> total = red.identity();
  OrderedMerge<Acc<F>> merger(units.count, [&](Acc<F>& p) { red.merge(total, p); });
  auto scratch = slot_scratch(units, q.threads, 0);
  if (q.where_eval) q.where_eval->reserve_slots(uint32_t(scratch.size()));
  const size_t col = q.plan.column;
  const bool where_per_block = q.where_eval && q.where_eval->reads_column(col);
  res.threads_used = run_units(units, q.threads, [&](uint64_t u, uint32_t slot) {
    auto a = std::make_unique<Acc<F>>(red.identity());
    SlotScratch& s = *scratch[slot];
    // The unit's where first: its blocks' bytes are then still in cache when they are folded.
    // A where that tests the folded column goes a block at a time: the fold reads the values
    // the where decoded (cells::WhereEvaluator::decoded) instead of decoding them again.
    if (q.where_eval && !where_per_block) q.where_eval->evaluate(units.first(u), units.last(u), slot);
    BlockMask sel;
    for (uint64_t b = units.first(u); b < units.last(u); ++b) {
      if (where_per_block) q.where_eval->evaluate(b, b + 1, slot);
      const uint32_t n = block_selection(q.sel, b, block_len(q.tb, b), sel);
      if (n == 0) continue;  // nothing selected: the block's view is not even looked at
      red.block(*a, q.tb.block(col, b), sel, n, s.value, where_per_block ? q.where_eval->decoded(slot, col, b) : nullptr);
    }
    merger.done(u, std::move(a));
  }, q.cancel);
  if (q.plan.op == Op::Histogram) return histogram_of(q.plan, total.gathered, res);
  red.finalize(total, res.values);
}

// ---- grouped reductions --------------------------------------------------------------------------

template <class F> struct GroupPartial {
  explicit GroupPartial(size_t keys) : map(keys), interners(keys) {}
  // Empty again, for another unit; the buffers keep their capacity.
  void reset() {
    if (map.size()) map = GroupMap(interners.size());
    for (StrInterner& i : interners)
      if (i.size()) i = StrInterner();
    accs.clear(), dense.clear(), sums.g.clear();
    bytes = 0, row0 = 0, row1 = 0;
  }
  GroupMap map;
  std::vector<Acc<F>> accs;
  std::vector<StrInterner> interners;  // str key parts: ids local to this partial
  std::vector<uint32_t> dense;         // with a DenseKey: each local id's dense index (no map)
  GroupSums sums;                      // with a tight fold: the states by local id (no accs)
  uint64_t bytes = 0;
  uint64_t row0 = 0, row1 = 0;         // plan.row_groups: the unit's rows (their local ids in row_gid)
};

class KeyColumns {
 public:
  KeyColumns(const QueryCtx& q) : q_(q) {
    for (const GroupKey& g : q.plan.group_by) phys_.push_back(physical_of(q.tb.schema(g.column).kind));
  }
  size_t size() const { return phys_.size(); }
  Physical phys(size_t k) const { return phys_[k]; }

  // The key words and null flags of every selected row of block b, for key part k.
  void load(size_t k, uint64_t b, const BlockMask& sel, SlotScratch& s, StrInterner& interner,
            std::vector<uint32_t>& dict_ids) const {
    const GroupKey& g = q_.plan.group_by[k];
    const Cell& blk = q_.tb.block(g.column, b);
    const DecodeContext& ctx = q_.tb.context(g.column);
    std::vector<uint64_t>& w = s.words[k];
    std::vector<uint8_t>& nul = s.nulls[k];
    w.clear(), nul.clear();
    if (phys_[k] == Physical::Str && blk.enc_v() == Enc::GlobalDict && ctx.global_dict) {
      // codes into the column dictionary: each distinct code interned once per partial
      const str::GlobalDictLayout l = str::global_dict_layout(blk);
      if (dict_ids.size() != ctx.global_dict->size()) dict_ids.assign(ctx.global_dict->size(), ~uint32_t(0));
      const uint8_t* v = blk.validity();
      for (uint32_t wd = 0; wd < kWordsPerBlock; ++wd)
        for (uint64_t bits = sel.words[wd]; bits; bits &= bits - 1) {
          const uint32_t r = wd * 64 + uint32_t(__builtin_ctzll(bits));
          if (!row_valid(v, r)) {
            w.push_back(0), nul.push_back(1);
            continue;
          }
          const uint64_t code = l.code(r);
          uint32_t& id = dict_ids[code];
          if (id == ~uint32_t(0)) id = interner.intern(ctx.global_dict->at(code));
          w.push_back(id), nul.push_back(0);
        }
      return;
    }
    CompactRows& cr = s.keys[k];
    cr.load(blk, phys_[k], sel, ctx, true);
    const size_t n = cr.valid.size();
    nul.resize(n);
    w.resize(n);
    for (size_t j = 0; j < n; ++j) nul[j] = cr.valid[j] == 0;
    const ColumnSchema& c = q_.tb.schema(g.column);
    switch (phys_[k]) {
      case Physical::Str:
        for (size_t j = 0; j < n; ++j) w[j] = nul[j] ? 0 : interner.intern(cr.str(j));
        break;
      case Physical::Float:
        for (size_t j = 0; j < n; ++j) {
          double v = cr.f[j];
          if (g.transform == KeyTransform::WidthFloat) v = std::floor(v / g.width_float) * g.width_float;
          w[j] = nul[j] ? 0 : float_key_bits(v);
        }
        break;
      default:
        for (size_t j = 0; j < n; ++j) {
          if (nul[j]) { w[j] = 0; continue; }
          int64_t v = cr.i[j];
          if (g.transform == KeyTransform::WidthInt) v = width_floor(v, g.width_int);
          else if (g.transform == KeyTransform::Bucket) v = bucket_start(c.kind, c.unit, g.bucket, v);
          w[j] = uint64_t(v);
        }
        break;
    }
  }

  // Ascending key order (§4.2): numbers numerically, NaN after them, str binary, false < true,
  // the null part last.
  int compare(const GroupKeyWords& a, const GroupKeyWords& b, const std::vector<StrInterner>& strs) const {
    for (size_t p = 0; p < phys_.size(); ++p) {
      // unsigned bits, not bools: with the bool form, the GCC 12 -O2 / -O3 builds of this file
      // put 3+ part keys with leading nulls out of order (right at -O1 and under UBSan; not
      // reproduced in isolation, cause not pinned down); native/tests/table_query_test.cpp
      // ("three and four keys") checks the order
      const unsigned an = (unsigned(a.nulls) >> p) & 1u, bn = (unsigned(b.nulls) >> p) & 1u;
      if (an != bn) return an ? 1 : -1;
      if (an) continue;
      int c = 0;
      switch (phys_[p]) {
        case Physical::Str: c = str_order(strs[p].at(uint32_t(a.w[p])), strs[p].at(uint32_t(b.w[p]))); break;
        case Physical::Float: {
          const double x = as_f64(a.w[p]), y = as_f64(b.w[p]);
          const bool xn = x != x, yn = y != y;
          c = xn != yn ? (xn ? 1 : -1) : xn ? 0 : x < y ? -1 : x > y ? 1 : 0;
          break;
        }
        default: {
          const int64_t x = int64_t(a.w[p]), y = int64_t(b.w[p]);
          c = x < y ? -1 : x > y ? 1 : 0;
          break;
        }
      }
      if (c != 0) return c;
    }
    return 0;
  }

  // Key part p of the sorted groups as a typed column.
  ValueColumn emit(size_t p, const std::vector<uint32_t>& order, const GroupMap& map, const StrInterner& strs) const {
    ValueColumn out;
    const ColumnSchema& c = q_.tb.schema(q_.plan.group_by[p].column);
    out.kind = c.kind;
    bool any_null = false;
    for (uint32_t g : order) {
      const GroupKeyWords& k = map.key(g);
      const bool null = (k.nulls >> p) & 1;
      any_null |= null;
      out.valid.push_back(null ? 0 : 1);
      switch (phys_[p]) {
        case Physical::Str: out.type = ValueColumn::Type::Str; out.s.push(null ? std::string_view() : strs.at(uint32_t(k.w[p]))); break;
        case Physical::Float: out.type = ValueColumn::Type::F64; out.f.push_back(null ? 0.0 : as_f64(k.w[p])); break;
        case Physical::Bool: out.type = ValueColumn::Type::Bool; out.b.push_back(uint8_t(k.w[p])); break;
        default: out.type = ValueColumn::Type::I64; out.i.push_back(int64_t(k.w[p])); break;
      }
    }
    if (!any_null) out.valid.clear();
    return out;
  }

 private:
  const QueryCtx& q_;
  std::vector<Physical> phys_;
};

// A single group-by key whose rows map to small dense indices, so a unit finds a row's group
// through an array instead of hashing its key words: a str key whose every block holds codes
// into the column dictionary (GlobalDict / GlobalHuffman: the code), or an Int-stored key
// without a transform whose values span at most kDenseSpan (value - min). Index `span` is the
// null key. Groups get local ids in first-seen order (or, folded by dense index, in dense order
// at the unit's end); each group's rows fold in row order either way, so the results are exactly
// those of the hashed path.
struct DenseKey {
  enum class Way : uint8_t { None, Codes, IntRange } way = Way::None;
  size_t column = 0;
  int64_t min = 0;
  uint64_t span = 0;
};
constexpr uint64_t kDenseSpan = uint64_t(1) << 20;
// Dense spans below this fold by dense index: a unit's states, span × 64 bytes (< 1 MiB), are
// cleared and scanned once per unit (≤ 8 bytes per row of a full unit).
constexpr uint64_t kDirectSpan = uint64_t(1) << 14;

DenseKey dense_key(const QueryCtx& q, TierScratch& scratch) {
  DenseKey d;
  if (q.plan.group_by.size() != 1 || q.plan.group_by[0].transform != KeyTransform::None) return d;
  d.column = q.plan.group_by[0].column;
  const Physical phys = physical_of(q.tb.schema(d.column).kind);
  if (phys == Physical::Str) {
    const DecodeContext& ctx = q.tb.context(d.column);
    if (!ctx.global_dict || ctx.global_dict->size() >= kDenseSpan) return d;
    for (uint64_t b = 0; b < q.tb.blocks; ++b) {
      const Enc e = q.tb.block(d.column, b).enc_v();
      if (e != Enc::GlobalDict && !(e == Enc::GlobalHuffman && ctx.dict_code)) return d;
    }
    d.span = ctx.global_dict->size();
    d.way = DenseKey::Way::Codes;
    return d;
  }
  if (phys != Physical::Int) return d;
  bool any = false;
  int64_t lo = 0, hi = 0;
  for (uint64_t b = 0; b < q.tb.blocks; ++b) {  // header-only for zone-mapped blocks
    const IntMinMax m = min_max_int(q.tb.block(d.column, b), scratch);
    if (m.valid == 0) continue;
    lo = any && lo < m.min ? lo : m.min;
    hi = any && hi > m.max ? hi : m.max;
    any = true;
    if (uint64_t(hi) - uint64_t(lo) >= kDenseSpan) return d;
  }
  d.min = lo;
  d.span = any ? uint64_t(hi) - uint64_t(lo) + 1 : 0;
  d.way = DenseKey::Way::IntRange;
  return d;
}

[[noreturn]] void dense_key_outside(const QueryCtx& q, const DenseKey& d, uint64_t b) {
  throw Error(Code::TET_CELLS_INVALID, "block " + std::to_string(b) + " of column '" + q.tb.schema(d.column).name +
                                           "' holds a value outside its zone map / a code outside its dictionary");
}

// The dense index of every selected row of block b, in row order. The indices come from the
// file, so each one is checked against the span (zone maps and codes are claims of the file).
// b_next: the unit's next block when it has selected rows (its codes are decoded beside b's),
// else ~0.
void dense_indices(const QueryCtx& q, const DenseKey& d, uint64_t b, uint64_t b_next, const BlockMask& sel, uint32_t sel_count,
                   SlotScratch& s) {
  const Cell& blk = q.tb.block(d.column, b);
  const DecodeContext& ctx = q.tb.context(d.column);
  std::vector<uint32_t>& idx = s.dense_idx;
  idx.clear();
  const uint32_t null_idx = uint32_t(d.span);
  if (d.way == DenseKey::Way::IntRange) {
    CompactRows& cr = s.keys[0];
    cr.load(blk, Physical::Int, sel, ctx, true);
    const size_t n = cr.valid.size();
    idx.resize(n);
    const uint64_t base = uint64_t(d.min);
    bool outside = false;
    for (size_t j = 0; j < n; ++j) {
      const uint64_t off = uint64_t(cr.i[j]) - base;
      const bool ok = cr.valid[j] != 0;
      outside |= ok & (off >= d.span);
      idx[j] = ok ? uint32_t(off) : null_idx;
    }
    if (outside) dense_key_outside(q, d, b);
    return;
  }
  const uint8_t* v = blk.validity();
  const bool huffman = blk.enc_v() == Enc::GlobalHuffman;
  str::GlobalDictLayout l;
  if (huffman) {
    s.codes.resize(kBlockLanes);
    if (s.codes_next_block == b) {
      std::swap(s.codes, s.codes_next);
      s.codes_next_block = ~uint64_t(0);
    } else if (const Cell* nb = b_next != ~uint64_t(0) ? &q.tb.block(d.column, b_next) : nullptr;
               nb != nullptr && nb->enc_v() == Enc::GlobalHuffman) {
      s.codes_next.resize(kBlockLanes);
      uint32_t* ca = s.codes.data();
      uint32_t* cb = s.codes_next.data();
      str::global_huffman_walk2(blk, *nb, ctx, [&](uint32_t i, uint32_t k) { ca[i] = k; }, [&](uint32_t i, uint32_t k) { cb[i] = k; });
      s.codes_next_block = b_next;
    } else {
      str::global_huffman_codes(blk, ctx, uint32_t(blk.len), s.codes.data());
    }
  } else {
    l = str::global_dict_layout(blk);
  }
  const uint32_t len = uint32_t(blk.len);
  if (huffman && !v && sel_count == len) {
    // Every row present and selected: the codes are the indices, each below the span (a Huffman
    // code of the column's dictionary has one symbol per entry, checked when the block loaded).
    idx.swap(s.codes);
    idx.resize(len);
    return;
  }
  bool outside = false;
  if (sel_count == len) {  // every row selected: no walk over the mask's bits
    idx.resize(len);
    uint32_t* out = idx.data();
    for (uint32_t r = 0; r < len; ++r) {
      const bool ok = row_valid(v, r);
      const uint64_t code = huffman ? s.codes[r] : l.code(r);
      outside |= ok & (code >= d.span);
      out[r] = ok ? uint32_t(code) : null_idx;
    }
    if (outside) dense_key_outside(q, d, b);
    return;
  }
  for (uint32_t wd = 0; wd < kWordsPerBlock; ++wd)
    for (uint64_t bits = sel.words[wd]; bits; bits &= bits - 1) {
      const uint32_t r = wd * 64 + uint32_t(__builtin_ctzll(bits));
      const bool ok = row_valid(v, r);
      const uint64_t code = huffman ? s.codes[r] : l.code(r);
      outside |= ok & (code >= d.span);
      idx.push_back(ok ? uint32_t(code) : null_idx);
    }
  if (outside) dense_key_outside(q, d, b);
}

// The key words of dense index i (the str part interned into the partial's interner).
GroupKeyWords dense_key_words(const QueryCtx& q, const DenseKey& d, uint32_t i, StrInterner& interner) {
  GroupKeyWords k;
  if (i == d.span) k.nulls = 1;
  else if (d.way == DenseKey::Way::IntRange) k.w[0] = uint64_t(d.min) + i;
  else k.w[0] = interner.intern(q.tb.context(d.column).global_dict->at(i));
  return k;
}

template <class T, class F>
void run_grouped(const QueryCtx& q, const Reducer<T, F>& red, TableQueryResult& res) {
  const KeyColumns keys(q);
  const size_t nk = keys.size();
  // At most 32 units (of >= 64 blocks): every unit's partial holds each group it saw, and the
  // partials merge one after another in unit order, so with 10^4 groups the 128 units of the
  // ungrouped scans spent a sixth of the CPU on per-unit groups and merges (table_query_bench
  // Q3b: 76 -> 63 ms CPU at 32 units). 32 still feed 16 cores; bits are the same either way.
  const Units units(q.tb.blocks, 64, 32);
  res.units = units.count;
  const uint64_t group_bytes = sizeof(GroupKeyWords) + sizeof(Acc<F>) + 8;
  auto scratch = slot_scratch(units, q.threads, nk);
  const DenseKey dense = dense_key(q, scratch[0]->tier);
  const TightFold tight = dense.way == DenseKey::Way::None ? TightFold::None : tight_fold_of<F>(q.plan, red.need());
  // A tight fold over a small dense span folds each row straight into its group's state by dense
  // index (no local id per row); the groups seen become local ids once, at the unit's end.
  const bool direct = tight != TightFold::None && !q.plan.row_groups && dense.span < kDirectSpan;
  const typename F::State id_state = red.identity().st;
  GroupPartial<F> global(nk);
  // dense index -> global id (~0: not seen yet); global ids in first-merged order as below
  std::vector<uint32_t> global_dense(dense.way != DenseKey::Way::None ? dense.span + 1 : 0, ~uint32_t(0));
  // plan.row_groups: each row's local id (its unit's), then global id (at the merge), then rank
  std::vector<uint32_t> row_gid(q.plan.row_groups ? q.tb.rows : 0, ~uint32_t(0));
  std::vector<uint32_t> l2g;
  OrderedMerge<GroupPartial<F>> merger(units.count, [&](GroupPartial<F>& p) {
    l2g.assign(std::max(p.dense.size(), p.map.size()), ~uint32_t(0));
    for (uint32_t lid = 0; lid < p.dense.size(); ++lid) {
      uint32_t& g = global_dense[p.dense[lid]];
      if (g == ~uint32_t(0)) {
        bool added = false;
        g = global.map.find_or_add(dense_key_words(q, dense, p.dense[lid], global.interners[0]), added);
        q.meter.add(group_bytes, "the groups of group_by");
        global.accs.push_back(red.identity());
      }
      l2g[lid] = g;
      if (tight != TightFold::None) red.merge_state(global.accs[g], p.sums.g[lid].rows, p.sums.g[lid].present, p.sums.template state<T>(id_state, lid));
      else red.merge(global.accs[g], p.accs[lid]);
    }
    for (uint32_t lid = 0; lid < p.map.size(); ++lid) {
      GroupKeyWords k = p.map.key(lid);
      for (size_t part = 0; part < nk; ++part)
        if (keys.phys(part) == Physical::Str && !((k.nulls >> part) & 1))
          k.w[part] = global.interners[part].intern(p.interners[part].at(uint32_t(k.w[part])));
      bool added = false;
      const uint32_t g = global.map.find_or_add(k, added);
      if (added) {
        q.meter.add(group_bytes, "the groups of group_by");
        global.accs.push_back(red.identity());
      }
      l2g[lid] = g;
      red.merge(global.accs[g], p.accs[lid]);
    }
    for (uint64_t r = p.row0; r < p.row1; ++r)
      if (row_gid[r] != ~uint32_t(0)) row_gid[r] = l2g[row_gid[r]];
    q.meter.release(p.bytes);
  }, /*keep_spares=*/true);
  const bool need_value = !q.plan.count_rows;  // count_rows: no value column at all
  // A small dense span bounds the global groups: room for all of them at once, not a doubling
  // (each a copy into fresh memory) through 10^4 groups.
  if (dense.way != DenseKey::Way::None && dense.span < kDirectSpan) global.accs.reserve(dense.span + 1);
  res.threads_used = run_units(units, q.threads, [&](uint64_t u, uint32_t slot) {
    std::unique_ptr<GroupPartial<F>> p = merger.reuse();
    if (p) p->reset();
    else p = std::make_unique<GroupPartial<F>>(nk);
    if (q.plan.row_groups) p->row0 = units.first(u) * kBlockLanes, p->row1 = std::min(q.tb.rows, units.last(u) * kBlockLanes);
    SlotScratch& s = *scratch[slot];
    std::vector<std::vector<uint32_t>> dict_ids(nk);
    BlockMask sel;
    auto add_group = [&](const GroupKeyWords& key) {
      bool added = false;
      const uint32_t g = p->map.find_or_add(key, added);
      if (added) {
        q.meter.add(group_bytes, "the groups of group_by");
        p->bytes += group_bytes;
        p->accs.push_back(red.identity());
      }
      return g;
    };
    std::vector<uint32_t>& local = s.dense_local;  // dense index -> local id (~0: not seen yet)
    if (direct) {
      p->sums.g.assign(dense.span + 1, GroupSum{});  // by dense index until the unit ends
    } else {
      if (dense.way != DenseKey::Way::None && local.size() != dense.span + 1) local.assign(dense.span + 1, ~uint32_t(0));
      // As many groups as the slot's previous unit had (units of a table look alike): grown once,
      // not by doubling through 10^4 groups in every unit.
      if (tight != TightFold::None) p->sums.g.reserve(s.groups_hint);
    }
    s.codes_next_block = ~uint64_t(0);
    // A GlobalHuffman key looks one block ahead (its codes decode beside this block's): the next
    // block's selection, once taken, serves its own turn too.
    BlockMask next;
    uint64_t next_block = ~uint64_t(0);
    uint32_t next_n = 0;
    for (uint64_t b = units.first(u); b < units.last(u); ++b) {
      uint32_t n;
      if (next_block == b) sel = next, n = next_n;
      else n = block_selection(q.sel, b, block_len(q.tb, b), sel);
      if (n == 0) continue;
      if (dense.way == DenseKey::Way::Codes) {
        uint64_t b_next = ~uint64_t(0);
        if (b + 1 < units.last(u) && s.codes_next_block != b) {
          next_block = b + 1;
          next_n = block_selection(q.sel, b + 1, block_len(q.tb, b + 1), next);
          if (next_n != 0) b_next = b + 1;
        }
        dense_indices(q, dense, b, b_next, sel, n, s);
      } else if (dense.way != DenseKey::Way::None) {
        dense_indices(q, dense, b, ~uint64_t(0), sel, n, s);
      } else {
        for (size_t k = 0; k < nk; ++k) keys.load(k, b, sel, s, p->interners[k], dict_ids[k]);
      }
      if (need_value && red.need() == Need::Counts) s.value.load_validity(q.tb.block(q.plan.column, b), sel);
      else if (need_value) s.value.load(q.tb.block(q.plan.column, b), red.phys(), sel, q.tb.context(q.plan.column), true);
      if (direct) {
        tight_fold<T>(tight, p->sums, s.dense_idx.data(), s.value, n);
        continue;
      }
      if (dense.way != DenseKey::Way::None) {
        // local ids of the block's rows first (new groups in first-seen order), then the fold
        const uint32_t* idx = s.dense_idx.data();
        s.gid.resize(n);
        const size_t groups_before = p->dense.size();
        for (uint32_t j = 0; j < n; ++j) {
          uint32_t g = local[idx[j]];
          if (g == ~uint32_t(0)) {
            g = local[idx[j]] = uint32_t(p->dense.size());
            p->dense.push_back(idx[j]);
            if (tight != TightFold::None) p->sums.add_group();
            else p->accs.push_back(red.identity());
          }
          s.gid[j] = g;
        }
        if (p->dense.size() != groups_before) {  // the block's new groups, metered at once (one atomic add)
          const uint64_t added = (p->dense.size() - groups_before) * group_bytes;
          p->bytes += added;
          q.meter.add(added, "the groups of group_by");
        }
        if (q.plan.row_groups) std::copy(s.gid.begin(), s.gid.begin() + n, row_gid.begin() + b * kBlockLanes);
        if (tight != TightFold::None) tight_fold<T>(tight, p->sums, s.gid.data(), s.value, n);
        else
          for (uint32_t j = 0; j < n; ++j) red.row(p->accs[s.gid[j]], s.value, j);
        continue;
      }
      GroupKeyWords key;
      for (uint32_t j = 0; j < n; ++j) {
        key.nulls = 0;
        for (size_t k = 0; k < nk; ++k) key.w[k] = s.words[k][j], key.nulls |= uint8_t(s.nulls[k][j] << k);
        const uint32_t g = add_group(key);
        if (q.plan.row_groups) row_gid[b * kBlockLanes + j] = g;
        red.row(p->accs[g], s.value, j);
      }
    }
    if (direct) {
      // The groups the unit saw (a row each at least), in dense order, as local ids: the states
      // move down to their local id (never above their dense index).
      std::vector<GroupSum>& g = p->sums.g;
      uint32_t lid = 0;
      for (uint32_t i = 0; i <= dense.span; ++i)
        if (g[i].rows) p->dense.push_back(i), g[lid++] = g[i];
      g.resize(lid);
      p->bytes += lid * group_bytes;
      q.meter.add(lid * group_bytes, "the groups of group_by");
    }
    if (tight != TightFold::None) finish_tight(tight, p->sums);
    if (!direct)
      for (uint32_t i : p->dense) local[i] = ~uint32_t(0);
    s.groups_hint = p->dense.size() + p->dense.size() / 8;
    merger.done(u, std::move(p));
  }, q.cancel);
  std::vector<uint32_t> order(global.map.size());
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return keys.compare(global.map.key(a), global.map.key(b), global.interners) < 0;
  });
  for (size_t p = 0; p < nk; ++p) res.group_keys.push_back(keys.emit(p, order, global.map, global.interners[p]));
  for (uint32_t g : order) {
    res.group_counts.push_back(global.accs[g].rows);
    red.finalize(global.accs[g], res.values);
  }
  if (q.plan.row_groups) {
    std::vector<uint32_t> rank(order.size());
    for (uint32_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
    res.row_groups.resize(row_gid.size());
    for (size_t r = 0; r < row_gid.size(); ++r) res.row_groups[r] = rank[row_gid[r]];
  }
}

// ---- dispatch --------------------------------------------------------------------------------

template <class T> void run_reduce_as(const QueryCtx& q, Need need, TableQueryResult& res) {
  auto go = [&](auto family) {
    using F = decltype(family);
    const Reducer<T, F> red(q, need);
    if (q.plan.group_by.empty()) run_scalar(q, red, res);
    else run_grouped(q, red, res);
  };
  if (need == Need::Stream) fold::with_family<T>(q.plan.op, go);
  else go(fold::ops::Unsupported<T>());
}

void run_reduce(const QueryCtx& q, TableQueryResult& res) {
  const TableQueryPlan& plan = q.plan;
  if (plan.count_rows && plan.group_by.empty()) {
    res.values.type = ValueColumn::Type::U64;
    res.values.kind = Kind::Int;
    res.values.u.push_back(res.rows_selected);
    return;
  }
  const ColumnSchema& c = q.tb.schema(plan.column);
  const Need need = need_of(plan.op, c, plan.count_rows);
  res.values.type = result_type(plan.op, c, plan.count_rows);
  res.values.kind = c.kind;
  if (physical_of(c.kind) == Physical::Float) run_reduce_as<double>(q, need, res);
  else run_reduce_as<int64_t>(q, need, res);
  if (res.values.type == ValueColumn::Type::Str || res.values.type == ValueColumn::Type::I64 || res.values.type == ValueColumn::Type::Bool) {
    bool all = true;
    for (uint8_t v : res.values.valid) all &= v != 0;
    if (all) res.values.valid.clear();
  }
}

// ---- rows: columns + limit / offset (+ order_by) ------------------------------------------------

// One candidate row of a top-k: order words (desc already applied), null bits, the strings of
// str order keys.
struct Candidate {
  uint64_t row = 0;
  uint64_t w[kMaxOrderKeys] = {};
  uint8_t nulls = 0;
  std::vector<std::string> s;
};

class OrderKeys {
 public:
  explicit OrderKeys(const QueryCtx& q) : q_(q) {
    for (const OrderKey& o : q.plan.order_by) phys_.push_back(physical_of(q.tb.schema(o.column).kind));
  }
  size_t size() const { return phys_.size(); }
  bool has_str() const { return std::find(phys_.begin(), phys_.end(), Physical::Str) != phys_.end(); }

  // True when a comes first: per key, nulls last in both directions, values by their order
  // words (str by bytes), desc reversing values only; ties by row number (storage order).
  bool before(const Candidate& a, const Candidate& b) const {
    for (size_t k = 0; k < phys_.size(); ++k) {
      const bool an = (a.nulls >> k) & 1, bn = (b.nulls >> k) & 1;
      if (an != bn) return bn;
      if (an) continue;
      if (phys_[k] == Physical::Str) {
        int c = str_order(a.s[k], b.s[k]);
        if (q_.plan.order_by[k].desc) c = -c;
        if (c != 0) return c < 0;
      } else if (a.w[k] != b.w[k]) {
        return a.w[k] < b.w[k];
      }
    }
    return a.row < b.row;
  }

  // Candidate j of the loaded block (rows selected in order) into c.
  void fill(const SlotScratch& s, size_t j, Candidate& c) const {
    c.nulls = 0;
    for (size_t k = 0; k < phys_.size(); ++k) {
      const CompactRows& cr = s.keys[k];
      const bool null = cr.valid[j] == 0;
      c.nulls |= uint8_t(null) << k;
      uint64_t w = 0;
      if (!null) {
        switch (phys_[k]) {
          case Physical::Str: { const std::string_view v = cr.str(j); c.s[k].assign(v.data(), v.size()); break; }
          case Physical::Float: w = order_word_float(cr.f[j]); break;
          case Physical::Bool: w = uint64_t(cr.i[j]); break;
          default: w = order_word_int(cr.i[j]); break;
        }
        if (q_.plan.order_by[k].desc) w = ~w;
      }
      c.w[k] = w;
    }
  }

 private:
  const QueryCtx& q_;
  std::vector<Physical> phys_;
};

// A bounded top-k: a heap whose front is the worst kept candidate.
struct TopK {
  std::vector<Candidate> heap;
  uint64_t bytes = 0;
};

void offer(const OrderKeys& keys, uint64_t k, TopK& t, Candidate& c, BudgetMeter& meter) {
  auto worse_last = [&](const Candidate& a, const Candidate& b) { return keys.before(a, b); };
  if (t.heap.size() < k) {
    const uint64_t bytes = sizeof(Candidate);
    meter.add(bytes, "the rows order_by keeps (offset + limit)");
    t.bytes += bytes;
    t.heap.push_back(c);
    std::push_heap(t.heap.begin(), t.heap.end(), worse_last);
  } else if (keys.before(c, t.heap.front())) {
    std::pop_heap(t.heap.begin(), t.heap.end(), worse_last);
    std::swap(t.heap.back(), c);
    std::push_heap(t.heap.begin(), t.heap.end(), worse_last);
  }
}

std::vector<uint64_t> ordered_rows(const QueryCtx& q) {
  const TableQueryPlan& plan = q.plan;
  const OrderKeys keys(q);
  uint64_t k = 0;
  if (__builtin_add_overflow(plan.offset, plan.limit, &k)) k = ~uint64_t(0);
  const Units units(q.tb.blocks);
  TopK global;
  OrderedMerge<TopK> merger(units.count, [&](TopK& t) {
    for (Candidate& c : t.heap) offer(keys, k, global, c, q.meter);
    q.meter.release(t.bytes);
  });
  auto scratch = slot_scratch(units, q.threads, keys.size());
  run_units(units, q.threads, [&](uint64_t u, uint32_t slot) {
    auto t = std::make_unique<TopK>();
    SlotScratch& s = *scratch[slot];
    Candidate c;
    c.s.resize(keys.has_str() ? keys.size() : 0);
    BlockMask sel;
    for (uint64_t b = units.first(u); b < units.last(u); ++b) {
      const uint32_t n = block_selection(q.sel, b, block_len(q.tb, b), sel);
      if (n == 0) continue;
      for (size_t o = 0; o < keys.size(); ++o) {
        const size_t col = plan.order_by[o].column;
        s.keys[o].load(q.tb.block(col, b), physical_of(q.tb.schema(col).kind), sel, q.tb.context(col), true);
      }
      uint32_t j = 0;
      for (uint32_t wd = 0; wd < kWordsPerBlock; ++wd)
        for (uint64_t bits = sel.words[wd]; bits; bits &= bits - 1, ++j) {
          c.row = b * kBlockLanes + wd * 64 + uint64_t(__builtin_ctzll(bits));
          keys.fill(s, j, c);
          offer(keys, k, *t, c, q.meter);
        }
    }
    merger.done(u, std::move(t));
  }, q.cancel);
  std::sort(global.heap.begin(), global.heap.end(), [&](const Candidate& a, const Candidate& b) { return keys.before(a, b); });
  std::vector<uint64_t> rows;
  for (uint64_t i = plan.offset; i < global.heap.size(); ++i) rows.push_back(global.heap[i].row);
  q.meter.release(global.bytes);
  return rows;
}

std::vector<uint64_t> storage_rows(const QueryCtx& q) {
  std::vector<uint64_t> rows;
  uint64_t skip = q.plan.offset;
  BlockMask sel;
  for (uint64_t b = 0; b < q.tb.blocks && rows.size() < q.plan.limit; ++b) {
    const uint32_t n = block_selection(q.sel, b, block_len(q.tb, b), sel);
    if (n <= skip) {
      skip -= n;
      continue;
    }
    for (uint32_t wd = 0; wd < kWordsPerBlock && rows.size() < q.plan.limit; ++wd)
      for (uint64_t bits = sel.words[wd]; bits && rows.size() < q.plan.limit; bits &= bits - 1) {
        if (skip > 0) {
          --skip;
          continue;
        }
        rows.push_back(b * kBlockLanes + wd * 64 + uint64_t(__builtin_ctzll(bits)));
      }
  }
  return rows;
}

// The values of `rows` (output order) of one column: each block read once.
ValueColumn fetch_column(const TableBlocks& tb, size_t col, const std::vector<uint64_t>& rows) {
  ValueColumn out;
  const ColumnSchema& c = tb.schema(col);
  const Physical phys = physical_of(c.kind);
  out.kind = c.kind;
  out.type = phys == Physical::Float ? ValueColumn::Type::F64 : phys == Physical::Bool ? ValueColumn::Type::Bool
           : phys == Physical::Str ? ValueColumn::Type::Str : ValueColumn::Type::I64;
  const size_t n = rows.size();
  std::vector<uint32_t> by_row(n);
  for (uint32_t k = 0; k < n; ++k) by_row[k] = k;
  std::sort(by_row.begin(), by_row.end(), [&](uint32_t a, uint32_t b) { return rows[a] < rows[b]; });
  out.valid.assign(n, 1);
  std::vector<int64_t> iv;
  std::vector<double> fv;
  std::vector<uint8_t> bv;
  StrBuffer block_strs, sorted_strs;
  if (phys == Physical::Int) out.i.assign(n, 0);
  if (phys == Physical::Float) out.f.assign(n, 0.0);
  if (phys == Physical::Bool) out.b.assign(n, 0);
  const DecodeContext& ctx = tb.context(col);
  uint64_t loaded = ~uint64_t(0);
  const uint8_t* validity = nullptr;
  for (uint32_t k : by_row) {
    const uint64_t b = rows[k] / kBlockLanes;
    const uint32_t r = uint32_t(rows[k] % kBlockLanes);
    if (b != loaded) {
      const Cell& blk = tb.block(col, b);
      validity = blk.validity();
      switch (phys) {
        case Physical::Int: iv.resize(blk.len); decode_rows(blk, 0, uint32_t(blk.len), iv.data(), ctx); break;
        case Physical::Float: fv.resize(blk.len); decode_rows(blk, 0, uint32_t(blk.len), fv.data(), ctx); break;
        case Physical::Bool: bv.resize(blk.len); decode_rows(blk, 0, uint32_t(blk.len), bv.data(), ctx); break;
        default: block_strs.clear(); decode_rows(blk, 0, uint32_t(blk.len), &block_strs, ctx); break;
      }
      loaded = b;
    }
    out.valid[k] = row_valid(validity, r) ? 1 : 0;
    switch (phys) {
      case Physical::Int: out.i[k] = iv[r]; break;
      case Physical::Float: out.f[k] = fv[r]; break;
      case Physical::Bool: out.b[k] = bv[r]; break;
      default: sorted_strs.push(block_strs.at(r)); break;
    }
  }
  if (phys == Physical::Str) {
    std::vector<uint32_t> at(n);
    for (uint32_t s = 0; s < n; ++s) at[by_row[s]] = s;
    for (uint32_t k = 0; k < n; ++k) out.s.push(sorted_strs.at(at[k]));
  }
  bool all = true;
  for (uint8_t v : out.valid) all &= v != 0;
  if (all) out.valid.clear();
  return out;
}

void run_rows(const QueryCtx& q, TableQueryResult& res) {
  if (q.plan.limit > 0) res.row_numbers = q.plan.order_by.empty() ? storage_rows(q) : ordered_rows(q);
  for (size_t col : q.plan.columns) res.rows.push_back(fetch_column(q.tb, col, res.row_numbers));
}

// ---- validation --------------------------------------------------------------------------------

[[noreturn]] void invalid(const std::string& m) { throw Error(Code::TET_QUERY_INVALID, m); }

void check_column(const TableInfo& t, size_t c) {
  if (c >= t.columns.size())
    throw Error(Code::TET_QUERY_UNKNOWN_COLUMN, "table '" + t.name + "' has no column #" + std::to_string(c));
  if (t.columns[c].schema.kind == Kind::Table) column_kind_error(t.columns[c].schema, "a table query");
}

void validate_plan(const TableInfo& t, const TableQueryPlan& p) {
  for (const Predicate& pr : p.where) cells::validate_predicate(t, pr);
  if (p.mode == TableQueryPlan::Mode::Rows) {
    if (p.limit > kMaxRowsLimit) invalid("limit " + std::to_string(p.limit) + " exceeds " + std::to_string(kMaxRowsLimit));
    if (!p.group_by.empty()) invalid("columns and group_by do not go together");
    if (p.order_by.size() > kMaxOrderKeys) invalid("order_by takes at most " + std::to_string(kMaxOrderKeys) + " columns");
    for (size_t c : p.columns) check_column(t, c);
    for (const OrderKey& o : p.order_by) check_column(t, o.column);
    return;
  }
  if (!p.count_rows) check_column(t, p.column);
  if (p.row_groups && (p.group_by.empty() || !p.where.empty())) invalid("row groups need group_by and no where");
  if (p.group_by.size() > kMaxGroupKeys) invalid("group_by takes at most " + std::to_string(kMaxGroupKeys) + " keys");
  if (!p.group_by.empty() && (p.op == Op::Histogram || p.op == Op::ArgMin || p.op == Op::ArgMax || p.op == Op::Covariance ||
                              p.op == Op::Correlation))
    throw Error(Code::TET_QUERY_UNSUPPORTED, std::string("`") + fold::op_traits(p.op).name + "` with group_by");
  if (p.op == Op::Quantile && !(p.q >= 0.0 && p.q <= 1.0)) invalid("quantile q must lie in [0, 1]");
  if (p.op == Op::Histogram) {
    if (p.bins < 1 || p.bins > 1000000) invalid("histogram bins must be 1..1,000,000");
    if (p.hist_range && !(std::isfinite(p.hist_min) && std::isfinite(p.hist_max) && p.hist_min < p.hist_max))
      invalid("histogram min and max must be finite with min < max");
  }
  for (const GroupKey& g : p.group_by) {
    check_column(t, g.column);
    const ColumnSchema& c = t.columns[g.column].schema;
    switch (g.transform) {
      case KeyTransform::None: break;
      case KeyTransform::Bucket:
        if (c.kind != Kind::Date && c.kind != Kind::Timestamp) column_kind_error(c, "a bucket");
        if (c.kind == Kind::Date && (g.bucket == TimeBucket::Hour || g.bucket == TimeBucket::Minute))
          column_kind_error(c, "an hour / minute bucket");
        break;
      case KeyTransform::WidthInt:
        if (c.kind != Kind::Int) column_kind_error(c, "an integer width");
        if (g.width_int <= 0) invalid("group_by width must be > 0");
        break;
      case KeyTransform::WidthFloat:
        if (c.kind != Kind::Float) column_kind_error(c, "a float width");
        if (!(std::isfinite(g.width_float) && g.width_float > 0)) invalid("group_by width must be finite and > 0");
        break;
    }
  }
}

}  // namespace

TableQueryResult run_table_query(const TablesRegion& region, const TableQueryPlan& plan, const ExecLimits& limits) {
  if (plan.table >= region.tables().size())
    throw Error(Code::TET_QUERY_UNKNOWN_TABLE, "the file has no table #" + std::to_string(plan.table));
  const TableInfo& info = region.tables()[plan.table];
  validate_plan(info, plan);
  if (plan.mode == TableQueryPlan::Mode::Reduce && !plan.count_rows)
    (void)need_of(plan.op, info.columns[plan.column].schema, false);  // kind errors before any work

  TableQueryResult res;
  cells::WhereResult where;
  const bool filtered = !plan.where.empty();
  // An ungrouped reduction of a column folds each unit's blocks right after their where (one pass
  // over the table); every other query takes the whole where first.
  const bool where_in_fold =
      filtered && plan.mode == TableQueryPlan::Mode::Reduce && plan.group_by.empty() && !plan.count_rows;
  std::unique_ptr<cells::WhereEvaluator> where_eval;
  if (where_in_fold) where_eval = std::make_unique<cells::WhereEvaluator>(region, plan.table, plan.where);
  else if (filtered) where = cells::evaluate_where(region, plan.table, plan.where, limits.threads, limits.cancel);
  res.has_where = plan.has_where || filtered;
  auto where_done = [&] {
    if (where_eval) where = where_eval->finish();
    if (filtered) res.where = where.plan;
    else res.where.rows = res.where.selected = info.rows;
    res.rows_selected = filtered ? where.plan.selected : info.rows;
  };
  if (!where_eval) where_done();

  TableBlocks tb(region, plan.table);
  auto load = [&](size_t c) { tb.load(c); };
  if (plan.mode == TableQueryPlan::Mode::Rows) {
    for (size_t c : plan.columns) load(c);
    for (const OrderKey& o : plan.order_by) load(o.column);
  } else {
    if (!plan.count_rows) load(plan.column);
    for (const GroupKey& g : plan.group_by) load(g.column);
  }
  BudgetMeter meter(limits.memory_budget_bytes);
  const RowSet* sel = where_eval ? &where_eval->rows() : filtered ? &where.rows : nullptr;
  const QueryCtx q{tb, plan, sel, meter, limits.threads, limits.cancel, where_eval.get()};
  if (plan.mode == TableQueryPlan::Mode::Rows) run_rows(q, res);
  else run_reduce(q, res);
  if (where_eval) where_done();
  return res;
}

}  // namespace tet::query
