// Tables stored in a .tet file (docs/format-tables.md): their catalog and reading column ranges.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cells/region.h"
#include "cells/where_wire.h"
#include "fold/registry.h"
#include "napi/detached_worker.h"
#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/promise_worker.h"
#include "query/table_query.h"
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
  // Leaf blocks of 2,048 rows (the last may be shorter), however the column is stored at rest (a
  // Directory of leaves, one leaf, or a run_directory cell whose leaves exist once loaded).
  o.Set("blocks", static_cast<double>((ci.rows + cells::kBlockLanes - 1) / cells::kBlockLanes));
  o.Set("storedCells", static_cast<double>(ci.cell_count));
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

// ---- tableQuery: the plan object lib/plan/table.ts builds, resolved against the region ----------

Napi::Object ObjectOf(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsObject()) ThrowArg(env, std::string(what) + " must be an object");
  return v.As<Napi::Object>();
}
std::string StringOf(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowArg(env, std::string(what) + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}
double NumberOf(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) ThrowArg(env, std::string(what) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}
Napi::Array ArrayOf(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsArray()) ThrowArg(env, std::string(what) + " must be an array");
  return v.As<Napi::Array>();
}

// {type: 'bool'|'int'|'float'|'str', value} (int values as BigInt).
cells::Literal LiteralOf(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = ObjectOf(env, v, "literal");
  const std::string type = StringOf(env, o.Get("type"), "literal.type");
  Napi::Value x = o.Get("value");
  if (type == "bool") {
    if (!x.IsBoolean()) ThrowArg(env, "a bool literal must be a boolean");
    return cells::Literal::of_bool(x.As<Napi::Boolean>().Value());
  }
  if (type == "int") {
    if (!x.IsBigInt()) ThrowArg(env, "an int literal must be a BigInt");
    bool lossless = false;
    const int64_t i = x.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) ThrowArg(env, "an int literal must fit in i64");
    return cells::Literal::of_int(i);
  }
  if (type == "float") return cells::Literal::of_float(NumberOf(env, x, "a float literal"));
  if (type == "str") return cells::Literal::of_str(StringOf(env, x, "a str literal"));
  ThrowArg(env, "literal.type must be bool, int, float or str");
}

size_t ColumnIndex(const TableInfo& t, const std::string& name) {
  const int c = t.find_column(name);
  if (c < 0) fail(Code::TET_QUERY_UNKNOWN_COLUMN, "table '" + t.name + "' has no column named '" + name + "'");
  return static_cast<size_t>(c);
}

cells::WhereOp WhereOpOf(Napi::Env env, const std::string& op) {
  static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "range", "prefix", "is_null", "is_nan"};
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
    if (op == names[k]) return static_cast<cells::WhereOp>(k);
  ThrowArg(env, "unknown where op '" + op + "'");
}

