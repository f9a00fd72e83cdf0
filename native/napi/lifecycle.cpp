#include "napi/lifecycle.h"

namespace tet::napi {

void InFlight::add(const CancelFlagPtr& flag) {
  std::lock_guard<std::mutex> lock(mu_);
  if (torn_down_) {
    flag->store(true, std::memory_order_relaxed);
    engine_stats().teardown_cancels.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  flags_.insert(flag);
}

void InFlight::remove(const CancelFlagPtr& flag) {
  std::lock_guard<std::mutex> lock(mu_);
  flags_.erase(flag);
}

void InFlight::job_started() {
  std::lock_guard<std::mutex> lock(mu_);
  ++jobs_;
}

void InFlight::job_finished() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--jobs_ == 0) idle_.notify_all();
}

void InFlight::tear_down() {
  std::unique_lock<std::mutex> lock(mu_);
  torn_down_ = true;
  for (const CancelFlagPtr& f : flags_) {
    f->store(true, std::memory_order_relaxed);
    engine_stats().teardown_cancels.fetch_add(1, std::memory_order_relaxed);
  }
  flags_.clear();
  // The jobs see their flag at their next cancellation check; none may outlive the environment.
  idle_.wait(lock, [this] { return jobs_ == 0; });
}

EngineStats& engine_stats() {
  static EngineStats stats;  // process-wide by design (see native/README.md)
  return stats;
}

QueryRegistration::QueryRegistration(std::shared_ptr<InFlight> env, CancelFlagPtr flag)
    : env_(std::move(env)), flag_(flag ? std::move(flag) : std::make_shared<std::atomic<bool>>(false)) {
  if (env_) env_->add(flag_);
}

QueryRegistration::~QueryRegistration() {
  if (env_) env_->remove(flag_);
}

}  // namespace tet::napi
