// Reading: open/close, catalog, execute a compiled plan, cancellation and progress, host facts.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "napi/detached_worker.h"
#include "napi/handles.h"
#include "napi/js_values.h"
#include "napi/methods.h"
#include "napi/promise_worker.h"
#include "tet/device.h"
#include "tet/file.h"
#include "tet/host.h"
#include "tet/plan.h"
#include "tet/query.h"
#include "tet/shard.h"

namespace tet::napi {
namespace {

// On the addon's job threads (DetachedWorker), not libuv's pool: a process's first use of that pool
// starts all of its threads (four by default) one after another while the JS thread waits, ~1 ms
// of a fresh process's first open() on a 2-core machine. Once the answer is posted, the core's pool
// threads are started there too (after_posting), off the JS thread, while the caller plans its first query.
class OpenWorker : public DetachedWorker {
 public:
  OpenWorker(Napi::Env env, std::string path, OpenOptions opts)
      : DetachedWorker(env, "tetration:open", EnvInFlight(env)), path_(std::move(path)), opts_(opts) {}

 protected:
  void Run() override { file_ = File::open(path_, opts_); }
  AfterPosting after_posting() override { return &start_workers; }
  Napi::Value Result(Napi::Env env) override { return WrapFile(env, std::move(file_)); }

 private:
  std::string path_;
  OpenOptions opts_;
  std::shared_ptr<File> file_;
};

// The caller's typed array: read()'s selection, or a partial reduction's values, written in place.
struct OutputArg {
  napi_ref ref = nullptr;  // keeps the array (and its ArrayBuffer) alive while the job runs
  napi_typedarray_type type = napi_uint8_array;
  uint8_t* data = nullptr;
  uint64_t bytes = 0;
};

class ExecuteWorker : public DetachedWorker {
 public:
  ExecuteWorker(Napi::Env env, std::shared_ptr<File> file, std::vector<uint8_t> plan, CancelFlag cancel,
                ProgressRef progress, OutputArg output = OutputArg())
      : DetachedWorker(env, "tetration:execute", EnvInFlight(env)), file_(std::move(file)),
        plan_bytes_(std::move(plan)), registration_(EnvInFlight(env), std::move(cancel)),
        progress_(std::move(progress)), output_(output) {}
  // No napi_delete_reference here: this destructor runs on the job thread when the environment
  // is already gone (DetachedWorker::Start), where N-API must not be called. ReleaseJs drops
  // the reference on the JS thread whenever the environment is alive; otherwise it is leaked
  // with the environment that owned it. The array's memory itself outlives every write: an
  // environment's teardown waits for this job (InFlight::tear_down) before its heap goes.
  ~ExecuteWorker() override = default;

 protected:
  void Run() override { RunCountedQuery([this] { RunQuery(); }); }

