// The addon's job threads (native/napi/job_threads.h; plain C++, compiled into this test): jobs
// never wait for each other, an idle thread is reused, every job runs exactly once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "check.h"
#include "napi/job_threads.h"

using tet::napi::IdleJobThreads;
using tet::napi::RunOnJobThread;
using namespace std::chrono_literals;

namespace {

// A count that jobs raise and the test waits on (with a deadline, so a failure ends the test).
struct Counter {
  std::mutex mu;
  std::condition_variable cv;
  int n = 0;
  void add() {
    std::lock_guard<std::mutex> g(mu);
    ++n;
    cv.notify_all();
  }
  bool wait_for(int want, std::chrono::milliseconds limit = 10000ms) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, limit, [&] { return n >= want; });
  }
};

bool wait_idle(uint32_t want) {
  for (int i = 0; i < 10000; ++i) {
    if (IdleJobThreads() >= want) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

}  // namespace

// First: it counts the threads this process's jobs ran on, from none.
TEST_CASE("sequential jobs reuse the idle thread: one thread for all of them") {
  std::atomic<int> next_serial{0};
  std::mutex mu;
  std::set<int> serials;  // one per thread (a thread id may be reused once its thread ends)
  auto job = [&](Counter& done) {
    return [&] {
      thread_local int serial = next_serial.fetch_add(1);
      {
        std::lock_guard<std::mutex> g(mu);
        serials.insert(serial);
      }
      done.add();
    };
  };
  for (int i = 0; i < 20; ++i) {
    Counter done;
    RunOnJobThread(job(done));
    CHECK(done.wait_for(1));
    CHECK(wait_idle(1));  // the thread is back to waiting before the next job
  }
  CHECK(serials.size() == 1u);
  CHECK(IdleJobThreads() == 1u);
}

TEST_CASE("a job submitted while another runs does not wait for it") {
  Counter second_ran, first_done;
  RunOnJobThread([&] {
    // Ends only once the second job has run: on a queue behind this one, it never would.
    CHECK(second_ran.wait_for(1));
    first_done.add();
  });
  RunOnJobThread([&] { second_ran.add(); });
  CHECK(first_done.wait_for(1));
}

TEST_CASE("32 jobs that each wait for all the others all run at once") {
  constexpr int kJobs = 32;
  Counter started, done;
  for (int i = 0; i < kJobs; ++i) {
    RunOnJobThread([&] {
      started.add();
      CHECK(started.wait_for(kJobs));
      done.add();
    });
  }
  CHECK(done.wait_for(kJobs));
}

TEST_CASE("many short jobs from several submitters each run exactly once") {
  constexpr int kSubmitters = 4, kEach = 500;
  std::atomic<int> ran{0};
  Counter done;
  std::vector<std::thread> submitters;
  for (int s = 0; s < kSubmitters; ++s) {
    submitters.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) RunOnJobThread([&] { ran.fetch_add(1); done.add(); });
    });
  }
  for (auto& t : submitters) t.join();
  CHECK(done.wait_for(kSubmitters * kEach));
  std::this_thread::sleep_for(20ms);
  CHECK(ran.load() == kSubmitters * kEach);
}

TEST_MAIN()
