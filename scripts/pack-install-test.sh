#!/usr/bin/env bash
# Pack-and-install test: `npm pack` (prepack ships dist/ and the prebuilt addon), install the
# tarball into an empty project whose PATH has no C/C++ compiler, then use it as a user would:
# require (CJS), import (ESM), a TypeScript consumer type-checked against the shipped .d.ts,
# and `npx tet` on the bundled sample. Fails on the first thing that does not work.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tet-pack-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "pack-install: packing"
(cd "$root" && npm pack --silent --pack-destination "$work" >"$work/pack.txt")
tarball="$work/$(tail -n 1 "$work/pack.txt")"
tar -tzf "$tarball" >"$work/files.txt"
for f in package/dist/index.cjs package/dist/index.mjs package/dist/index.d.ts package/dist/cli.cjs \
         "package/prebuilds/$(node -p 'process.platform + "-" + process.arch')/tetration.node" \
         package/samples/weather.tet package/bin/tet.js; do
  grep -qx "$f" "$work/files.txt" || { echo "pack-install: $f is not in the tarball" >&2; exit 1; }
done
if command -v aarch64-linux-gnu-g++ >/dev/null && ! grep -qx package/prebuilds/linux-arm64/tetration.node "$work/files.txt"; then
  echo "pack-install: the aarch64 toolchain is here but the tarball has no linux-arm64 prebuild" >&2; exit 1
fi
if grep -q '^package/native/tests/\|^package/native/fuzz/\|^package/build/' "$work/files.txt"; then
  echo "pack-install: the tarball ships test, fuzz or build outputs" >&2; exit 1
fi

# A PATH with node, npm and sh only (npm runs scripts with sh): no cc, c++, gcc, g++, clang, make.
bin="$work/bin"; mkdir -p "$bin"
for t in node npm npx sh; do ln -s "$(command -v "$t")" "$bin/$t"; done
for t in cc c++ gcc g++ clang clang++ make; do
  if PATH="$bin" command -v "$t" >/dev/null 2>&1; then echo "pack-install: $t is on the test PATH" >&2; exit 1; fi
done

app="$work/app"; mkdir -p "$app"
cat >"$app/package.json" <<'JSON'
{ "name": "tet-consumer", "version": "1.0.0", "private": true }
JSON
echo "pack-install: installing $(basename "$tarball") without a compiler"
(cd "$app" && PATH="$bin" npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
[ -d "$app/node_modules/tetration/build" ] && { echo "pack-install: install compiled the addon" >&2; exit 1; }

sample="$app/node_modules/tetration/samples/weather.tet"
cat >"$app/use.cjs" <<'JS'
const tet = require('tetration');
(async () => {
  const f = await tet.open(process.argv[2]);
  const r = await f.query({ dataset: 'temperature', count: [] });
  const n = f.datasets.find((d) => d.name === 'temperature').shape.reduce((a, b) => a * b, 1);
  if (r.execution.operation_element_count !== n) throw new Error(`count ${r.execution.operation_element_count} != ${n}`);
  f.close();
  console.log('cjs ok', n);
})().catch((e) => { console.error(e); process.exit(1); });
JS
cat >"$app/use.mjs" <<'JS'
import { open, TetError } from 'tetration';
const f = await open(process.argv[2]);
const r = await f.query({ dataset: 'temperature', max: [] });
if (typeof r.execution.operation_max !== 'number') throw new Error('no max');
try { await f.query({ dataset: 'nope', sum: [] }); } catch (e) { if (!(e instanceof TetError)) throw e; }
f.close();
console.log('esm ok', r.execution.operation_max);
JS
cat >"$app/use.ts" <<'TS'
import { open, isTetError, type QueryResponse, type TetFile } from 'tetration';
export async function meanOf(path: string): Promise<number> {
  const f: TetFile = await open(path);
  try {
    const r: QueryResponse = await f.query({ dataset: 'temperature', mean: [] });
    const m: number | undefined = r.execution?.operation_mean;
    return m ?? Number.NaN;
  } catch (e) {
    if (isTetError(e, 'TET_QUERY_UNKNOWN_DATASET')) return Number.NaN;
    throw e;
  } finally {
    f.close();
  }
}
TS
cat >"$app/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "module": "node16", "moduleResolution": "node16",
  "target": "es2022", "types": [], "skipLibCheck": false }, "files": ["use.ts"] }
JSON
(cd "$app" && PATH="$bin" node use.cjs "$sample" && PATH="$bin" node use.mjs "$sample")
echo "pack-install: type-checking a TypeScript consumer against the shipped .d.ts"
mkdir -p "$app/node_modules/@types"
ln -s "$root/node_modules/@types/node" "$app/node_modules/@types/node"
sed -i 's/"types": \[\]/"types": ["node"]/' "$app/tsconfig.json"
(cd "$app" && PATH="$bin" node "$root/node_modules/typescript/bin/tsc" -p tsconfig.json)
echo "pack-install: npx tet on the bundled sample"
out="$(cd "$app" && PATH="$bin" npx --no-install tet query node_modules/tetration/samples/monthly_mean_map.toml \
  -t node_modules/tetration/samples/weather.tet -x --format quiet)"
echo "  $out"
[ -n "$out" ] || { echo "pack-install: tet printed nothing" >&2; exit 1; }
(cd "$app" && PATH="$bin" npx --no-install tet info node_modules/tetration/samples/weather.tet | head -1 >/dev/null)
echo "pack-install: ok"
