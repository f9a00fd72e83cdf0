#include "cells/region.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "cells/kernels.h"
#include "cells/run_directory.h"
#include "tet/error.h"
#include "util/checked.h"
#include "util/io.h"
#include "util/utf8.h"
#include "util/xxh64.h"

namespace tet::cells {

namespace {

constexpr uint8_t kMagic[4] = {'T', 'C', 'L', 'S'};
constexpr uint64_t kHeaderBytes = 64;
constexpr uint64_t kTableRecordBytes = 64;
constexpr uint64_t kColumnRecordBytes = 64;
constexpr uint64_t kMetablockRecordBytes = 32;
constexpr uint64_t kCellBytes = 64;
constexpr uint64_t kHashedHeaderBytes = 56;  // the header minus its own structure checksum
constexpr uint32_t kMaxNameBytes = 1024;

uint64_t pad64(uint64_t n) { return (n + 63) & ~uint64_t(63); }

// The header fields and record offsets, once validated.
struct Layout {
  uint32_t tables = 0, columns = 0, metablocks = 0;
  uint64_t cell_count = 0, cells_offset = 0, strings_offset = 0, strings_bytes = 0;
  uint64_t table_records() const { return kHeaderBytes; }
  uint64_t column_records() const { return table_records() + uint64_t(tables) * kTableRecordBytes; }
  uint64_t metablock_records() const { return column_records() + uint64_t(columns) * kColumnRecordBytes; }
  uint64_t records_end() const { return metablock_records() + uint64_t(metablocks) * kMetablockRecordBytes; }
  uint64_t cells_end() const { return cells_offset + cell_count * kCellBytes; }
};

std::string read_name(const uint8_t* data, const Layout& L, uint64_t off, uint32_t len, const char* what) {
  if (len > kMaxNameBytes) throw_invalid(std::string(what) + " name longer than 1024 bytes");
  if (!span_within(off, len, L.strings_bytes)) throw_invalid(std::string(what) + " name outside the string heap");
  const uint8_t* p = data + L.strings_offset + off;
  if (!utf8_valid(p, len, nullptr)) throw_invalid(std::string(what) + " name is not valid UTF-8");
  return std::string(reinterpret_cast<const char*>(p), len);
}

void load_cell(const uint8_t* p, Cell& c) {
  c.kind = p[0];
  c.enc = p[1];
  c.attrs = p[2];
  c.resv = p[3];
  c.rc.store(load_u32le(p + 4), std::memory_order_relaxed);
  c.len = load_u64le(p + 8);
  c.payload = nullptr;
  c.payload_bytes = load_u64le(p + 24);
  for (int i = 0; i < 4; ++i) c.meta[i] = load_u64le(p + 32 + 8 * i);
}

void store_cell(uint8_t* p, uint8_t kind, uint8_t enc, uint8_t attrs, uint64_t len, uint64_t payload_off,
                uint64_t payload_bytes, const uint64_t meta[4]) {
  std::memset(p, 0, kCellBytes);
  p[0] = kind;
  p[1] = enc;
  p[2] = static_cast<uint8_t>(attrs & ~(attr::kPayloadMmap | attr::kPayloadBorrowed));
  store_u64le(p + 8, len);
  store_u64le(p + 16, payload_off);
  store_u64le(p + 24, payload_bytes);
  for (int i = 0; i < 4; ++i) store_u64le(p + 32 + 8 * i, meta[i]);
}

uint64_t structure_hash(const uint8_t* data, uint64_t cells_end) {
  Xxh64Stream h;
  h.update(data, kHashedHeaderBytes);
  h.update(data + kHeaderBytes, cells_end - kHeaderBytes);
  return h.digest();
}

}  // namespace

const char* time_unit_name(TimeUnit u) {
  switch (u) {
    case TimeUnit::S: return "s";
    case TimeUnit::Ms: return "ms";
    case TimeUnit::Us: return "us";
    case TimeUnit::Ns: return "ns";
  }
  return "?";
}

int TableInfo::find_column(const std::string& n) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].schema.name == n) return static_cast<int>(i);
  return -1;
}

// ---- reading ---------------------------------------------------------------------------------

