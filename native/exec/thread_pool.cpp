#include "exec/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tet {
namespace exec {

namespace {
struct Job {
  const std::function<void(uint64_t, uint32_t)>* fn = nullptr;
  uint64_t items = 0;
  uint32_t max_helpers = 0;
  std::atomic<uint64_t> next{0};
  std::atomic<uint32_t> slots{1};  // slot 0 is the caller
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  uint32_t helpers_joined = 0;  // guarded by the pool mutex
  std::atomic<uint32_t> helpers_active{0};  // incremented under the pool mutex
  std::exception_ptr error;     // guarded by mu

  void work(uint32_t slot) {
    for (;;) {
      const uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= items) return;
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        (*fn)(i, slot);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (!error) error = std::current_exception();
        failed.store(true);
      }
    }
  }
};
}  // namespace

struct ThreadPool::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Job>> jobs;  // jobs that still accept helpers
  std::vector<std::thread> threads;
  bool stop = false;

  void worker() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return stop || !jobs.empty(); });
      if (stop) return;
      std::shared_ptr<Job> job = jobs.front();
      if (++job->helpers_joined >= job->max_helpers) jobs.pop_front();
      // Counted while the job is still queued: the caller removes it under this mutex before
      // waiting, so it never misses a helper that is about to run its function.
      job->helpers_active.fetch_add(1);
      lk.unlock();
      job->work(job->slots.fetch_add(1));
      {
        std::lock_guard<std::mutex> g(job->mu);
        if (job->helpers_active.fetch_sub(1) == 1) job->cv.notify_all();
      }
      lk.lock();
    }
  }
};

ThreadPool& ThreadPool::instance() {
  static ThreadPool* pool = new ThreadPool();  // never destroyed: workers may outlive statics
  return *pool;
}

ThreadPool::ThreadPool() : impl_(new Impl) {
  const unsigned hc = std::thread::hardware_concurrency();
  const unsigned workers = hc > 1 ? hc - 1 : 0;
  for (unsigned i = 0; i < workers; ++i) impl_->threads.emplace_back([this] { impl_->worker(); });
  for (auto& t : impl_->threads) t.detach();
}

ThreadPool::~ThreadPool() = default;

uint32_t ThreadPool::size() const { return static_cast<uint32_t>(impl_->threads.size()) + 1; }

uint32_t ThreadPool::participants(uint64_t items, uint32_t max_threads) const {
  uint64_t p = max_threads == 0 ? size() : std::min<uint32_t>(max_threads, size());
  p = std::min<uint64_t>(p, items);
  return p == 0 ? 1 : static_cast<uint32_t>(p);
}

void ThreadPool::parallel_for(uint64_t items, uint32_t max_threads,
                              const std::function<void(uint64_t, uint32_t)>& fn) {
  if (items == 0) return;
  const uint32_t parts = participants(items, max_threads);
  if (parts <= 1) {
    for (uint64_t i = 0; i < items; ++i) fn(i, 0);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->items = items;
  job->max_helpers = parts - 1;
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->jobs.push_back(job);
  }
  if (parts - 1 >= impl_->threads.size()) impl_->cv.notify_all();
  else for (uint32_t i = 0; i + 1 < parts; ++i) impl_->cv.notify_one();
  job->work(0);
  {
    // No new helper may join once the items are exhausted: drop the job from the queue.
    std::lock_guard<std::mutex> g(impl_->mu);
    auto it = std::find(impl_->jobs.begin(), impl_->jobs.end(), job);
    if (it != impl_->jobs.end()) impl_->jobs.erase(it);
  }
  std::unique_lock<std::mutex> lk(job->mu);
  job->cv.wait(lk, [&] { return job->helpers_active == 0; });
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace exec
}  // namespace tet
