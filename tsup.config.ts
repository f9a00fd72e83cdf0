import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'lib/index.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'node20',
    outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  },
  {
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    sourcemap: true,
    clean: false,
    target: 'node20',
    outExtension: () => ({ js: '.cjs' }),
  },
]);
