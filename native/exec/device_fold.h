// The device driver entry point of the streaming folds (exec/fold_driver.h has the CPU ones):
// scalar and partial folds on the loaded device module (exec/device.h). Host threads fetch and decode tiles
// (zstd) into the module's pinned staging, the module folds each unit into the family's encoded
// state on the calling thread's stream, and the states merge in unit order through the CPU's own
// merge + finalize (finish_scalar), so results equal the CPU fold's bit for bit.
#pragma once
#include <string>

#include "exec/fold_driver.h"

namespace tet {
namespace exec {

// Tile bytes per device job (one call of the module's scalar_fold on one host thread / stream).
constexpr uint64_t kDeviceJobBytes = uint64_t(64) << 20;
// VRAM the device tile cache may keep across queries (per device); TET_CUDA_CACHE_BYTES overrides.
constexpr uint64_t kDeviceCacheDefaultBytes = uint64_t(8) << 30;

// True when the device folded the query (res filled as fold_scalar would); false with `reason`
// (a device_fallback_reason) when the caller must fold on the CPU. Never throws for device
// failures; cancellation and tile errors propagate as on the CPU path.
template <class S, class T> bool fold_scalar_device(FoldRun& run, QueryResult& res, std::string& reason);
// The same for partial folds (a subset of axes reduced, grouped or not), filling res as
// fold_partial would: the CPU's tasks, batches and runs on the device (device_fold_impl.h), the same
// bits. A grouped fold whose group axis is the last axis, and rows longer than a scalar unit on a
// reduced last axis, stay on the CPU (gpu_unsupported_op).
template <class S, class T> bool fold_partial_device(FoldRun& run, QueryResult& res, std::string& reason);

}  // namespace exec
}  // namespace tet
