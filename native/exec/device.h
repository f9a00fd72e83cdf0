// The device backend as the addon sees it: the run-time loaded module (cuda/tet_cuda_abi.h,
// dlopen()ed once per process; the addon itself has no CUDA dependency), the devices it
// reports, and the routing of a query (`execution.device` / `--device` token, op, dtype, size)
// to the CPU or a GPU with the spec's fallback reasons (query_engine.md, phase 10).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../cuda/tet_cuda_abi.h"
#include "tet/device.h"
#include "tet/dtype.h"
#include "tet/plan.h"

namespace tet {
namespace device {

// A partial fold's box states must fit in this fraction of a device's free memory.
constexpr double kVramStateFraction = 0.5;

struct DeviceInfo {
  uint32_t ordinal = 0;
  std::string name;
  uint64_t total_bytes = 0, free_bytes = 0;
  uint32_t sm_count = 0, cc_major = 0, cc_minor = 0;
};

// What loading found. `unavailable` is the fallback reason when no device can run anything
// (empty: the backend is usable): gpu_feature_disabled (no module), gpu_module_incompatible,
// gpu_driver_unavailable (no libcuda.so.1, or the runtime refused), gpu_no_device.
struct Backend {
  const tet_cuda_api* api = nullptr;
  std::string module_path, backend_name, unavailable, detail;
  std::vector<DeviceInfo> devices;
  tet_cuda_caps caps{};
};

// Loaded once: TET_CUDA_MODULE (a path; "" or "off" disables), else tetration_cuda.so beside
// the addon. The driver probed first is libcuda.so.1, or TET_CUDA_DRIVER (tests point it at a
// missing path to simulate a machine without the driver).
const Backend& backend();

// Pure: the decision for a request against a backend (tests pass a fake Backend).
Route route(const RouteRequest& req, const Backend& be);

}  // namespace device
}  // namespace tet
