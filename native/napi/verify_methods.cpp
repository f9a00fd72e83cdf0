// File health: the tile and tables checks of `tet verify` and the repairs of `tet repair`. They run
// on the addon's job threads (napi/job_threads.h), as open() does: `tet info` verifies the file it
// shows, and a first use of libuv's pool would start its four threads on the JS thread first.
#include <memory>
#include <string>
#include <vector>

#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/detached_worker.h"
#include "tet/verify.h"

namespace tet::napi {
namespace {

Napi::Value FindingsToJs(Napi::Env env, const std::vector<VerifyFinding>& findings) {
  Napi::Array out = Napi::Array::New(env, findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    const VerifyFinding& f = findings[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("severity", Napi::String::New(env, f.severity));
    o.Set("code", Napi::String::New(env, f.code));
    o.Set("recommendation", Napi::String::New(env, f.recommendation));
    o.Set("message", Napi::String::New(env, f.message));
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

// One job for both checks (one round trip to the job thread: `tet info` waits for it): the tiles
// [first, first + count), then the tables region; a throw of the first skips the second.
class VerifyWorker : public DetachedWorker {
 public:
  VerifyWorker(Napi::Env env, std::shared_ptr<File> file, uint64_t first, uint64_t count, bool deep)
      : DetachedWorker(env, "tetration:verify", EnvInFlight(env)), file_(std::move(file)), first_(first), count_(count), deep_(deep) {}

 protected:
  void Run() override {
    findings_ = verify_tiles(*file_, first_, count_);
    std::vector<VerifyFinding> tables = verify_tables(*file_, deep_);
    findings_.insert(findings_.end(), tables.begin(), tables.end());
  }
  Napi::Value Result(Napi::Env env) override { return FindingsToJs(env, findings_); }

 private:
  std::shared_ptr<File> file_;
  uint64_t first_, count_;
  bool deep_;
  std::vector<VerifyFinding> findings_;
};

class RepairFooterWorker : public DetachedWorker {
 public:
  RepairFooterWorker(Napi::Env env, std::string path, bool cells)
      : DetachedWorker(env, "tetration:repair", EnvInFlight(env)), path_(std::move(path)), cells_(cells) {}

 protected:
  void Run() override { new_length_ = cells_ ? repair_cells(path_) : repair_footer(path_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object out = Napi::Object::New(env);
    out.Set("newLength", Napi::Number::New(env, static_cast<double>(new_length_)));
    return out;
  }

 private:
  std::string path_;
  bool cells_;
  uint64_t new_length_ = 0;
};

}  // namespace

Napi::Value Verify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    uint64_t first = U64Arg(info, 1, "first");
    uint64_t count = U64Arg(info, 2, "count");
    return (new VerifyWorker(env, std::move(file), first, count, BoolArg(info, 3, "deep")))->Start();
  });
}

Napi::Value RepairFooter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    return (new RepairFooterWorker(env, StringArg(info, 0, "path"), false))->Start();
  });
}

Napi::Value RepairCells(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    return (new RepairFooterWorker(env, StringArg(info, 0, "path"), true))->Start();
  });
}

}  // namespace tet::napi
