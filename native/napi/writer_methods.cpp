// Writing: a tet::Writer behind a handle. Compression and file I/O (writeChunk, writeSlab,
// commit) run on pool threads; declaration calls are cheap and stay on the JS thread. Tile writes
// share the writer (tet::Writer is safe for concurrent tile writes); the rest hold it alone.
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/promise_worker.h"
#include "tet/error.h"
#include "tet/writer.h"
#include "write/table_set.h"

namespace tet::napi {
namespace {

Writer& LiveWriter(WriterState& state) {
  if (!state.writer)
    fail("TET_WRITE_CLOSED", std::string("the writer was already closed by ") + state.closed_by +
                                 "; create a new writer");
  return *state.writer;
}

class WriteChunkWorker : public PromiseWorker {
 public:
  WriteChunkWorker(Napi::Env env, WriterRef state, uint32_t dataset_id, std::vector<uint64_t> coords,
                   std::vector<uint8_t> data)
      : PromiseWorker(env, "tetration:writeChunk"), state_(std::move(state)), dataset_id_(dataset_id),
        coords_(std::move(coords)), data_(std::move(data)) {}

 protected:
  void Run() override {
    std::shared_lock<std::shared_mutex> lock(state_->mu);
    LiveWriter(*state_).write_chunk(dataset_id_, coords_, data_.data(), data_.size());
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  WriterRef state_;
  uint32_t dataset_id_;
  std::vector<uint64_t> coords_;
  std::vector<uint8_t> data_;
};

// A block of whole tiles, read in place from the caller's buffer (held by a reference until the
// promise settles; the caller must not change it meanwhile): no copy on the JS thread.
class WriteSlabWorker : public PromiseWorker {
 public:
  WriteSlabWorker(Napi::Env env, WriterRef state, uint32_t dataset_id, std::vector<uint64_t> origin,
                  std::vector<uint64_t> count, Napi::Uint8Array bytes)
      : PromiseWorker(env, "tetration:writeSlab"), state_(std::move(state)), dataset_id_(dataset_id),
        origin_(std::move(origin)), count_(std::move(count)), keep_(Napi::Persistent(bytes)),
        data_(bytes.Data()), len_(bytes.ByteLength()) {}

 protected:
  void Run() override {
    std::shared_lock<std::shared_mutex> lock(state_->mu);
    LiveWriter(*state_).write_slab(dataset_id_, origin_, count_, data_, len_);
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  WriterRef state_;
  uint32_t dataset_id_;
  std::vector<uint64_t> origin_, count_;
  Napi::Reference<Napi::Uint8Array> keep_;
  const uint8_t* data_;
  size_t len_;
};

class CommitWorker : public PromiseWorker {
 public:
  CommitWorker(Napi::Env env, WriterRef state) : PromiseWorker(env, "tetration:commit"), state_(std::move(state)) {}

 protected:
  void Run() override {
    std::unique_lock<std::shared_mutex> lock(state_->mu);
    LiveWriter(*state_).commit();
    state_->writer.reset();
    state_->closed_by = "commit";
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  WriterRef state_;
};

size_t ElementBytes(napi_typedarray_type t) {
  switch (t) {
    case napi_int8_array: case napi_uint8_array: case napi_uint8_clamped_array: return 1;
    case napi_int16_array: case napi_uint16_array: return 2;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: return 4;
    default: return 8;  // float64, bigint64, biguint64
  }
}

// One append of a table's rows: every column's arrays read in place (held by references until
// the promise settles; the caller must not change them meanwhile).
class AppendTableWorker : public PromiseWorker {
 public:
  AppendTableWorker(Napi::Env env, WriterRef state, uint32_t table) : PromiseWorker(env, "tetration:appendTable"),
      state_(std::move(state)), table_(table) {}
  void Hold(const Napi::TypedArray& a) { keep_.push_back(Napi::Persistent(a.As<Napi::Object>())); }
  std::vector<ColumnBatch> batches;

