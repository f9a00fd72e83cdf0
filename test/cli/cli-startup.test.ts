// What `tet` loads at start (docs/performance.md "CLI start-up"): `tet --version` and `--help`
// run commander and the CLI's entry only, not the SDK (dist/index.cjs) or the addon; `tet info`
// and `tet query` load the SDK but none of the converters' packages, the TOML parser, the
// progress bar or the plotting libraries, nor the SDK's part of those (dist/sdk-part-extras.cjs).
// Which modules, not how long (no timings in tests): a
// child process records every file it requires; a dist file stands for the lib/ modules it
// holds (the sources of its source map: the bundles are minified), less those esbuild wraps for
// a deferred start (an init function named by the module's path) whose init never ran. The
// packages bundled into the CLI (commander, string-width, cli-progress: tsup.config.ts) are counted
// as loaded when their code ran: V8's coverage of the child (NODE_V8_COVERAGE) says which
// functions were called, and a function whose source map entry is a node_modules/<pkg>/ file
// means <pkg> was loaded.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SDK_PARTS } from '../../lib/loader/parts';
import { ROOT } from '../support/paths';

const CLI = join(ROOT, 'dist/cli.cjs');
const SAMPLE = join(ROOT, 'samples/weather.tet');

// Runs the CLI in a child that hooks the module loader and process.dlopen; prints the resolved
// files it required or loaded.
const RECORDER = `
const M = require('module');
const load = M._load;
const files = new Set();
M._load = function (request, parent, isMain) {
  try { files.add(M._resolveFilename(request, parent, isMain)); } catch {}
  return load.apply(this, arguments);
};
// The SDK loads its addon with process.dlopen (lib/binding.ts), not through the module loader.
const dlopen = process.dlopen;
process.dlopen = function (mod, filename, ...rest) {
  files.add(filename);
  return dlopen.call(this, mod, filename, ...rest);
};
process.on('exit', () => require('fs').writeSync(2, '\\nLOADED ' + JSON.stringify([...files]) + '\\n'));
process.argv = [process.argv[0], process.env.TET_ENTRY, ...JSON.parse(process.env.TET_ARGS)];
require(process.env.TET_ENTRY);
`;

interface Loaded {
  packages: Set<string>; modules: Set<string>; builtins: Set<string>; addon: boolean; sdk: boolean;
  /** The SDK's parts the package loader compiled (lib/loader/parts.ts; its debug lines say which). */
  parts: Set<string>;
}

interface V8Coverage {
  result: { url: string; functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[] }[];
}

/** The source map of dist file `file` (tsup writes `<file>.map` beside each bundle). */
function sourceMapOf(file: string): SourceMap {
  return new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
}

/**
 * The lib/ and schema/ files bundled into dist file `file` (by its source map) that started in
 * the child: all but those with a deferred init (esbuild's `__esm({"lib/x.ts"() {...}})`, a
 * function named by the path) that the child's coverage `cov` shows was never called.
 */
