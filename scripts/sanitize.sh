#!/usr/bin/env bash
# ASan + UBSan (+ LeakSanitizer) build of the native core in build/sanitize, then:
#   1. every C++ test (ctest) — includes the malformed-file corpus, every truncation and every
#      single-byte corruption of the fixtures (format_test), writer/exec/plan tests;
#   2. the fuzz targets' logic replayed without libFuzzer over the conformance fixtures
#      (valid + malformed), the fuzz regressions and, when present, the fuzz corpora;
#   3. leak_loop: open/query/close loops over every fixture under LeakSanitizer, with an RSS
#      plateau check.
# Clean means no sanitizer report at all: UBSan is built with -fno-sanitize-recover, ASan and
# LSan abort on the first report, so any finding fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${TET_SANITIZE_DIR:-$ROOT/build/sanitize}  # `node-gyp rebuild` wipes build/
if [ -d "$ROOT/shared/conformance/fixtures" ]; then FIXTURES=$ROOT/shared/conformance/fixtures
else FIXTURES=$ROOT/../shared/conformance/fixtures; fi
CXX=${CXX:-c++}
JOBS=${JOBS:-2}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-}

cmake -S "$ROOT" -B "$BUILD" -DTET_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" >/dev/null
cmake --build "$BUILD" -j "$JOBS"
ctest --test-dir "$BUILD" --output-on-failure

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1 -std=c++17"
LIBS="$BUILD/libtet_core.a $BUILD/libtet_zstd.a -lpthread"
INC="-I$ROOT/native/include -I$ROOT/native"
for t in open_fuzz decode_fuzz plan_fuzz query_fuzz shard_fuzz; do
  $CXX $SAN $INC "$ROOT/native/fuzz/replay_main.cpp" "$ROOT/native/fuzz/$t.cpp" $LIBS -o "$BUILD/${t%_fuzz}_replay"
done
$CXX $SAN $INC "$ROOT/native/fuzz/leak_loop.cpp" $LIBS -o "$BUILD/leak_loop"

REG=$ROOT/test/fixtures/fuzz-regressions
FUZZ_DIR=${TET_FUZZ_DIR:-$ROOT/build/fuzz}
corpus() { [ -d "$FUZZ_DIR/corpus/$1" ] && echo "$FUZZ_DIR/corpus/$1" || true; }
# Decode and plan inputs are not .tet files: they get their own seeds (seed mode) + regressions.
SEEDS=$BUILD/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS/decode" "$SEEDS/plan" "$SEEDS/shard"
TET_FUZZ_SEEDS_OUT=$SEEDS/decode TET_FUZZ_FIXTURES=$FIXTURES "$BUILD/decode_replay"
TET_FUZZ_SEEDS_OUT=$SEEDS/plan "$BUILD/plan_replay"
TET_FUZZ_SEEDS_OUT=$SEEDS/shard "$BUILD/shard_replay"
"$BUILD/open_replay" "$FIXTURES" "$REG/open_fuzz" "$REG/query_fuzz" $(corpus open_fuzz)
"$BUILD/query_replay" "$FIXTURES" "$REG/open_fuzz" "$REG/query_fuzz" $(corpus query_fuzz)
"$BUILD/decode_replay" "$SEEDS/decode" "$REG/decode_fuzz" $(corpus decode_fuzz)
"$BUILD/plan_replay" "$SEEDS/plan" "$REG/plan_fuzz" $(corpus plan_fuzz)
"$BUILD/shard_replay" "$SEEDS/shard" "$REG/shard_fuzz" $(corpus shard_fuzz)
"$BUILD/leak_loop" "$FIXTURES" 4
echo "sanitize: clean (ctest, fuzz replays, leak loop: no ASan/UBSan/LSan report)"
