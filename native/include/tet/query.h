// Execution entry point: run a validated plan against a chunk source on the process-wide
// thread pool. Cancellation is cooperative (checked between tiles).
#pragma once
#include <atomic>

#include "tet/chunk_source.h"
#include "tet/plan.h"

namespace tet {

struct ExecContext {
  const std::atomic<bool>* cancel = nullptr;  // set => throw Error("TET_CANCELLED")
};

QueryResult execute(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx = {});

}  // namespace tet
