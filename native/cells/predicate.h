// `where` over a stored table (spec tables_and_filters.md §4.1, §4.5): predicates on its
// columns, AND-ed, evaluated block by block into the ascending row positions where all hold,
// plus the `execution.where_plan` counts of how each block was settled.
//
// Per block of 2,048 rows, cheapest proof first:
//  1. eq / in on a column with a per-value block index (metablock): a block the index rules out
//     is skipped without reading anything (blocks_index_pruned);
//  2. every predicate asks its block's header (zone map, Constant / Sequence bounds, For frame,
//     NaN count, a Sym8 zone map: kernels.h probe_*, str_kernels.h probe); one AllFalse ends
//     the block (blocks_zonemap_resolved);
//  3. the rest run their kernels, string ones first (they resolve from Sym8 zone maps,
//     Constant values and dictionaries before reading rows), stopping as soon as the rows left
//     are none. A block where some predicate had to look at values is blocks_decoded, and
//     payload_bytes_read adds each such column block's payload once. A block settled without
//     values but needing a column's validity mask (AllTrue on a block with nulls, is_null) adds
//     that mask's 256 bytes.
//
// Semantics: nulls match nothing but `is_null: true` (and `is_null: false` / `not_in` / `ne`
// need the row present). IEEE for floats: `ne` and `not_in` match NaN, nothing else does
// (`is_nan` aside); -0.0 == 0.0. `range [lo, hi)`: lo <= v < hi, either end open; lo >= hi (or a
// NaN end) matches nothing; [open, open] every present value that is not NaN. `in: []` matches
// nothing, `not_in: []` every present row. bool orders false < true, str binary byte order.
// An int literal against a float column is compared as the f64 it rounds to (numpy's rule).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cells/region.h"
#include "cells/tiers.h"

namespace tet::cells {

// One literal as the caller parsed it from the wire (text forms of date / timestamp / time
// already converted to the column's stored i64).
struct Literal {
  enum class Type : uint8_t { Bool, Int, Float, Str };
  Type type = Type::Int;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::string s;

  static Literal of_bool(bool v) { Literal l; l.type = Type::Bool; l.b = v; return l; }
  static Literal of_int(int64_t v) { Literal l; l.type = Type::Int; l.i = v; return l; }
  static Literal of_float(double v) { Literal l; l.type = Type::Float; l.f = v; return l; }
  static Literal of_str(std::string v) { Literal l; l.type = Type::Str; l.s = std::move(v); return l; }
};

enum class WhereOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, Range, Prefix, IsNull, IsNan };
const char* where_op_name(WhereOp op);  // the wire names: "eq", ..., "not_in", "is_nan"

struct Predicate {
  size_t column = 0;              // index into the table's columns
  WhereOp op = WhereOp::Eq;
  Literal value;                  // eq ne lt le gt ge prefix
  std::vector<Literal> set;       // in / not_in: any order, duplicates allowed (sorted and deduplicated here)
  std::optional<Literal> lo, hi;  // range: absent = unbounded
  bool flag = true;               // is_null / is_nan
};

constexpr size_t kMaxWhereSet = 65536;  // in / not_in values (spec §4.1)

// Throws tet::Error on misuse: TET_QUERY_UNKNOWN_COLUMN (index out of range), TET_QUERY_WHERE_OP
// (prefix on a non-str column, is_nan on a non-float column, an op on a table-kind column),
// TET_QUERY_BAD_LITERAL (a literal of the wrong type: bool for bool, str for str, i64 for date /
// timestamp / time, for int an i64 or an integral f64 inside i64, for float any number),
// TET_QUERY_TOO_LARGE (more than kMaxWhereSet values).
void validate_predicate(const TableInfo& table, const Predicate& p);

// The rows a where selects: one bit per row (bit i % 64 of word i / 64), padded to whole blocks.
class RowSet {
 public:
  RowSet() = default;
  explicit RowSet(uint64_t rows);
  uint64_t rows() const { return rows_; }
  uint64_t count() const;
  bool contains(uint64_t row) const { return row < rows_ && ((words_[row >> 6] >> (row & 63)) & 1) != 0; }
  // f(row) for every selected row, ascending.
  template <class F>
  void for_each(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1) f(uint64_t(w) * 64 + uint64_t(__builtin_ctzll(bits)));
  }
  std::vector<uint64_t> positions() const;
  // The selected rows as maximal runs, flat [start, end) pairs ascending: at most one pair per
  // selected row and never two adjacent runs (a tensor axis selection, plan wire kind 2).
  std::vector<uint64_t> runs() const;
  const std::vector<uint64_t>& words() const { return words_; }
  uint64_t* block_words(uint64_t block) { return words_.data() + block * (kBlockLanes / 64); }
  // Selected rows per block of kBlockLanes, when the producer recorded them (evaluate_where
  // does), else null: a scan over a sparse selection skips its empty blocks without reading them.
  const uint32_t* block_counts() const { return counts_.empty() ? nullptr : counts_.data(); }
  void set_block_counts(std::vector<uint32_t> counts) { counts_ = std::move(counts); }

 private:
  uint64_t rows_ = 0;
  std::vector<uint64_t> words_;
  std::vector<uint32_t> counts_;
};

// execution.where_plan, plus the bytes read. blocks = zonemap_resolved + index_pruned + decoded.
struct WherePlan {
  uint64_t rows = 0, selected = 0, blocks = 0;
  uint64_t blocks_zonemap_resolved = 0, blocks_index_pruned = 0, blocks_decoded = 0;
  uint64_t payload_bytes_read = 0;
};

struct WhereResult {
  RowSet rows;
  WherePlan plan;
};

// A where evaluated a run of blocks at a time, for a caller that folds each block's rows right
// after its where (a table query: the block's bytes are still in cache, where a where over the
// whole table first had them back from memory). The construction validates and prepares as
// evaluate_where does (and throws its errors); evaluate() may run on several threads at once for
// disjoint block ranges, each with its own slot; finish() once every block was evaluated gives
// what evaluate_where would have.
class WhereEvaluator {
 public:
  WhereEvaluator(const TablesRegion& region, size_t table, const std::vector<Predicate>& preds);
  ~WhereEvaluator();
  WhereEvaluator(const WhereEvaluator&) = delete;
  WhereEvaluator& operator=(const WhereEvaluator&) = delete;

  uint64_t blocks() const;
  // Scratch for slots [0, slots) (evaluate's `slot`).
  void reserve_slots(uint32_t slots);
  // Blocks [first, last) (clamped to blocks()) into rows()' words.
  void evaluate(uint64_t first, uint64_t last, uint32_t slot);
  // The selection so far: an evaluated block's words are final (block counts come with finish).
  const RowSet& rows() const;
  // Whether a test reads column `column`.
  bool reads_column(size_t column) const;
  // Column `column`'s block `block` as the where decoded it into slot `slot`'s scratch (every row,
  // an int comparison's tier), if that is still the last thing decoded there; else null. Valid
  // until the slot evaluates again.
  const IntTier* decoded(uint32_t slot, size_t column, uint64_t block) const;
  WhereResult finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// AND of `preds` over table `table` (each validated first). No predicates select every row.
// Blocks are evaluated in parallel on tet::exec::ThreadPool (`threads` 0 = all cores, 1 = this
// thread only); the result does not depend on it. A set `cancel` flag stops it between blocks
// with TET_CANCELLED.
WhereResult evaluate_where(const TablesRegion& region, size_t table, const std::vector<Predicate>& preds,
                           uint32_t threads = 0, const std::atomic<bool>* cancel = nullptr);

}  // namespace tet::cells
