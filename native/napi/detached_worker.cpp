#include "napi/detached_worker.h"

#include "napi/job_threads.h"
#include "napi/js_values.h"

namespace tet::napi {

DetachedWorker::DetachedWorker(Napi::Env env, const char* resource, std::shared_ptr<InFlight> inflight)
    : env_(env), resource_(resource), inflight_(std::move(inflight)), deferred_(Napi::Promise::Deferred::New(env)) {}

Napi::Promise DetachedWorker::Start() {
  Napi::Env env(env_);
  Napi::Promise promise = deferred_.Promise();
  napi_value name = Napi::String::New(env, resource_);
  napi_status st = napi_create_threadsafe_function(env_, nullptr, nullptr, name, 0, 1, nullptr, nullptr, this,
                                                   &DetachedWorker::CallJs, &tsfn_);
  if (st != napi_ok) {
    deferred_.Reject(MakeError(env, "TET_INTERNAL", "cannot create a thread-safe function for a query").Value());
    ReleaseJs(env);
    delete this;
    return promise;
  }
  std::shared_ptr<InFlight> inflight = inflight_;
  if (inflight) inflight->job_started();
  try {
    RunOnJobThread([this, inflight]() {
      Execute();
      napi_threadsafe_function tsfn = tsfn_;
      const AfterPosting after = after_posting();
      // From here `this` belongs to the JS thread (CallJs deletes it) unless the environment
      // is already gone, in which case nobody else will.
      if (napi_call_threadsafe_function(tsfn, this, napi_tsfn_nonblocking) != napi_ok) delete this;
      napi_release_threadsafe_function(tsfn, napi_tsfn_release);
      if (after) {
        try {
          after();  // best effort: a failure here (no thread could start) is the next query's to report
        } catch (...) {
        }
      }
      if (inflight) inflight->job_finished();
    });
  } catch (...) {
    if (inflight) inflight->job_finished();
    napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
    deferred_.Reject(MakeError(env, "TET_INTERNAL", "cannot start a query thread").Value());
    ReleaseJs(env);
    delete this;
  }
  return promise;
}

void DetachedWorker::CallJs(napi_env env, napi_value, void*, void* data) {
  auto* self = static_cast<DetachedWorker*>(data);
  if (env != nullptr) {
    try {
      Napi::HandleScope scope(env);
      self->Settle(Napi::Env(env));
    } catch (...) {
      // Only reachable while the environment is being torn down: no JS left to deliver to.
    }
    try {
      self->ReleaseJs(Napi::Env(env));
    } catch (...) {
    }
  }
  delete self;
}

void DetachedWorker::Execute() noexcept { outcome_.run([this] { Run(); }); }

void DetachedWorker::Settle(Napi::Env env) {
  outcome_.settle(env, deferred_, [this](Napi::Env e) { return Result(e); });
}

}  // namespace tet::napi