  void RunQuery() {
    const Catalog& catalog = file_->catalog();
    QueryPlan plan = decode_plan(plan_bytes_.data(), plan_bytes_.size(), catalog);
    dtype_ = catalog.datasets.at(plan.dataset_id).dtype;
    ExecContext ctx;
    ctx.cancel = registration_.flag();
    ctx.progress = progress_.get();
    reduction_ = plan.op != Op::None;
    if (output_.ref != nullptr) {
      // A read's output is the dataset's preview type (f16 as stored bits: Uint16Array). A
      // reduction's is checked by the engine (which plans may take one, its byte length, before
      // reading a tile) and its exact type against the values' kind once they are known, below.
      const napi_typedarray_type want = dtype_ == DType::F16 && plan.f16_raw ? napi_uint16_array : PreviewTypeOf(dtype_).type;
      if (!reduction_ && output_.type != want)
        fail(kBadArgument, std::string("output is the wrong typed array for a ") + dtype_name(dtype_) + " dataset");
      ctx.has_output = true;
      ctx.output = output_.data;
      ctx.output_bytes = output_.bytes;
    }
    file_->check_unchanged();  // a truncated file would fault the mapping
    result_ = execute(*file_, plan, ctx);
    if (output_.ref != nullptr && reduction_) {
      const ValueKind k = result_.values.kind;
      const napi_typedarray_type want = k == ValueKind::I64 ? napi_bigint64_array
                                        : k == ValueKind::U64 ? napi_biguint64_array : napi_float64_array;
      if (output_.type != want) fail(kBadArgument, "output is the wrong typed array for this reduction's values");
    }
    // A truncation during execute reads zero pages instead of faulting (format/mapping_guard):
    // this check turns it into TET_IO_FILE_CHANGED and discards the result.
    file_->check_unchanged();
  }
  Napi::Value Result(Napi::Env env) override {
    if (output_.ref == nullptr) return QueryResultToJs(env, result_, dtype_);
    // Written in place by the pool threads: resolve with the caller's own array, no copy (a
    // reduction: the usual result object, its values being that array).
    napi_value out;
    NAPI_THROW_IF_FAILED(env, napi_get_reference_value(env, output_.ref, &out), Napi::Value());
    if (!reduction_) return Napi::Value(env, out);
    result_.values.length = 0;
    Napi::Object obj = QueryResultToJs(env, result_, dtype_).As<Napi::Object>();
    obj.Set("values", Napi::Value(env, out));
    return obj;
  }
  void ReleaseJs(Napi::Env env) override {
    if (output_.ref != nullptr) napi_delete_reference(env, output_.ref);
    output_.ref = nullptr;
  }
  // A scan that read by pread left its bytes unmapped: map them in now, off the answer's path, so
  // the next scan of them reads a warm mapping instead of faulting (ExecStats::pread_spans).
  AfterPosting after_posting() override {
    if (result_.stats.pread_spans.empty()) return nullptr;
    return [file = file_, spans = std::move(result_.stats.pread_spans)] {
      for (const auto& s : spans) file->populate(s.first, s.second);
    };
  }

 private:
  std::shared_ptr<File> file_;  // keeps the mapping alive even if closeFile() runs meanwhile
  std::vector<uint8_t> plan_bytes_;
  QueryRegistration registration_;  // the cancel flag, registered with the environment
  ProgressRef progress_;            // the token's counters (null without a token)
  OutputArg output_;
  DType dtype_ = DType::F32;
  bool reduction_ = false;
  QueryResult result_;
};

class ExecutePartialWorker : public DetachedWorker {
 public:
  ExecutePartialWorker(Napi::Env env, std::shared_ptr<File> file, std::vector<uint8_t> plan, PartialRequest req,
                       CancelFlag cancel, ProgressRef progress)
      : DetachedWorker(env, "tetration:executePartial", EnvInFlight(env)), file_(std::move(file)),
        plan_bytes_(std::move(plan)), req_(std::move(req)), registration_(EnvInFlight(env), std::move(cancel)),
        progress_(std::move(progress)) {}

 protected:
  void Run() override { RunCountedQuery([this] { RunPartial(); }); }
  void RunPartial() {
    QueryPlan plan = decode_plan(plan_bytes_.data(), plan_bytes_.size(), file_->catalog());
    file_->check_unchanged();
    // Which shard, and the round request, travel in the plan's SHARD section (form 2).
    if (plan.shard.count == 0)
      fail("TET_SHARD_MISMATCH", "the plan names no shard: its SHARD section must carry (shard index, shard count)");
    req_.shard = plan.shard.index, req_.shards = plan.shard.count, req_.round = std::move(plan.shard.round);
    plan.shard = ShardRange{};
    ExecContext ctx;
    ctx.cancel = registration_.flag();
    ctx.progress = progress_.get();
    bytes_ = execute_partial(*file_, plan, req_, ctx);
    file_->check_unchanged();
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Uint8Array out = Napi::Uint8Array::New(env, bytes_.size());
    if (!bytes_.empty()) std::memcpy(out.Data(), bytes_.data(), bytes_.size());
    return out;
  }

