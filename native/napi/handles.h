// The objects behind the opaque handles lib/native.ts hands around. Each is a Napi::External
// stamped with its own type tag, so a writer handle passed where a file handle is expected is
// a TypeError, never a wild cast.
#pragma once
#include "napi/napi_config.h"

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <mutex>

#include "tet/file.h"
#include "tet/query.h"
#include "tet/writer.h"

namespace tet::napi {

// An open file. Only the JS thread touches the slot; workers take their own shared_ptr<File>
// at queue time, so closeFile() during a query only drops the slot's reference and the mapping
// lives until the last in-flight query finishes.
struct FileSlot {
  std::shared_ptr<File> file;
};

// A writer. Workers (writeChunk, writeSlab, commit) and the JS thread (addDataset, setFooter,
// abort) share it. Tile writes hold `mu` shared (tet::Writer locks its own bookkeeping, so they
// compress in parallel); everything else holds it exclusively. `writer` is null once committed
// or aborted.
struct WriterState {
  std::shared_mutex mu;
  std::unique_ptr<Writer> writer;
  const char* closed_by = nullptr;  // "commit" | "abort" once writer is null
};
using WriterRef = std::shared_ptr<WriterState>;

using CancelFlag = std::shared_ptr<std::atomic<bool>>;
using ProgressRef = std::shared_ptr<Progress>;

// What createCancelToken() hands out: the query's cancel flag and its progress counters
// (tet::Progress, query.h) in one allocation. CancelFlag / ProgressRef share its ownership, so a
// worker keeps both alive even if JS drops the token mid-query.
struct QueryToken {
  std::atomic<bool> cancelled{false};
  Progress progress;
};

Napi::External<FileSlot> WrapFile(Napi::Env env, std::shared_ptr<File> file);
FileSlot& UnwrapFileSlot(const Napi::Value& v);
// The open file behind a handle; throws TET_IO_CLOSED after closeFile().
std::shared_ptr<File> OpenFileOf(const Napi::Value& v);

Napi::External<WriterRef> WrapWriter(Napi::Env env, std::unique_ptr<Writer> writer);
WriterRef UnwrapWriter(const Napi::Value& v);

Napi::External<std::shared_ptr<QueryToken>> WrapCancel(Napi::Env env);
CancelFlag UnwrapCancel(const Napi::Value& v);      // null/undefined -> empty flag
ProgressRef UnwrapProgress(const Napi::Value& v);   // null/undefined -> no progress

}  // namespace tet::napi
