#!/usr/bin/env bash
# CI's check of the CUDA device module where nvcc is installed and no GPU need be: builds
# tetration_cuda.so (one architecture, -O2; nothing else is rebuilt) and loads it through the
# addon, which must find its ABI (backend "cuda") and, on a machine without a usable NVIDIA
# driver, report gpu_driver_unavailable / gpu_no_device (with a GPU: devices). Needs the addon
# (as node-gyp-build finds it: build/Release, or prebuilds/ where prebuildify moves it) and the
# host stub (build/Release/tetration_cuda_stub.so).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "check-cuda-module: nvcc not found" >&2; exit 1; }
addon=$(node -e 'console.log(require("node-gyp-build").path(process.argv[1]))' "$PWD" 2>/dev/null || true)
stub=build/Release/tetration_cuda_stub.so
if [ -z "$addon" ] || [ ! -f "$addon" ] || [ ! -f "$stub" ]; then
  echo "check-cuda-module: build the addon first ($addon, $stub)" >&2
  exit 1
fi
cmake -S . -B cmake-build/cuda -DCMAKE_BUILD_TYPE=Release -DTET_CUDA=ON -DTET_CUDA_ARCH="${TET_CUDA_ARCH:-90}" >/dev/null
cmake --build cmake-build/cuda -j "${TET_BUILD_JOBS:-2}" --target tetration_cuda
module="$PWD/cmake-build/cuda/tetration_cuda.so"
# Without a GPU driver the driver probe would stop before the module's own init; the stub stands
# in for libcuda.so.1 so the module's CUDA runtime is asked (and must refuse cleanly).
driver="$stub"
[ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] && driver=libcuda.so.1
TET_CUDA_MODULE="$module" TET_CUDA_DRIVER="$driver" node -e '
const h = require(process.argv[1]).hostInfo();
console.log(JSON.stringify({ backend: h.deviceBackend, status: h.deviceStatus, detail: h.deviceDetail, devices: h.devices }));
const ok = h.deviceBackend === "cuda" &&
  (h.devices.length > 0 ? h.deviceStatus === "" : ["gpu_driver_unavailable", "gpu_no_device"].includes(h.deviceStatus));
process.exit(ok ? 0 : 1);' "$addon"
echo "check-cuda-module: ok"