struct TablesRegion::Loaded {
  CellRef root;
  uint32_t encodings = 0;
  std::unique_ptr<GlobalDictionary> global_dict;
  DecodeContext ctx;
  // Decoded by block_index() on first use (under mu_).
  mutable std::unique_ptr<BlockIndex> index;
  mutable bool index_decoded = false;
  // Computed by int_spans() on first use (under mu_).
  mutable std::vector<IntSpan> spans;
  mutable bool spans_done = false;
};

TablesRegion::TablesRegion(const uint8_t* data, uint64_t len) : data_(data), len_(len) {
  if (len < kHeaderBytes) throw_invalid("region shorter than its 64-byte header");
  if (std::memcmp(data, kMagic, 4) != 0) throw_invalid("region does not start with 'TCLS'");
  const uint32_t version = load_u32le(data + 4);
  if (version != kRegionVersion) throw_invalid("region version " + std::to_string(version) + " is not 1");
  Layout L;
  L.tables = load_u32le(data + 8);
  L.columns = load_u32le(data + 12);
  L.metablocks = load_u32le(data + 16);
  if (load_u32le(data + 20) != 0) throw_invalid("reserved header field is not zero");
  L.cell_count = load_u64le(data + 24);
  L.cells_offset = load_u64le(data + 32);
  L.strings_offset = load_u64le(data + 40);
  L.strings_bytes = load_u64le(data + 48);
  const uint64_t want_hash = load_u64le(data + 56);

  // Counts are u32, records are fixed size: records_end cannot overflow.
  if (L.records_end() > len) throw_invalid("table / column / metablock records run past the region");
  if (L.strings_offset < L.records_end() || !span_within(L.strings_offset, L.strings_bytes, len))
    throw_invalid("string heap outside the region or overlapping the records");
  if (L.cells_offset % 64 != 0 || L.cells_offset < L.strings_offset + L.strings_bytes)
    throw_invalid("cell array misaligned or overlapping the string heap");
  uint64_t cells_bytes;
  if (mul_overflows(L.cell_count, kCellBytes, &cells_bytes) || !span_within(L.cells_offset, cells_bytes, len))
    throw_invalid("cell array runs past the region");
  if (structure_hash(data, L.cells_end()) != want_hash) throw_invalid("region structure checksum mismatch");
  cells_offset_ = L.cells_offset;
  cell_count_ = L.cell_count;
  body_start_ = L.cells_end();

  // Metablock records.
  metablocks_.resize(L.metablocks);
  metablock_column_.resize(L.metablocks);
  for (uint32_t i = 0; i < L.metablocks; ++i) {
    const uint8_t* r = data + L.metablock_records() + uint64_t(i) * kMetablockRecordBytes;
    const uint16_t kind = load_u16le(r);
    if (load_u16le(r + 2) != 0 || load_u64le(r + 24) != 0) throw_invalid("reserved metablock field is not zero");
    const uint32_t col = load_u32le(r + 4);
    const uint64_t off = load_u64le(r + 8), blen = load_u64le(r + 16);
    if (col >= L.columns) throw_invalid("metablock names a column past the directory");
    if (off % 64 != 0 || off < body_start_ || !span_within(off, blen, len))
      throw_invalid("metablock body outside the region's body area");
    metablocks_[i] = MetablockRef{kind, data + off, blen};
    metablock_column_[i] = col;
  }

  // Tables and their columns (columns are listed table by table, cells column by column).
  uint32_t next_column = 0, next_metablock = 0;
  uint64_t next_cell = 0;
  std::set<std::string> table_names;
  tables_.reserve(L.tables);
  for (uint32_t t = 0; t < L.tables; ++t) {
    const uint8_t* r = data + L.table_records() + uint64_t(t) * kTableRecordBytes;
    TableInfo ti;
    ti.name = read_name(data, L, load_u64le(r), load_u32le(r + 8), "table");
    if (ti.name.empty()) throw_invalid("a table without a name");
    if (!table_names.insert(ti.name).second) throw_invalid("two tables named '" + ti.name + "'");
    const uint32_t first_column = load_u32le(r + 12), column_count = load_u32le(r + 16);
    ti.axis = load_u32le(r + 20);
    ti.rows = load_u64le(r + 24);
    const uint32_t ds_len = load_u32le(r + 40);
    if (load_u32le(r + 44) != 0 || load_u64le(r + 48) != 0 || load_u64le(r + 56) != 0)
      throw_invalid("reserved field of table '" + ti.name + "' is not zero");
    if (ti.axis == kNoAxis) {
      if (ds_len != 0 || load_u64le(r + 32) != 0) throw_invalid("standalone table '" + ti.name + "' names a dataset");
    } else {
      ti.dataset = read_name(data, L, load_u64le(r + 32), ds_len, "bound dataset");
      if (ti.dataset.empty()) throw_invalid("axis table '" + ti.name + "' names no dataset");
    }
    if (first_column != next_column || column_count > L.columns - next_column)
      throw_invalid("columns of table '" + ti.name + "' out of order or past the directory");
    first_flat_.push_back(next_column);
    std::set<std::string> col_names;
    for (uint32_t c = 0; c < column_count; ++c) {
      const uint8_t* cr = data + L.column_records() + uint64_t(first_column + c) * kColumnRecordBytes;
      ColumnInfo ci;
      ci.schema.name = read_name(data, L, load_u64le(cr), load_u32le(cr + 8), "column");
      if (ci.schema.name.empty()) throw_invalid("a column of '" + ti.name + "' without a name");
      if (!col_names.insert(ci.schema.name).second)
        throw_invalid("two columns named '" + ci.schema.name + "' in table '" + ti.name + "'");
      const std::string where = "column '" + ci.schema.name + "' of '" + ti.name + "'";
      const uint8_t kind = cr[12], unit = cr[13], tz = cr[14], flags = cr[15];
      if (!kind_is_known(kind) || kind == static_cast<uint8_t>(Kind::Table)) throw_invalid(where + ": unknown kind");
      ci.schema.kind = static_cast<Kind>(kind);
      if (ci.schema.kind == Kind::Timestamp) {
        if (unit > 3 || tz > 1) throw_invalid(where + ": unknown timestamp unit or zone");
        ci.schema.unit = static_cast<TimeUnit>(unit);
        ci.schema.utc = tz == 1;
      } else if (unit != 0 || tz != 0) {
        throw_invalid(where + ": a unit or zone on a column that is not a timestamp");
      }
      if (flags & ~1u) throw_invalid(where + ": undefined flag bits");
      ci.schema.nullable = (flags & 1) != 0;
      ci.first_cell = load_u64le(cr + 16);
      ci.cell_count = load_u64le(cr + 24);
      ci.rows = load_u64le(cr + 32);
      ci.null_count = load_u64le(cr + 40);
      ci.payload_bytes = load_u64le(cr + 48);
      ci.first_metablock = load_u32le(cr + 56);
      ci.metablock_count = load_u32le(cr + 60);
      if (ci.rows != ti.rows) throw_invalid(where + ": row count differs from the table's");
      if (ci.null_count > ci.rows) throw_invalid(where + ": more nulls than rows");
      if (!ci.schema.nullable && ci.null_count) throw_invalid(where + ": nulls in a column declared not nullable");
      if ((ci.rows == 0) != (ci.cell_count == 0)) throw_invalid(where + ": cells disagree with the row count");
      if (ci.first_cell != next_cell || ci.cell_count > cell_count_ - next_cell)
        throw_invalid(where + ": cells out of order or past the cell array");
      // A leaf, a Directory and ceil(rows / 2048) leaves, or a run directory (one cell for any
      // row count; which one the cell is, is checked when the column is loaded).
      const uint64_t blocks = (ci.rows + kBlockLanes - 1) / kBlockLanes;
      if (ci.rows && ci.cell_count != 1 && ci.cell_count != blocks + 1)
        throw_invalid(where + ": cell count does not fit the row count");
      next_cell += ci.cell_count;
      if (ci.first_metablock != next_metablock || ci.metablock_count > L.metablocks - next_metablock)
        throw_invalid(where + ": metablocks out of order or past the directory");
      for (uint32_t m = 0; m < ci.metablock_count; ++m)
        if (metablock_column_[ci.first_metablock + m] != first_column + c)
          throw_invalid(where + ": a metablock of another column");
      next_metablock += ci.metablock_count;
      ti.columns.push_back(std::move(ci));
    }
    next_column += column_count;
    tables_.push_back(std::move(ti));
  }
  if (next_column != L.columns) throw_invalid("columns that belong to no table");
  if (next_cell != cell_count_) throw_invalid("cells that belong to no column");
  if (next_metablock != L.metablocks) throw_invalid("metablocks that belong to no column");
  loaded_.resize(L.columns);
}