 protected:
  void Run() override {
    std::shared_lock<std::shared_mutex> lock(state_->mu);
    LiveWriter(*state_).append_table(table_, batches);
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  WriterRef state_;
  uint32_t table_;
  std::vector<Napi::ObjectReference> keep_;
};

std::string StringField(Napi::Env env, const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (!v.IsString()) ThrowArg(env, std::string("spec.") + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

}  // namespace

Napi::Value WriterCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value { return WrapWriter(env, Writer::create(StringArg(info, 0, "path"))); });
}

Napi::Value WriterSetExecution(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    uint64_t bps = U64Arg(info, 1, "percentBps");
    uint64_t bytes = U64Arg(info, 2, "bytes");
    if (bps > std::numeric_limits<uint16_t>::max())
      ThrowArg(env, "percentBps must fit u16 (<= 65535), got " + std::to_string(bps));
    if (bytes > std::numeric_limits<uint32_t>::max())
      ThrowArg(env, "bytes must fit u32 (<= 4294967295), got " + std::to_string(bytes));
    FileExecution e;
    e.memory_budget_percent_bps = static_cast<uint16_t>(bps);
    e.memory_budget_bytes = static_cast<uint32_t>(bytes);
    std::unique_lock<std::shared_mutex> lock(state->mu);
    LiveWriter(*state).set_execution(e);
    return env.Undefined();
  });
}

Napi::Value WriterAddDataset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    Napi::Value specv = Arg(info, 1, "spec");
    if (!specv.IsObject()) ThrowArg(env, "spec must be an object");
    Napi::Object o = specv.As<Napi::Object>();
    DatasetSpec spec;
    spec.name = StringField(env, o, "name");
    uint64_t dtype = U64Of(env, o.Get("dtype"), "spec.dtype");
    if (!dtype_tag_valid(static_cast<uint32_t>(dtype)) || dtype > 10)
      ThrowArg(env, "spec.dtype must be a dtype tag 1..10, got " + std::to_string(dtype));
    spec.dtype = static_cast<DType>(dtype);
    spec.shape = U64ArrayOf(env, o.Get("shape"), "spec.shape", kMaxNdim);
    spec.chunk_shape = U64ArrayOf(env, o.Get("chunkShape"), "spec.chunkShape", kMaxNdim);
    uint64_t codec = U64Of(env, o.Get("codec"), "spec.codec");
    if (codec > 2) ThrowArg(env, "spec.codec must be 0 (raw), 1 (zstd) or 2 (auto), got " + std::to_string(codec));
    spec.codec = static_cast<CodecChoice>(codec);
    Napi::Value level = o.Get("level");
    if (!level.IsNumber()) ThrowArg(env, "spec.level must be a number");
    spec.zstd_level = level.As<Napi::Number>().Int32Value();
    std::unique_lock<std::shared_mutex> lock(state->mu);
    uint32_t id = LiveWriter(*state).add_dataset(spec);
    return Napi::Number::New(env, id);
  });
}

Napi::Value WriterWriteChunk(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    uint64_t id = U64Arg(info, 1, "datasetId");
    if (id > std::numeric_limits<uint32_t>::max()) ThrowArg(env, "datasetId out of range");
    std::vector<uint64_t> coords = U64ArrayOf(env, Arg(info, 2, "coords"), "coords", kMaxNdim);
    std::vector<uint8_t> data = BytesArg(info, 3, "data");
    return (new WriteChunkWorker(env, std::move(state), static_cast<uint32_t>(id), std::move(coords),
                                 std::move(data)))->Start();
  });
}

Napi::Value WriterWriteSlab(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    uint64_t id = U64Arg(info, 1, "datasetId");
    if (id > std::numeric_limits<uint32_t>::max()) ThrowArg(env, "datasetId out of range");
    std::vector<uint64_t> origin = U64ArrayOf(env, Arg(info, 2, "tileOrigin"), "tileOrigin", kMaxNdim);
    std::vector<uint64_t> count = U64ArrayOf(env, Arg(info, 3, "tileCount"), "tileCount", kMaxNdim);
    Napi::Value v = Arg(info, 4, "data");
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowArg(env, "data must be a Uint8Array");
    return (new WriteSlabWorker(env, std::move(state), static_cast<uint32_t>(id), std::move(origin), std::move(count),
                                v.As<Napi::Uint8Array>()))->Start();
  });
}

Napi::Value WriterSetFooter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    std::string history = StringArg(info, 1, "historyArrayJson");
    std::string metadata = StringArg(info, 2, "metadataObjectJson");
    std::unique_lock<std::shared_mutex> lock(state->mu);
    LiveWriter(*state).set_footer(history, metadata);
    return env.Undefined();
  });
}

Napi::Value WriterCommit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    return (new CommitWorker(env, UnwrapWriter(Arg(info, 0, "writer"))))->Start();
  });
}

Napi::Value WriterAbort(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    std::unique_lock<std::shared_mutex> lock(state->mu);
    if (state->writer) {  // idempotent; aborting after commit leaves the committed file alone
      state->writer->abort();
      state->writer.reset();
      state->closed_by = "abort";
    }
    return env.Undefined();
  });
}

}  // namespace tet::napi

