import { rmSync } from 'node:fs';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

// Optional dependencies are loaded at run time (lib/plot), never bundled.
const external = ['sharp', 'vega'];

// The CLI bundles no copy of the SDK: lib/cli's imports of `../index` (lib/cli/sdk.ts, format.ts)
// become the package's own dist/index.cjs, required by name (`tetration`: a self-reference
// through package.json "exports"). The CLI and the library then share one SDK, and the SDK's
// dynamic imports of ES-only packages (vega with its top-level await, h5wasm, numcodecs) stay
// real import()s, which tsup's CommonJS splitting below would rewrite into require()s.
const sdkAsPackage: Plugin = {
  name: 'tet-sdk-as-package',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/index$/ }, (args) =>
      (/[\\/]lib[\\/]cli[\\/]/.test(args.importer) ? { path: 'tetration', external: true } : undefined));
  },
};

// The CLI's chunks (dist/cli/) carry content hashes in their names: empty their folder when this
// config loads, or old ones would pile up (tsup's own `clean` would empty all of dist/).
rmSync('dist/cli', { recursive: true, force: true });

export default defineConfig([
  {
    entry: { index: 'lib/index.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    // ASCII only (non-ASCII escaped): the loader reads the bundle as latin1, a copy, where UTF-8
    // text costs a decode (lib/loader/sdk-loader.ts).
    esbuildOptions(options) {
      options.charset = 'ascii';
    },
    sourcemap: true,
    clean: false,
    target: 'node20',
    external,
    outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  },
  {
    // dist/index.cjs: the code-cache loader of the CommonJS bundle (scripts/finish-dist.mjs
    // moves the bundle to dist/sdk.cjs and this into its place).
    // dist/cache-dir.cjs: the cache directory rules, for bin/compile-cache.js too.
    entry: { 'sdk-loader': 'lib/loader/sdk-loader.ts', 'cache-dir': 'lib/loader/cache-dir.ts' },
    format: ['cjs'],
    clean: false,
    target: 'node20',
    outExtension: () => ({ js: '.cjs' }),
  },
  {
    // Split at the CLI's dynamic imports (the views of format.ts, loaded when a response is
    // printed): `tet --version` compiles only the 48 KB entry, and the SDK is required by
    // lib/cli/sdk.ts when a command needs it (docs/performance.md "CLI start-up").
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    splitting: true,
    esbuildPlugins: [sdkAsPackage],
    // CommonJS chunks are converted from ES ones: import.meta.url (lib/cli/lazy.ts) must become
    // a __filename URL there, or the chunk does not even parse.
    shims: true,
    sourcemap: true,
    clean: false,
    esbuildOptions(options) {
      options.chunkNames = 'cli/[name]-[hash]';
    },
    target: 'node20',
    external,
    outExtension: () => ({ js: '.cjs' }),
  },
]);
