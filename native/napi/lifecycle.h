// Per-environment lifecycle. Every in-flight query registers its cancel flag with the
// environment (main thread, a worker_thread, an Electron renderer) that started it; the
// environment's cleanup hook trips them all, so a terminated worker leaves no query running on
// the process-wide pool. Process-wide counters make that observable (engineStats()).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "tet/error.h"

namespace tet::napi {

using CancelFlagPtr = std::shared_ptr<std::atomic<bool>>;

// The queries of one environment. Shared by the addon instance, its cleanup hook and every
// worker it started, so it outlives whichever of them goes first.
class InFlight {
 public:
  void add(const CancelFlagPtr& flag);
  void remove(const CancelFlagPtr& flag);
  // Detached jobs (DetachedWorker) of this environment still running.
  void job_started();
  void job_finished();
  // Cleanup hook: trips every registered flag (later registrations are tripped at once), then
  // waits until every job of the environment has ended.
  void tear_down();

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  std::unordered_set<CancelFlagPtr> flags_;
  uint64_t jobs_ = 0;
  bool torn_down_ = false;
};

// Process-wide counters (all environments), for diagnostics and tests.
struct EngineStats {
  std::atomic<uint64_t> queries_running{0};
  std::atomic<uint64_t> queries_cancelled{0};   // runs that ended with TET_CANCELLED
  std::atomic<uint64_t> teardown_cancels{0};    // flags tripped by an environment's cleanup
};
EngineStats& engine_stats();

// Runs `body` (a query: execute, executePartial, a table query) counted process-wide: in
// queries_running while it runs, in queries_cancelled when it ends with TET_CANCELLED (then
// rethrown, as every other error).
template <class Body> void RunCountedQuery(Body&& body) {
  EngineStats& s = engine_stats();
  s.queries_running.fetch_add(1, std::memory_order_relaxed);
  struct Done {
    EngineStats& s;
    ~Done() { s.queries_running.fetch_sub(1, std::memory_order_relaxed); }
  } done{s};
  try {
    body();
  } catch (const tet::Error& e) {
    if (std::string(e.code()) == "TET_CANCELLED") s.queries_cancelled.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
}

// A query's registration for the duration of one worker: the flag is in the environment's set
// from construction (JS thread) to destruction.
class QueryRegistration {
 public:
  QueryRegistration(std::shared_ptr<InFlight> env, CancelFlagPtr flag);
  ~QueryRegistration();
  QueryRegistration(const QueryRegistration&) = delete;
  QueryRegistration& operator=(const QueryRegistration&) = delete;
  std::atomic<bool>* flag() const { return flag_.get(); }

 private:
  std::shared_ptr<InFlight> env_;
  CancelFlagPtr flag_;
};

}  // namespace tet::napi
