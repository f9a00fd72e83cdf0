// host_info(): machine facts lib/ uses for budget resolution (Linux /proc/meminfo best effort).
#include <cstdio>
#include <cstring>

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

HostInfo host_info() {
  HostInfo h;
  h.cores = exec::ThreadPool::instance().size();
  h.total_ram_bytes = meminfo_kib("MemTotal") * 1024;
  h.available_ram_bytes = meminfo_kib("MemAvailable") * 1024;
  h.simd = fold::isa_name(fold::best_isa());
  h.build_flags = "cuda=off metal=off";
  return h;
}

}  // namespace tet
