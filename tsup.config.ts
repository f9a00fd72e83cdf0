import { defineConfig } from 'tsup';

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
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    sourcemap: true,
    clean: false,
    target: 'node20',
    external,
    outExtension: () => ({ js: '.cjs' }),
  },
]);
