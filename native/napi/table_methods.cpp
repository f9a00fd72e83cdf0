// Tables stored in a .tet file (docs/format-tables.md): their catalog and reading column ranges.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cells/region.h"
#include "cells/where_wire.h"
#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/promise_worker.h"
#include "tet/file.h"

namespace tet::napi {
namespace {

using cells::ColumnInfo;
using cells::Physical;
using cells::TableInfo;
using cells::TablesRegion;

const TablesRegion& RegionOf(const File& f) {
  const TablesRegion* r = f.tables();
  if (!r) fail(Code::TET_QUERY_UNKNOWN_TABLE, "the file has no tables");
  return *r;
}

// (table, column) indices by name; TET_QUERY_UNKNOWN_TABLE / _COLUMN otherwise.
std::pair<size_t, size_t> Locate(const TablesRegion& r, const std::string& table, const std::string& column) {
  const int t = r.find_table(table);
  if (t < 0) fail(Code::TET_QUERY_UNKNOWN_TABLE, "no table named '" + table + "'");
  const int c = r.tables()[static_cast<size_t>(t)].find_column(column);
  if (c < 0) fail(Code::TET_QUERY_UNKNOWN_COLUMN, "table '" + table + "' has no column named '" + column + "'");
  return {static_cast<size_t>(t), static_cast<size_t>(c)};
}

Napi::Value ColumnToJs(Napi::Env env, const TablesRegion& r, size_t t, size_t c, const ColumnInfo& ci, bool deep) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", ci.schema.name);
  o.Set("kind", cells::kind_name(ci.schema.kind));
  if (ci.schema.kind == cells::Kind::Timestamp) {
    o.Set("unit", cells::time_unit_name(ci.schema.unit));
    o.Set("tz", ci.schema.utc ? "UTC" : "naive");
  }
  o.Set("nullable", ci.schema.nullable);
  o.Set("nullCount", static_cast<double>(ci.null_count));
  o.Set("payloadBytes", static_cast<double>(ci.payload_bytes));
  o.Set("blocks", static_cast<double>(ci.cell_count > 1 ? ci.cell_count - 1 : ci.cell_count));
  if (deep) {
    Napi::Array encs = Napi::Array::New(env);
    const uint32_t used = ci.rows ? r.encodings_used(t, c) : 0;
    for (int e = 0; e < cells::kEncodingCount; ++e)
      if (used & (1u << e)) encs.Set(encs.Length(), cells::enc_name(static_cast<cells::Enc>(e)));
    o.Set("encodings", encs);
  }
  Napi::Array metas = Napi::Array::New(env);
  for (const cells::MetablockRef& m : r.metablocks(t, c)) {
    Napi::Object mo = Napi::Object::New(env);
    mo.Set("kind", static_cast<double>(m.kind));
    mo.Set("bytes", static_cast<double>(m.len));
    metas.Set(metas.Length(), mo);
  }
  o.Set("metablocks", metas);
  return o;
}

// The typed arrays a read writes into (allocated by the SDK: caller-owned outputs, so the rows
// are decoded once, straight into the arrays the user gets). Held by reference while the job
// runs; released on the JS thread.
struct ColumnOutput {
  napi_ref ref = nullptr;
  napi_typedarray_type type = napi_uint8_array;
  void* data = nullptr;
  size_t length = 0;
};

ColumnOutput ColumnOutputArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Env env = info.Env();
  if (info.Length() <= i || !info[i].IsTypedArray()) ThrowArg(env, std::string(what) + " must be a typed array");
  ColumnOutput o;
  napi_value buffer;
  size_t offset = 0;
  NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, info[i], &o.type, &o.length, &o.data, &buffer, &offset), o);
  NAPI_THROW_IF_FAILED(env, napi_create_reference(env, info[i], 1, &o.ref), o);
  return o;
}

class ReadColumnWorker : public PromiseWorker {
 public:
  // `data` / `valid`: caller-owned outputs of `count` entries (no `data` for str columns, whose
  // byte length is known only after decoding).
  ReadColumnWorker(Napi::Env env, std::shared_ptr<File> file, std::string table, std::string column, uint64_t start,
                   uint64_t count, ColumnOutput data, ColumnOutput valid)
      : PromiseWorker(env, "tetration:readColumn"), file_(std::move(file)), table_(std::move(table)),
        column_(std::move(column)), start_(start), count_(count), data_(data), valid_(valid) {}
  ~ReadColumnWorker() override {
    // Runs on the JS thread (after OnOK / OnError).
    for (napi_ref r : {data_.ref, valid_.ref})
      if (r != nullptr) napi_delete_reference(Env(), r);
  }