query::TableQueryPlan PlanOf(Napi::Env env, const TablesRegion& r, const Napi::Object& o) {
  query::TableQueryPlan p;
  const std::string table = StringOf(env, o.Get("table"), "plan.table");
  const int t = r.find_table(table);
  if (t < 0) fail(Code::TET_QUERY_UNKNOWN_TABLE, "no table named '" + table + "'");
  p.table = static_cast<size_t>(t);
  const TableInfo& ti = r.tables()[p.table];
  Napi::Array where = ArrayOf(env, o.Get("where"), "plan.where");
  p.has_where = where.Length() > 0;
  for (uint32_t k = 0; k < where.Length(); ++k) {
    Napi::Object w = ObjectOf(env, where.Get(k), "plan.where[k]");
    cells::Predicate pr;
    pr.column = ColumnIndex(ti, StringOf(env, w.Get("column"), "predicate.column"));
    pr.op = WhereOpOf(env, StringOf(env, w.Get("op"), "predicate.op"));
    if (w.Has("value")) pr.value = LiteralOf(env, w.Get("value"));
    if (w.Has("set")) {
      Napi::Array set = ArrayOf(env, w.Get("set"), "predicate.set");
      for (uint32_t i = 0; i < set.Length(); ++i) pr.set.push_back(LiteralOf(env, set.Get(i)));
    }
    if (w.Has("lo") && !w.Get("lo").IsNull()) pr.lo = LiteralOf(env, w.Get("lo"));
    if (w.Has("hi") && !w.Get("hi").IsNull()) pr.hi = LiteralOf(env, w.Get("hi"));
    if (w.Has("flag")) pr.flag = w.Get("flag").ToBoolean().Value();
    p.where.push_back(std::move(pr));
  }
  const std::string mode = StringOf(env, o.Get("mode"), "plan.mode");
  if (mode == "rows") {
    p.mode = query::TableQueryPlan::Mode::Rows;
    Napi::Array cols = ArrayOf(env, o.Get("columns"), "plan.columns");
    for (uint32_t k = 0; k < cols.Length(); ++k) p.columns.push_back(ColumnIndex(ti, StringOf(env, cols.Get(k), "column")));
    p.limit = U64Of(env, o.Get("limit"), "plan.limit");
    p.offset = U64Of(env, o.Get("offset"), "plan.offset");
    Napi::Array order = ArrayOf(env, o.Get("orderBy"), "plan.orderBy");
    for (uint32_t k = 0; k < order.Length(); ++k) {
      Napi::Object ok = ObjectOf(env, order.Get(k), "orderBy[k]");
      p.order_by.push_back({ColumnIndex(ti, StringOf(env, ok.Get("column"), "orderBy.column")), ok.Get("desc").ToBoolean().Value()});
    }
    return p;
  }
  p.op = static_cast<Op>(U64Of(env, o.Get("op"), "plan.op"));
  if (uint32_t(p.op) >= fold::kOpCount) ThrowArg(env, "plan.op is not an op code");
  p.count_rows = o.Get("countRows").ToBoolean().Value();
  if (!p.count_rows) p.column = ColumnIndex(ti, StringOf(env, o.Get("column"), "plan.column"));
  if (o.Has("q")) p.q = NumberOf(env, o.Get("q"), "plan.q");
  if (o.Has("bins")) p.bins = uint32_t(std::min<uint64_t>(U64Of(env, o.Get("bins"), "plan.bins"), 0xffffffffu));
  if (o.Has("histMin")) {
    p.hist_range = true;
    p.hist_min = NumberOf(env, o.Get("histMin"), "plan.histMin");
    p.hist_max = NumberOf(env, o.Get("histMax"), "plan.histMax");
  }
  Napi::Array groups = ArrayOf(env, o.Get("groupBy"), "plan.groupBy");
  for (uint32_t k = 0; k < groups.Length(); ++k) {
    Napi::Object g = ObjectOf(env, groups.Get(k), "groupBy[k]");
    query::GroupKey key;
    key.column = ColumnIndex(ti, StringOf(env, g.Get("column"), "groupBy.column"));
    const std::string tr = StringOf(env, g.Get("transform"), "groupBy.transform");
    if (tr == "bucket") {
      key.transform = query::KeyTransform::Bucket;
      const std::string b = StringOf(env, g.Get("bucket"), "groupBy.bucket");
      static const char* const buckets[] = {"year", "month", "day", "hour", "minute"};
      bool found = false;
      for (int i = 0; i < 5; ++i)
        if (b == buckets[i]) key.bucket = static_cast<query::TimeBucket>(i), found = true;
      if (!found) ThrowArg(env, "unknown bucket '" + b + "'");
    } else if (tr == "width_int") {
      key.transform = query::KeyTransform::WidthInt;
      Napi::Value w = g.Get("width");
      if (!w.IsBigInt()) ThrowArg(env, "an int width must be a BigInt");
      bool lossless = false;
      key.width_int = w.As<Napi::BigInt>().Int64Value(&lossless);
      if (!lossless) ThrowArg(env, "an int width must fit in i64");
    } else if (tr == "width_float") {
      key.transform = query::KeyTransform::WidthFloat;
      key.width_float = NumberOf(env, g.Get("width"), "groupBy.width");
    } else if (tr != "none") {
      ThrowArg(env, "unknown group key transform '" + tr + "'");
    }
    p.group_by.push_back(key);
  }
  p.row_groups = o.Has("rowGroups") && o.Get("rowGroups").ToBoolean().Value();
  return p;
}