 private:
  std::shared_ptr<File> file_;
  std::vector<uint8_t> plan_bytes_;
  PartialRequest req_;
  QueryRegistration registration_;  // the cancel flag, registered with the environment
  ProgressRef progress_;
  std::vector<uint8_t> bytes_;
};

class MergePartialsWorker : public PromiseWorker {
 public:
  MergePartialsWorker(Napi::Env env, std::vector<std::vector<uint8_t>> parts)
      : PromiseWorker(env, "tetration:mergePartials"), parts_(std::move(parts)) {}

 protected:
  void Run() override {
    std::vector<std::pair<const uint8_t*, size_t>> v;
    for (const auto& p : parts_) v.emplace_back(p.data(), p.size());
    merged_ = merge_partials(v);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object out = Napi::Object::New(env);
    out.Set("done", Napi::Boolean::New(env, merged_.done));
    out.Set("op", Napi::String::New(env, merged_.op));
    if (!merged_.done) {
      Napi::Uint8Array r = Napi::Uint8Array::New(env, merged_.next_round.size());
      if (!merged_.next_round.empty()) std::memcpy(r.Data(), merged_.next_round.data(), merged_.next_round.size());
      out.Set("round", r);
      out.Set("roundNo", Napi::Number::New(env, merged_.next_round_no));
      out.Set("doc", Napi::String::New(env, merged_.doc));
      out.Set("context", Napi::String::New(env, merged_.context));
      return out;
    }
    out.Set("result", QueryResultToJs(env, merged_.result, merged_.dtype));
    out.Set("doc", Napi::String::New(env, merged_.doc));
    out.Set("context", Napi::String::New(env, merged_.context));
    return out;
  }

 private:
  std::vector<std::vector<uint8_t>> parts_;
  MergedPartials merged_;
};

}  // namespace

Napi::Value ExecutePartial(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    Napi::Value handle = Arg(info, 0, "file");
    std::vector<uint8_t> plan = BytesArg(info, 1, "plan");
    PartialRequest req;  // shard, shard count and round request: from the plan's SHARD section
    req.doc = StringArg(info, 2, "doc");
    req.context = StringArg(info, 3, "context");
    CancelFlag cancel = info.Length() > 4 ? UnwrapCancel(info[4]) : nullptr;
    ProgressRef progress = info.Length() > 4 ? UnwrapProgress(info[4]) : nullptr;
    return (new ExecutePartialWorker(env, OpenFileOf(handle), std::move(plan), std::move(req), std::move(cancel),
                                     std::move(progress)))->Start();
  });
}

Napi::Value MergePartials(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    Napi::Value v = Arg(info, 0, "parts");
    if (!v.IsArray()) ThrowArg(env, "parts must be an array of Uint8Array");
    Napi::Array arr = v.As<Napi::Array>();
    std::vector<std::vector<uint8_t>> parts;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value e = arr.Get(i);
      if (!e.IsTypedArray() || e.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        ThrowArg(env, "parts[" + std::to_string(i) + "] must be a Uint8Array");
      Napi::Uint8Array u = e.As<Napi::Uint8Array>();
      parts.emplace_back(u.Data(), u.Data() + u.ByteLength());
    }
    return (new MergePartialsWorker(env, std::move(parts)))->Start();
  });
}

// The open calls' arguments: (path, verifyFooter).
struct OpenArgs {
  std::string path;
  OpenOptions opts;
  explicit OpenArgs(const Napi::CallbackInfo& info) : path(StringArg(info, 0, "path")) {
    opts.verify_footer = BoolArg(info, 1, "verifyFooter");
  }
};

Napi::Value OpenFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    OpenArgs a(info);
    return (new OpenWorker(env, std::move(a.path), a.opts))->Start();
  });
}

