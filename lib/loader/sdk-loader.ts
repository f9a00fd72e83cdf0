// dist/index.cjs: loads the SDK bundle (dist/sdk.cjs) with a V8 code cache, so a fresh process
// neither parses the 610 KB bundle from source nor compiles the query path on its first query
// (docs/performance.md "First answer in a fresh process"). Without a usable cache it compiles as
// `require` would; the first answered query then writes one (lib/warm.ts tells it), off the query's path,
// so the functions that query compiled lazily are in it.
//
// The cache file sits in this user's cache directory (lib/loader/cache-dir.ts: never one others
// can write); its name carries the bundle's content hash (scripts/finish-dist.mjs), the Node
// version and the architecture, and V8 rejects a cache of another V8, other flags or other source
// by itself (then a fresh one replaces it). TET_NO_COMPILE_CACHE=1: compiled from source, no
// cache read or written.
// Named imports, no __toESM copies of the builtins (lib/loader/cache-dir.ts).
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { compileCacheDebug as debug, compileCacheDir, compileCacheOff, writeCacheFile } from './cache-dir';
import type { LoaderHooks } from './hooks';

const BUNDLE_HASH = '__TET_SDK_HASH__';  // replaced by scripts/finish-dist.mjs
const bundle = join(__dirname, 'sdk.cjs');

type ModuleInternals = typeof Module & { _nodeModulePaths(dir: string): string[]; _cache: Record<string, Module> };

// dist/sdk.cjs is one function expression (scripts/finish-dist.mjs wraps the bundle at build
// time): CommonJS's five parameters and the loader's hooks (lib/loader/hooks.ts): the import()
// the bundle's ES-only dependencies load through (a vm script has no module loader of its own
// for import(), Node 20 has one only behind an experimental flag; this module is loaded by
// Node's, so its import() resolves them, from the same folder) and the first answer.
type BundleWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string,
  hooks: LoaderHooks) => void;

function load(): unknown {
  const M = Module as ModuleInternals;
  const off = compileCacheOff() || BUNDLE_HASH.startsWith('__');
  if (off) debug('off');
  const dir = off ? null : compileCacheDir();
  if (!off && !dir) debug('no-dir');
  // Two caches: `answered` (taken after this process's first answer: the query path compiled in
  // it) and `loaded` (taken at exit by a process that answered none, as `tet info`): the first
  // one V8 accepts is used, and a process without the answered one writes it when it answers.
  const stem = dir ? join(dir, `sdk-${BUNDLE_HASH}-${process.version}-${process.arch}`) : null;
  const answeredFile = stem && `${stem}.answered.v8cache`, loadedFile = stem && `${stem}.loaded.v8cache`;
  const read = (f: string | null): Buffer | undefined => {
    if (!f) return undefined;
    try {
      return readFileSync(f);
    } catch {
      return undefined;
    }
  };
  // latin1: the bundle is ASCII (scripts/finish-dist.mjs), so this is a plain copy, and it is
  // compiled as read (no concatenation V8 would flatten again).
  const source = readFileSync(bundle, 'latin1');
  let usedAnswered = false;
  let script: Script | undefined;
  for (const [f, answered] of [[answeredFile, true], [loadedFile, false]] as const) {
    const cachedData = read(f);
    if (!cachedData) continue;
    script = new Script(source, { filename: bundle, cachedData });
    if (!script.cachedDataRejected) {
      usedAnswered = answered;
      debug(`accepted ${answered ? 'answered' : 'loaded'}`);
      break;
    }
    debug(`rejected ${answered ? 'answered' : 'loaded'}`);
    script = undefined;
  }
  const fromCache = script !== undefined;
  script ??= new Script(source, { filename: bundle });
  if (!fromCache && stem) debug('none');
  const mod = new Module(bundle, module);
  mod.filename = bundle;
  mod.paths = M._nodeModulePaths(__dirname);
  M._cache[bundle] = mod;  // require('tetration/dist/sdk.cjs') gets this instance
  let onAnswer: (() => void) | null = null;
  const hooks: LoaderHooks = {
    import: (specifier) => import(specifier),
    answered: () => { onAnswer?.(); onAnswer = null; },
  };
  try {
    const wrapper = script.runInThisContext({ displayErrors: true }) as BundleWrapper;
    wrapper.call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, __dirname, hooks);
  } catch (e) {
    delete M._cache[bundle];
    throw e;
  }
  mod.loaded = true;
  if (answeredFile && loadedFile && !usedAnswered) {
    const compiled = script;
    let answered = false;
    onAnswer = () => {
      answered = true;
      debug(writeCacheFile(answeredFile, compiled.createCachedData()) ? 'written answered' : 'write-failed');
    };
    if (!fromCache) {
      process.once('exit', () => {
        if (!answered) debug(writeCacheFile(loadedFile, compiled.createCachedData()) ? 'written loaded' : 'write-failed');
      });
    }
  }
  return mod.exports;
}

module.exports = load();
