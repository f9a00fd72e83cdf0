#!/usr/bin/env bash
# Runs the integration tests (SDK, CLI, robustness, property) on Node 22 and 24 besides the
# Node that runs `npm test`: the runtimes come from the `node` package on npm (node@22, node@24),
# the addon is the same N-API binary. Usage: scripts/node-versions-test.sh [major ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TET_NODE_CACHE:-$root/.tmp/node-runtimes}"
versions=("$@"); [ ${#versions[@]} -gt 0 ] || versions=(22 24)
for v in "${versions[@]}"; do
  dir="$cache/node$v"
  if [ ! -x "$dir/node_modules/.bin/node" ]; then
    mkdir -p "$dir"
    # A package.json of its own: without one npm would install into the project above.
    echo '{ "private": true }' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node@$v" >/dev/null)
  fi
  node_bin="$dir/node_modules/.bin/node"
  [ -x "$node_bin" ] || { echo "node-versions: node@$v did not install into $dir" >&2; exit 1; }
  echo "node-versions: integration tests on $("$node_bin" --version)"
  (cd "$root" && "$node_bin" node_modules/vitest/vitest.mjs run --project integration --reporter=dot)
done
