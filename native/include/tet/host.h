// Facts about the machine the core runs on, reported to lib/ for budget resolution.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tet {

struct HostDevice {                   // a GPU the device module reports (exec/device.h)
  uint32_t ordinal = 0;
  std::string name;
  uint64_t total_bytes = 0, free_bytes = 0;
  uint32_t sm_count = 0, cc_major = 0, cc_minor = 0;
};

struct HostInfo {
  uint32_t cores = 1;                 // threads in the pool
  uint64_t total_ram_bytes = 0;       // 0 = unknown
  uint64_t available_ram_bytes = 0;   // Linux MemAvailable; 0 = unknown
  std::string simd;                   // ISA the fold kernels dispatched to
  std::string build_flags;            // e.g. "cuda=off metal=off" ("cuda=on": a module with devices)
  std::vector<HostDevice> devices;    // [] without a device module, driver or GPU
  std::string device_backend;         // the loaded module's backend ("cuda", "host-stub"), "" if none
  std::string device_status;          // "" when usable, else the fallback reason (gpu_feature_disabled, ...)
  std::string device_detail;          // why, in words
};

HostInfo host_info();
// MemAvailable alone (0 = unknown): what each query's budget needs, without host_info()'s start of
// the thread pool and probe of the device module (a first query that asks for no device pays
// neither).
uint64_t host_available_ram_bytes();

}  // namespace tet
