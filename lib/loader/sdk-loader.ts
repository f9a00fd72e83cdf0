// dist/index.cjs: loads the SDK bundle (dist/sdk.cjs) with a V8 code cache, so a fresh process
// neither parses the bundle from source nor compiles the query path on its first query
// (docs/performance.md "First answer in a fresh process"). Without a usable cache it compiles as
// `require` would; the first answered query then writes one (lib/warm.ts tells it), off the query's path,
// so the functions that query compiled lazily are in it.
//
// Parts of the SDK that only some calls need are files of their own (dist/sdk-part-<name>.cjs:
// lib/loader/parts.ts: the query schema's generated validator; conversion, export, pictures and
// notebook display), each compiled the same way with a cache of its own. `require('tetration')`
// loads the eager ones (the validator) with the bundle, so a program's first query pays nothing
// for them, and the others at their first call; a caller that sets LAZY_PARTS (the CLI: `tet info`
// validates no query) gets each on first use (hooks.part).
//
// The cache files sit in this user's cache directory (lib/loader/cache-dir.ts: never one others
// can write); their names carry the file's content hash (scripts/finish-dist.mjs), the Node
// version and the architecture, and V8 rejects a cache of another V8, other flags or other source
// by itself (then a fresh one replaces it). TET_NO_COMPILE_CACHE=1: compiled from source, no
// cache read or written.
// Named imports, no __toESM copies of the builtins (lib/loader/cache-dir.ts).
import { existsSync } from 'node:fs';
import { Module } from 'node:module';
import { basename, join } from 'node:path';
import { Script } from 'node:vm';
import { compileCacheDebug, compileCacheDir, compileCacheOff, optionsTag, pruneCacheDir, writeCacheFile } from './cache-dir';
import type { LoaderHooks } from './hooks';
import { moduleFor, moduleInternals } from './module';
import { SDK_PARTS } from './parts';
import { readFilesReused, readLatin1, readReused } from './read-file';

// `sdk=<hash>;<part>=<hash>...`: replaced by scripts/finish-dist.mjs.
const BUNDLE_HASHES = '__TET_BUNDLE_HASHES__';
const hashes = new Map(BUNDLE_HASHES.split(';').map((kv) => kv.split('=') as [string, string]));

const M = moduleInternals;

// Each dist file is one function expression (scripts/finish-dist.mjs wraps it at build time):
// CommonJS's five parameters and the loader's hooks (lib/loader/hooks.ts): the import() the
// bundle's ES-only dependencies load through (a vm script has no module loader of its own for
// import(), Node 20 has one only behind an experimental flag: dist/dynamic-import.cjs, loaded by
// Node's beside this file, resolves them from the same folder), the first answer, and the parts.
type BundleWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string,
  hooks: LoaderHooks) => void;

/** One compiled file and what is left to do with its cache. */
interface Unit {
  script: Script;
  /** Where the answered cache goes; null when it was used (or there is no cache directory). */
  answeredFile: string | null;
  /** Where the load-time cache goes at exit; null when a cache was used. */
  loadedFile: string | null;
  debug(what: string): void;
  /**
   * A part's `compileAll` export (the generated validator's: scripts/build-schema.mjs): compiles
   * every function of the part, called before its cache is taken, so the cache holds the whole
   * part and not only what this process's first query reached. (Not done for the bundle: planning
   * a set of query shapes before taking its cache made the next processes' first query slower,
   * 0.3 -> 0.6 ms of validation and planning, measured interleaved.)
   */
  compileAll?: () => void;
}

const off = compileCacheOff() || BUNDLE_HASHES.startsWith('__');
const dir = off ? null : compileCacheDir();
// this process's Node options in its caches' names (cache-dir.ts optionsTag)
const tag = dir ? optionsTag() : '';
const units: Unit[] = [];
let answered = false;

function readOptional(f: string | null): Buffer | undefined {
  if (!f) return undefined;
  try {
    return readReused(f);
  } catch {
    return undefined;
  }
}

/**
 * Compiles dist/<file> (`name`: sdk or a part) with the first cache V8 accepts: `answered` (taken
 * after a process's first answer: the query path compiled in it), then `loaded` (taken at exit by
 * a process that answered none, as `tet info`); a process without the answered one writes it
 * when it answers.
 */
