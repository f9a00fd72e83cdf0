// The tables a Writer is writing: per column a 2,048-row staging block that is encoded (the
// builders pick each block's encoding) and handed to the region writer as soon as it is full,
// so memory stays O(columns × one block) plus O(blocks × 64 B) of headers whatever the row
// count. A str column's StrBuilder streams its blocks the same way, holding back at most
// StrBuilder::kGlobalDictDecideBlocks of them while its global dictionary is undecided, and
// spills its block-index pairs to the spool directory. Column-scope metablocks (distinct-count
// sketch, global dictionary, value index) are produced at finish. Writer::commit lays the region out after the last chunk payload.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cells/region.h"

namespace tet {

// One column's rows of one append. Physical forms of cells/encoding.h: Int-stored kinds i64,
// Float f64, Bool u8 (0 / 1); Str UTF-8 `bytes` with `offsets[rows + 1]`. `valid` (1 = present)
// may be null (every row present). Null rows may hold any value; the writer zeroes them.
struct ColumnBatch {
  const void* data = nullptr;
  const uint32_t* offsets = nullptr;  // str only
  uint64_t bytes_len = 0;             // str only: bytes in `data`
  const uint8_t* valid = nullptr;
  uint64_t rows = 0;
  uint32_t elem_bytes = 0;  // bytes per element of `data` (checked against the column's kind)
};

class TableSet {
 public:
  explicit TableSet(std::string spool_dir);
  ~TableSet();
  // TET_WRITE_ARGUMENT for a duplicate or invalid name, no or duplicate columns, a Table kind.
  uint32_t add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                     const std::vector<cells::ColumnSchema>& columns);
  // Every column of the table, in schema order, the same row count. TET_WRITE_ARGUMENT for a
  // wrong column count, mismatched rows, bad offsets / UTF-8, nulls in a non-nullable column,
  // bool bytes other than 0 / 1, or an append after finish.
  void append(uint32_t table, const std::vector<ColumnBatch>& columns);
  size_t table_count() const;

  struct Binding {
    std::string table, dataset;
    uint32_t axis;
    uint64_t rows;
  };
  std::vector<Binding> bindings() const;  // axis tables only
  // Seals the last blocks and adds the metablocks (once), then lays the region out.
  cells::RegionSummary write(const cells::RegionSink& sink);

 private:
  struct Column;
  struct Table;
  void finish();
  cells::RegionWriter region_;
  std::string spool_dir_;  // also where str columns' block indexes spill their runs
  std::vector<std::unique_ptr<Table>> tables_;
  bool finished_ = false;
};

}  // namespace tet
