// Base for queries: Run() executes on a job thread of the addon's own (napi/job_threads.h: one
// per job running at once, kept for reuse; not libuv's pool) and Result() builds
// the JS value on the JS thread, reached through a thread-safe function; the returned Promise
// settles with it. Unlike napi_async_work, which an environment's teardown waits for before it
// runs any cleanup hook, a detached job can be cancelled by the environment's cleanup hook
// (InFlight::tear_down trips its cancel flag, then waits for it to end), so a terminated
// worker_thread leaves no query running. Failures reject with an Error carrying the tet::Error
// code (anything else: TET_INTERNAL); no exception escapes either thread.
#pragma once
#include "napi/napi_config.h"

#include <functional>
#include <memory>
#include <string>

#include "napi/job_outcome.h"
#include "napi/lifecycle.h"
#include "tet/error.h"

namespace tet::napi {

class DetachedWorker {
 public:
  DetachedWorker(Napi::Env env, const char* resource, std::shared_ptr<InFlight> inflight);
  virtual ~DetachedWorker() = default;
  DetachedWorker(const DetachedWorker&) = delete;
  DetachedWorker& operator=(const DetachedWorker&) = delete;

  // Starts the job; the worker owns itself from here (deleted once settled or abandoned).
  Napi::Promise Start();

 protected:
  virtual void Run() = 0;                          // job thread
  virtual Napi::Value Result(Napi::Env env) = 0;   // JS thread
  // JS thread, environment alive, after the Promise settled (or failed to start): drop the
  // Napi/napi references the worker holds. It is not called when the environment is gone and
  // the worker is deleted without it (on the job thread, or from a teardown-drained CallJs):
  // references must then be leaked, never deleted from the destructor.
  virtual void ReleaseJs(Napi::Env) {}
  // Work for the job thread after the result is on its way to the JS thread: none by default.
  // Taken from the worker just before posting (the worker itself may be gone when it runs, so it
  // must own what it uses); it runs before the job counts as finished.
  using AfterPosting = std::function<void()>;
  virtual AfterPosting after_posting() { return nullptr; }

 private:
  static void CallJs(napi_env env, napi_value js_cb, void* context, void* data);
  void Execute() noexcept;
  void Settle(Napi::Env env);

  napi_env env_;
  const char* resource_;
  std::shared_ptr<InFlight> inflight_;
  Napi::Promise::Deferred deferred_;
  napi_threadsafe_function tsfn_ = nullptr;
  JobOutcome outcome_;
};

}  // namespace tet::napi