function compile(name: string, file: string, text?: string): Unit {
  const debug = (what: string) => compileCacheDebug(name === 'sdk' ? what : `${name} ${what}`);
  if (off) debug('off');
  else if (!dir) debug('no-dir');
  const hash = hashes.get(name);
  const stem = dir && hash ? join(dir, `${name}-${hash}-${process.version}-${process.arch}${tag}`) : null;
  const answeredFile = stem && `${stem}.answered.v8cache`, loadedFile = stem && `${stem}.loaded.v8cache`;
  // latin1: the bundles are ASCII (scripts/finish-dist.mjs), so this is a plain copy, and they
  // are compiled as read (no concatenation V8 would flatten again). `text`: the file's text as a
  // slice of the bundle's (readTogether).
  const source = text ?? readLatin1(file);
  for (const [f, isAnswered] of [[answeredFile, true], [loadedFile, false]] as const) {
    const cachedData = readOptional(f);
    if (!cachedData) continue;
    const script = new Script(source, { filename: file, cachedData });
    if (!script.cachedDataRejected) {
      debug(`accepted ${isAnswered ? 'answered' : 'loaded'}`);
      return { script, answeredFile: isAnswered ? null : answeredFile, loadedFile: null, debug };
    }
    debug(`rejected ${isAnswered ? 'answered' : 'loaded'}`);
  }
  if (stem) debug('none');
  return { script: new Script(source, { filename: file }), answeredFile, loadedFile, debug };
}

/** Runs a compiled file's wrapper as the CommonJS module `mod`; its caches are written later. */
function run(unit: Unit, mod: Module, file: string): void {
  const wrapper = unit.script.runInThisContext({ displayErrors: true }) as BundleWrapper;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(file), mod, file, __dirname, hooks);
  mod.loaded = true;
  // A part first loaded after the answer: it has no answer of its own to wait for.
  if (answered) unit.answeredFile = null;
  if (unit.answeredFile || unit.loadedFile) units.push(unit);
}

/** The unit's code cache, its part compiled in full first (Unit.compileAll). */
function cachedData(u: Unit): Buffer {
  try {
    u.compileAll?.();
  } catch {
    // a cache of what is compiled is still worth taking
  }
  u.compileAll = undefined;
  return u.script.createCachedData();
}

/** A cache file of this loader's: `<name>-<hash>-<node version>-<arch>[-f<options hash>].<answered|loaded>.v8cache`. */
const CACHE_FILE = /^[a-z][a-z0-9]*-[0-9a-f]+-v\d+\.\d+\.\d+-[a-z0-9]+(?:-f[0-9a-f]{8})?\.(?:answered|loaded)\.v8cache$/;
let tidied = false;

/**
 * After this process wrote caches (`written`): the directory tidied, once (cache-dir.ts
 * pruneCacheDir): the loaded cache of a unit whose answered one was written is never read again,
 * and caches of other builds or Node versions go once unwritten for CACHE_MAX_AGE_MS.
 */
function tidy(written: string[]): void {
  if (tidied || !dir || written.length === 0) return;
  tidied = true;
  const replaced = new Set(written.filter((f) => f.endsWith('.answered.v8cache'))
    .map((f) => basename(f).replace(/\.answered\.v8cache$/, '.loaded.v8cache')));
  pruneCacheDir(dir, (name, isDir) => !isDir && CACHE_FILE.test(name), (name) => replaced.has(name));
}

/** Writes unit `u`'s cache to `file` (`what` it is, for the debug line); `written` gets it if it was. */
function writeUnit(u: Unit, file: string, what: 'answered' | 'loaded', written: string[]): void {
  const ok = writeCacheFile(file, cachedData(u));
  u.debug(ok ? `written ${what}` : 'write-failed');
  if (ok) written.push(file);
}

function writeAnswered(): void {
  const written: string[] = [];
  for (const u of units) {
    if (!u.answeredFile) continue;
    writeUnit(u, u.answeredFile, 'answered', written);
    u.answeredFile = null;
    u.loadedFile = null;
  }
  tidy(written);
}

const parts = new Map<string, unknown>();
/** The bundle's modules handed to parts (hooks.part's `shared`). */
const sharedModules = new Map<string, unknown>();
/** The parts' texts read with the bundle (readTogether), until each is compiled. */
const partTexts = new Map<string, string>();

const partFile = (name: string) => join(__dirname, `sdk-part-${name}.cjs`);

