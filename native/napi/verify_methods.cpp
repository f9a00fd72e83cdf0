// File health: tile decode checks for `tet verify` and the footer repair of `tet repair`.
#include <memory>
#include <string>
#include <vector>

#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/promise_worker.h"
#include "tet/verify.h"

namespace tet::napi {
namespace {

class VerifyTilesWorker : public PromiseWorker {
 public:
  VerifyTilesWorker(Napi::Env env, std::shared_ptr<File> file, uint64_t first, uint64_t count)
      : PromiseWorker(env, "tetration:verifyTiles"), file_(std::move(file)), first_(first), count_(count) {}

 protected:
  void Run() override { findings_ = verify_tiles(*file_, first_, count_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, findings_.size());
    for (size_t i = 0; i < findings_.size(); ++i) {
      const VerifyFinding& f = findings_[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("severity", Napi::String::New(env, f.severity));
      o.Set("code", Napi::String::New(env, f.code));
      o.Set("recommendation", Napi::String::New(env, f.recommendation));
      o.Set("message", Napi::String::New(env, f.message));
      out.Set(static_cast<uint32_t>(i), o);
    }
    return out;
  }

 private:
  std::shared_ptr<File> file_;
  uint64_t first_, count_;
  std::vector<VerifyFinding> findings_;
};

class RepairFooterWorker : public PromiseWorker {
 public:
  RepairFooterWorker(Napi::Env env, std::string path)
      : PromiseWorker(env, "tetration:repairFooter"), path_(std::move(path)) {}

 protected:
  void Run() override { new_length_ = repair_footer(path_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object out = Napi::Object::New(env);
    out.Set("newLength", Napi::Number::New(env, static_cast<double>(new_length_)));
    return out;
  }

 private:
  std::string path_;
  uint64_t new_length_ = 0;
};

}  // namespace

Napi::Value VerifyTiles(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    uint64_t first = U64Arg(info, 1, "first");
    uint64_t count = U64Arg(info, 2, "count");
    return (new VerifyTilesWorker(env, std::move(file), first, count))->Start();
  });
}

Napi::Value RepairFooter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    return (new RepairFooterWorker(env, StringArg(info, 0, "path")))->Start();
  });
}

}  // namespace tet::napi
