'use strict';
// V8 code cache for the CLI (docs/performance.md "CLI start-up"): compiling the SDK's bundle
// (dist/sdk.cjs, ~600 KB) and commander is most of what `tet info` pays over a bare `node`.
// With a cache V8 deserialises the compiled code instead of parsing the sources again.
//   Node >= 22.1: node's own module.enableCompileCache() (every module; NODE_DISABLE_COMPILE_CACHE=1
//   turns it off, as node documents), into the package's cache directory.
//   Node 20: every CommonJS module loaded after enable() that has no dynamic import() is compiled
//   through vm.Script with cachedData; a module whose cache is missing or rejected gets a fresh
//   one written at exit (after the command ran, so the functions it compiled lazily are in it
//   too), atomically (write + rename), into <cache dir>/cli-<arch>-<v8>/.
//   The cache directory is the package's (lib/loader/cache-dir.ts, built as dist/cache-dir.cjs):
//   this user's, 0700, never one others can write (no cache at all there).
//   Modules with an import() keep node's own compile: on Node 20 an import() in vm-compiled code
//   needs --experimental-vm-modules, and the main-context loader constant loses its referrer once
//   the code comes from a cache ("A dynamic import callback was not specified").
// A cache file is keyed by the module's path, size and mtime, and V8 checks it against the source
// again (a mismatch is rejected and rewritten). Anything unexpected falls back to Node's own
// compile. TET_NO_COMPILE_CACHE=1 turns both off. Only the CLI calls this: require('tetration')
// never patches the module loader (the SDK bundle's own cache is dist/index.cjs's:
// lib/loader/sdk-loader.ts).
const Module = require('node:module');

// An import( that is not a method call (.import() / x_import()): such a module is left to node.
const DYNAMIC_IMPORT = /(?<![\w$.])import\s*\(/;

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
  if (typeof Module.enableCompileCache === 'function') {
    const dir = cacheDir.compileCacheDir('node');
    if (!dir) return 'off';
    try {
      Module.enableCompileCache(dir);
      return 'node';
    } catch {
      return 'off';
    }
  }
  const vm = require('node:vm');
  if (typeof Module.wrap !== 'function' || typeof Module.prototype._compile !== 'function') return 'off';
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = cacheDir.compileCacheDir(`cli-${process.arch}-${process.versions.v8}`);
  if (!dir) return 'off';
  const fresh = [];  // [cache file, script] of the modules compiled without a usable cache
  const compile = Module.prototype._compile;

  Module.prototype._compile = function compileWithCache(content, filename) {
    if (typeof content !== 'string' || content.startsWith('#!') || DYNAMIC_IMPORT.test(content)) return compile.call(this, content, filename);
    let file;
    let cachedData;
    let script;
    try {
      const st = fs.statSync(filename);
      file = path.join(dir, `${fnv1a(filename)}-${st.size}-${Math.floor(st.mtimeMs)}.v8`);
      try {
        cachedData = fs.readFileSync(file);
      } catch {
        cachedData = undefined;
      }
      script = new vm.Script(Module.wrap(content), { filename, cachedData });
    } catch {
      return compile.call(this, content, filename);  // Node's own path reports syntax errors its way
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
    for (const [file, script] of fresh) cacheDir.writeCacheFile(file, script.createCachedData());
  });
  return 'vm';
}

module.exports = { enable };
