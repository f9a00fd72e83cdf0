import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';
import { SDK_PARTS } from './lib/loader/parts';

// Optional dependencies are loaded at run time (lib/plot), never bundled.
const external = ['sharp', 'vega'];

// The CLI bundles no copy of the SDK: lib/cli's imports of `../index` (lib/cli/sdk.ts, format.ts)
// become the package's own dist/index.cjs, required by relative path (`./index.cjs`: the CLI's
// chunks sit beside it in dist/; a self-reference `require('tetration')` costs ~2 ms of package
// "exports" resolution at every start). The CLI and the library then share one SDK, and the SDK's
// dynamic imports of ES-only packages (vega with its top-level await, h5wasm, numcodecs) stay
// real import()s, which tsup's CommonJS splitting below would rewrite into require()s.
const sdkAsPackage: Plugin = {
  name: 'tet-sdk-as-package',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/index$/ }, (args) =>
      (/[\\/]lib[\\/]cli[\\/]/.test(args.importer) ? { path: './index.cjs', external: true } : undefined));
  },
};

// commander is bundled into the CLI (no module resolution of its files at start-up), with its one
// `require('node:child_process')` made lazy: only executable sub-commands spawn, which tet has
// none of, and node:child_process (with net, dgram, ...) is ~3 ms of every `tet` start otherwise
// (docs/performance.md "CLI start-up"). A commander release that moves the line fails the build.
const lazyChildProcess: Plugin = {
  name: 'tet-commander-lazy-child-process',
  setup(build) {
    build.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!source.includes(eager)) throw new Error(`${args.path}: no \`${eager}\` to make lazy (commander changed)`);
      const lazy = 'let childProcessModule; const childProcess = { spawn: (...args) => ' +
        "(childProcessModule ??= require('node:child_process')).spawn(...args) };";
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

// The CLI's tables (lib/cli/box-table.ts) and the bundled bar package measure text through
// lib/cli/string-width.cjs: string-width with the common case (a string of width-1 characters, as
// every `tet` table and bar holds) taken without its regular expressions (~2 ms of `tet info`: that
// file says why).
const narrowStringWidth: Plugin = {
  name: 'tet-narrow-string-width',
  setup(build) {
    const shim = resolve('lib/cli/string-width.cjs');
    build.onResolve({ filter: /^string-width$/ }, (args) => (resolve(args.importer) === shim ? undefined : { path: shim }));
  },
};

// In the CommonJS builds lib/'s imports of node:module resolve to lib/loader/node-module.ts: Node's
// Module class taken from the `module` object, without loading the builtin (~0.2-0.3 ms of a fresh
// process). The ES build keeps the builtin. The builds that use it keep the `node:` prefix
// (removeNodeProtocol: false): tsup's own plugin, which removes it, marks every builtin external
// before this one would see it.
const moduleFromModuleObject: Plugin = {
  name: 'tet-module-from-module-object',
  setup(build) {
    if (build.initialOptions.format !== 'cjs') return;
    const shim = resolve('lib/loader/node-module.ts');
    build.onResolve({ filter: /^node:module$/ }, (args) => (resolve(args.importer) === shim ? undefined : { path: shim }));
  },
};

// lib/lazy-require.ts reads import.meta.url only where __filename is not defined (the ES build);
// in the CommonJS builds without tsup's shims it is `undefined`, not esbuild's empty-object warning.
const noImportMetaInCjs = (options: { define?: Record<string, string> }, format: string) => {
  if (format === 'cjs') options.define = { ...options.define, 'import.meta.url': 'undefined' };
};
// The SDK's and the CLI's bundles are whitespace-minified (comments and indentation out, names
// kept, so stack traces still name functions), with lines wrapped near 120 characters, so that the
// source line Node prints under an uncaught error stays one line. A fresh process reads, copies
// and compiles every byte of them, and on a machine where fresh memory is slow to touch that is
// most of the load (dist/sdk.cjs 610 -> 440 KB, 340 KB with the validator a part of its own;
// dist/cli.cjs 210 -> 125 KB; docs/performance.md
// "CLI start-up"). The source maps (shipped) map back to lib/ and the bundled packages' files.
const compact = { minifyWhitespace: true } as const;
const wrapLines = (options: { lineLimit?: number }) => { options.lineLimit = 120; };

// Parts of the SDK that only some calls need (lib/loader/parts.ts): in the CommonJS build each is a
// file of its own, dist/sdk-part-<name>.cjs from `entry`, and `module` (what lib/ imports) is
// replaced by `loader`, which asks the package loader for the part (lib/loader/sdk-loader.ts: its
// own code cache). The ES build and vitest keep `module` as written.
const sdkParts: Plugin = {
  name: 'tet-sdk-parts',
  setup(build) {
    if (build.initialOptions.format !== 'cjs') return;
    build.onResolve({ filter: /^\./ }, (args) => {
      const part = SDK_PARTS.find((p) => resolve(args.resolveDir, `${args.path}.ts`) === resolve(p.module));
      return part ? { path: resolve(part.loader) } : undefined;
    });
  },
};

// A part's imports of lib/ modules that are not its own (parts.ts `own`) become the bundle's
// instances, which the part's loader hands over as it loads the part (its SHARED_MODULES, read
// here from the loader's text: lib/extras-part.ts): one TetError class, one addon. An import of a
// module the loader does not list fails the build.
const libPath = (file: string) => relative(process.cwd(), file).split(sep).join('/');
const inOwn = (file: string, own: readonly string[]) => own.some((o) => (o.endsWith('/') ? file.startsWith(o) : file === o));
// each part loader's keys, read once per build
const sharedKeys = new Map(SDK_PARTS.filter((p) => p.own).map((p) =>
  [p.loader, new Set([...readFileSync(p.loader, 'utf8').matchAll(/^ {2}'(lib\/[\w./-]+\.ts)': /gm)].map((m) => m[1]))]));
function resolveLib(dir: string, spec: string): string | undefined {
  const base = resolve(dir, spec);
  return [base, `${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f) && statSync(f).isFile());
}
const partsShareTheBundle: Plugin = {
  name: 'tet-sdk-parts-share-the-bundle',
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      const part = SDK_PARTS.find((p) => p.own && inOwn(libPath(args.importer), p.own));
      const target = part && resolveLib(args.resolveDir, args.path);
      const key = target && libPath(target);
      if (!part || !key || !key.startsWith('lib/') || inOwn(key, part.own!)) return undefined;
      if (!sharedKeys.get(part.loader)!.has(key)) {
        return { errors: [{ text: `SDK part ${part.name}: ${libPath(args.importer)} imports ${key}, which ${part.loader} does not hand over (SHARED_MODULES)` }] };
      }
      return { path: key, namespace: 'tet-shared' };
    });
    build.onLoad({ filter: /.*/, namespace: 'tet-shared' }, (args) => (
      { contents: `module.exports = __tetLoader.shared(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

// Chunks of earlier split CLI builds (dist/cli-*.cjs), the SDK's parts (scripts/finish-dist.mjs
// wraps them in place) and the ES build's chunks (dist/*.mjs: its dynamic imports are split out)
// carry hashes in their names: remove them when this config loads, or they would pile up and be
// packed (tsup's own `clean` would empty all of dist/).
rmSync('dist/cli', { recursive: true, force: true });  // where earlier builds put them
for (const f of existsSync('dist') ? readdirSync('dist') : []) {
  if (/^(cli-|sdk-part-).+\.cjs(\.map)?$/.test(f) || /\.mjs(\.map)?$/.test(f)) rmSync(`dist/${f}`, { force: true });
}

export default defineConfig([
  {
    entry: { index: 'lib/index.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    // ASCII only (non-ASCII escaped): the loader reads the bundle as latin1, a copy, where UTF-8
    // text costs a decode (lib/loader/sdk-loader.ts).
    esbuildOptions(options, { format }) {
      options.charset = 'ascii';
      wrapLines(options);
      noImportMetaInCjs(options, format);
    },
    esbuildPlugins: [sdkParts, moduleFromModuleObject],
    removeNodeProtocol: false,
    ...compact,
    sourcemap: true,
    clean: false,
    target: 'node20',
    external,
    outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  },
  {
    // The SDK's parts (SDK_PARTS), wrapped and hashed by scripts/finish-dist.mjs as dist/sdk.cjs.
    entry: Object.fromEntries(SDK_PARTS.map((p) => [`sdk-part-${p.name}`, p.entry])),
    format: ['cjs'],
    esbuildOptions(options) {
      options.charset = 'ascii';
      wrapLines(options);
    },
    esbuildPlugins: [partsShareTheBundle, moduleFromModuleObject],
    removeNodeProtocol: false,
    ...compact,
    sourcemap: true,
    clean: false,
    target: 'node20',
    external,
    outExtension: () => ({ js: '.cjs' }),
  },
  {
    // dist/index.cjs: the code-cache loader of the CommonJS bundle (scripts/finish-dist.mjs
    // moves the bundle to dist/sdk.cjs and this into its place).
    // dist/compile-cache.cjs: the CLI's code cache (bin/tet.js), the cache directory rules inside.
    // dist/dynamic-import.cjs: the bundle's import() (lib/loader/dynamic-import.ts says why apart).
    entry: { 'sdk-loader': 'lib/loader/sdk-loader.ts', 'compile-cache': 'lib/loader/compile-cache.ts', 'dynamic-import': 'lib/loader/dynamic-import.ts' },
    format: ['cjs'],
    esbuildOptions(options) {
      noImportMetaInCjs(options, 'cjs');
    },
    esbuildPlugins: [moduleFromModuleObject],
    removeNodeProtocol: false,
    sourcemap: true,
    clean: false,
    target: 'node20',
    outExtension: () => ({ js: '.cjs' }),
  },
  {
    // One file, dist/cli.cjs (~180 KB): every command loaded the entry and its shared chunk
    // anyway, and one text over 128 KiB is a large-object string to V8, outside the young
    // generation that a split CLI's texts (and the copies the compile cache's wrapper makes of
    // them) filled to a scavenge of their own (~0.5 ms of every `tet` command: docs/performance.md
    // "CLI start-up"). The views of format.ts still run on first use (their module's
    // initialisation is deferred by esbuild); the SDK is required by lib/cli/sdk.ts when a
    // command needs it.
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    splitting: false,
    esbuildPlugins: [sdkAsPackage, lazyChildProcess, narrowStringWidth, moduleFromModuleObject],
    removeNodeProtocol: false,
    // Bundled: no module resolution of their files at run time (string-width's alone was ~3 ms
    // of `tet info`); string-width and cli-progress still load on first use (lib/cli/lazy.ts).
    noExternal: ['commander', 'cli-progress', 'string-width'],
    // import.meta.url (lib/cli/lazy.ts) must become a __filename URL in CommonJS.
    shims: true,
    sourcemap: true,
    clean: false,
    esbuildOptions(options) {
      // import() becomes require(): of the SDK (lib/cli/sdk.ts: the external ./index.cjs) and of
      // the bundle's own format.ts. The CLI's code cache (lib/loader/compile-cache.ts) leaves a module with an import() to
      // Node's compile (no code cache), and Node 20 has no import() in vm-compiled code.
      options.supported = { ...options.supported, 'dynamic-import': false };
      // ASCII only: bin/tet.js loads it as latin1 (lib/loader/compile-cache.ts loadBundle).
      options.charset = 'ascii';
      wrapLines(options);
    },
    ...compact,
    target: 'node20',
    external,
    outExtension: () => ({ js: '.cjs' }),
  },
]);
