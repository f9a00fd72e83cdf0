#include "write/table_set.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "cells/builders.h"
#include "cells/metablocks.h"
#include "cells/numeric.h"
#include "cells/str_builder.h"
#include "tet/error.h"
#include "util/utf8.h"

namespace tet {

using cells::CellRef;
using cells::ColumnSchema;
using cells::Kind;
using cells::kBlockLanes;
using cells::Physical;

namespace {
[[noreturn]] void arg_fail(const std::string& msg) { fail(Code::TET_WRITE_ARGUMENT, msg); }
}  // namespace

// One column being written: the rows of its current block, staged until 2,048 are there.
// Numeric kinds stage lanes (the physical value's bits, 0 for nulls) as the numeric encoders
// take them; str stages the strings' bytes.
struct TableSet::Column {
  ColumnSchema schema;
  Physical physical = Physical::Int;
  uint32_t table = 0, index = 0;
  uint64_t lanes[kBlockLanes];
  uint64_t validity[cells::kMaskBytes / 8] = {};
  uint32_t staged = 0, valid = 0;
  std::unique_ptr<cells::StrBuilder> strs;  // str columns: blocks + column metablocks
  cells::DistinctSketch sketch;     // numeric columns (str: the builder's)
  uint64_t blocks = 0;

  void stage(const ColumnBatch& b, uint64_t from, uint64_t n) {
    for (uint64_t i = from; i < from + n; ++i) {
      const bool ok = !b.valid || b.valid[i];
      const uint32_t lane = staged++;
      validity[lane >> 6] |= uint64_t(ok) << (lane & 63);
      valid += ok;
      switch (physical) {
        case Physical::Int: {
          const int64_t v = ok ? static_cast<const int64_t*>(b.data)[i] : 0;
          lanes[lane] = static_cast<uint64_t>(v);
          if (ok) sketch.add(cells::hash_int(v));
          break;
        }
        case Physical::Float: {
          const double v = ok ? static_cast<const double*>(b.data)[i] : 0.0;
          lanes[lane] = cells::bits_of(v);
          if (ok) sketch.add(cells::hash_float(v));
          break;
        }
        case Physical::Bool: {
          const uint8_t v = ok ? static_cast<const uint8_t*>(b.data)[i] : 0;
          lanes[lane] = v;
          if (ok) sketch.add(cells::hash_int(v));
          break;
        }
        case Physical::Str: {
          if (ok) {
            const char* p = static_cast<const char*>(b.data) + b.offsets[i];
            strs->push(std::string_view(p, b.offsets[i + 1] - b.offsets[i]));
          } else {
            strs->push_null();
          }
          break;
        }
        case Physical::Table: break;
      }
    }
  }

  // The staged numeric rows as one leaf, encoded as the numeric builders would (str columns
  // seal inside their StrBuilder).
  CellRef seal() {
    cells::Staged s;
    s.kind = schema.kind;
    s.len = staged;
    s.lanes = lanes;
    s.validity = valid < staged ? validity : nullptr;
    s.valid = valid;
    CellRef leaf = cells::encode_block(cells::choose_encoding(s), s);
    std::memset(validity, 0, sizeof validity);
    staged = 0, valid = 0;
    ++blocks;
    return leaf;
  }
};

struct TableSet::Table {
  std::string name, dataset;
  uint32_t axis;
  std::vector<std::unique_ptr<Column>> columns;
  uint64_t rows = 0;
};

TableSet::TableSet(std::string spool_dir) : region_(cells::file_spool(spool_dir)), spool_dir_(std::move(spool_dir)) {}
TableSet::~TableSet() = default;

size_t TableSet::table_count() const { return tables_.size(); }

uint32_t TableSet::add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                             const std::vector<ColumnSchema>& columns) {
  if (finished_) arg_fail("table '" + name + "' was added after the tables were written");
  auto name_ok = [](const std::string& n) { return !n.empty() && n.size() <= 1024 && utf8_valid(reinterpret_cast<const uint8_t*>(n.data()), n.size(), nullptr); };
  if (!name_ok(name)) arg_fail("a table name must be 1..1024 bytes of UTF-8");
  for (const auto& t : tables_)
    if (t->name == name) arg_fail("table '" + name + "' is added twice");
  if (axis != cells::kNoAxis && dataset.empty()) arg_fail("axis table '" + name + "' names no dataset");
  if (columns.empty()) arg_fail("table '" + name + "' has no columns");
  auto t = std::make_unique<Table>();
  t->name = name;
  t->dataset = dataset;
  t->axis = axis;
  std::set<std::string> seen;
  for (const ColumnSchema& s : columns) {
    if (!name_ok(s.name)) arg_fail("table '" + name + "': a column name must be 1..1024 bytes of UTF-8");
    if (!seen.insert(s.name).second) arg_fail("table '" + name + "': column '" + s.name + "' is listed twice");
    if (!cells::kind_is_known(static_cast<uint8_t>(s.kind)) || s.kind == Kind::Table)
      arg_fail("table '" + name + "': column '" + s.name + "' has no valid kind");
    auto c = std::make_unique<Column>();
    c->schema = s;
    c->physical = cells::physical_of(s.kind);
    c->table = static_cast<uint32_t>(tables_.size());
    c->index = static_cast<uint32_t>(t->columns.size());
    if (c->physical == Physical::Str) {
      // Blocks go to the region's spool as they are sealed (streaming), not kept to commit.
      cells::StrBuilderOptions o;
      o.spill_dir = spool_dir_;
      o.on_block = [this, table = c->table, column = c->index](CellRef block) { region_.add_block(table, column, *block); };
      c->strs = std::make_unique<cells::StrBuilder>(std::move(o));
    }
    t->columns.push_back(std::move(c));
  }
  const uint32_t id = region_.add_table(name, dataset, axis, columns);
  tables_.push_back(std::move(t));
  return id;
}