function bundledModules(file: string, cov: V8Coverage[]): string[] {
  const url = pathToFileURL(file).href;
  const notStarted = new Set<string>();
  for (const c of cov) {
    for (const script of c.result) {
      if (script.url !== url) continue;
      for (const fn of script.functions) if (fn.ranges[0]?.count === 0) notStarted.add(fn.functionName);
    }
  }
  return sourceMapOf(file).payload.sources
    .map((src) => src.replace(/^(\.\.\/)+/, ''))
    .filter((src) => /^(lib|schema)\//.test(src) && !notStarted.has(src));
}

/** The packages bundled into dist file `file` whose code ran, by the child's coverage `cov`. */
function bundledPackagesRun(file: string, cov: V8Coverage[]): string[] {
  const text = readFileSync(file, 'utf8');
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const map = sourceMapOf(file);
  const packageAt = (offset: number): string | null => {
    let lo = 0, hi = lineStarts.length - 1;  // the last line starting at or before offset
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    const entry = map.findEntry(lo, offset - lineStarts[lo]) as { originalSource?: string };
    const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(entry.originalSource ?? '');
    return pkg ? pkg[1] : null;
  };
  const ran = new Set<string>();
  const url = pathToFileURL(file).href;
  for (const c of cov) {
    for (const script of c.result) {
      if (script.url !== url) continue;
      for (const fn of script.functions) {
        const r = fn.ranges[0];
        if (!r || r.count === 0) continue;
        const pkg = packageAt(r.startOffset);
        // tsup's own shims (import.meta.url for CommonJS) are the build's, not a dependency
        if (pkg && pkg !== 'tsup') ran.add(pkg);
      }
    }
  }
  return [...ran];
}

/** What `tet args` loads: dist/cli.cjs run directly, or `entry` (bin/tet.js: with its code cache); `env` added. */
function loadedBy(args: string[], { entry = CLI, env = {} }: { entry?: string; env?: Record<string, string> } = {}): Loaded {
  const covDir = mkdtempSync(join(tmpdir(), 'tet-startup-cov-'));
  try {
    const r = spawnSync(process.execPath, ['-e', RECORDER], {
      encoding: 'utf8', cwd: ROOT,
      env: { ...process.env, TET_ARGS: JSON.stringify(args), TET_ENTRY: entry, TET_NO_QUERY_HISTORY: '1', NODE_V8_COVERAGE: covDir,
        TET_COMPILE_CACHE_DEBUG: '1', ...env },
    });
    expect(r.status, r.stderr).toBe(0);
    const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
    const files = JSON.parse(line!.slice('LOADED '.length)) as string[];
    const cov = readdirSync(covDir).map((f) => JSON.parse(readFileSync(join(covDir, f), 'utf8')) as V8Coverage);
    const packages = new Set<string>();
    const modules = new Set<string>();
    const builtins = new Set<string>();
    let addon = false;
    let sdk = false;
    for (const f of files) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
      if (pkg) packages.add(pkg[1]);
      else if (f.endsWith('.node')) addon = true;
      else if (f === join(ROOT, 'dist/index.cjs')) sdk = true;
      else if (f.startsWith(join(ROOT, 'dist'))) {
        for (const m of bundledModules(f, cov)) modules.add(m);
        for (const p of bundledPackagesRun(f, cov)) packages.add(p);
      } else if (!f.startsWith('/')) builtins.add(f.replace(/^node:/, ''));
    }
    const parts = new Set(r.stderr.split('\n').map((l) => /^tetration: code cache (\w+) /.exec(l)?.[1] ?? '')
      .filter((w) => SDK_PARTS.some((p) => p.name === w)));
    return { packages, modules, builtins, addon, sdk, parts };
  } finally {
    rmSync(covDir, { recursive: true, force: true });
  }
}

// Packages only conversion, export, TOML documents, a drawn bar or a picture need.
const HEAVY_PACKAGES = ['smol-toml', 'cli-progress', 'h5wasm', 'h5wasm-plugins', 'zarrita', '@zarrita/storage', 'netcdfjs',
  'numcodecs', 'vega', 'sharp'];

