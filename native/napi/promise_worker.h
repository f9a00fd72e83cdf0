// Base for every call that does I/O or heavy work: Run() executes on a libuv pool thread,
// Result() builds the JS value on the JS thread, and the returned Promise settles with it.
// Failures reject with an Error carrying the tet::Error code (anything else: TET_INTERNAL);
// no exception escapes either thread.
#pragma once
#include "napi/napi_config.h"

#include <string>

#include "napi/job_outcome.h"
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
  void Execute() final { outcome_.run([this] { Run(); }); }

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
    outcome_.settle(env, deferred_, [this](Napi::Env e) { return Result(e); });
  }

  void OnError(const Napi::Error& e) final {
    try {
      deferred_.Reject(e.Value());
    } catch (...) {
    }
  }

  Napi::Promise::Deferred deferred_;
  JobOutcome outcome_;
};

}  // namespace tet::napi