TablesRegion::~TablesRegion() = default;

int TablesRegion::find_table(const std::string& name) const {
  for (size_t i = 0; i < tables_.size(); ++i)
    if (tables_[i].name == name) return static_cast<int>(i);
  return -1;
}

const TablesRegion::Loaded& TablesRegion::load(size_t table, size_t column) const {
  if (table >= tables_.size() || column >= tables_[table].columns.size())
    throw Error(Code::TET_INTERNAL, "cells: no such table column");
  const size_t flat = first_flat_[table] + column;
  std::lock_guard<std::mutex> lock(mu_);
  if (loaded_[flat]) return *loaded_[flat];
  const ColumnInfo& ci = tables_[table].columns[column];
  const std::string where = "column '" + ci.schema.name + "' of '" + tables_[table].name + "'";
  auto out = std::make_unique<Loaded>();
  for (const MetablockRef& m : metablocks(table, column))
    if (m.kind == static_cast<uint16_t>(MetablockKind::GlobalDictionary)) {
      if (out->global_dict) throw_invalid(where + ": two global dictionaries");
      out->global_dict = std::make_unique<GlobalDictionary>(GlobalDictionary::decode(m.body, m.len));
      out->ctx = out->global_dict->context();
    }
  if (ci.cell_count) {
    // A cell of the column with the checks every cell gets, as a view into the mapping.
    auto cell_at = [&](uint64_t index) {
      Cell h;
      load_cell(data_ + cells_offset_ + index * kCellBytes, h);
      if (h.resv != 0 || h.rc.load(std::memory_order_relaxed) != 0 ||
          (h.attrs & (attr::kPayloadMmap | attr::kPayloadBorrowed)))
        throw_invalid(where + ": a block header with in-memory fields set");
      if (h.kind != static_cast<uint8_t>(ci.schema.kind)) throw_invalid(where + ": a block of another kind");
      const uint64_t off = load_u64le(data_ + cells_offset_ + index * kCellBytes + 16);
      if ((off == 0) != (h.payload_bytes == 0)) throw_invalid(where + ": payload offset and length disagree");
      if (off && (off % 64 != 0 || off < body_start_ || !span_within(off, h.payload_bytes, len_)))
        throw_invalid(where + ": a block payload outside the region's body area");
      return view_cell(h, off ? data_ + off : nullptr, attr::kPayloadMmap);
    };
    auto leaf_at = [&](uint64_t index) {
      CellRef v = cell_at(index);
      if (v->enc_v() == Enc::Directory) throw_invalid(where + ": a directory among the leaves");
      validate_leaf(*v, out->ctx);
      out->encodings |= 1u << v->enc;
      return v;
    };
    if (ci.cell_count == 1) {
      CellRef only = cell_at(ci.first_cell);
      if (only->enc_v() == Enc::RunDirectory) {
        // The column's runs: expanded (and validated) once into synthesized leaves.
        out->root = expand_run_directory(*only);
        out->encodings |= 1u << only->enc;
      } else {
        out->root = leaf_at(ci.first_cell);
      }
    } else {
      Cell d;
      const uint8_t* dp = data_ + cells_offset_ + ci.first_cell * kCellBytes;
      load_cell(dp, d);
      const uint64_t n = ci.cell_count - 1;
      if (d.enc_v() != Enc::Directory || d.kind != static_cast<uint8_t>(ci.schema.kind) || d.attrs != 0 ||
          d.resv != 0 || d.rc.load(std::memory_order_relaxed) != 0 || d.len != ci.rows || d.meta[0] != n ||
          d.meta[1] || d.meta[2] || d.meta[3] || load_u64le(dp + 16) != cells_offset_ + (ci.first_cell + 1) * kCellBytes ||
          d.payload_bytes != n * kCellBytes)
        throw_invalid(where + ": its directory cell does not describe its leaves");
      std::vector<CellRef> leaves;
      leaves.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        leaves.push_back(leaf_at(ci.first_cell + 1 + i));
        if (i + 1 < n && leaves.back()->len != kBlockLanes) throw_invalid(where + ": a block before the last is not full");
      }
      out->root = make_column(ci.schema.kind, std::move(leaves));
    }
    if (out->root->len != ci.rows) throw_invalid(where + ": blocks hold another row count than the column");
    if (null_count(*out->root) != ci.null_count) throw_invalid(where + ": null count differs from its blocks'");
  }
  loaded_[flat] = std::move(out);
  return *loaded_[flat];
}