Napi::Value ValueColumnToJs(Napi::Env env, const query::ValueColumn& c) {
  using T = query::ValueColumn::Type;
  Napi::Object o = Napi::Object::New(env);
  o.Set("kind", cells::kind_name(c.kind));
  const size_t n = c.size();
  switch (c.type) {
    case T::Bool: {
      o.Set("type", "bool");
      Napi::Uint8Array a = Napi::Uint8Array::New(env, n);
      if (n) std::memcpy(a.Data(), c.b.data(), n);
      o.Set("data", a);
      break;
    }
    case T::I64: case T::U64: {
      o.Set("type", c.type == T::I64 ? "i64" : "u64");
      Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, n * 8);
      if (n) std::memcpy(ab.Data(), c.type == T::I64 ? static_cast<const void*>(c.i.data()) : c.u.data(), n * 8);
      napi_value arr;
      NAPI_THROW_IF_FAILED(env, napi_create_typedarray(env, c.type == T::I64 ? napi_bigint64_array : napi_biguint64_array, n, ab, 0, &arr),
                           Napi::Value());
      o.Set("data", Napi::Value(env, arr));
      break;
    }
    case T::F64: {
      o.Set("type", "f64");
      Napi::Float64Array a = Napi::Float64Array::New(env, n);
      if (n) std::memcpy(a.Data(), c.f.data(), n * 8);
      o.Set("data", a);
      break;
    }
    case T::I128: {
      // Exact integer sums: decimal strings (few values: one per group).
      o.Set("type", "i128");
      Napi::Array a = Napi::Array::New(env, n);
      for (size_t k = 0; k < n; ++k) {
        __int128 v = c.wide[k];
        const bool neg = v < 0;
        unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
        char buf[48];
        int at = 47;
        buf[at] = 0;
        do { buf[--at] = char('0' + int(u % 10)); u /= 10; } while (u);
        if (neg) buf[--at] = '-';
        a.Set(uint32_t(k), std::string(buf + at));
      }
      o.Set("data", a);
      break;
    }
    case T::Str: {
      o.Set("type", "str");
      if (c.s.bytes.size() > 0xffffffffu) fail(Code::TET_BUDGET_EXCEEDED, "the result strings exceed 4 GiB");
      Napi::Uint8Array b = Napi::Uint8Array::New(env, c.s.bytes.size());
      if (!c.s.bytes.empty()) std::memcpy(b.Data(), c.s.bytes.data(), c.s.bytes.size());
      Napi::Uint32Array off = Napi::Uint32Array::New(env, n + 1);
      for (size_t k = 0; k <= n; ++k) off[k] = static_cast<uint32_t>(c.s.offsets[k]);
      o.Set("bytes", b);
      o.Set("offsets", off);
      break;
    }
  }
  if (!c.valid.empty()) {
    Napi::Uint8Array v = Napi::Uint8Array::New(env, c.valid.size());
    std::memcpy(v.Data(), c.valid.data(), c.valid.size());
    o.Set("valid", v);
  }
  return o;
}

// A table query runs as a tensor query does (DetachedWorker, the addon's job threads): its cancel
// flag is registered with the environment, so a terminated worker_thread cancels it.
class TableQueryWorker : public DetachedWorker {
 public:
  TableQueryWorker(Napi::Env env, std::shared_ptr<File> file, query::TableQueryPlan plan, query::ExecLimits limits, CancelFlag cancel)
      : DetachedWorker(env, "tetration:tableQuery", EnvInFlight(env)), file_(std::move(file)), plan_(std::move(plan)),
        limits_(limits), registration_(EnvInFlight(env), std::move(cancel)) {
    limits_.cancel = registration_.flag();
  }

