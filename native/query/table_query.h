// Table queries (spec tables_and_filters.md §4.3-§4.5): a `where` over a stored table, then one
// of
//  - a reduction over one column of the selected rows (or `count` of the rows), optionally per
//    group of 1..4 key columns (`group_by`, with calendar buckets and widths);
//  - the selected rows' values of some columns (`columns` + `limit` / `offset`, optionally
//    `order_by`: a bounded top-k, ties by row number).
// Plain C++17, no Node headers (napi/table_methods.cpp hands the typed result columns out).
//
// Execution: the where is cells::evaluate_where's row bitmap; the table's blocks are cut into
// work units by a rule that depends only on the table's size (never the thread count), units run
// in parallel on exec::ThreadPool, and their partial states merge in unit order, so results are
// bit-identical for any thread count. Streaming reductions use the tensor registry's state
// families (fold/ops/*.h: f64 / Neumaier sums, exact integer sums, Chan moments), fed the
// selected present values of a block as one contiguous run; an Int-stored block whose rows are
// all selected sums, bounds and counts through the cell kernels (kernels.h: For / Delta / Constant
// / Sequence in the encoded domain) without decoding. Median / quantile gather the selected
// present values (bounded by the memory budget) and select.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cells/predicate.h"
#include "cells/region.h"
#include "tet/plan.h"

namespace tet::query {

enum class TimeBucket : uint8_t { Year, Month, Day, Hour, Minute };
enum class KeyTransform : uint8_t { None, Bucket, WidthInt, WidthFloat };

// One group-by key: a column and how its values become keys.
struct GroupKey {
  size_t column = 0;
  KeyTransform transform = KeyTransform::None;
  TimeBucket bucket = TimeBucket::Day;  // Bucket: date (year, month, day) / timestamp columns
  int64_t width_int = 1;                // WidthInt: int columns, > 0 (exact floor division)
  double width_float = 1.0;             // WidthFloat: float columns, finite > 0
};

struct OrderKey {
  size_t column = 0;
  bool desc = false;
};

constexpr size_t kMaxGroupKeys = 4;
constexpr size_t kMaxOrderKeys = 8;
constexpr uint64_t kMaxRowsLimit = 1000000;
constexpr uint64_t kDefaultRowsLimit = 1000;

struct TableQueryPlan {
  size_t table = 0;
  std::vector<cells::Predicate> where;
  bool has_where = false;  // where_plan is reported only for a query with a `where`
  enum class Mode : uint8_t { Reduce, Rows } mode = Mode::Reduce;

  // Reduce: `op` over `column`, or the selected rows when count_rows (`"count": []`).
  Op op = Op::Count;
  bool count_rows = false;
  size_t column = 0;
  double q = 0.5;           // quantile
  uint32_t bins = 10;       // histogram
  bool hist_range = false;  // histogram: [hist_min, hist_max] given
  double hist_min = 0.0, hist_max = 0.0;
  std::vector<GroupKey> group_by;  // 0..kMaxGroupKeys
  // With group_by and no where: also the group of every row (TableQueryResult::row_groups), which
  // tensor group_by uses to map an axis table's rows (the axis positions) to groups.
  bool row_groups = false;

  // Rows
  std::vector<size_t> columns;
  uint64_t limit = kDefaultRowsLimit, offset = 0;
  std::vector<OrderKey> order_by;
};

struct ExecLimits {
  uint32_t threads = 0;                 // 0 = every core
  uint64_t memory_budget_bytes = 0;     // 0 = no limit
  const std::atomic<bool>* cancel = nullptr;  // set: the query stops with TET_CANCELLED
};

// One typed result column: values + validity (empty valid = every entry present).
struct ValueColumn {
  enum class Type : uint8_t { Bool, I64, U64, F64, I128, Str };
  Type type = Type::F64;
  cells::Kind kind = cells::Kind::Float;  // the column kind the values come from (JSON form)
  std::vector<uint8_t> b;
  std::vector<int64_t> i;
  std::vector<uint64_t> u;
  std::vector<double> f;
  std::vector<__int128> wide;
  cells::StrBuffer s;
  std::vector<uint8_t> valid;
  size_t size() const;
  bool present(size_t k) const { return valid.empty() || valid[k] != 0; }
};

struct TableQueryResult {
  bool has_where = false;
  cells::WherePlan where;
  uint64_t rows_selected = 0;
  // Reduce: one value (ungrouped) or one per group; histogram: the bin counts (U64) and edges.
  ValueColumn values;
  std::vector<double> hist_edges;
  std::vector<ValueColumn> group_keys;  // one per key, one entry per group
  std::vector<uint64_t> group_counts;   // rows per group
  std::vector<uint32_t> row_groups;     // plan.row_groups: each row's group (index into group_keys)
  // Rows: one column per requested column, and the storage row numbers.
  std::vector<ValueColumn> rows;
  std::vector<uint64_t> row_numbers;
  uint32_t threads_used = 1;
  uint64_t units = 0;
};

// Throws tet::Error: TET_QUERY_UNKNOWN_TABLE / _COLUMN (indices out of range), TET_QUERY_WHERE_OP
// / _BAD_LITERAL / _TOO_LARGE (where, cells::validate_predicate), TET_QUERY_COLUMN_KIND (a
// reduction, key transform or order the column's kind does not take), TET_QUERY_UNSUPPORTED
// (arg_*, covariance, correlation; histogram with group_by), TET_QUERY_INVALID (bad limit, q,
// bins, widths, more than 4 keys), TET_BUDGET_EXCEEDED (gathered values, groups or top-k rows
// beyond the budget).
TableQueryResult run_table_query(const cells::TablesRegion& region, const TableQueryPlan& plan, const ExecLimits& limits);

// Key of a calendar bucket (start of the bucket, UTC calendar) for a date (days) or a timestamp
// (ticks of `unit`); exact integer arithmetic. Throws TET_QUERY_INVALID when the start lies
// outside i64.
int64_t bucket_start(cells::Kind kind, cells::TimeUnit unit, TimeBucket bucket, int64_t v);
// floor(v / w) * w exactly (w > 0); throws TET_QUERY_INVALID when it lies outside i64.
int64_t width_floor(int64_t v, int64_t w);

}  // namespace tet::query