namespace tet::napi {

// writerAddTable(writer, name, dataset, axis (-1 = standalone), columns: [{name, kind, unit, utc, nullable}])
Napi::Value WriterAddTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    std::string name = StringArg(info, 1, "name");
    std::string dataset = StringArg(info, 2, "dataset");
    Napi::Value ax = Arg(info, 3, "axis");
    if (!ax.IsNumber()) ThrowArg(env, "axis must be a number");
    const double axd = ax.As<Napi::Number>().DoubleValue();
    if (!(axd == -1 || (axd >= 0 && axd < 8 && axd == static_cast<uint32_t>(axd)))) ThrowArg(env, "axis must be -1 or 0..7");
    const uint32_t axis = axd < 0 ? cells::kNoAxis : static_cast<uint32_t>(axd);
    Napi::Value cv = Arg(info, 4, "columns");
    if (!cv.IsArray()) ThrowArg(env, "columns must be an array");
    Napi::Array arr = cv.As<Napi::Array>();
    std::vector<cells::ColumnSchema> cols;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value e = arr.Get(i);
      if (!e.IsObject()) ThrowArg(env, "columns[" + std::to_string(i) + "] must be an object");
      Napi::Object o = e.As<Napi::Object>();
      cells::ColumnSchema c;
      c.name = StringField(env, o, "name");
      const uint64_t kind = U64Of(env, o.Get("kind"), "column kind");
      if (kind > 255 || !cells::kind_is_known(static_cast<uint8_t>(kind))) ThrowArg(env, "unknown column kind " + std::to_string(kind));
      c.kind = static_cast<cells::Kind>(kind);
      const uint64_t unit = U64Of(env, o.Get("unit"), "column unit");
      if (unit > 3) ThrowArg(env, "unknown timestamp unit " + std::to_string(unit));
      c.unit = static_cast<cells::TimeUnit>(unit);
      c.utc = o.Get("utc").ToBoolean();
      c.nullable = o.Get("nullable").ToBoolean();
      cols.push_back(std::move(c));
    }
    std::unique_lock<std::shared_mutex> lock(state->mu);
    return Napi::Number::New(env, LiveWriter(*state).add_table(name, dataset, axis, cols));
  });
}

// writerAppendTable(writer, tableId, rows, columns: [{data, offsets?, valid?}]) -> Promise
Napi::Value WriterAppendTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    WriterRef state = UnwrapWriter(Arg(info, 0, "writer"));
    const uint64_t table = U64Arg(info, 1, "table");
    const uint64_t rows = U64Arg(info, 2, "rows");
    Napi::Value cv = Arg(info, 3, "columns");
    if (!cv.IsArray()) ThrowArg(env, "columns must be an array");
    if (table > UINT32_MAX) ThrowArg(env, "table id out of range");
    auto* w = new AppendTableWorker(env, std::move(state), static_cast<uint32_t>(table));
    try {
      Napi::Array arr = cv.As<Napi::Array>();
      for (uint32_t i = 0; i < arr.Length(); ++i) {
        Napi::Value e = arr.Get(i);
        if (!e.IsObject()) ThrowArg(env, "columns[" + std::to_string(i) + "] must be an object");
        Napi::Object o = e.As<Napi::Object>();
        ColumnBatch b;
        b.rows = rows;
        const std::string at = "columns[" + std::to_string(i) + "]";
        Napi::Value d = o.Get("data");
        if (!d.IsTypedArray()) ThrowArg(env, at + ".data must be a typed array");
        Napi::TypedArray ta = d.As<Napi::TypedArray>();
        const size_t esize = ElementBytes(ta.TypedArrayType());
        b.data = static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
        b.elem_bytes = static_cast<uint32_t>(esize);
        w->Hold(ta);
        Napi::Value off = o.Get("offsets");
        if (off.IsTypedArray()) {
          Napi::TypedArray oa = off.As<Napi::TypedArray>();
          if (oa.TypedArrayType() != napi_uint32_array || oa.ElementLength() != rows + 1)
            ThrowArg(env, at + ".offsets must be a Uint32Array of rows + 1 entries");
          b.offsets = reinterpret_cast<const uint32_t*>(static_cast<uint8_t*>(oa.ArrayBuffer().Data()) + oa.ByteOffset());
          b.bytes_len = ta.ByteLength();
          w->Hold(oa);
        } else {
          if (ta.ElementLength() != rows || (esize != 8 && esize != 1))
            ThrowArg(env, at + ".data must hold rows elements of 8 bytes (1 for bool)");
        }
        Napi::Value v = o.Get("valid");
        if (v.IsTypedArray()) {
          Napi::TypedArray va = v.As<Napi::TypedArray>();
          if (va.TypedArrayType() != napi_uint8_array || va.ElementLength() != rows)
            ThrowArg(env, at + ".valid must be a Uint8Array of rows entries");
          b.valid = static_cast<uint8_t*>(va.ArrayBuffer().Data()) + va.ByteOffset();
          w->Hold(va);
        }
        w->batches.push_back(b);
      }
    } catch (...) {
      delete w;
      throw;
    }
    return w->Start();
  });
}

}  // namespace tet::napi
