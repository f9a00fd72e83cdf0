// How a job's outcome becomes a settled Promise, shared by PromiseWorker (libuv pool) and
// DetachedWorker (own thread): run() captures any failure as a code + message (+ detail) on the
// job thread; settle() resolves with the result or rejects with a coded Error on the JS thread.
#pragma once
#include "napi/napi_config.h"

#include <new>
#include <string>

#include "napi/js_values.h"
#include "tet/error.h"

namespace tet::napi {

class JobOutcome {
 public:
  template <class Fn>
  void run(Fn&& fn) noexcept {
    try {
      fn();
    } catch (const tet::Error& e) {
      fail(e.code(), e.what(), e.detail());
    } catch (const std::bad_alloc&) {
      fail("TET_INTERNAL", "out of memory");
    } catch (const std::exception& e) {
      fail("TET_INTERNAL", std::string("internal error: ") + e.what());
    } catch (...) {
      fail("TET_INTERNAL", "internal error: unknown exception");
    }
  }

  template <class ResultFn>
  void settle(Napi::Env env, Napi::Promise::Deferred& deferred, ResultFn&& result) {
    if (failed_) {
      deferred.Reject(MakeError(env, code_, message_, detail_).Value());
      return;
    }
    try {
      deferred.Resolve(result(env));
    } catch (const Napi::Error& e) {
      deferred.Reject(e.Value());
    } catch (const tet::Error& e) {
      deferred.Reject(MakeError(env, e.code(), e.what(), e.detail()).Value());
    } catch (const std::exception& e) {
      deferred.Reject(MakeError(env, "TET_INTERNAL", std::string("internal error: ") + e.what()).Value());
    } catch (...) {
      deferred.Reject(MakeError(env, "TET_INTERNAL", "internal error: unknown exception").Value());
    }
  }

 private:
  void fail(const std::string& code, const std::string& message, const ErrorDetail& detail = ErrorDetail()) {
    failed_ = true;
    code_ = code;
    message_ = message;
    detail_ = detail;
  }

  bool failed_ = false;
  std::string code_, message_;
  ErrorDetail detail_;
};

}  // namespace tet::napi
