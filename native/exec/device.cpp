// Loading of the device module and query routing (device.h). The module is optional: without it
// (the default build, and every machine without an NVIDIA driver) every query runs on the CPU
// and says why in device_fallback_reason.
#include "exec/device.h"

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "fold/registry.h"

namespace tet {
namespace device {
namespace {

#if defined(_WIN32)
Backend load() {
  Backend be;
  be.unavailable = "gpu_feature_disabled", be.detail = "no device module on Windows builds";
  return be;
}
#else
std::string dir_of_this_library() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&dir_of_this_library), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string p = info.dli_fname;
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

Backend load() {
  Backend be;
  const char* env = std::getenv("TET_CUDA_MODULE");
  if (env != nullptr && (env[0] == 0 || std::strcmp(env, "off") == 0)) {
    be.unavailable = "gpu_feature_disabled", be.detail = "TET_CUDA_MODULE disables the device module";
    return be;
  }
  be.module_path = env != nullptr ? env : dir_of_this_library() + "/tetration_cuda.so";
  // The driver first: the module's static CUDA runtime would fail later and less clearly.
  const char* drv_env = std::getenv("TET_CUDA_DRIVER");
  const std::string driver = drv_env != nullptr ? drv_env : "libcuda.so.1";
  void* mod = dlopen(be.module_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (mod == nullptr) {
    be.unavailable = "gpu_feature_disabled";
    const char* e = dlerror();
    be.detail = std::string("no device module at ") + be.module_path + (e ? std::string(": ") + e : "");
    return be;
  }
  auto get = reinterpret_cast<tet_cuda_get_api_fn>(dlsym(mod, TET_CUDA_ENTRY));
  const tet_cuda_api* api = get != nullptr ? get(TET_CUDA_ABI_VERSION) : nullptr;
  if (api == nullptr || api->abi_version != TET_CUDA_ABI_VERSION || api->struct_size < sizeof(tet_cuda_api)) {
    be.unavailable = "gpu_module_incompatible", be.detail = be.module_path + " does not provide ABI version " +
                                                            std::to_string(TET_CUDA_ABI_VERSION);
    return be;  // the module stays loaded: unloading code that may have run is not worth the risk
  }
  be.backend_name = api->backend ? api->backend : "cuda";
  void* drv = dlopen(driver.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (drv == nullptr) {
    be.unavailable = "gpu_driver_unavailable", be.detail = "cannot load the NVIDIA driver (" + driver + ")";
    return be;
  }
  char err[256] = {0};
  const int n = api->init(err, sizeof err);
  if (n < 0) {
    be.unavailable = "gpu_driver_unavailable", be.detail = err;
    return be;
  }
  for (int i = 0; i < n; ++i) {
    tet_cuda_device d{};
    d.struct_size = sizeof d;
    if (api->device_info(uint32_t(i), &d) != TET_CUDA_OK) continue;
    DeviceInfo di;
    di.ordinal = d.ordinal, di.name = std::string(d.name, strnlen(d.name, sizeof d.name));
    di.total_bytes = d.total_bytes, di.free_bytes = d.free_bytes;
    di.sm_count = d.sm_count, di.cc_major = d.cc_major, di.cc_minor = d.cc_minor;
    be.devices.push_back(di);
  }
  if (be.devices.empty()) {
    be.unavailable = "gpu_no_device", be.detail = "the driver reports no CUDA device";
    return be;
  }
  be.caps.struct_size = sizeof be.caps;
  api->caps(&be.caps);
  be.api = api;
  return be;
}

#endif

bool is_digits(const std::string& s, size_t from) {
  if (from >= s.size() || s.size() - from > 4) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

const Backend& backend() {
  static const Backend be = load();
  return be;
}

Route route(const RouteRequest& req) { return route(req, backend()); }

bool valid_token(const std::string& t) {
  if (t == "cpu" || t == "auto" || t == "metal") return true;
  for (const char* fam : {"cuda", "rocm"}) {
    const std::string f = fam;
    if (t == f || t == f + ":multi") return true;
    if (t.compare(0, f.size() + 1, f + ":") == 0 && is_digits(t, f.size() + 1)) return true;
  }
  return false;
}

Route route(const RouteRequest& req, const Backend& be) {
  Route r;
  r.requested = req.token;
  auto cpu = [&](const std::string& reason) {
    r.used = "cpu", r.reason = reason, r.device = Device::Cpu, r.ordinal = 0, r.pipeline = r.multi = false;
    return r;
  };
  if (req.token.empty() || req.token == "cpu") return r;
  if (!valid_token(req.token)) return cpu("gpu_invalid_token");
  if (req.op == Op::None) return cpu("preview_or_spill_only");
  if (req.token == "metal" || req.token.compare(0, 4, "rocm") == 0) return cpu("gpu_feature_disabled");
  if (req.token == "auto" && req.logical_bytes < kAutoMinBytes) return cpu("auto_below_size_threshold");
  if (!be.unavailable.empty() || be.api == nullptr) return cpu(be.unavailable.empty() ? "gpu_feature_disabled" : be.unavailable);
  uint32_t ordinal = 0;
  const bool multi = req.token == "cuda:multi";
  if (req.token.compare(0, 5, "cuda:") == 0 && !multi) ordinal = uint32_t(std::atoi(req.token.c_str() + 5));
  if (!multi && ordinal >= be.devices.size()) return cpu("gpu_device_not_found");
  const uint32_t dt = uint32_t(req.dtype);
  if (dt >= 32 || ((be.caps.dtype_mask >> dt) & 1) == 0) return cpu("gpu_unsupported_dtype");
  const uint32_t op = uint32_t(req.op);
  const uint64_t mask = req.scalar ? be.caps.scalar_op_mask : be.caps.partial_op_mask;
  if (op >= 64 || ((mask >> op) & 1) == 0 || (req.op == Op::NullCount)) return cpu("gpu_unsupported_op");
  if (!req.scalar) {
    uint64_t free_min = UINT64_MAX;
    if (multi) {
      for (const DeviceInfo& d : be.devices) free_min = std::min(free_min, d.free_bytes);
    } else {
      free_min = be.devices[ordinal].free_bytes;
    }
    const double state_bytes = double(req.out_elements) * double(fold::partial_state_bytes(req.op, req.dtype));
    if (state_bytes > double(free_min) * kVramStateFraction) return cpu("gpu_vram_exceeded");
  }
  r.device = Device::Gpu;
  r.multi = multi && be.devices.size() > 1;
  r.ordinal = multi ? kAllDevices : ordinal;
  r.used = r.multi ? "cuda:multi" : "cuda:" + std::to_string(ordinal);
  // Decode on host threads overlaps copies and kernels on several streams once there are tiles
  // to overlap.
  r.pipeline = req.chunks > 1;
  r.reason.clear();
  return r;
}

}  // namespace device
}  // namespace tet
