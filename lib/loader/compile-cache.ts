// V8 code cache for the CLI (docs/performance.md "CLI start-up"), built as dist/compile-cache.cjs
// with the cache directory rules (./cache-dir) inside, so that `tet` loads one module for both
// before the CLI bundle (two modules cost ~0.3 ms more of every start). bin/tet.js calls enable()
// first, then loads the CLI bundle with loadBundle (below). Every CommonJS module loaded after enable() that has no dynamic import() is compiled
// through vm.Script with cachedData; a module whose cache is missing or rejected gets a fresh one
// written at exit (after the command ran, so the functions it compiled lazily are in it too:
// node's own module.enableCompileCache() keeps only what was compiled eagerly, measured slower for
// `tet info` on Node 22 and 24), atomically (write + rename), into <cache dir>/cli-<arch>-<v8>[-f<options hash>]/ (cache-dir.ts optionsTag).
// Each command word (`tet info`, `tet query`, ...) has caches of its own: the first run of a
// command writes the functions that command compiled, not whatever an earlier `tet --version`
// happened to compile.
//   The cache directory is the package's (cache-dir.ts): this user's, 0700, never one others can
//   write (no cache at all there).
//   Modules with an import() keep node's own compile: on Node 20 an import() in vm-compiled code
//   needs --experimental-vm-modules, and the main-context loader constant loses its referrer once
//   the code comes from a cache ("A dynamic import callback was not specified"). The package's own
//   CLI bundle and loader (IMPORT_FREE) are built without one (scripts/finish-dist.mjs checks) and
//   skip the scan (~0.1 ms of the CLI's 140 KB).
// A cache file is keyed by the module's path, size and mtime and the command, and V8 checks it
// against the source again (a mismatch is rejected and rewritten); a write removes the entries it
// replaces and month-old ones (cache-dir.ts pruneCacheDir). Anything unexpected falls back to
// Node's own compile. TET_NO_COMPILE_CACHE=1 turns it off. Only the CLI calls this:
// require('tetration') never patches the module loader (the SDK bundle's own cache is
// dist/index.cjs's: sdk-loader.ts).
import { statSync } from 'node:fs';
import type { Module } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { compileCacheDir, compileCacheOff, fnv1a, optionsTag, pruneCacheDir, writeCacheFile } from './cache-dir';
import { moduleFor, moduleInternals } from './module';
import { readLatin1, readReused } from './read-file';

/** An import( that is not a method call (.import() / x_import()): such a module is left to node. */
export const DYNAMIC_IMPORT = /(?<![\w$.])import\s*\(/;
/** The package's files beside this one that are built without an import() (finish-dist checks). */
export const IMPORT_FREE: readonly string[] = ['cli.cjs', 'index.cjs'];
// A cache entry (`<path hash>-<size>-<mtime>-<command>.v8`: the path hash and the command are
// groups 1 and 2) and a directory of them (`cli-<arch>-<V8 version>[-f<options hash>]`).
const ENTRY = /^([0-9a-f]{8})-\d+-\d+-([a-z]{2,12})\.v8$/;
const CLI_DIR = /^cli-[a-z0-9]+-\d+\.\d+\.\d+\.\d+(?:-node\.\d+)?(?:-f[0-9a-f]{8})?$/;

type LoadableModule = Module & { _compile: (content: string, filename: string) => unknown };
type LocalRequire = ((id: string) => unknown) & {
  resolve?: unknown; main?: unknown; extensions?: unknown; cache?: unknown;
};

/** Turns the CLI's code cache on: 'vm' when on, 'off' when turned off or not possible here. */
export function enable(): 'vm' | 'off' {
  if (compileCacheOff()) return 'off';
  const M = moduleInternals;
  const compile = M.prototype._compile;
  if (typeof M.wrap !== 'function' || typeof compile !== 'function') return 'off';
  const dir = compileCacheDir(`cli-${process.arch}-${process.versions.v8}${optionsTag()}`);
  if (!dir) return 'off';
  const fresh: [string, Script][] = [];  // [cache file, script] of the modules compiled without a usable cache
  // the command word the caches belong to (a plain lower-case word; options and paths: 'none')
  const command = /^[a-z]{2,12}$/.test(process.argv[2] || '') ? process.argv[2] : 'none';
  const importFree = new Set(IMPORT_FREE.map((f) => join(__dirname, f)));

  M.prototype._compile = function compileWithCache(this: Module, content: string, filename: string, ...rest: unknown[]) {
    if (typeof content !== 'string' || content.startsWith('#!') ||
        (!importFree.has(filename) && DYNAMIC_IMPORT.test(content))) {
      return compile.call(this, content, filename, ...rest);
    }
    let file: string;
    let cachedData: Buffer | undefined;
    let script: Script;
    try {
      const st = statSync(filename);
      file = join(dir, `${fnv1a(filename)}-${st.size}-${Math.floor(st.mtimeMs)}-${command}.v8`);
      try {
        cachedData = readReused(file);
      } catch {
        cachedData = undefined;
      }
      script = new Script(M.wrap!(content), { filename, cachedData });
    } catch {
      return compile.call(this, content, filename, ...rest);  // Node's own path reports syntax errors its way
    }
    if (cachedData === undefined || script.cachedDataRejected) fresh.push([file, script]);
    const fn = script.runInThisContext({ displayErrors: true }) as
      (exports: unknown, require: LocalRequire, module: Module, filename: string, dirname: string) => unknown;
    const require: LocalRequire = (id: string) => this.require(id);
    const resolve = (request: string, options?: unknown) => M._resolveFilename(request, this, false, options);
    resolve.paths = (request: string) => M._resolveLookupPaths(request, this);
    require.resolve = resolve;
    require.main = process.mainModule;
    require.extensions = M._extensions;
    require.cache = M._cache;
    return fn.call(this.exports, this.exports, require, this, filename, dirname(filename));
  };

  process.once('exit', () => {
    if (fresh.length === 0) return;
    const written = fresh.filter(([file, script]) => writeCacheFile(file, script.createCachedData()))
      .map(([file]) => basename(file));
    // The directory tidied (cache-dir.ts pruneCacheDir): an entry of the same module and command
    // with another size or mtime is of a file since replaced; entries unwritten for a month, and
    // the directories of other V8 versions unwritten for a month, go too.
    const replaced = new Set(written.map((name) => ENTRY.exec(name)).filter((m) => m !== null).map((m) => `${m[1]}-${m[2]}`));
    pruneCacheDir(dir, (name, isDir) => !isDir && ENTRY.test(name), (name) => {
      const m = ENTRY.exec(name);
      return m !== null && replaced.has(`${m[1]}-${m[2]}`) && !written.includes(name);
    });
    const own = basename(dir);
    pruneCacheDir(dirname(dir), (name, isDir) => isDir && CLI_DIR.test(name) && name !== own);
  });
  return 'vm';
}

/**
 * Loads one of the package's ASCII CommonJS bundles (`file`, an absolute path beside this one) as
 * `require` would, but reads it as latin1: Node's loader reads every module as UTF-8, a decode
 * and a copy of the whole text into fresh memory (~0.2 ms of the CLI's 140 KB here). Compiled
 * through the cache where enable() turned it on.
 */
export function loadBundle(file: string, parent: Module): unknown {
  const cache = moduleInternals._cache;
  if (cache[file]) return cache[file].exports;
  const mod = moduleFor(file, parent) as LoadableModule;
  cache[file] = mod;
  try {
    mod._compile(readLatin1(file), file);
  } catch (e) {
    delete cache[file];
    throw e;
  }
  mod.loaded = true;
  return mod.exports;
}