describe.skipIf(!existsSync(CLI))('modules loaded at start', () => {
  it('--version and --help: commander and the CLI entry only (no SDK, no addon, no child_process)', () => {
    for (const args of [['--version'], ['--help'], ['query', '--help']]) {
      const l = loadedBy(args);
      expect([...l.packages], args.join(' ')).toEqual(['commander']);
      // commander's require of it is made lazy at build time (tsup.config.ts)
      expect(l.builtins.has('child_process'), args.join(' ')).toBe(false);
      expect(l.addon).toBe(false);
      expect(l.sdk, `${args.join(' ')} loads the SDK`).toBe(false);
      expect(l.modules.has('lib/cli/main.ts')).toBe(true);  // the source maps are there to read
      expect(l.modules.has('lib/cli/format.ts')).toBe(false);
      // besides the CLI's own: the query history's home directory (lib/user-dirs.ts, with
      // lib/lazy-require.ts and the Module class of lib/loader/node-module.ts), leaves that load
      // nothing
      const leaves = ['package.json', 'lib/user-dirs.ts', 'lib/lazy-require.ts', 'lib/loader/node-module.ts'];
      for (const m of l.modules) expect(m.startsWith('lib/cli/') || leaves.includes(m), m).toBe(true);
    }
  });

  it('tet info: the SDK and the table, but no validator, converter package, TOML parser, bar or plotting', () => {
    const l = loadedBy(['info', SAMPLE]);
    expect(l.sdk).toBe(true);
    expect(l.addon).toBe(true);
    expect(l.modules.has('lib/cli/box-table.ts')).toBe(true);
    expect(l.packages.has('string-width')).toBe(true);  // the table's text widths
    for (const p of HEAVY_PACKAGES) expect(l.packages.has(p), p).toBe(false);
    expect([...l.parts]).toEqual([]);  // neither the validator nor conversion / pictures
  });

  it('a JSON query with -x: the validator, but no converter package, TOML parser, table unless --format table, or picture part unless --plot', () => {
    const l = loadedBy(['query', '{"dataset":"temperature","mean":[]}', '-t', SAMPLE, '-x', '--format', 'quiet']);
    expect(l.sdk).toBe(true);
    expect(l.modules.has('lib/cli/format.ts')).toBe(true);
    for (const p of [...HEAVY_PACKAGES, 'string-width']) expect(l.packages.has(p), p).toBe(false);
    expect([...l.parts]).toEqual(['validate']);
    const toml = loadedBy(['query', 'dataset = "temperature"\nmean = []', '-t', SAMPLE, '-x', '--format', 'table']);
    expect(toml.packages.has('smol-toml')).toBe(true);
    expect(toml.packages.has('string-width')).toBe(true);
    expect([...toml.parts]).toEqual(['validate']);
    const svg = join(tmpdir(), `tet-startup-${process.pid}.svg`);
    try {
      const plot = loadedBy(['query', '{"dataset":"temperature","mean":[0]}', '-t', SAMPLE, '-x', '--format', 'quiet', '--plot', svg]);
      expect([...plot.parts].sort()).toEqual(['extras', 'validate']);
      expect(readFileSync(svg, 'utf8')).toContain('<svg');
    } finally {
      rmSync(svg, { force: true });
    }
  });
});