// open() on the calling (JS) thread where that cannot wait for the disk: a small catalog whose
// pages are all in memory (File::open_if_resident), ~0.1 ms instead of a round trip through a
// job thread (~1-2 ms in a fresh process on 2 cores). Undefined otherwise: the SDK then calls
// openFile. It starts no thread: starting the core's pool from here (as OpenWorker's
// after_posting does) doubled a fresh process's first open (0.5-0.7 → 0.9-1.5 ms, a thread
// start on the JS thread and two more competing for the cores) and gained the first query
// nothing measurable; the first query's engine starts the pool.
Napi::Value OpenFileResident(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    OpenArgs a(info);
    std::shared_ptr<File> file = File::open_if_resident(a.path, a.opts);
    if (!file) return env.Undefined();
    return WrapFile(env, std::move(file));
  });
}

Napi::Value OpenFileSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    OpenArgs a(info);
    return WrapFile(env, File::open(a.path, a.opts));
  });
}

Napi::Value CatalogOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    std::shared_ptr<File> file = OpenFileOf(Arg(info, 0, "file"));
    return CatalogToJs(env, file->catalog());
  });
}

Napi::Value Execute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return GuardAsync(env, [&]() -> Napi::Value {
    Napi::Value handle = Arg(info, 0, "file");
    std::vector<uint8_t> plan = BytesArg(info, 1, "plan");
    CancelFlag cancel = info.Length() > 2 ? UnwrapCancel(info[2]) : nullptr;
    ProgressRef progress = info.Length() > 2 ? UnwrapProgress(info[2]) : nullptr;
    std::shared_ptr<File> file = OpenFileOf(handle);
    OutputArg output;
    if (info.Length() > 3 && !info[3].IsUndefined() && !info[3].IsNull()) {
      // A caller-owned typed array: read()'s preview, or a partial reduction's values, in place.
      if (!info[3].IsTypedArray()) ThrowArg(env, "output must be a typed array");
      size_t length = 0, offset = 0;
      void* data = nullptr;
      napi_value buffer;
      NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, info[3], &output.type, &length, &data, &buffer, &offset),
                           Napi::Value());
      output.data = static_cast<uint8_t*>(data);  // already advanced by the byte offset
      output.bytes = uint64_t(info[3].As<Napi::TypedArray>().ByteLength());
      NAPI_THROW_IF_FAILED(env, napi_create_reference(env, info[3], 1, &output.ref), Napi::Value());
    }
    return (new ExecuteWorker(env, std::move(file), std::move(plan), std::move(cancel), std::move(progress), output))->Start();
  });
}

Napi::Value CloseFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    UnwrapFileSlot(Arg(info, 0, "file")).file.reset();  // idempotent
    return env.Undefined();
  });
}

Napi::Value CreateCancelToken(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value { return WrapCancel(env); });
}

Napi::Value Cancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    CancelFlag flag = UnwrapCancel(Arg(info, 0, "token"));
    if (flag) flag->store(true, std::memory_order_relaxed);
    return env.Undefined();
  });
}

// The token's progress counters (tet::Progress): two relaxed loads, no lock, so lib/ can poll
// it from a timer while the query runs on other threads. `done` is as counted (lib/ clamps it).
Napi::Value ProgressOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    ProgressRef p = UnwrapProgress(Arg(info, 0, "token"));
    Napi::Object out = Napi::Object::New(env);
    out.Set("done", Napi::Number::New(env, p ? static_cast<double>(p->done.load(std::memory_order_relaxed)) : 0.0));
    out.Set("total", Napi::Number::New(env, p ? static_cast<double>(p->total.load(std::memory_order_relaxed)) : 0.0));
    return out;
  });
}

Napi::Value EngineStatsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    EngineStats& s = engine_stats();
    Napi::Object out = Napi::Object::New(env);
    out.Set("queriesRunning", Napi::Number::New(env, static_cast<double>(s.queries_running.load())));
    out.Set("queriesCancelled", Napi::Number::New(env, static_cast<double>(s.queries_cancelled.load())));
    out.Set("teardownCancels", Napi::Number::New(env, static_cast<double>(s.teardown_cancels.load())));
    return out;
  });
}