 protected:
  void Run() override {
    RunCountedQuery([this] {
      file_->check_unchanged();
      const auto t0 = std::chrono::steady_clock::now();
      res_ = query::run_table_query(RegionOf(*file_), plan_, limits_);
      seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      file_->check_unchanged();
    });
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    if (res_.has_where) {
      Napi::Object w = Napi::Object::New(env);
      const cells::WherePlan& p = res_.where;
      w.Set("rows", double(p.rows)), w.Set("selected", double(p.selected)), w.Set("blocks", double(p.blocks));
      w.Set("blocks_zonemap_resolved", double(p.blocks_zonemap_resolved));
      w.Set("blocks_index_pruned", double(p.blocks_index_pruned));
      w.Set("blocks_decoded", double(p.blocks_decoded));
      w.Set("payload_bytes_read", double(p.payload_bytes_read));
      o.Set("where", w);
    }
    o.Set("rowsSelected", double(res_.rows_selected));
    o.Set("threads", double(res_.threads_used));
    o.Set("seconds", seconds_);
    if (plan_.mode == query::TableQueryPlan::Mode::Rows) {
      Napi::Array rows = Napi::Array::New(env, res_.rows.size());
      for (size_t k = 0; k < res_.rows.size(); ++k) rows.Set(uint32_t(k), ValueColumnToJs(env, res_.rows[k]));
      o.Set("rows", rows);
      Napi::Float64Array rn = Napi::Float64Array::New(env, res_.row_numbers.size());
      for (size_t k = 0; k < res_.row_numbers.size(); ++k) rn[k] = double(res_.row_numbers[k]);
      o.Set("rowNumbers", rn);
      return o;
    }
    o.Set("values", ValueColumnToJs(env, res_.values));
    if (!res_.hist_edges.empty()) {
      Napi::Float64Array e = Napi::Float64Array::New(env, res_.hist_edges.size());
      std::memcpy(e.Data(), res_.hist_edges.data(), res_.hist_edges.size() * 8);
      o.Set("histEdges", e);
    }
    if (!plan_.group_by.empty()) {
      Napi::Array keys = Napi::Array::New(env, res_.group_keys.size());
      for (size_t k = 0; k < res_.group_keys.size(); ++k) keys.Set(uint32_t(k), ValueColumnToJs(env, res_.group_keys[k]));
      o.Set("groupKeys", keys);
      Napi::Float64Array gc = Napi::Float64Array::New(env, res_.group_counts.size());
      for (size_t k = 0; k < res_.group_counts.size(); ++k) gc[k] = double(res_.group_counts[k]);
      o.Set("groupCounts", gc);
    }
    if (plan_.row_groups) {
      Napi::Uint32Array rg = Napi::Uint32Array::New(env, res_.row_groups.size());
      if (!res_.row_groups.empty()) std::memcpy(rg.Data(), res_.row_groups.data(), res_.row_groups.size() * 4);
      o.Set("rowGroups", rg);
    }
    return o;
  }

 private:
  std::shared_ptr<File> file_;
  query::TableQueryPlan plan_;
  query::ExecLimits limits_;
  QueryRegistration registration_;  // the cancel flag (limits_.cancel points into it), registered with the environment
  query::TableQueryResult res_;
  double seconds_ = 0;
};

}  // namespace

Napi::Value FileTableQuery(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    Napi::Object o = ObjectOf(env, Arg(info, 1, "plan"), "plan");
    query::TableQueryPlan plan = PlanOf(env, RegionOf(*file), o);
    query::ExecLimits limits;
    if (o.Has("threads")) limits.threads = uint32_t(std::min<uint64_t>(U64Of(env, o.Get("threads"), "plan.threads"), 4096));
    if (o.Has("memoryBudgetBytes")) limits.memory_budget_bytes = U64Of(env, o.Get("memoryBudgetBytes"), "plan.memoryBudgetBytes");
    CancelFlag cancel = info.Length() > 2 ? UnwrapCancel(info[2]) : nullptr;
    return (new TableQueryWorker(env, std::move(file), std::move(plan), limits, std::move(cancel)))->Start();
  });
}

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