describe.skipIf(!existsSync(CLI))('builtins loaded at start', () => {
  // node:module (its ES-module loader and source-map parts) and node:os cost a fresh process
  // ~0.2-0.3 and ~0.2 ms: the CommonJS builds take Module from the module object
  // (lib/loader/node-module.ts) and the home and temporary directories from the environment
  // (lib/user-dirs.ts), with the code cache, the query history and the SDK all in play.
  it('tet query -x and tet info through bin/tet.js require neither node:module nor node:os', () => {
    const home = mkdtempSync(join(tmpdir(), 'tet-startup-home-'));
    try {
      const env = { HOME: home, XDG_CACHE_HOME: '', TET_NO_QUERY_HISTORY: '0', TET_COMPILE_CACHE_DIR: join(home, 'cc') };
      const entry = join(ROOT, 'bin/tet.js');
      for (const args of [['query', '{"dataset":"temperature","mean":[]}', '-t', SAMPLE, '-x', '--format', 'quiet'], ['info', SAMPLE]]) {
        for (let run = 0; run < 2; run++) {  // writing the code caches, then reading them
          const l = loadedBy(args, { entry, env });
          expect(l.sdk).toBe(true);
          expect(l.builtins.has('module'), `${args[0]} run ${run}`).toBe(false);
          expect(l.builtins.has('os'), `${args[0]} run ${run}`).toBe(false);
        }
      }
      // the history went where os.homedir() says
      expect(readFileSync(join(home, '.cache', 'tetration', 'query_history.jsonl'), 'utf8')).toContain('"temperature"');
      expect(readdirSync(join(home, 'cc')).some((d) => d.startsWith('cli-'))).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

// bin/tet.js compiles the CLI's modules through a V8 code cache (lib/loader/compile-cache.ts): the first
// run of a command writes its entries, later runs read them, another command has entries of its
// own, a damaged entry is rejected by V8 and rewritten, and TET_NO_COMPILE_CACHE=1 leaves it
// alone. The answers never change.
describe.skipIf(!existsSync(CLI))('the code cache of bin/tet.js', () => {
  const BIN = join(ROOT, 'bin/tet.js');

  function run(tmp: string, extra: Record<string, string> = {}, args = ['info', '-q', SAMPLE]): string {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8', cwd: ROOT, env: { ...process.env, TMPDIR: tmp, TET_NO_QUERY_HISTORY: '1', ...extra },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    return r.stdout;
  }
  const entries = (tmp: string): string[] => {
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else files.push(join(d, e.name));
      }
    };
    walk(tmp);
    return files.sort();
  };

  it('written once, then read; a damaged entry is rewritten; the output is the same each time', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'tet-cc-'));
    try {
      const plain = run(tmp, { TET_NO_COMPILE_CACHE: '1' });
      expect(plain).toMatch(/^path=.* datasets=\d+/);
      expect(entries(tmp)).toEqual([]);
      expect(run(tmp)).toBe(plain);
      const first = entries(tmp);
      expect(first.length).toBeGreaterThan(0);
      // one entry per module and command, the CLI's entry among them (its size and the command
      // are in the name), and the SDK's loader's (its import() is in dist/dynamic-import.cjs)
      const entrySize = statSync(CLI).size;
      const sdkEntry = first.find((f) => f.includes(`-${entrySize}-`));
      expect(sdkEntry).toMatch(/-info\.v8$/);
      expect(first.filter((f) => f.endsWith('.v8')).every((f) => f.endsWith('-info.v8'))).toBe(true);  // .v8cache: the SDK's
      expect(first.some((f) => f.includes(`-${statSync(join(ROOT, 'dist/index.cjs')).size}-`))).toBe(true);
      const stamp = first.map((f) => statSync(f).mtimeMs);
      expect(run(tmp)).toBe(plain);
      expect(entries(tmp)).toEqual(first);
      expect(first.map((f) => statSync(f).mtimeMs)).toEqual(stamp);  // read, not rewritten
      writeFileSync(sdkEntry!, Buffer.from('not a code cache'));
      expect(run(tmp)).toBe(plain);
      expect(readFileSync(sdkEntry!).length).toBeGreaterThan(1000);  // rejected by V8, written again
      // another command writes entries of its own and leaves info's alone
      const after = entries(tmp).map((f) => [f, statSync(f).mtimeMs] as const);
      expect(run(tmp, {}, ['--version']).trim()).toMatch(/^\d+\.\d+\.\d+/);
      const withVersion = entries(tmp);
      expect(withVersion.filter((f) => f.endsWith('-none.v8')).length).toBeGreaterThan(0);
      for (const [f, m] of after) expect(statSync(f).mtimeMs).toBe(m);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a write tidies the cache directory: replaced entries, month-old caches, cut-short writes; nothing else', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'tet-cc-tidy-'));
    try {
      const base = join(tmp, 'cc');
      mkdirSync(base, { mode: 0o700 });
      const cliDir = join(base, `cli-${process.arch}-${process.versions.v8}`);
      mkdirSync(cliDir, { mode: 0o700 });
      // FNV-1a (32 bit) of the CLI bundle's path: how the code cache (compile-cache.ts) names a module's entries
      let h = 0x811c9dc5;
      for (const ch of join(ROOT, 'dist/cli.cjs')) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
      const cliHash = (h >>> 0).toString(16).padStart(8, '0');
      const old = Date.now() / 1000 - 40 * 86400;
      const make = (path: string, ageSeconds?: number, dir = false) => {
        if (dir) mkdirSync(path);
        else writeFileSync(path, 'x');
        if (ageSeconds !== undefined) utimesSync(path, ageSeconds, ageSeconds);
        return path;
      };
      const gone = [
        make(join(cliDir, `${cliHash}-1-1-info.v8`)),  // the CLI bundle's entry before it was rebuilt
        make(join(cliDir, 'cafebabe-10-10-info.v8'), old),  // another module's, a month unwritten
        make(join(cliDir, 'cafe0000-1-1-info.v8.4242.k3x.tmp'), Date.now() / 1000 - 2 * 86400),  // a write cut short
        make(join(base, 'sdk-0123456789abcdef0123-v1.2.3-x64.answered.v8cache'), old),  // another build's
      ];
      const oldV8 = make(join(base, 'cli-x64-1.2.3.4-node.1'), undefined, true);
      make(join(oldV8, 'cafebabe-10-10-info.v8'));
      utimesSync(oldV8, old, old);
      gone.push(oldV8);
      const kept = [
        make(join(cliDir, 'deadbeef-10-10-info.v8')),  // another module's, recent
        make(join(cliDir, `${cliHash}-1-1-query.v8`)),  // the bundle's entry for another command
        make(join(cliDir, 'notes.txt'), old),  // not a cache
        make(join(base, 'sdk-0123456789abcdef0123-v1.2.3-x64.loaded.v8cache')),  // another build's, recent
        make(join(base, 'cli-tools-2'), old, true),  // not a cache directory
        make(join(base, 'cli-x64-1.2.3.5-node.1'), undefined, true),  // another V8's, recent
      ];
      const env = { TET_COMPILE_CACHE_DIR: base, TET_NO_QUERY_HISTORY: '1' };
      expect(run(tmp, env)).toMatch(/^path=/);  // writes the CLI's entries and the SDK's loaded cache
      for (const f of gone) expect(existsSync(f), f).toBe(false);
      for (const f of kept) expect(existsSync(f), f).toBe(true);
      expect(readdirSync(cliDir).filter((f) => f.startsWith(`${cliHash}-`) && f.endsWith('-info.v8'))).toHaveLength(1);
      const loaded = readdirSync(base).filter((f) => /^sdk-[0-9a-f]+-v[\d.]+-[a-z0-9]+\.loaded\.v8cache$/.test(f) && !f.startsWith('sdk-0123'));
      expect(loaded).toHaveLength(1);
      // a query writes the answered cache, which every later process reads before the loaded one
      run(tmp, env, ['query', '{"dataset":"temperature","mean":[]}', '-t', SAMPLE, '-x', '--format', 'quiet']);
      expect(existsSync(join(base, loaded[0]))).toBe(false);
      expect(existsSync(join(base, loaded[0].replace('.loaded.', '.answered.')))).toBe(true);
      // the query wrote the bundle's `query` entry, which replaces the one of the earlier build
      expect(existsSync(kept[1])).toBe(false);
      for (const f of kept.filter((_, i) => i !== 1)) expect(existsSync(f), f).toBe(true);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a module with a dynamic import() works on every run (first, cached, cached again)', () => {
    // On Node 20 such a module must not go through vm.Script: from a code cache its import()
    // loses the loader ("A dynamic import callback was not specified"); `tet convert` and --plot
    // import their readers that way.
    const tmp = mkdtempSync(join(tmpdir(), 'tet-cc-dyn-'));
    try {
      const mod = join(tmp, 'dyn.cjs');
      writeFileSync(mod, "exports.go = () => import('node:path').then((m) => typeof m.join);\n");
      const main = `require(${JSON.stringify(join(ROOT, 'dist/compile-cache.cjs'))}).enable();` +
        `require(${JSON.stringify(mod)}).go().then((t) => process.stdout.write(t), (e) => { process.stderr.write(e.message); process.exitCode = 1; });`;
      for (let run = 0; run < 3; run++) {
        const r = spawnSync(process.execPath, ['-e', main], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp } });
        expect(r.stderr, `run ${run}`).toBe('');
        expect(r.stdout).toBe('function');
        expect(r.status).toBe(0);
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
