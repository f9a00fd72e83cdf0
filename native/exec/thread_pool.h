// The process-wide worker pool (one per process, created on first use, sized to the cores).
// parallel_for is safe from any number of threads at once (Node main thread, worker_threads,
// libuv pool) and may nest: the calling thread always works on its own job, so a job finishes
// even when every worker is busy elsewhere.
#pragma once
#include <cstdint>
#include <functional>

namespace tet {
namespace exec {

class ThreadPool {
 public:
  static ThreadPool& instance();
  uint32_t size() const;  // worker threads + the caller = cores

  // Runs fn(item, slot) for item in [0, items) on at most max_threads threads (0 = all).
  // slot in [0, participants) is unique among threads running concurrently for this call, so
  // callers can index per-thread scratch by it. The first exception thrown is rethrown here
  // after every started item has finished; remaining items are skipped.
  void parallel_for(uint64_t items, uint32_t max_threads,
                    const std::function<void(uint64_t item, uint32_t slot)>& fn);
  // How many participants (slots) parallel_for(items, max_threads) may use.
  uint32_t participants(uint64_t items, uint32_t max_threads) const;

 private:
  ThreadPool();
  ~ThreadPool();
  struct Impl;
  Impl* impl_;
};

}  // namespace exec
}  // namespace tet
