#!/usr/bin/env bash
# libFuzzer over the native core (native/fuzz/*_fuzz.cpp), built with clang + ASan + UBSan into
# build/fuzz at -O1 -gline-tables-only (the flags OSS-Fuzz builds with: fast to compile, line
# numbers in every report). Usage:
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   fuzz each target in turn (default 60 s, all)
#   scripts/fuzz.sh --replay                           run every regression file once, no fuzzing
# Corpora live in build/fuzz/corpus/<target> (seeded from the conformance fixtures and files made
# by tet::Writer, plus test/fixtures/fuzz-regressions/<target>). A crash, leak, timeout or OOM
# is copied into test/fixtures/fuzz-regressions/<target>/ and the script exits 1.
# One fuzzer process at a time (-jobs is never used): the CI machine has two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# TET_FUZZ_DIR moves build + corpora + logs elsewhere (`node-gyp rebuild` wipes build/).
BUILD=${TET_FUZZ_DIR:-$ROOT/build/fuzz}
REGRESSIONS=$ROOT/test/fixtures/fuzz-regressions
if [ -d "$ROOT/shared/conformance/fixtures" ]; then FIXTURES=$ROOT/shared/conformance/fixtures
else FIXTURES=$ROOT/../shared/conformance/fixtures; fi
ALL_TARGETS=(open_fuzz decode_fuzz plan_fuzz query_fuzz shard_fuzz cells_fuzz table_fuzz)

command -v clang++ >/dev/null || { echo "error: scripts/fuzz.sh needs clang++ (libFuzzer)" >&2; exit 2; }

MODE=fuzz
SECONDS_PER_TARGET=60
if [ "${1:-}" = "--replay" ]; then MODE=replay; shift
elif [ $# -gt 0 ]; then SECONDS_PER_TARGET=$1; shift; fi
[ $# -gt 0 ] && TARGETS=("$@") || TARGETS=("${ALL_TARGETS[@]}")

cmake -S "$ROOT" -B "$BUILD" -DTET_FUZZ=ON -DCMAKE_BUILD_TYPE=Fuzz \
  -DCMAKE_C_FLAGS_FUZZ="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$BUILD" -j 2 --target "${TARGETS[@]}" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0

if [ "$MODE" = replay ]; then
  for t in "${TARGETS[@]}"; do
    dir=$REGRESSIONS/$t
    files=()
    [ -d "$dir" ] && while IFS= read -r f; do files+=("$f"); done < <(find "$dir" -type f ! -name '*.md' | sort)
    if [ ${#files[@]} -eq 0 ]; then echo "$t: no regression files"; continue; fi
    if "$BUILD/$t" -runs=1 "${files[@]}" >"$BUILD/$t.replay.log" 2>&1; then
      echo "$t: replayed ${#files[@]} regression files, clean"
    else
      echo "$t: REGRESSION (see $BUILD/$t.replay.log)"; tail -30 "$BUILD/$t.replay.log"; status=1
    fi
  done
  exit $status
fi

mkdir -p "$BUILD/logs" "$BUILD/artifacts"
for t in "${TARGETS[@]}"; do
  corpus=$BUILD/corpus/$t
  rm -rf "$BUILD/artifacts/$t"  # findings of earlier runs are already in $REGRESSIONS
  mkdir -p "$corpus" "$BUILD/artifacts/$t"
  if [ -z "$(ls -A "$corpus")" ]; then
    TET_FUZZ_SEEDS_OUT=$corpus TET_FUZZ_FIXTURES=$FIXTURES "$BUILD/$t"
  fi
  seeds=()
  [ -d "$REGRESSIONS/$t" ] && seeds+=("$REGRESSIONS/$t")
  log=$BUILD/logs/$t-$(date +%Y%m%dT%H%M%S).log
  echo "== $t: ${SECONDS_PER_TARGET}s (log $log)"
  set +e
  "$BUILD/$t" "$corpus" "${seeds[@]}" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2048 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t/" >"$log" 2>&1
  rc=$?
  set -e
  grep -aE "^#[0-9]+[[:space:]]+(INITED|DONE)" "$log" | tail -2 || true
  grep -aE "^Done [0-9]+ runs" "$log" || true
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" || true
  found=$(find "$BUILD/artifacts/$t" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    echo "$t: FINDING (exit $rc)"; grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5 || true
    mkdir -p "$REGRESSIONS/$t"
    for f in $found; do cp "$f" "$REGRESSIONS/$t/" && echo "  saved $REGRESSIONS/$t/$(basename "$f")"; done
    status=1
  fi
done
exit $status
