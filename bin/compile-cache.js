'use strict';
// V8 code cache for the CLI (docs/performance.md "CLI start-up"): compiling commander, the
// command definitions and cli-table3 is much of what a `tet` command pays over a bare `node`.
// Every CommonJS module loaded after enable() that has no dynamic import() is compiled through
// vm.Script with cachedData; a module whose cache is missing or rejected gets a fresh one written
// at exit (after the command ran, so the functions it compiled lazily are in it too: node's own
// module.enableCompileCache() keeps only what was compiled eagerly, measured slower for `tet info`
// on Node 22 and 24), atomically (write + rename), into <cache dir>/cli-<arch>-<v8>/. Each command
// word (`tet info`, `tet query`, ...) has caches of its own: the first run of a command writes the
// functions that command compiled (cli-table3's for `info`), not whatever an earlier
// `tet --version` happened to compile.
//   The cache directory is the package's (lib/loader/cache-dir.ts, built as dist/cache-dir.cjs):
//   this user's, 0700, never one others can write (no cache at all there).
//   Modules with an import() keep node's own compile: on Node 20 an import() in vm-compiled code
//   needs --experimental-vm-modules, and the main-context loader constant loses its referrer once
//   the code comes from a cache ("A dynamic import callback was not specified").
// A cache file is keyed by the module's path, size and mtime and the command, and V8 checks it
// against the source again (a mismatch is rejected and rewritten); a write removes the entries it
// replaces and month-old ones (dist/cache-dir.cjs pruneCacheDir). Anything unexpected falls back
// to Node's own compile. TET_NO_COMPILE_CACHE=1 turns it off. Only the CLI calls this:
// require('tetration') never patches the module loader (the SDK bundle's own cache is
// dist/index.cjs's: lib/loader/sdk-loader.ts).
const Module = require('node:module');

// An import( that is not a method call (.import() / x_import()): such a module is left to node.
const DYNAMIC_IMPORT = /(?<![\w$.])import\s*\(/;
// A cache entry (`<path hash>-<size>-<mtime>-<command>.v8`: the path hash and the command are
// groups 1 and 2) and a directory of them (`cli-<arch>-<V8 version>`).
const ENTRY = /^([0-9a-f]{8})-\d+-\d+-([a-z]{2,12})\.v8$/;
const CLI_DIR = /^cli-[a-z0-9]+-\d+\.\d+\.\d+\.\d+(?:-node\.\d+)?$/;

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

function enable() {
  let cacheDir;
  try {
    cacheDir = require('../dist/cache-dir.cjs');
  } catch {
    return 'off';  // not built
  }
  if (cacheDir.compileCacheOff()) return 'off';
  const vm = require('node:vm');
  if (typeof Module.wrap !== 'function' || typeof Module.prototype._compile !== 'function') return 'off';
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = cacheDir.compileCacheDir(`cli-${process.arch}-${process.versions.v8}`);
  if (!dir) return 'off';
  const fresh = [];  // [cache file, script] of the modules compiled without a usable cache
  // the command word the caches belong to (a plain lower-case word; options and paths: 'none')
  const command = /^[a-z]{2,12}$/.test(process.argv[2] || '') ? process.argv[2] : 'none';
  const compile = Module.prototype._compile;

  Module.prototype._compile = function compileWithCache(content, filename) {
    if (typeof content !== 'string' || content.startsWith('#!') || DYNAMIC_IMPORT.test(content)) return compile.apply(this, arguments);
    let file;
    let cachedData;
    let script;
    try {
      const st = fs.statSync(filename);
      file = path.join(dir, `${fnv1a(filename)}-${st.size}-${Math.floor(st.mtimeMs)}-${command}.v8`);
      try {
        cachedData = fs.readFileSync(file);
      } catch {
        cachedData = undefined;
      }
      script = new vm.Script(Module.wrap(content), { filename, cachedData });
    } catch {
      return compile.apply(this, arguments);  // Node's own path reports syntax errors its way
    }
    if (cachedData === undefined || script.cachedDataRejected) fresh.push([file, script]);
    const fn = script.runInThisContext({ displayErrors: true });
    const mod = this;
    const require = function require(id) { return mod.require(id); };
    require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
    require.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
    require.main = process.mainModule;
    require.extensions = Module._extensions;
    require.cache = Module._cache;
    return fn.call(mod.exports, mod.exports, require, mod, filename, path.dirname(filename));
  };

  process.once('exit', () => {
    if (fresh.length === 0) return;
    const written = fresh.filter(([file, script]) => cacheDir.writeCacheFile(file, script.createCachedData()))
      .map(([file]) => path.basename(file));
    // The directory tidied (cache-dir.ts pruneCacheDir): an entry of the same module and command
    // with another size or mtime is of a file since replaced; entries unwritten for a month, and
    // the directories of other V8 versions unwritten for a month, go too.
    const replaced = new Set(written.map((name) => ENTRY.exec(name)).filter(Boolean).map((m) => `${m[1]}-${m[2]}`));
    cacheDir.pruneCacheDir(dir, (name, isDir) => !isDir && ENTRY.test(name), (name) => {
      const m = ENTRY.exec(name);
      return m !== null && replaced.has(`${m[1]}-${m[2]}`) && !written.includes(name);
    });
    const own = path.basename(dir);
    cacheDir.pruneCacheDir(path.dirname(dir), (name, isDir) => isDir && CLI_DIR.test(name) && name !== own);
  });
  return 'vm';
}

module.exports = { enable };
