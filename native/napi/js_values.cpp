#include "napi/js_values.h"

#include <cmath>
#include <cstring>

#include "tet/error.h"

namespace tet::napi {

Napi::Error MakeError(Napi::Env env, const std::string& code, const std::string& message,
                      const ErrorDetail& detail) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Value().Set("code", Napi::String::New(env, code));
  if (!detail.empty()) {
    Napi::Object d = Napi::Object::New(env);
    if (!detail.dataset.empty()) d.Set("dataset", Napi::String::New(env, detail.dataset));
    if (detail.chunk) {
      Napi::Array chunk = Napi::Array::New(env, detail.chunk->size());
      for (size_t a = 0; a < detail.chunk->size(); ++a)
        chunk.Set(static_cast<uint32_t>(a), Napi::Number::New(env, static_cast<double>((*detail.chunk)[a])));
      d.Set("chunk", chunk);
    }
    if (detail.shard) d.Set("shard", Napi::Number::New(env, static_cast<double>(*detail.shard)));
    if (detail.unit) d.Set("unit", Napi::Number::New(env, static_cast<double>(*detail.unit)));
    if (!detail.path.empty()) d.Set("path", Napi::String::New(env, detail.path));
    err.Value().Set("detail", d);
  }
  return err;
}

void ThrowArg(Napi::Env env, const std::string& message) {
  Napi::TypeError err = Napi::TypeError::New(env, message);
  err.Value().Set("code", Napi::String::New(env, kBadArgument));
  throw err;
}

Napi::Value Arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length()) ThrowArg(info.Env(), std::string("missing argument ") + what);
  return info[i];
}

std::string StringArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = Arg(info, i, what);
  if (!v.IsString()) ThrowArg(info.Env(), std::string(what) + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

bool BoolArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = Arg(info, i, what);
  if (!v.IsBoolean()) ThrowArg(info.Env(), std::string(what) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

uint64_t U64Of(Napi::Env env, const Napi::Value& v, const char* what) {
  constexpr double kMaxExact = 9007199254740992.0;  // 2^53
  if (!v.IsNumber()) ThrowArg(env, std::string(what) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > kMaxExact || std::floor(d) != d)
    ThrowArg(env, std::string(what) + " must be an integer in [0, 2^53], got " + std::to_string(d));
  return static_cast<uint64_t>(d);
}

uint64_t U64Arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return U64Of(info.Env(), Arg(info, i, what), what);
}

std::vector<uint64_t> U64ArrayOf(Napi::Env env, const Napi::Value& v, const char* what, size_t max_len) {
  if (!v.IsArray()) ThrowArg(env, std::string(what) + " must be an array of integers");
  Napi::Array arr = v.As<Napi::Array>();
  uint32_t n = arr.Length();
  if (n > max_len)
    ThrowArg(env, std::string(what) + " has " + std::to_string(n) + " entries; at most " +
                      std::to_string(max_len) + " allowed");
  std::vector<uint64_t> out(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = U64Of(env, arr.Get(i), what);
  return out;
}

std::vector<uint8_t> BytesArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = Arg(info, i, what);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowArg(info.Env(), std::string(what) + " must be a Uint8Array");
  Napi::Uint8Array bytes = v.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(bytes.Data(), bytes.Data() + bytes.ByteLength());
}

namespace {

Napi::Number Num(Napi::Env env, uint64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }

Napi::Array Axes(Napi::Env env, const std::array<uint64_t, 8>& a, uint32_t ndim) {
  Napi::Array out = Napi::Array::New(env, ndim);
  for (uint32_t i = 0; i < ndim; ++i) out.Set(i, Num(env, a[i]));
  return out;
}

// A fresh JS-owned typed array holding a copy of `len` elements of `elem` bytes each.
Napi::Value TypedCopy(Napi::Env env, napi_typedarray_type type, const uint8_t* src, size_t elem, size_t len) {
  Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, len * elem);
  if (len) std::memcpy(buffer.Data(), src, len * elem);
  napi_value out;
  napi_status status = napi_create_typedarray(env, type, len, buffer, 0, &out);
  NAPI_THROW_IF_FAILED(env, status, Napi::Value());
  return Napi::Value(env, out);
}

Napi::Value ValuesToJs(Napi::Env env, const ResultArray& values) {
  napi_typedarray_type type = napi_float64_array;
  size_t elem = 8;
  switch (values.kind) {
    case ValueKind::F64: type = napi_float64_array; break;
    case ValueKind::I64: type = napi_bigint64_array; break;
    case ValueKind::U64: type = napi_biguint64_array; break;
    case ValueKind::Bool: type = napi_uint8_array; elem = 1; break;
  }
  if (values.bytes.size() / elem < values.length)
    fail("TET_INTERNAL", "result holds " + std::to_string(values.bytes.size()) + " bytes for " +
                             std::to_string(values.length) + " values");
  return TypedCopy(env, type, values.bytes.data(), elem, values.length);
}

}  // namespace

PreviewType PreviewTypeOf(DType dtype) {
  switch (dtype) {
    case DType::F32: case DType::F16: return {napi_float32_array, 4};  // f16 previews are widened
    case DType::F64: return {napi_float64_array, 8};
    case DType::I32: return {napi_int32_array, 4};
    case DType::I64: return {napi_bigint64_array, 8};
    case DType::U8: return {napi_uint8_array, 1};
    case DType::U16: return {napi_uint16_array, 2};
    case DType::I16: return {napi_int16_array, 2};
    case DType::U32: return {napi_uint32_array, 4};
    case DType::U64: return {napi_biguint64_array, 8};
  }
  return {napi_uint8_array, 1};
}