/**
 * The bundle's text and its parts' (`names`), read as one string and handed out as slices of it
 * (V8 keeps a slice as a view of its parent: no copy). A string over 128 KiB lives in V8's large
 * object space, which does not count towards the young generation's scavenge trigger; ~100 KB
 * of part text read alone is a young string, and with Node's own start-up objects it put the
 * young generation past that trigger, so a fresh process's first query paid a scavenge (~2-4 ms
 * on a VM where fresh memory is slow to touch; docs/performance.md). A part that cannot be read
 * here (missing) is read again, and its error thrown, where it is first used; anything else
 * going wrong here reads every file on its own.
 */
function readTogether(bundle: string, names: string[]): string | undefined {
  try {
    // [part name ('' for the bundle), file]; a missing part is left to compile() to report
    const files = [['', bundle], ...names.map((n) => [n, partFile(n)]).filter(([, f]) => existsSync(f))];
    // One buffer for all, the loaders' reused one (read-file.ts: fresh memory is dear)
    const { bytes, sizes } = readFilesReused(files.map(([, f]) => f));
    const all = bytes.toString('latin1');
    let at = 0;
    let bundleText = '';
    files.forEach(([name], i) => {
      const text = all.slice(at, at + sizes[i]);
      if (name) partTexts.set(name, text);
      else bundleText = text;
      at += sizes[i];
    });
    return bundleText;
  } catch {
    partTexts.clear();
    return undefined;  // each file read on its own, as without parts
  }
}

const hooks: LoaderHooks = {
  import: (specifier) => (require(join(__dirname, 'dynamic-import.cjs')) as typeof import('./dynamic-import')).dynamicImport(specifier),
  answered: () => {
    if (answered) return;
    answered = true;
    // Nothing is scheduled where every cache was accepted (the usual case): a first setImmediate
    // costs a fresh process ~0.1-0.2 ms, which would land in its first answer.
    if (!units.some((u) => u.answeredFile)) return;
    setImmediate(writeAnswered);
    // A process that exits before that turn (the CLI ends once its command settled) writes at
    // exit, ahead of the exit listener below, which would take the load-time cache.
    process.prependOnceListener('exit', writeAnswered);
  },
  part: (name, shared) => {
    for (const [key, value] of Object.entries(shared ?? {})) sharedModules.set(key, value);
    if (parts.has(name)) return parts.get(name);
    if (!hashes.has(name) && !BUNDLE_HASHES.startsWith('__')) throw new Error(`tetration: no SDK part named ${name}`);
    const file = partFile(name);
    const mod = moduleFor(file, module);
    const text = partTexts.get(name);
    partTexts.delete(name);
    const unit = compile(name, file, text);
    run(unit, mod, file);
    const all = (mod.exports as { compileAll?: unknown }).compileAll;
    if (typeof all === 'function') unit.compileAll = all as () => void;
    parts.set(name, mod.exports);
    return mod.exports;
  },
  shared: (key) => {
    if (!sharedModules.has(key)) throw new Error(`tetration: an SDK part imports ${key}, which the bundle did not hand over`);
    return sharedModules.get(key);
  },
};

process.once('exit', () => {
  const written: string[] = [];
  for (const u of units) if (u.loadedFile) writeUnit(u, u.loadedFile, 'loaded', written);
  tidy(written);
});

// Set to true on globalThis before the first require by a caller that wants the parts on first
// use (lib/cli/sdk.ts).
const LAZY_PARTS = Symbol.for('tetration.sdk.lazyParts');

function load(): unknown {
  const bundle = join(__dirname, 'sdk.cjs');
  const eager = (globalThis as Record<symbol, unknown>)[LAZY_PARTS] !== true;
  // the parts loaded with the bundle (lib/loader/parts.ts `eager`); the others on first use
  const partNames = [...hashes.keys()].filter((name) => SDK_PARTS.some((p) => p.name === name && p.eager));
  const unit = compile('sdk', bundle, eager && partNames.length > 0 ? readTogether(bundle, partNames) : undefined);
  const mod = moduleFor(bundle, module);
  M._cache[bundle] = mod;  // require('tetration/dist/sdk.cjs') gets this instance
  try {
    run(unit, mod, bundle);
  } catch (e) {
    delete M._cache[bundle];
    throw e;
  }
  if (eager) {
    for (const name of partNames) {
      try {
        hooks.part(name);
      } catch {
        // thrown again, with its message, by the first call that needs the part
      }
    }
  }
  return mod.exports;
}

module.exports = load();
