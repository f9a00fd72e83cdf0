// Facts about the machine the core runs on, reported to lib/ for budget resolution.
#pragma once
#include <cstdint>
#include <string>

namespace tet {

struct HostInfo {
  uint32_t cores = 1;                 // threads in the pool
  uint64_t total_ram_bytes = 0;       // 0 = unknown
  uint64_t available_ram_bytes = 0;   // Linux MemAvailable; 0 = unknown
  std::string simd;                   // ISA the fold kernels dispatched to
  std::string build_flags;            // e.g. "cuda=off metal=off"
};

HostInfo host_info();

}  // namespace tet
