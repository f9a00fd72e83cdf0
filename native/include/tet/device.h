// Device routing, the public face of exec/device.h: a query's device token (execution.device /
// --device) against what this process can run (the optional CUDA module, its devices and their
// capabilities), with the spec's fallback reasons (spec/query_engine.md, phase 10). lib/ asks
// before it encodes the plan (the DEVICE section carries the decision); the executor falls back
// again at run time when the device fails.
#pragma once
#include <cstdint>
#include <string>

#include "tet/dtype.h"
#include "tet/plan.h"

namespace tet {
namespace device {

// `auto` skips the GPU below this logical selection size (the spec's 64 MiB).
constexpr uint64_t kAutoMinBytes = uint64_t(64) << 20;
// Ordinal of the plan's DEVICE section that means every visible device (cuda:multi).
constexpr uint32_t kAllDevices = 0xffffffffu;

struct RouteRequest {
  std::string token;       // cpu | auto | cuda | cuda:N | cuda:multi | metal | rocm...
  Op op = Op::None;
  DType dtype = DType::F32;
  bool scalar = true;      // every axis reduced
  uint64_t logical_bytes = 0;
  uint64_t chunks = 0;     // tiles the selection touches
  uint64_t out_elements = 0;  // partial folds: output elements (their states must fit in VRAM)
  bool has_fill = false;
};

struct Route {
  std::string requested, used = "cpu", reason;
  bool pipeline = false, multi = false;
  Device device = Device::Cpu;
  uint32_t ordinal = 0;  // kAllDevices for cuda:multi
};

// The decision against this process's backend (loaded on first use).
Route route(const RouteRequest& req);

// Whether the token is one the schema allows (lib/ validates first; native re-checks).
bool valid_token(const std::string& token);

}  // namespace device
}  // namespace tet
