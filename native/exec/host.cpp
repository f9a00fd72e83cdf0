// host_info(): machine facts lib/ uses for budget resolution (Linux /proc/meminfo best effort).
#include <cstdio>
#include <cstring>

#include "exec/device.h"
#include "exec/thread_pool.h"
#include "fold/kernels.h"
#include "tet/host.h"

namespace tet {
namespace {
uint64_t meminfo_kib(const char* key) {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t out = 0;
  const size_t klen = std::strlen(key);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, key, klen) == 0 && line[klen] == ':') {
      unsigned long long v = 0;
      if (std::sscanf(line + klen + 1, "%llu", &v) == 1) out = v;
      break;
    }
  }
  std::fclose(f);
  return out;
}
}  // namespace

uint64_t host_available_ram_bytes() { return meminfo_kib("MemAvailable") * 1024; }

HostInfo host_info() {
  HostInfo h;
  h.cores = exec::ThreadPool::instance().size();
  h.total_ram_bytes = meminfo_kib("MemTotal") * 1024;
  h.available_ram_bytes = host_available_ram_bytes();
  h.simd = fold::isa_name(fold::best_isa());
  const device::Backend& be = device::backend();
  h.build_flags = std::string("cuda=") + (be.api != nullptr ? "on" : "off") + " metal=off";
  h.device_backend = be.backend_name, h.device_status = be.unavailable, h.device_detail = be.detail;
  for (const device::DeviceInfo& d : be.devices) {
    HostDevice x;
    x.ordinal = d.ordinal, x.name = d.name, x.total_bytes = d.total_bytes, x.free_bytes = d.free_bytes;
    x.sm_count = d.sm_count, x.cc_major = d.cc_major, x.cc_minor = d.cc_minor;
    h.devices.push_back(x);
  }
  return h;
}

}  // namespace tet