Napi::Value HostInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    tet::HostInfo h = host_info();
    Napi::Object out = Napi::Object::New(env);
    out.Set("cores", Napi::Number::New(env, h.cores));
    out.Set("totalRamBytes", Napi::Number::New(env, static_cast<double>(h.total_ram_bytes)));
    out.Set("availableRamBytes", Napi::Number::New(env, static_cast<double>(h.available_ram_bytes)));
    out.Set("simd", Napi::String::New(env, h.simd));
    out.Set("buildFlags", Napi::String::New(env, h.build_flags));
    Napi::Array devs = Napi::Array::New(env, h.devices.size());
    for (size_t i = 0; i < h.devices.size(); ++i) {
      const HostDevice& d = h.devices[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("ordinal", Napi::Number::New(env, d.ordinal));
      o.Set("name", Napi::String::New(env, d.name));
      o.Set("totalBytes", Napi::Number::New(env, static_cast<double>(d.total_bytes)));
      o.Set("freeBytes", Napi::Number::New(env, static_cast<double>(d.free_bytes)));
      o.Set("smCount", Napi::Number::New(env, d.sm_count));
      o.Set("computeCapability", Napi::String::New(env, std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)));
      devs.Set(uint32_t(i), o);
    }
    out.Set("devices", devs);
    out.Set("deviceBackend", Napi::String::New(env, h.device_backend));
    out.Set("deviceStatus", Napi::String::New(env, h.device_status));
    out.Set("deviceDetail", Napi::String::New(env, h.device_detail));
    return out;
  });
}

// availableRamBytes(): MemAvailable in bytes (0 = unknown), for each query's budget.
Napi::Value AvailableRamBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value { return Napi::Number::New(env, static_cast<double>(host_available_ram_bytes())); });
}

// routeDevice({token, op, dtype, scalar, logicalBytes, chunks, outElements}): the native
// routing decision (tet/device.h) lib/plan/compile.ts reports and encodes into the plan.
Napi::Value RouteDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guard(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsObject()) fail("TET_INTERNAL", "routeDevice: expected a request object");
    const Napi::Object q = info[0].As<Napi::Object>();
    auto num = [&](const char* k) { return q.Get(k).IsNumber() ? q.Get(k).As<Napi::Number>().DoubleValue() : 0.0; };
    device::RouteRequest r;
    r.token = q.Get("token").IsString() ? q.Get("token").As<Napi::String>().Utf8Value() : "";
    const double op = num("op"), dt = num("dtype");
    if (!(op >= 0 && op <= 25) || !(dt >= 0 && dt <= 10)) fail("TET_INTERNAL", "routeDevice: op or dtype out of range");
    r.op = Op(uint32_t(op)), r.dtype = DType(uint32_t(dt));
    r.scalar = q.Get("scalar").ToBoolean().Value();
    r.logical_bytes = uint64_t(std::max(0.0, num("logicalBytes")));
    r.chunks = uint64_t(std::max(0.0, num("chunks")));
    r.out_elements = uint64_t(std::max(0.0, num("outElements")));
    const device::Route d = device::route(r);
    Napi::Object out = Napi::Object::New(env);
    out.Set("requested", Napi::String::New(env, d.requested));
    out.Set("used", Napi::String::New(env, d.used));
    if (!d.reason.empty()) out.Set("reason", Napi::String::New(env, d.reason));
    out.Set("pipeline", Napi::Boolean::New(env, d.pipeline));
    out.Set("multi", Napi::Boolean::New(env, d.multi));
    out.Set("gpu", Napi::Boolean::New(env, d.device == Device::Gpu));
    out.Set("ordinal", Napi::Number::New(env, d.ordinal));
    return out;
  });
}

}  // namespace tet::napi
