// What the table-query passes share (internal to native/query): the table's columns as block
// sequences, the selection mask of a block, the work-unit rule, the ordered merge of unit
// results, the memory-budget meter, and a column block's selected rows decoded to compact
// arrays in reused buffers.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cells/column.h"
#include "cells/kernels.h"
#include "cells/predicate.h"
#include "cells/region.h"
#include "tet/error.h"

namespace tet::query {

constexpr uint32_t kWordsPerBlock = cells::kBlockLanes / 64;

// A table's columns as block sequences (every column of a table has the same blocks).
struct TableBlocks {
  TableBlocks(const cells::TablesRegion& region, size_t table);
  const cells::TablesRegion& region;
  size_t table;
  const cells::TableInfo& info;
  uint64_t rows = 0, blocks = 0;
  const cells::Cell& block(size_t column, uint64_t b) const { return cells::block_at(*roots_[column], b); }
  // A loaded column's decode context (looked up once: the region's lookup takes its lock).
  const cells::DecodeContext& context(size_t column) const {
    return ctx_[column] ? *ctx_[column] : region.context(table, column);
  }
  const cells::ColumnSchema& schema(size_t column) const { return info.columns[column].schema; }
  // Loads (validates) a column's blocks; every column a pass reads is loaded first.
  void load(size_t column);

 private:
  std::vector<cells::CellRef> roots_;
  std::vector<const cells::DecodeContext*> ctx_;
};

// The rows of block b the where selects (all of its rows without a where); returns their count.
// A block the where left empty returns 0 without writing `out` (callers skip it).
uint32_t block_selection(const cells::RowSet* sel, uint64_t b, uint32_t len, cells::BlockMask& out);
// mask & the block's validity (the selected present rows); returns their count.
uint32_t present_rows(const cells::Cell& block, const cells::BlockMask& sel, cells::BlockMask& out);

// Work units: runs of whole blocks whose size depends only on the block count (so results never
// depend on the thread count).
struct Units {
  explicit Units(uint64_t blocks, uint64_t min_blocks = 16, uint64_t max_units = 256);
  uint64_t count = 0, per = 1, blocks = 0;
  uint64_t first(uint64_t u) const { return u * per; }
  uint64_t last(uint64_t u) const { return std::min(blocks, (u + 1) * per); }
};

// Runs fn(unit, slot) over the units on the pool; slots index per-thread scratch.
// Before each unit, a set `cancel` stops the run with TET_CANCELLED.
uint32_t run_units(const Units& units, uint32_t threads, const std::function<void(uint64_t unit, uint32_t slot)>& fn,
                   const std::atomic<bool>* cancel = nullptr);

// Merges unit results in unit order as they complete: a finished unit is parked until every
// unit before it has been merged. Memory is the out-of-order window, not all units.
template <class Partial> class OrderedMerge {
 public:
  // keep_spares: merged partials wait for reuse() instead of being freed.
  OrderedMerge(uint64_t units, std::function<void(Partial&)> merge, bool keep_spares = false)
      : pending_(units), merge_(std::move(merge)), keep_spares_(keep_spares) {}
  void done(uint64_t unit, std::unique_ptr<Partial> p) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_[unit] = std::move(p);
    while (next_ < pending_.size() && pending_[next_]) {
      merge_(*pending_[next_]);
      if (keep_spares_) spare_.push_back(std::move(pending_[next_]));
      else pending_[next_].reset();
      ++next_;
    }
  }
  // A merged partial to fill again (its buffers keep their capacity: fresh memory is dear, and a
  // unit's partial is as large as the last one), or null when none is free. The caller resets it.
  std::unique_ptr<Partial> reuse() {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) return nullptr;
    std::unique_ptr<Partial> p = std::move(spare_.back());
    spare_.pop_back();
    return p;
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Partial>> pending_, spare_;
  uint64_t next_ = 0;
  std::function<void(Partial&)> merge_;
  bool keep_spares_;
};

// Bytes of memory the pass holds beyond its fixed scratch, against the budget (0 = none).
class BudgetMeter {
 public:
  explicit BudgetMeter(uint64_t budget) : budget_(budget) {}
  // Adds n bytes; throws TET_BUDGET_EXCEEDED saying `what` when the total passes the budget.
  void add(uint64_t n, const char* what);
  void release(uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }
  uint64_t budget() const { return budget_; }

 private:
  uint64_t budget_;
  std::atomic<uint64_t> used_{0};
};

// A column block's rows that `mask` selects, in row order, decoded into reused buffers: i64 for
// Int-stored kinds and bool (0/1), f64 for float, strings (views into `strs`) for str; `valid`
// one byte per selected row (when `with_validity`).
struct CompactRows {
  std::vector<int64_t> i;
  std::vector<double> f;
  std::vector<uint8_t> b, valid;
  cells::StrBuffer strs;                 // the whole block, decoded
  std::vector<uint32_t> str_rows;        // row within the block of each selected row
  cells::TierScratch* scratch = nullptr;
  // `decoded`: the block's whole tier already decoded (a where's, cells::WhereEvaluator::decoded),
  // read instead of the payload for an Int-stored block.
  void load(const cells::Cell& block, cells::Physical phys, const cells::BlockMask& mask, const cells::DecodeContext& ctx,
            bool with_validity, const cells::IntTier* decoded = nullptr);
  // Only `valid` (count / null_count read nothing else).
  void load_validity(const cells::Cell& block, const cells::BlockMask& mask);
  std::string_view str(size_t k) const { return strs.at(str_rows[k]); }
};

}  // namespace tet::query
