import { rmSync } from 'node:fs';
import { defineConfig } from 'tsup';

rmSync('dist/cli', { recursive: true, force: true });

// Optional dependencies are loaded at run time (lib/plot), never bundled.
const external = ['sharp', 'vega'];

export default defineConfig([
  {
    entry: { index: 'lib/index.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'node20',
    external,
    outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  },
  {
    // Split at the CLI's dynamic imports (lib/cli/sdk.ts: the SDK; the views of format.ts; the
    // SDK's own lazy parts): `tet --version` compiles only the small entry chunk.
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    splitting: true,
    // cjs chunks are converted from esm ones: import.meta.url (lib/binding.ts, lazy loaders)
    // must become a __filename URL there, or the chunk does not even parse.
    shims: true,
    sourcemap: true,
    // The chunks live in dist/cli/, emptied when this config loads (their names carry content
    // hashes, so old ones would pile up; tsup's own `clean` would empty all of dist/).
    clean: false,
    esbuildOptions(options) {
      options.chunkNames = 'cli/[name]-[hash]';
    },
    target: 'node20',
    external,
    outExtension: () => ({ js: '.cjs' }),
  },
]);
