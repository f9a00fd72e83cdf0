// The tables region of a .tet file (docs/format-tables.md section 2): a header, table / column /
// metablock records, a string heap, the cell array (64-byte headers, each column's cells
// contiguous: a Directory then its leaves), metablock bodies and block payloads, all 64-aligned.
//
// Reading (`TablesRegion`) validates the header and every record up front (O(tables + columns +
// metablocks)); a column's cells and payloads are validated the first time the column is asked
// for, and its blocks are then views into the mapping (zero-copy; headers copied).
// Writing (`RegionWriter`) takes sealed leaf blocks as they come (their payloads go to a spool,
// so memory stays O(blocks × 64 B); an int-stored column's Constant / Rle blocks are held as
// runs instead, ≤ 8 runs a block, while a run directory may replace them) and lays the region
// out at the end.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cells/column.h"
#include "cells/kernels.h"
#include "cells/metablocks.h"  // MetablockKind (unknown kinds are skipped by readers)

namespace tet::cells {

constexpr uint32_t kRegionVersion = 1;
constexpr uint32_t kNoAxis = 0xffffffffu;
constexpr uint64_t kNoCell = ~uint64_t(0);

enum class TimeUnit : uint8_t { S = 0, Ms = 1, Us = 2, Ns = 3 };
const char* time_unit_name(TimeUnit u);  // "s", "ms", "us", "ns"

struct ColumnSchema {
  std::string name;
  Kind kind = Kind::Int;
  TimeUnit unit = TimeUnit::Us;  // timestamp only
  bool utc = true;               // timestamp only: true = "UTC", false = "naive"
  bool nullable = true;
};

struct MetablockRef {
  uint16_t kind = 0;
  const uint8_t* body = nullptr;
  uint64_t len = 0;
};

struct ColumnInfo {
  ColumnSchema schema;
  uint64_t rows = 0, null_count = 0;
  uint64_t payload_bytes = 0;  // Σ block payloads (for bytes / row)
  uint64_t first_cell = 0;     // the column's root in the cell array
  uint64_t cell_count = 0;     // cells the column owns (root + leaves; 0 for a 0-row column)
  uint32_t first_metablock = 0, metablock_count = 0;
};

struct TableInfo {
  std::string name;
  std::string dataset;        // bound dataset ("" = standalone)
  uint32_t axis = kNoAxis;    // bound axis index
  uint64_t rows = 0;
  std::vector<ColumnInfo> columns;
  int find_column(const std::string& name) const;
};

class TablesRegion {
 public:
  // `data` stays valid (mapped) for the object's life. Throws TET_CELLS_INVALID.
  TablesRegion(const uint8_t* data, uint64_t len);
  ~TablesRegion();
  const std::vector<TableInfo>& tables() const { return tables_; }
  int find_table(const std::string& name) const;
  // The column's root cell (null ref for a 0-row column): validated on first use, then cached.
  CellRef column(size_t table, size_t column) const;
  // Metablocks of a column (bounds checked at construction; bodies parsed by their owners).
  std::vector<MetablockRef> metablocks(size_t table, size_t column) const;
  // Encodings used by the column's leaves (bit i = Enc i); validates the column like column().
  uint32_t encodings_used(size_t table, size_t column) const;
  // The column's per-value block index (its metablock decoded and validated on first use, then
  // cached), or null when it has none.
  const BlockIndex* block_index(size_t table, size_t column) const;
  // An Int-stored column's runs of kSpanBlocks blocks with the bounds their headers prove
  // (kernels.h int_spans), computed on first use and cached: a where skips a run its bounds
  // settle without looking at the run's blocks.
  const std::vector<IntSpan>& int_spans(size_t table, size_t column) const;
  // Decode context (the column's global dictionary when it has one).
  const DecodeContext& context(size_t table, size_t column) const;
  // Whole-region checksum, for verify.
  static uint64_t checksum(const uint8_t* data, uint64_t len);

 private:
  struct Loaded;
  const Loaded& load(size_t table, size_t column) const;
  const uint8_t* data_;
  uint64_t len_;
  uint64_t cells_offset_ = 0, cell_count_ = 0, body_start_ = 0;
  std::vector<TableInfo> tables_;
  std::vector<MetablockRef> metablocks_;
  std::vector<uint32_t> metablock_column_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Loaded>> loaded_;  // per column, flattened
  std::vector<size_t> first_flat_;                       // table -> first flat column index
};

// Where block payloads wait until the region is laid out.
class PayloadSpool {
 public:
  virtual ~PayloadSpool() = default;
  virtual void append(const void* data, size_t len) = 0;   // throws TET_WRITE_IO
  virtual void read(void* out, size_t len, uint64_t offset) const = 0;
  virtual uint64_t size() const = 0;
};
std::unique_ptr<PayloadSpool> memory_spool();
std::unique_ptr<PayloadSpool> file_spool(const std::string& dir);  // an unlinked temp file

// Receives the region's bytes in order.
using RegionSink = std::function<void(const void* data, size_t len)>;

struct RegionSummary {
  uint64_t len = 0;
  uint64_t xxh64 = 0;  // of the whole region
};

class RegionWriter {
 public:
  explicit RegionWriter(std::unique_ptr<PayloadSpool> spool);
  ~RegionWriter();
  // Returns the table id. `axis` kNoAxis = standalone. Names are checked by the caller (unique,
  // UTF-8); this checks again and throws TET_INTERNAL on a duplicate.
  uint32_t add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                     const std::vector<ColumnSchema>& columns);
  // One sealed leaf block of a column, in row order. Its payload is copied to the spool now.
  void add_block(uint32_t table, uint32_t column, const Cell& leaf);
  // A whole column root (leaf or Directory) at once.
  void add_column(uint32_t table, uint32_t column, const Cell& root);
  void add_metablock(uint32_t table, uint32_t column, MetablockKind kind, std::vector<uint8_t> body);
  uint64_t rows(uint32_t table, uint32_t column) const;
  size_t table_count() const;
  // Lays the region out into `sink` (its first byte must land 64-aligned in the file). First
  // settles each column still held as runs (run_directory.h): one run directory cell when that
  // is smaller than its leaves, else the leaves. Throws TET_WRITE_ARGUMENT when a table's
  // columns disagree on their row count.
  RegionSummary write(const RegionSink& sink);

 private:
  struct Col;
  struct Table;
  void spool_block(Col& c, const Cell& leaf);
  void release_runs(Col& c);  // the held runs become ordinary leaves in the spool
  void settle_runs(Col& c);
  std::unique_ptr<PayloadSpool> spool_;
  std::vector<std::unique_ptr<Table>> tables_;
  struct PendingMeta { uint32_t column_flat; MetablockKind kind; uint64_t spool_offset, len; };
  std::vector<PendingMeta> metas_;
  std::vector<uint32_t> first_flat_;
};

}  // namespace tet::cells
