// Base for every call that does I/O or heavy work: Run() executes on a libuv pool thread,
// Result() builds the JS value on the JS thread, and the returned Promise settles with it.
// Failures reject with an Error carrying the tet::Error code (anything else: TET_INTERNAL);
// no exception escapes either thread.
#pragma once
#include "napi/napi_config.h"

#include <string>

#include "napi/js_values.h"
#include "tet/error.h"

namespace tet::napi {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* resource)
      : Napi::AsyncWorker(env, resource), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Start() {
    Queue();
    return deferred_.Promise();
  }

 protected:
  virtual void Run() = 0;                          // pool thread
  virtual Napi::Value Result(Napi::Env env) = 0;   // JS thread

 private:
  void Execute() final {
    try {
      Run();
    } catch (const tet::Error& e) {
      Fail(e.code(), e.what(), e.detail());
    } catch (const std::bad_alloc&) {
      Fail("TET_INTERNAL", "out of memory");
    } catch (const std::exception& e) {
      Fail("TET_INTERNAL", std::string("internal error: ") + e.what());
    } catch (...) {
      Fail("TET_INTERNAL", "internal error: unknown exception");
    }
  }

  void OnOK() final {
    try {
      Settle();
    } catch (...) {
      // Only reachable while the environment is being torn down (worker terminated): there is
      // no JS left to deliver the result to.
    }
  }

  void Settle() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (failed_) {
      deferred_.Reject(MakeError(env, code_, message_, detail_).Value());
      return;
    }
    try {
      deferred_.Resolve(Result(env));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    } catch (const tet::Error& e) {
      deferred_.Reject(MakeError(env, e.code(), e.what(), e.detail()).Value());
    } catch (const std::exception& e) {
      deferred_.Reject(MakeError(env, "TET_INTERNAL", std::string("internal error: ") + e.what()).Value());
    } catch (...) {
      deferred_.Reject(MakeError(env, "TET_INTERNAL", "internal error: unknown exception").Value());
    }
  }

  void OnError(const Napi::Error& e) final {
    try {
      deferred_.Reject(e.Value());
    } catch (...) {
    }
  }

  void Fail(const std::string& code, const std::string& message, const ErrorDetail& detail = ErrorDetail()) {
    failed_ = true;
    code_ = code;
    message_ = message;
    detail_ = detail;
  }

  Napi::Promise::Deferred deferred_;
  bool failed_ = false;
  std::string code_, message_;
  ErrorDetail detail_;
};

}  // namespace tet::napi
