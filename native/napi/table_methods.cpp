// Tables stored in a .tet file (docs/format-tables.md): their catalog and reading column ranges.
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

class ReadColumnWorker : public PromiseWorker {
 public:
  ReadColumnWorker(Napi::Env env, std::shared_ptr<File> file, std::string table, std::string column, uint64_t start,
                   uint64_t count)
      : PromiseWorker(env, "tetration:readColumn"), file_(std::move(file)), table_(std::move(table)),
        column_(std::move(column)), start_(start), count_(count) {}

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
    valid_.resize(count_);
    if (count_ == 0) return;
    cells::CellRef root = r.column(t, c);
    const cells::DecodeContext& ctx = r.context(t, c);
    switch (physical_) {
      case Physical::Int: ints_.resize(count_); cells::decode_column(*root, start_, count_, ints_.data(), valid_.data(), ctx); break;
      case Physical::Float: floats_.resize(count_); cells::decode_column(*root, start_, count_, floats_.data(), valid_.data(), ctx); break;
      case Physical::Bool: bools_.resize(count_); cells::decode_column(*root, start_, count_, bools_.data(), valid_.data(), ctx); break;
      case Physical::Str:
        cells::decode_column(*root, start_, count_, &strs_, valid_.data(), ctx);
        if (strs_.bytes.size() > 0xffffffffu)
          fail(Code::TET_BUDGET_EXCEEDED, "the strings of rows [" + std::to_string(start_) + ", " +
                                              std::to_string(start_ + count_) + ") exceed 4 GiB; read a smaller range");
        break;
      case Physical::Table: fail(Code::TET_INTERNAL, "a column of kind table");
    }
    file_->check_unchanged();
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("kind", cells::kind_name(kind_));
    o.Set("rows", static_cast<double>(count_));
    bool any_null = false;
    for (uint8_t v : valid_) any_null |= v == 0;
    if (any_null) {
      Napi::Uint8Array v = Napi::Uint8Array::New(env, valid_.size());
      std::memcpy(v.Data(), valid_.data(), valid_.size());
      o.Set("valid", v);
    }
    switch (physical_) {
      case Physical::Int: {
        Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, ints_.size() * 8);
        if (!ints_.empty()) std::memcpy(ab.Data(), ints_.data(), ints_.size() * 8);
        napi_value arr;
        NAPI_THROW_IF_FAILED(env, napi_create_typedarray(env, napi_bigint64_array, ints_.size(), ab, 0, &arr), Napi::Value());
        o.Set("data", Napi::Value(env, arr));
        break;
      }
      case Physical::Float: {
        Napi::Float64Array a = Napi::Float64Array::New(env, floats_.size());
        if (!floats_.empty()) std::memcpy(a.Data(), floats_.data(), floats_.size() * 8);
        o.Set("data", a);
        break;
      }
      case Physical::Bool: {
        Napi::Uint8Array a = Napi::Uint8Array::New(env, bools_.size());
        if (!bools_.empty()) std::memcpy(a.Data(), bools_.data(), bools_.size());
        o.Set("data", a);
        break;
      }
      case Physical::Str: {
        Napi::Uint8Array b = Napi::Uint8Array::New(env, strs_.bytes.size());
        if (!strs_.bytes.empty()) std::memcpy(b.Data(), strs_.bytes.data(), strs_.bytes.size());
        Napi::Uint32Array off = Napi::Uint32Array::New(env, count_ + 1);
        for (uint64_t i = 0; i <= count_; ++i) off[i] = static_cast<uint32_t>(i < strs_.offsets.size() ? strs_.offsets[i] : 0);
        o.Set("bytes", b);
        o.Set("offsets", off);
        break;
      }
      case Physical::Table: break;
    }
    return o;
  }

 private:
  std::shared_ptr<File> file_;
  std::string table_, column_;
  uint64_t start_, count_;
  Physical physical_ = Physical::Int;
  cells::Kind kind_ = cells::Kind::Int;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
  std::vector<uint8_t> bools_, valid_;
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
    return (new ReadColumnWorker(env, std::move(file), std::move(table), std::move(column), start, count))->Start();
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
