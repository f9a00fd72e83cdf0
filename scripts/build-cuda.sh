#!/usr/bin/env bash
# npm run build:cuda: the CUDA device module (tetration_cuda.so, cuda/README.md) with CMake and
# nvcc, copied beside the addon (build/Release, and prebuilds/<platform>-<arch> when present) where
# native/exec/device.cpp looks for it. TET_CUDA_ARCH picks the architectures (default 90: H100 /
# H200; e.g. "80;90"). Needs nvcc; the default addon and CI never do.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "build:cuda: nvcc not found (install the CUDA toolkit)" >&2; exit 1; }
arch="${TET_CUDA_ARCH:-90}"
jobs="${TET_BUILD_JOBS:-2}"
cmake -S . -B cmake-build/cuda -DCMAKE_BUILD_TYPE=Release -DTET_CUDA=ON -DTET_CUDA_ARCH="$arch" >/dev/null
cmake --build cmake-build/cuda -j "$jobs" --target tetration_cuda "$@"
module=cmake-build/cuda/tetration_cuda.so
[ -f "$module" ] || { echo "build:cuda: $module was not produced" >&2; exit 1; }
for dir in build/Release prebuilds/"$(node -p 'process.platform + "-" + process.arch')"; do
  if [ -d "$dir" ]; then
    cp "$module" "$dir/"
    echo "build:cuda: $dir/tetration_cuda.so"
  fi
done