CellRef TablesRegion::column(size_t table, size_t column) const { return load(table, column).root; }

const BlockIndex* TablesRegion::block_index(size_t table, size_t column) const {
  const Loaded& l = load(table, column);
  std::lock_guard<std::mutex> lock(mu_);
  if (!l.index_decoded) {
    for (const MetablockRef& m : metablocks(table, column))
      if (m.kind == static_cast<uint16_t>(MetablockKind::BlockIndex)) l.index = std::make_unique<BlockIndex>(BlockIndex::decode(m.body, m.len));
    l.index_decoded = true;
  }
  return l.index.get();
}
const std::vector<IntSpan>& TablesRegion::int_spans(size_t table, size_t column) const {
  const Loaded& l = load(table, column);
  std::lock_guard<std::mutex> lock(mu_);
  if (!l.spans_done) {
    if (l.root && physical_of(l.root->kind_v()) == Physical::Int) l.spans = cells::int_spans(*l.root);
    l.spans_done = true;
  }
  return l.spans;
}

uint32_t TablesRegion::encodings_used(size_t table, size_t column) const { return load(table, column).encodings; }
const DecodeContext& TablesRegion::context(size_t table, size_t column) const { return load(table, column).ctx; }

std::vector<MetablockRef> TablesRegion::metablocks(size_t table, size_t column) const {
  const ColumnInfo& ci = tables_.at(table).columns.at(column);
  return {metablocks_.begin() + ci.first_metablock, metablocks_.begin() + ci.first_metablock + ci.metablock_count};
}

