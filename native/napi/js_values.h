// Conversions across the N-API boundary: tet::Error -> JS Error with `.code`, argument readers
// that validate before anything reaches the core, and builders for catalog / query results.
// Every array handed to JS is a fresh JS-owned ArrayBuffer (no external buffers into the mmap),
// or, for read(), the caller's own typed array that native filled in place.
#pragma once
#include "napi/napi_config.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tet/catalog.h"
#include "tet/error.h"
#include "tet/plan.h"

namespace tet::napi {

constexpr const char* kBadArgument = "TET_BINDING_BAD_ARGUMENT";

// A JS Error with `.code`, and `.detail` (an object of the fields present) when `detail` has any.
Napi::Error MakeError(Napi::Env env, const std::string& code, const std::string& message,
                      const ErrorDetail& detail = ErrorDetail());
[[noreturn]] void ThrowArg(Napi::Env env, const std::string& message);

// Runs `body` on the JS thread and turns every C++ exception into a thrown JS Error with a code
// (tet::Error keeps its code; anything else is TET_INTERNAL). Nothing escapes as a crash.
template <typename Body>
Napi::Value Guard(Napi::Env env, Body&& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const tet::Error& e) {
    throw MakeError(env, e.code(), e.what(), e.detail());
  } catch (const std::bad_alloc&) {
    throw MakeError(env, "TET_INTERNAL", "out of memory");
  } catch (const std::exception& e) {
    throw MakeError(env, "TET_INTERNAL", std::string("internal error: ") + e.what());
  } catch (...) {
    throw MakeError(env, "TET_INTERNAL", "internal error: unknown exception");
  }
}

// For calls that return a Promise: every failure, argument errors included, becomes a rejection
// (callers await; nothing throws synchronously).
template <typename Body>
Napi::Value GuardAsync(Napi::Env env, Body&& body) {
  try {
    return Guard(env, std::forward<Body>(body));
  } catch (const Napi::Error& e) {
    Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
    deferred.Reject(e.Value());
    return deferred.Promise();
  }
}

Napi::Value Arg(const Napi::CallbackInfo& info, size_t i, const char* what);
std::string StringArg(const Napi::CallbackInfo& info, size_t i, const char* what);
bool BoolArg(const Napi::CallbackInfo& info, size_t i, const char* what);
// A non-negative integer that a double holds exactly (<= 2^53).
uint64_t U64Of(Napi::Env env, const Napi::Value& v, const char* what);
uint64_t U64Arg(const Napi::CallbackInfo& info, size_t i, const char* what);
std::vector<uint64_t> U64ArrayOf(Napi::Env env, const Napi::Value& v, const char* what, size_t max_len);
// Copy of a Uint8Array's bytes (the caller may reuse or transfer its buffer afterwards).
std::vector<uint8_t> BytesArg(const Napi::CallbackInfo& info, size_t i, const char* what);

// The typed array a dataset's preview / read() output is (f16 widens to Float32Array).
struct PreviewType { napi_typedarray_type type; size_t elem; };
PreviewType PreviewTypeOf(DType dtype);

Napi::Value CatalogToJs(Napi::Env env, const Catalog& catalog);
Napi::Value QueryResultToJs(Napi::Env env, const QueryResult& result, DType dataset_dtype);

}  // namespace tet::napi
