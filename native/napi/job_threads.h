// Long-lived threads for the addon's detached jobs (DetachedWorker: open, execute, ...). A job
// goes to an idle thread when there is one and starts a new thread otherwise, so jobs never wait
// for each other (a long query does not hold up an open() issued beside it), and a process that
// answers many small queries does not create and tear down a thread for each (~0.1-0.3 ms on
// the shared 2-core VMs). Threads idle for kIdleSeconds end. Process-wide, shared by every
// environment (main thread, worker_threads); no Node headers.
#pragma once
#include <cstdint>
#include <functional>

namespace tet::napi {

// Runs `job` on a job thread. Throws (std::system_error, std::bad_alloc) only when no thread can
// be started for it, and then `job` is not run.
void RunOnJobThread(std::function<void()> job);

// Job threads now waiting for a job (diagnostics and tests).
uint32_t IdleJobThreads();

}  // namespace tet::napi