Napi::Value CatalogToJs(Napi::Env env, const Catalog& c) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("fileLen", Num(env, c.file_len));
  out.Set("flags", Num(env, c.flags));
  out.Set("chunkIndexOffset", Num(env, c.chunk_index_offset));
  out.Set("chunkIndexLength", Num(env, c.chunk_index_length));
  Napi::Object exec = Napi::Object::New(env);
  exec.Set("memoryBudgetPercentBps", Num(env, c.execution.memory_budget_percent_bps));
  exec.Set("memoryBudgetBytes", Num(env, c.execution.memory_budget_bytes));
  out.Set("execution", exec);
  Napi::Array datasets = Napi::Array::New(env, c.datasets.size());
  for (size_t i = 0; i < c.datasets.size(); ++i) {
    const DatasetInfo& d = c.datasets[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", Napi::String::New(env, d.name));
    o.Set("dtype", Num(env, static_cast<uint32_t>(d.dtype)));
    o.Set("ndim", Num(env, d.ndim));
    o.Set("shape", Axes(env, d.shape, d.ndim));
    o.Set("chunkShape", Axes(env, d.chunk_shape, d.ndim));
    o.Set("grid", Axes(env, d.grid, d.ndim));
    o.Set("chunkCount", Num(env, d.chunk_count));
    o.Set("elementCount", Num(env, d.element_count));
    o.Set("logicalBytes", Num(env, d.logical_bytes));
    o.Set("storedBytes", Num(env, d.stored_bytes));
    o.Set("rawChunks", Num(env, d.raw_chunks));
    o.Set("zstdChunks", Num(env, d.zstd_chunks));
    datasets.Set(static_cast<uint32_t>(i), o);
  }
  out.Set("datasets", datasets);
  Napi::Object footer = Napi::Object::New(env);
  footer.Set("present", Napi::Boolean::New(env, c.footer.present));
  footer.Set("historyJson", Napi::String::New(env, c.footer.history_json));
  footer.Set("metadataJson", Napi::String::New(env, c.footer.metadata_json));
  footer.Set("metadataSpilled", Napi::Boolean::New(env, c.footer.metadata_spilled));
  footer.Set("payloadLimit", Num(env, c.footer.payload_limit));
  out.Set("footer", footer);
  return out;
}

Napi::Value QueryResultToJs(Napi::Env env, const QueryResult& r, DType dataset_dtype) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Array shape = Napi::Array::New(env, r.reduced_shape.size());
  for (size_t i = 0; i < r.reduced_shape.size(); ++i) shape.Set(static_cast<uint32_t>(i), Num(env, r.reduced_shape[i]));
  out.Set("reducedShape", shape);
  out.Set("values", ValuesToJs(env, r.values));
  Napi::Array more = Napi::Array::New(env, r.more_values.size());
  for (size_t i = 0; i < r.more_values.size(); ++i) more.Set(static_cast<uint32_t>(i), ValuesToJs(env, r.more_values[i]));
  out.Set("moreValues", more);
  out.Set("histEdges", TypedCopy(env, napi_float64_array, reinterpret_cast<const uint8_t*>(r.hist_edges.data()),
                                 8, r.hist_edges.size()));
  out.Set("covOrder", Num(env, r.cov_order));
  PreviewType pt = PreviewTypeOf(dataset_dtype);
  if (r.preview.size() / pt.elem < r.preview_length)
    fail("TET_INTERNAL", "preview holds " + std::to_string(r.preview.size()) + " bytes for " +
                             std::to_string(r.preview_length) + " elements");
  out.Set("preview", TypedCopy(env, pt.type, r.preview.data(), pt.elem, r.preview_length));
  Napi::Object stats = Napi::Object::New(env);
  stats.Set("strategy", Num(env, static_cast<uint32_t>(r.stats.strategy)));
  stats.Set("ioMode", Num(env, static_cast<uint32_t>(r.stats.io_mode)));
  stats.Set("readByPread", Napi::Boolean::New(env, r.stats.read_pread));
  stats.Set("threadsUsed", Num(env, r.stats.threads_used));
  stats.Set("simd", Napi::String::New(env, r.stats.simd ? r.stats.simd : "scalar"));
  stats.Set("chunksRead", Num(env, r.stats.chunks_read));
  stats.Set("storedBytesRead", Num(env, r.stats.stored_bytes_read));
  stats.Set("spillBytes", Num(env, r.stats.spill_bytes));
  stats.Set("seconds", Napi::Number::New(env, r.stats.seconds));
  stats.Set("deviceUsed", Napi::String::New(env, r.stats.device_used));
  if (!r.stats.device_fallback_reason.empty()) {
    stats.Set("deviceFallbackReason", Napi::String::New(env, r.stats.device_fallback_reason));
    stats.Set("deviceError", Napi::String::New(env, r.stats.device_error));
  }
  stats.Set("deviceGpuPipeline", Napi::Boolean::New(env, r.stats.device_gpu_pipeline));
  stats.Set("deviceGpuMulti", Napi::Boolean::New(env, r.stats.device_gpu_multi));
  out.Set("stats", stats);
  return out;
}

}  // namespace tet::napi
