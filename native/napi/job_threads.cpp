#include "napi/job_threads.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace tet::napi {
namespace {

constexpr int kIdleSeconds = 10;

struct JobThreads {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  uint32_t idle = 0;  // threads waiting for a job

  void loop() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      ++idle;
      const bool got = cv.wait_for(lk, std::chrono::seconds(kIdleSeconds), [&] { return !jobs.empty(); });
      --idle;
      if (!got) return;  // idle too long: this thread ends
      std::function<void()> job = std::move(jobs.front());
      jobs.pop_front();
      lk.unlock();
      try {
        job();  // jobs catch their own exceptions (DetachedWorker: JobOutcome); nothing may end the process
      } catch (...) {
      }
      job = nullptr;  // destroyed before the lock is taken again
      lk.lock();
    }
  }
};

// Never destroyed: detached threads may still wait on it while the process exits.
JobThreads& threads() {
  static JobThreads* t = new JobThreads();
  return *t;
}

}  // namespace

void RunOnJobThread(std::function<void()> job) {
  JobThreads& t = threads();
  std::unique_lock<std::mutex> lk(t.mu);
  t.jobs.push_back(std::move(job));
  // Every idle thread already woken may take one job: start a thread when jobs outnumber them.
  if (t.jobs.size() <= t.idle) {
    lk.unlock();
    t.cv.notify_one();
    return;
  }
  try {
    std::thread([&t] { t.loop(); }).detach();
  } catch (...) {
    t.jobs.pop_back();  // ours: the lock is still held
    throw;
  }
}

uint32_t IdleJobThreads() {
  JobThreads& t = threads();
  std::lock_guard<std::mutex> g(t.mu);
  return t.idle;
}

}  // namespace tet::napi