uint64_t TablesRegion::checksum(const uint8_t* data, uint64_t len) { return xxh64(data, len); }

// ---- spools ----------------------------------------------------------------------------------

namespace {

class MemorySpool final : public PayloadSpool {
 public:
  void append(const void* data, size_t len) override {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + len);
  }
  void read(void* out, size_t len, uint64_t offset) const override { std::memcpy(out, bytes_.data() + offset, len); }
  uint64_t size() const override { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

class FileSpool final : public PayloadSpool {
 public:
  explicit FileSpool(const std::string& dir) : fd_(create_unlinked_temp(dir, "tables")) {}
  ~FileSpool() override { ::close(fd_); }
  void append(const void* data, size_t len) override {
    if (int err = pwrite_full(fd_, data, len, size_))
      throw Error(Code::TET_WRITE_IO, "cannot spool table blocks to a temp file: " + errno_text(err));
    size_ += len;
  }
  void read(void* out, size_t len, uint64_t offset) const override {
    if (pread_full(fd_, out, len, offset) != 0) throw Error(Code::TET_WRITE_IO, "cannot read back spooled table blocks");
  }
  uint64_t size() const override { return size_; }

 private:
  int fd_;
  uint64_t size_ = 0;
};

}  // namespace

std::unique_ptr<PayloadSpool> memory_spool() { return std::make_unique<MemorySpool>(); }
std::unique_ptr<PayloadSpool> file_spool(const std::string& dir) { return std::make_unique<FileSpool>(dir); }

// ---- writing ---------------------------------------------------------------------------------

struct RegionWriter::Col {
  ColumnSchema schema;
  struct Block {
    uint8_t kind, enc, attrs;
    uint64_t len, spool_offset, payload_bytes;
    uint64_t meta[4];
  };
  explicit Col(const ColumnSchema& s) : schema(s), runs(s.kind) {}
  std::vector<Block> blocks;
  uint64_t rows = 0, nulls = 0, payload_bytes = 0;
  RunCollector runs;  // Constant / Rle blocks held back while a run directory may replace them
};

struct RegionWriter::Table {
  std::string name, dataset;
  uint32_t axis = kNoAxis;
  std::vector<Col> columns;
};

RegionWriter::RegionWriter(std::unique_ptr<PayloadSpool> spool) : spool_(std::move(spool)) {}
RegionWriter::~RegionWriter() = default;

size_t RegionWriter::table_count() const { return tables_.size(); }

uint32_t RegionWriter::add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                                 const std::vector<ColumnSchema>& columns) {
  for (const auto& t : tables_)
    if (t->name == name) throw Error(Code::TET_INTERNAL, "cells: duplicate table name '" + name + "'");
  auto t = std::make_unique<Table>();
  t->name = name;
  t->dataset = dataset;
  t->axis = axis;
  for (const ColumnSchema& s : columns) t->columns.emplace_back(s);
  first_flat_.push_back(first_flat_.empty() ? 0 : first_flat_.back() + static_cast<uint32_t>(tables_.back()->columns.size()));
  tables_.push_back(std::move(t));
  return static_cast<uint32_t>(tables_.size() - 1);
}