 protected:
  void Run() override {
    file_->check_unchanged();
    const TablesRegion& r = RegionOf(*file_);
    const auto [t, c] = Locate(r, table_, column_);
    const ColumnInfo& ci = r.tables()[t].columns[c];
    if (start_ > ci.rows || count_ > ci.rows - start_)
      fail(Code::TET_QUERY_SELECTION, "rows [" + std::to_string(start_) + ", " + std::to_string(start_ + count_) +
                                              ") lie outside table '" + table_ + "' (" + std::to_string(ci.rows) + " rows)");
    physical_ = cells::physical_of(ci.schema.kind);
    kind_ = ci.schema.kind;
    CheckOutputs();
    uint8_t* valid = static_cast<uint8_t*>(valid_.data);
    if (count_ == 0) return;
    cells::CellRef root = r.column(t, c);
    const cells::DecodeContext& ctx = r.context(t, c);
    switch (physical_) {
      case Physical::Int:
        if (kind_ == cells::Kind::Date) DecodeDays(*root, ctx, valid);
        else cells::decode_column(*root, start_, count_, data_.data, valid, ctx);
        break;
      case Physical::Float:
      case Physical::Bool: cells::decode_column(*root, start_, count_, data_.data, valid, ctx); break;
      case Physical::Str:
        cells::decode_column(*root, start_, count_, &strs_, valid, ctx);
        if (strs_.bytes.size() > 0xffffffffu)
          fail(Code::TET_BUDGET_EXCEEDED, "the strings of rows [" + std::to_string(start_) + ", " +
                                              std::to_string(start_ + count_) + ") exceed 4 GiB; read a smaller range");
        break;
      case Physical::Table: fail(Code::TET_INTERNAL, "a column of kind table");
    }
    file_->check_unchanged();
    for (uint64_t i = 0; i < count_ && !any_null_; ++i) any_null_ = valid[i] == 0;
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("kind", cells::kind_name(kind_));
    o.Set("rows", static_cast<double>(count_));
    o.Set("anyNull", any_null_);
    if (physical_ == Physical::Str) {
      Napi::Uint8Array b = Napi::Uint8Array::New(env, strs_.bytes.size());
      if (!strs_.bytes.empty()) std::memcpy(b.Data(), strs_.bytes.data(), strs_.bytes.size());
      Napi::Uint32Array off = Napi::Uint32Array::New(env, count_ + 1);
      for (uint64_t i = 0; i <= count_; ++i) off[i] = static_cast<uint32_t>(i < strs_.offsets.size() ? strs_.offsets[i] : 0);
      o.Set("bytes", b);
      o.Set("offsets", off);
    }
    return o;
  }

 private:
  // The outputs match the column: `valid` a Uint8Array of count entries; `data` count entries of
  // the kind's JS array (bool Uint8Array, date Int32Array, float Float64Array, other int-stored
  // kinds BigInt64Array), absent for str. The SDK allocates them; a mismatch is its bug.
  void CheckOutputs() const {
    auto bad = [](const std::string& what) { fail(Code::TET_INTERNAL, "readColumn: " + what); };
    if (valid_.type != napi_uint8_array || valid_.length != count_) bad("valid must be a Uint8Array of count entries");
    if (physical_ == Physical::Str) {
      if (data_.ref != nullptr) bad("a str column takes no data array");
      return;
    }
    napi_typedarray_type want = napi_bigint64_array;
    if (physical_ == Physical::Float) want = napi_float64_array;
    if (physical_ == Physical::Bool) want = napi_uint8_array;
    if (kind_ == cells::Kind::Date) want = napi_int32_array;
    if (data_.ref == nullptr || data_.type != want || data_.length != count_)
      bad(std::string("data must be a typed array of count entries for a ") + cells::kind_name(kind_) + " column");
  }

  // Dates are stored as i64 days; users get Int32Array days (the SDK's date range): decoded in
  // slices through a small buffer, each value range-checked.
  void DecodeDays(const cells::Cell& root, const cells::DecodeContext& ctx, uint8_t* valid) {
    constexpr uint64_t kSlice = 8192;
    std::vector<int64_t> buf(static_cast<size_t>(std::min<uint64_t>(kSlice, count_)));
    int32_t* out = static_cast<int32_t*>(data_.data);
    for (uint64_t at = 0; at < count_; at += kSlice) {
      const uint64_t n = std::min(kSlice, count_ - at);
      cells::decode_column(root, start_ + at, n, buf.data(), valid + at, ctx);
      for (uint64_t i = 0; i < n; ++i) {
        const int64_t d = buf[i];
        if (d < INT32_MIN || d > INT32_MAX)
          fail(Code::TET_CELLS_INVALID, "a stored date " + std::to_string(d) + " at row " + std::to_string(start_ + at + i) +
                                            " is outside the i32 day range");
        out[at + i] = static_cast<int32_t>(d);
      }
    }
  }

