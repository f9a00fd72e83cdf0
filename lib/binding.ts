// The only module that loads the native addon. Loading is lazy (first use) and happens once per
// JS environment (each worker_thread loads its own instance of the addon).
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TetError } from './errors';
import type { NativeBinding } from './native';

let loaded: NativeBinding | undefined;

// This file runs as lib/binding.ts (vitest), dist/index.cjs or dist/index.mjs.
function thisFile(): string {
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);
}

/** The package root: the nearest directory upwards holding tetration's package.json. */
export function packageRoot(): string {
  let dir = dirname(thisFile());
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === 'tetration') return dir;
      } catch {
        // unreadable manifest: keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new TetError('TET_BINDING_LOAD', `cannot find tetration's package.json above ${dirname(thisFile())}`);
    }
    dir = parent;
  }
}

/** The native addon (lib/native.ts), loaded on first call. Throws TetError TET_BINDING_LOAD. */
export function binding(): NativeBinding {
  if (loaded) return loaded;
  const root = packageRoot();
  try {
    const requireHere = createRequire(thisFile());
    const nodeGypBuild = requireHere('node-gyp-build') as (dir: string) => unknown;
    loaded = nodeGypBuild(root) as NativeBinding;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new TetError(
      'TET_BINDING_LOAD',
      `could not load the tetration native addon from ${root} (${reason}). ` +
        'No prebuilt binary matches this platform/Node ABI and no local build was found: run ' +
        '`npm rebuild tetration` (needs Python 3, make and a C++17 compiler: build-essential on ' +
        'Linux, Xcode Command Line Tools on macOS, Visual Studio Build Tools on Windows).',
      { cause: err },
    );
  }
  return loaded;
}
