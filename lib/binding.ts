// The only module that loads the native addon. It loads with the SDK (preloadBinding, called by
// lib/index.ts; a failure is reported at first use) and once per
// JS environment (each worker_thread loads its own instance of the addon).
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TetError } from './errors';
import { thisFile } from './lazy-require';
import type { NativeBinding } from './native';

let loaded: NativeBinding | undefined;

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
/**
 * The addon where node-gyp-build would find it first in the usual layouts: build/Release (a
 * source build), else this platform's prebuild (prebuildify's prebuilds/<platform>-<arch>/, glibc
 * builds: not on musl, which node-gyp-build recognises the same way). Undefined otherwise, and
 * node-gyp-build searches its tags (musl, armv, Debug builds, ...). Requiring the file directly
 * saves node-gyp-build's module load and directory walk (~2 ms) on every process's first call.
 * @internal
 */
export function directAddonPath(root: string): string | undefined {
  const local = join(root, 'build', 'Release', 'tetration.node');
  if (existsSync(local)) return local;
  if (process.platform === 'linux' && existsSync('/etc/alpine-release')) return undefined;
  const prebuilt = join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'tetration.node');
  return existsSync(prebuilt) ? prebuilt : undefined;
}

export function binding(): NativeBinding {
  if (loaded) return loaded;
  // The folder above this file's (dist/.. in the package, lib/.. under vitest) is the package root
  // in every layout we ship: an addon there is loaded without reading package.json (~0.1 ms of
  // every `require('tetration')`); the walk up to tetration's package.json decides otherwise.
  const above = dirname(dirname(thisFile()));
  const near = directAddonPath(above);
  const root = near ? above : packageRoot();
  try {
    const direct = near ?? directAddonPath(root);
    if (direct) {
      // process.dlopen (public API, what require('x.node') ends in) skips the module system's
      // resolution of a path already known; the instance is this environment's, as require's is.
      const mod = { exports: {} as unknown };
      process.dlopen(mod, direct);
      loaded = mod.exports as NativeBinding;
    } else {
      const nodeGypBuild = createRequire(thisFile())('node-gyp-build') as (dir: string) => unknown;
      loaded = nodeGypBuild(root) as NativeBinding;
    }
  } catch (err) {
    throw new TetError('TET_BINDING_LOAD', loadFailureMessage(root, err), { cause: err });
  }
  return loaded;
}

/**
 * Loads the addon as the SDK itself loads (lib/index.ts calls it), so that loading it (~1-2 ms: mapping
 * the library, registering the module) is part of `require('tetration')` as a compiled
 * extension's is part of `import numpy`, and a fresh process's first `open()` does not pay it.
 * A failure is not reported here: `require` keeps working where the addon cannot load (query
 * validation, planning against a catalog) and the first call that needs it throws
 * TET_BINDING_LOAD, as before.
 */
export function preloadBinding(): void {
  if (loaded) return;
  try {
    binding();
  } catch {
    // thrown again, with its message, by the first binding() that needs the addon
  }
}

/** What was looked for and what is there, so a failed load says why (as sharp's does). */
export function loadFailureMessage(root: string, err: unknown): string {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const libc = process.platform !== 'linux' ? '' : report?.header?.glibcVersionRuntime
    ? ` glibc ${report.header.glibcVersionRuntime}` : ' musl (no glibc)';
  const platform = `${process.platform}-${process.arch}`;
  const prebuilds = join(root, 'prebuilds');
  const shipped = existsSync(prebuilds)
    ? readdirSync(prebuilds).filter((d) => statSync(join(prebuilds, d)).isDirectory()) : [];
  const local = join(root, 'build', 'Release', 'tetration.node');
  return `could not load the tetration native addon (${reason}).\n` +
    `  this runtime: ${platform}${libc}, Node ${process.versions.node}, N-API ${process.versions.napi}\n` +
    `  tried: ${join(prebuilds, platform)} (prebuilt for: ${shipped.join(', ') || 'none'}), ` +
    `${local} (${existsSync(local) ? 'present' : 'absent'})\n` +
    (shipped.includes(platform)
      ? '  a prebuild for this platform is there but did not load: reinstall tetration (`npm rebuild tetration`); ' +
        'on Linux the prebuild needs glibc, not musl (Alpine: build from source)\n'
      : '  no prebuild ships for this platform: ') +
    'build from source with `npm rebuild tetration` (needs Python 3, make and a C++17 compiler: ' +
    'build-essential on Linux, Xcode Command Line Tools on macOS, Visual Studio Build Tools on Windows).';
}