  std::shared_ptr<File> file_;
  std::string table_, column_;
  uint64_t start_, count_;
  ColumnOutput data_, valid_;
  Physical physical_ = Physical::Int;
  cells::Kind kind_ = cells::Kind::Int;
  bool any_null_ = false;
  cells::StrBuffer strs_;
};

// { runs: Float64Array of [start, end) pairs, plan: where_plan counts } (lib/native.ts TableWhereResult).
Napi::Value WhereRunsToJs(Napi::Env env, const cells::WhereRuns& w) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Float64Array runs = Napi::Float64Array::New(env, w.runs.size());
  for (size_t i = 0; i < w.runs.size(); ++i) runs[i] = static_cast<double>(w.runs[i]);  // axis positions < 2^53
  o.Set("runs", runs);
  Napi::Object p = Napi::Object::New(env);
  auto num = [&](const char* k, uint64_t v) { p.Set(k, static_cast<double>(v)); };
  num("rows", w.plan.rows);
  num("selected", w.plan.selected);
  num("blocks", w.plan.blocks);
  num("blocks_zonemap_resolved", w.plan.blocks_zonemap_resolved);
  num("blocks_index_pruned", w.plan.blocks_index_pruned);
  num("blocks_decoded", w.plan.blocks_decoded);
  num("payload_bytes_read", w.plan.payload_bytes_read);
  o.Set("plan", p);
  return o;
}

class TableWhereWorker : public PromiseWorker {
 public:
  TableWhereWorker(Napi::Env env, std::shared_ptr<File> file, std::string table, std::vector<uint8_t> wire, CancelFlag cancel)
      : PromiseWorker(env, "tetration:tableWhere"), file_(std::move(file)), table_(std::move(table)), wire_(std::move(wire)),
        cancel_(std::move(cancel)) {}

 protected:
  void Run() override {
    file_->check_unchanged();
    result_ = cells::evaluate_where_wire(RegionOf(*file_), table_, wire_.data(), wire_.size(), 0, cancel_.get());
    file_->check_unchanged();
  }
  Napi::Value Result(Napi::Env env) override { return WhereRunsToJs(env, result_); }

 private:
  std::shared_ptr<File> file_;
  std::string table_;
  std::vector<uint8_t> wire_;
  CancelFlag cancel_;
  cells::WhereRuns result_;
};

}  // namespace

Napi::Value FileTables(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    const bool deep = info.Length() > 1 && BoolArg(info, 1, "encodings");
    Napi::Array out = Napi::Array::New(env);
    const TablesRegion* r = file->tables();
    if (!r) return out;
    for (size_t t = 0; t < r->tables().size(); ++t) {
      const TableInfo& ti = r->tables()[t];
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", ti.name);
      if (ti.axis != cells::kNoAxis) {
        o.Set("dataset", ti.dataset);
        o.Set("axis", static_cast<double>(ti.axis));
      }
      o.Set("rows", static_cast<double>(ti.rows));
      Napi::Array cols = Napi::Array::New(env);
      for (size_t c = 0; c < ti.columns.size(); ++c) cols.Set(static_cast<uint32_t>(c), ColumnToJs(env, *r, t, c, ti.columns[c], deep));
      o.Set("columns", cols);
      out.Set(static_cast<uint32_t>(t), o);
    }
    return out;
  });
}

Napi::Value FileReadColumn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    std::string table = StringArg(info, 1, "table");
    std::string column = StringArg(info, 2, "column");
    const uint64_t start = U64Arg(info, 3, "start");
    const uint64_t count = U64Arg(info, 4, "count");
    ColumnOutput data;
    if (info.Length() > 5 && !info[5].IsUndefined() && !info[5].IsNull()) data = ColumnOutputArg(info, 5, "data");
    ColumnOutput valid = ColumnOutputArg(info, 6, "valid");
    return (new ReadColumnWorker(env, std::move(file), std::move(table), std::move(column), start, count, data, valid))
        ->Start();
  });
}

Napi::Value TableWhere(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    std::string table = StringArg(info, 1, "table");
    std::vector<uint8_t> wire = BytesArg(info, 2, "predicates");
    CancelFlag cancel = info.Length() > 3 ? UnwrapCancel(info[3]) : nullptr;
    return (new TableWhereWorker(env, std::move(file), std::move(table), std::move(wire), std::move(cancel)))->Start();
  });
}

Napi::Value TableWhereSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    const std::string table = StringArg(info, 1, "table");
    const std::vector<uint8_t> wire = BytesArg(info, 2, "predicates");
    file->check_unchanged();
    const cells::WhereRuns w = cells::evaluate_where_wire(RegionOf(*file), table, wire.data(), wire.size());
    file->check_unchanged();
    return WhereRunsToJs(env, w);
  });
}

}  // namespace tet::napi