namespace {
void spool_aligned(PayloadSpool& spool, const void* data, size_t len) {
  static const uint8_t kZeros[64] = {};
  spool.append(data, len);
  if (const size_t pad = pad64(len) - len) spool.append(kZeros, pad);
}
}  // namespace

void RegionWriter::add_block(uint32_t table, uint32_t column, const Cell& leaf) {
  Col& c = tables_.at(table)->columns.at(column);
  if (leaf.enc_v() == Enc::Directory || leaf.enc_v() == Enc::RunDirectory || leaf.len == 0 || leaf.len > kBlockLanes)
    throw Error(Code::TET_INTERNAL, "cells: add_block takes leaf blocks of 1..2048 rows");
  if (c.rows % kBlockLanes != 0) throw Error(Code::TET_INTERNAL, "cells: a block after a short block");
  c.rows += leaf.len;
  if (c.runs.active()) {
    if (c.runs.take(leaf)) return;
    release_runs(c);
  }
  spool_block(c, leaf);
}

void RegionWriter::spool_block(Col& c, const Cell& leaf) {
  Col::Block b{leaf.kind, leaf.enc, leaf.attrs, leaf.len, spool_->size(), leaf.payload_bytes, {}};
  std::memcpy(b.meta, leaf.meta, sizeof b.meta);
  if (leaf.payload_bytes) spool_aligned(*spool_, leaf.payload, leaf.payload_bytes);
  c.blocks.push_back(b);
  c.nulls += leaf.len - valid_count(leaf);
  c.payload_bytes += leaf.payload_bytes;
}

void RegionWriter::release_runs(Col& c) {
  for_each_run_leaf(c.schema.kind, c.runs.runs(), [&](const Cell& leaf) { spool_block(c, leaf); });
  c.runs.stop();
}

void RegionWriter::settle_runs(Col& c) {
  if (!c.runs.active()) return;
  const std::vector<Run>& runs = c.runs.runs();
  if (runs.empty() || 64 + pad64(run_directory_bytes(runs)) >= run_leaves_bytes(runs)) {
    release_runs(c);
    return;
  }
  const RunDirectoryImage img = encode_run_directory(runs);
  Col::Block b{static_cast<uint8_t>(c.schema.kind), static_cast<uint8_t>(Enc::RunDirectory), 0, img.rows, spool_->size(),
               img.payload.size(), {}};
  std::memcpy(b.meta, img.meta, sizeof b.meta);
  spool_aligned(*spool_, img.payload.data(), img.payload.size());
  c.blocks.assign(1, b);
  c.payload_bytes = img.payload.size();
  c.runs.stop();
}

