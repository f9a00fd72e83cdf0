// Module entry: one Napi::Addon instance per environment (main thread, each worker_thread,
// each Electron renderer). Handles are externals owned by the environment that created them;
// the instance keeps the environment's in-flight queries, whose cancel flags its cleanup hook
// trips when the environment goes away (a terminated worker leaves no query running).
#include "napi/napi_config.h"

#include <csignal>
#include <memory>
#include <mutex>

#include "napi/methods.h"

namespace tet::napi {
namespace {

// A write past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the process. Ignoring it
// (once per process, before any writer exists) makes the write fail with EFBIG instead, which
// the writer reports as a TET_WRITE_* error.
void IgnoreFileSizeSignal() {
#ifdef SIGXFSZ
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGXFSZ, SIG_IGN); });
#endif
}

class TetAddon : public Napi::Addon<TetAddon> {
 public:
  TetAddon(Napi::Env env, Napi::Object exports) : inflight_(std::make_shared<InFlight>()) {
    IgnoreFileSizeSignal();
    std::shared_ptr<InFlight> inflight = inflight_;
    env.AddCleanupHook([inflight]() { inflight->tear_down(); });
    struct Entry { const char* name; Napi::Function::Callback fn; };
    const Entry entries[] = {
        {"openFile", OpenFile}, {"openFileSync", OpenFileSync}, {"openFileResident", OpenFileResident}, {"catalog", CatalogOf},
        {"execute", Execute}, {"executePartial", ExecutePartial}, {"mergePartials", MergePartials}, {"closeFile", CloseFile}, {"createCancelToken", CreateCancelToken},
        {"cancel", Cancel}, {"progressOf", ProgressOf}, {"verify", Verify}, {"repairFooter", RepairFooter},
        {"repairCells", RepairCells},
        {"hostInfo", HostInfo}, {"availableRamBytes", AvailableRamBytes}, {"routeDevice", RouteDevice}, {"writerCreate", WriterCreate},
        {"writerSetExecution", WriterSetExecution}, {"writerAddDataset", WriterAddDataset},
        {"writerWriteChunk", WriterWriteChunk}, {"writerWriteSlab", WriterWriteSlab}, {"writerSetFooter", WriterSetFooter},
        {"writerCommit", WriterCommit}, {"writerAbort", WriterAbort}, {"engineStats", EngineStatsOf},
        {"fileTables", FileTables}, {"fileReadColumn", FileReadColumn},
        {"tableWhere", TableWhere}, {"tableWhereSync", TableWhereSync},
        {"fileTableQuery", FileTableQuery},
        {"writerAddTable", WriterAddTable}, {"writerAppendTable", WriterAppendTable},
    };
    for (const Entry& e : entries) exports.Set(e.name, Napi::Function::New(env, e.fn, e.name));
  }
  const std::shared_ptr<InFlight>& inflight() const { return inflight_; }

 private:
  std::shared_ptr<InFlight> inflight_;
};

}  // namespace

std::shared_ptr<InFlight> EnvInFlight(Napi::Env env) {
  TetAddon* addon = env.GetInstanceData<TetAddon>();
  return addon ? addon->inflight() : nullptr;
}

}  // namespace tet::napi

using TetAddon = tet::napi::TetAddon;
NODE_API_ADDON(TetAddon)