void TableSet::append(uint32_t table, const std::vector<ColumnBatch>& batches) {
  if (finished_) arg_fail("rows appended after the tables were written");
  if (table >= tables_.size()) arg_fail("append names table id " + std::to_string(table) + ", which was not added");
  Table& t = *tables_[table];
  if (batches.size() != t.columns.size())
    arg_fail("table '" + t.name + "': an append carries " + std::to_string(batches.size()) + " columns, the table has " +
             std::to_string(t.columns.size()));
  const uint64_t rows = batches.empty() ? 0 : batches.front().rows;
  for (size_t c = 0; c < batches.size(); ++c) {
    const ColumnBatch& b = batches[c];
    const Column& col = *t.columns[c];
    const std::string where = "table '" + t.name + "', column '" + col.schema.name + "'";
    if (b.rows != rows)
      arg_fail(where + ": " + std::to_string(b.rows) + " rows where the append's first column has " + std::to_string(rows));
    if (rows && !b.data && !(col.physical == Physical::Str && b.bytes_len == 0)) arg_fail(where + ": no values");
    const uint32_t want = col.physical == Physical::Int || col.physical == Physical::Float ? 8 : 1;
    if (b.elem_bytes != want)
      arg_fail(where + ": values of " + std::to_string(b.elem_bytes) + "-byte elements where the kind " +
               cells::kind_name(col.schema.kind) + " needs " + std::to_string(want));
    for (uint64_t i = 0; b.valid && i < rows; ++i) {
      if (b.valid[i] > 1) arg_fail(where + ": validity bytes must be 0 or 1 (row " + std::to_string(t.rows + i) + ")");
      if (!b.valid[i] && !col.schema.nullable)
        arg_fail(where + " is not nullable but row " + std::to_string(t.rows + i) + " is null");
    }
    if (col.physical == Physical::Bool)
      for (uint64_t i = 0; i < rows; ++i)
        if (static_cast<const uint8_t*>(b.data)[i] > 1 && (!b.valid || b.valid[i]))
          arg_fail(where + ": bool values must be 0 or 1 (row " + std::to_string(t.rows + i) + ")");
    if (col.physical == Physical::Str) {
      if (!b.offsets) arg_fail(where + ": string offsets are missing");
      if (b.offsets[0] != 0 || b.offsets[rows] != b.bytes_len) arg_fail(where + ": string offsets do not span the bytes");
      for (uint64_t i = 0; i < rows; ++i)
        if (b.offsets[i + 1] < b.offsets[i]) arg_fail(where + ": string offsets decrease at row " + std::to_string(t.rows + i));
      const auto* bytes = static_cast<const uint8_t*>(b.data);
      for (uint64_t i = 0; i < rows; ++i) {
        const uint32_t n = b.offsets[i + 1] - b.offsets[i];
        if (n > 0xffffffu) arg_fail(where + ": a string longer than 16 MiB (row " + std::to_string(t.rows + i) + ")");
        if (!utf8_valid(bytes + b.offsets[i], n, nullptr))
          arg_fail(where + ": row " + std::to_string(t.rows + i) + " is not valid UTF-8");
      }
    }
  }
  // Stage block by block; each column's full blocks are encoded as they fill.
  uint64_t done = 0;
  while (done < rows) {
    const uint64_t room = kBlockLanes - t.columns.front()->staged;
    const uint64_t n = std::min<uint64_t>(room, rows - done);
    for (size_t c = 0; c < batches.size(); ++c) {
      Column& col = *t.columns[c];
      col.stage(batches[c], done, n);
      if (col.staged == kBlockLanes) {
        if (col.physical != Physical::Str) region_.add_block(table, col.index, *col.seal());
        else col.staged = 0;
      }
    }
    done += n;
  }
  t.rows += rows;
}

std::vector<TableSet::Binding> TableSet::bindings() const {
  std::vector<Binding> out;
  for (const auto& t : tables_)
    if (t->axis != cells::kNoAxis) out.push_back({t->name, t->dataset, t->axis, t->rows});
  return out;
}

void TableSet::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& t : tables_) {
    for (auto& cp : t->columns) {
      Column& col = *cp;
      if (col.physical == Physical::Str) {
        col.strs->finish();  // the last blocks go to the region through on_block
        if (col.strs->stats().rows == 0) continue;
        region_.add_metablock(col.table, col.index, cells::MetablockKind::DistinctSketch, col.strs->distinct_sketch().encode());
        if (const cells::GlobalDictionary* g = col.strs->global_dictionary())
          region_.add_metablock(col.table, col.index, cells::MetablockKind::GlobalDictionary, g->encode());
        if (cells::BlockIndex* ix = col.strs->block_index())
          region_.add_metablock(col.table, col.index, cells::MetablockKind::BlockIndex, ix->take_body());
        col.strs.reset();  // its sketch, dictionary and index are in the spool now
        continue;
      }
      if (col.staged) region_.add_block(col.table, col.index, *col.seal());
      if (col.blocks) {
        region_.add_metablock(col.table, col.index, cells::MetablockKind::DistinctSketch, col.sketch.encode());
      }
    }
  }
}

cells::RegionSummary TableSet::write(const cells::RegionSink& sink) {
  finish();
  return region_.write(sink);
}

}  // namespace tet
