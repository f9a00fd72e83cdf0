// The functions of the NativeBinding (lib/native.ts), grouped by file. addon.cpp registers them.
#pragma once
#include "napi/napi_config.h"

#include <memory>

#include "napi/lifecycle.h"

namespace tet::napi {

// addon.cpp: the in-flight queries of the calling environment.
std::shared_ptr<InFlight> EnvInFlight(Napi::Env env);

// file_methods.cpp
Napi::Value OpenFile(const Napi::CallbackInfo& info);
Napi::Value OpenFileSync(const Napi::CallbackInfo& info);
Napi::Value OpenFileResident(const Napi::CallbackInfo& info);
Napi::Value CatalogOf(const Napi::CallbackInfo& info);
Napi::Value Execute(const Napi::CallbackInfo& info);
Napi::Value ExecutePartial(const Napi::CallbackInfo& info);
Napi::Value MergePartials(const Napi::CallbackInfo& info);
Napi::Value CloseFile(const Napi::CallbackInfo& info);
Napi::Value CreateCancelToken(const Napi::CallbackInfo& info);
Napi::Value Cancel(const Napi::CallbackInfo& info);
Napi::Value ProgressOf(const Napi::CallbackInfo& info);
Napi::Value HostInfo(const Napi::CallbackInfo& info);
Napi::Value AvailableRamBytes(const Napi::CallbackInfo& info);
Napi::Value RouteDevice(const Napi::CallbackInfo& info);
Napi::Value EngineStatsOf(const Napi::CallbackInfo& info);

// verify_methods.cpp
Napi::Value Verify(const Napi::CallbackInfo& info);
Napi::Value RepairFooter(const Napi::CallbackInfo& info);
Napi::Value RepairCells(const Napi::CallbackInfo& info);

// table_methods.cpp
Napi::Value FileTables(const Napi::CallbackInfo& info);
Napi::Value FileReadColumn(const Napi::CallbackInfo& info);
Napi::Value TableWhere(const Napi::CallbackInfo& info);
Napi::Value TableWhereSync(const Napi::CallbackInfo& info);
Napi::Value FileTableQuery(const Napi::CallbackInfo& info);  // (file, plan object) -> Promise

// writer_methods.cpp
Napi::Value WriterCreate(const Napi::CallbackInfo& info);
Napi::Value WriterSetExecution(const Napi::CallbackInfo& info);
Napi::Value WriterAddDataset(const Napi::CallbackInfo& info);
Napi::Value WriterWriteChunk(const Napi::CallbackInfo& info);
Napi::Value WriterWriteSlab(const Napi::CallbackInfo& info);
Napi::Value WriterSetFooter(const Napi::CallbackInfo& info);
Napi::Value WriterCommit(const Napi::CallbackInfo& info);
Napi::Value WriterAbort(const Napi::CallbackInfo& info);
Napi::Value WriterAddTable(const Napi::CallbackInfo& info);
Napi::Value WriterAppendTable(const Napi::CallbackInfo& info);

}  // namespace tet::napi