void RegionWriter::add_column(uint32_t table, uint32_t column, const Cell& root) {
  for (uint64_t i = 0; i < block_count(root); ++i) add_block(table, column, block_at(root, i));
}

void RegionWriter::add_metablock(uint32_t table, uint32_t column, MetablockKind kind, std::vector<uint8_t> body) {
  const uint32_t flat = first_flat_.at(table) + column;
  if (column >= tables_.at(table)->columns.size()) throw Error(Code::TET_INTERNAL, "cells: no such column");
  const uint64_t off = spool_->size();
  if (!body.empty()) spool_aligned(*spool_, body.data(), body.size());
  metas_.push_back({flat, kind, off, body.size()});
}

uint64_t RegionWriter::rows(uint32_t table, uint32_t column) const { return tables_.at(table)->columns.at(column).rows; }

RegionSummary RegionWriter::write(const RegionSink& sink) {
  // Columns still held as runs become a run directory or their leaves, whichever is smaller.
  for (auto& t : tables_)
    for (Col& c : t->columns) settle_runs(c);
  // Metablocks grouped by column, in column order (stable: per column in the order added).
  std::vector<size_t> meta_order(metas_.size());
  for (size_t i = 0; i < meta_order.size(); ++i) meta_order[i] = i;
  std::stable_sort(meta_order.begin(), meta_order.end(),
                   [&](size_t a, size_t b) { return metas_[a].column_flat < metas_[b].column_flat; });

  uint32_t columns = 0;
  uint64_t cells = 0;
  std::string strings;
  for (const auto& t : tables_) {
    columns += static_cast<uint32_t>(t->columns.size());
    for (const Col& c : t->columns) {
      if (c.rows != t->columns.front().rows)
        fail(Code::TET_WRITE_ARGUMENT, "table '" + t->name + "': column '" + c.schema.name + "' has " +
                                           std::to_string(c.rows) + " rows, column '" + t->columns.front().schema.name +
                                           "' has " + std::to_string(t->columns.front().rows));
      cells += c.blocks.size() > 1 ? c.blocks.size() + 1 : c.blocks.size();
    }
  }
  Layout L;
  L.tables = static_cast<uint32_t>(tables_.size());
  L.columns = columns;
  L.metablocks = static_cast<uint32_t>(metas_.size());
  L.cell_count = cells;
  std::vector<uint8_t> head(L.records_end(), 0);
  auto add_string = [&](const std::string& s) {
    const uint64_t off = strings.size();
    strings += s;
    return off;
  };
  // Names first (their offsets are needed in the records).
  struct NameRef { uint64_t off; uint32_t len; };
  std::vector<NameRef> table_names, dataset_names, column_names;
  for (const auto& t : tables_) {
    table_names.push_back({add_string(t->name), static_cast<uint32_t>(t->name.size())});
    dataset_names.push_back({t->dataset.empty() ? 0 : add_string(t->dataset), static_cast<uint32_t>(t->dataset.size())});
    for (const Col& c : t->columns) column_names.push_back({add_string(c.schema.name), static_cast<uint32_t>(c.schema.name.size())});
  }
  L.strings_offset = L.records_end();
  L.strings_bytes = strings.size();
  L.cells_offset = pad64(L.strings_offset + L.strings_bytes);
  const uint64_t body_start = L.cells_end();  // 64-aligned: cells_offset is, cells are 64 B
  auto body_offset = [&](uint64_t spool_offset) { return body_start + spool_offset; };

  std::vector<uint8_t> cell_bytes(cells * kCellBytes);
  uint64_t flat = 0, cell = 0;
  uint32_t meta_next = 0;
  for (size_t ti = 0; ti < tables_.size(); ++ti) {
    const Table& t = *tables_[ti];
    uint8_t* r = head.data() + L.table_records() + ti * kTableRecordBytes;
    store_u64le(r, table_names[ti].off);
    store_u32le(r + 8, table_names[ti].len);
    store_u32le(r + 12, first_flat_[ti]);
    store_u32le(r + 16, static_cast<uint32_t>(t.columns.size()));
    store_u32le(r + 20, t.axis);
    store_u64le(r + 24, t.columns.empty() ? 0 : t.columns.front().rows);
    store_u64le(r + 32, dataset_names[ti].off);
    store_u32le(r + 40, dataset_names[ti].len);
    for (const Col& c : t.columns) {
      uint8_t* cr = head.data() + L.column_records() + flat * kColumnRecordBytes;
      store_u64le(cr, column_names[flat].off);
      store_u32le(cr + 8, column_names[flat].len);
      cr[12] = static_cast<uint8_t>(c.schema.kind);
      if (c.schema.kind == Kind::Timestamp) {
        cr[13] = static_cast<uint8_t>(c.schema.unit);
        cr[14] = c.schema.utc ? 1 : 0;
      }
      cr[15] = c.schema.nullable ? 1 : 0;
      const uint64_t own = c.blocks.size() > 1 ? c.blocks.size() + 1 : c.blocks.size();
      store_u64le(cr + 16, cell);
      store_u64le(cr + 24, own);
      store_u64le(cr + 32, c.rows);
      store_u64le(cr + 40, c.nulls);
      store_u64le(cr + 48, c.payload_bytes);
      uint32_t mcount = 0;
      while (meta_next + mcount < meta_order.size() && metas_[meta_order[meta_next + mcount]].column_flat == flat) ++mcount;
      store_u32le(cr + 56, meta_next);
      store_u32le(cr + 60, mcount);
      meta_next += mcount;
      if (c.blocks.size() > 1) {
        const uint64_t meta[4] = {c.blocks.size(), 0, 0, 0};
        store_cell(cell_bytes.data() + cell * kCellBytes, static_cast<uint8_t>(c.schema.kind),
                   static_cast<uint8_t>(Enc::Directory), 0, c.rows, L.cells_offset + (cell + 1) * kCellBytes,
                   c.blocks.size() * kCellBytes, meta);
        ++cell;
      }
      for (const Col::Block& b : c.blocks) {
        store_cell(cell_bytes.data() + cell * kCellBytes, b.kind, b.enc, b.attrs, b.len,
                   b.payload_bytes ? body_offset(b.spool_offset) : 0, b.payload_bytes, b.meta);
        ++cell;
      }
      ++flat;
    }
  }
  for (size_t i = 0; i < meta_order.size(); ++i) {
    const PendingMeta& m = metas_[meta_order[i]];
    uint8_t* mr = head.data() + L.metablock_records() + i * kMetablockRecordBytes;
    store_u16le(mr, static_cast<uint8_t>(m.kind));
    store_u32le(mr + 4, m.column_flat);
    store_u64le(mr + 8, m.len ? body_offset(m.spool_offset) : body_start);
    store_u64le(mr + 16, m.len);
  }
  std::memcpy(head.data(), kMagic, 4);
  store_u32le(head.data() + 4, kRegionVersion);
  store_u32le(head.data() + 8, L.tables);
  store_u32le(head.data() + 12, L.columns);
  store_u32le(head.data() + 16, L.metablocks);
  store_u64le(head.data() + 24, L.cell_count);
  store_u64le(head.data() + 32, L.cells_offset);
  store_u64le(head.data() + 40, L.strings_offset);
  store_u64le(head.data() + 48, L.strings_bytes);
  head.insert(head.end(), strings.begin(), strings.end());
  head.resize(L.cells_offset, 0);
  head.insert(head.end(), cell_bytes.begin(), cell_bytes.end());
  store_u64le(head.data() + 56, structure_hash(head.data(), L.cells_end()));

  Xxh64Stream whole;
  whole.update(head.data(), head.size());
  sink(head.data(), head.size());
  std::vector<uint8_t> buf(std::min<uint64_t>(spool_->size(), 1u << 20));
  for (uint64_t at = 0; at < spool_->size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), spool_->size() - at));
    spool_->read(buf.data(), n, at);
    whole.update(buf.data(), n);
    sink(buf.data(), n);
    at += n;
  }
  return RegionSummary{head.size() + spool_->size(), whole.digest()};
}

}  // namespace tet::cells
