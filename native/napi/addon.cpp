// Module entry: one Napi::Addon instance per environment (main thread, each worker_thread,
// each Electron renderer). The addon keeps no process-wide mutable state of its own; handles
// are externals owned by the environment that created them.
#include "napi/napi_config.h"

#include <csignal>
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
  TetAddon(Napi::Env env, Napi::Object exports) {
    IgnoreFileSizeSignal();
    struct Entry { const char* name; Napi::Function::Callback fn; };
    const Entry entries[] = {
        {"openFile", OpenFile}, {"openFileSync", OpenFileSync}, {"catalog", CatalogOf},
        {"execute", Execute}, {"executePartial", ExecutePartial}, {"mergePartials", MergePartials}, {"closeFile", CloseFile}, {"createCancelToken", CreateCancelToken},
        {"cancel", Cancel}, {"verifyTiles", VerifyTiles}, {"repairFooter", RepairFooter},
        {"hostInfo", HostInfo}, {"writerCreate", WriterCreate},
        {"writerSetExecution", WriterSetExecution}, {"writerAddDataset", WriterAddDataset},
        {"writerWriteChunk", WriterWriteChunk}, {"writerWriteSlab", WriterWriteSlab}, {"writerSetFooter", WriterSetFooter},
        {"writerCommit", WriterCommit}, {"writerAbort", WriterAbort},
    };
    for (const Entry& e : entries) exports.Set(e.name, Napi::Function::New(env, e.fn, e.name));
  }
};

}  // namespace
}  // namespace tet::napi

using TetAddon = tet::napi::TetAddon;
NODE_API_ADDON(TetAddon)
