#!/usr/bin/env bash
# npm run test:native: the C++ unit tests and fuzz-regression replays (CMake + ctest).
# Where this checkout has the addon's node-gyp build (build/, as `npm ci` or `npm run
# build:prebuilds` leave it), the core is not compiled again: `node-gyp build` brings its objects
# up to date (make's own dependency tracking; nothing to do right after a build) and the tests
# link against them (CMake's TET_CORE_OBJECTS_DIR), so ctest checks the very objects the addon
# ships. Without one, CMake compiles the core itself.
set -euo pipefail
cd "$(dirname "$0")/.."
objects=""
if [ -f build/Makefile ] && [ -d build/Release/obj.target/tetration ] && [ "$(uname -m)" = x86_64 ] \
   && [ -z "${TET_NATIVE_TEST_FROM_SOURCE:-}" ]; then
  npx --no-install node-gyp build -j "${TET_BUILD_JOBS:-2}" >/dev/null
  objects="$PWD/build/Release/obj.target"
  echo "test:native: core objects from the addon build ($objects)"
fi
cmake -S . -B cmake-build/release -DCMAKE_BUILD_TYPE=Release -DTET_CORE_OBJECTS_DIR="$objects" >/dev/null
cmake --build cmake-build/release -j "${TET_BUILD_JOBS:-2}"
ctest --test-dir cmake-build/release --output-on-failure
