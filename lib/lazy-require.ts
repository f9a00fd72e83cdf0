// Dependencies that only some paths need, loaded on first use instead of at import time, so
// `tet --version`, `tet info` and `require('tetration')` do not pay for them (docs/performance.md
// "CLI start-up"). A plain require through createRequire: synchronous, cached by Node, and the
// same in dist/index.cjs, dist/index.mjs, dist/cli.cjs and lib/ under vitest (as lib/binding.ts).
import { createRequire } from 'node:module';

/**
 * The file this code runs from (dist/ in the package, lib/ under vitest): __filename in CommonJS,
 * import.meta.url in the ES build, converted by node:url, required only there (a
 * `require('url')` at load cost every `require('tetration')` ~0.06 ms).
 */
export function thisFile(): string {
  if (typeof __filename === 'string') return __filename;
  const { fileURLToPath } = createRequire(import.meta.url)('node:url') as typeof import('node:url');
  return fileURLToPath(import.meta.url);
}

/** A loader of `id` that requires it on its first call. */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= createRequire(thisFile())(id) as T);
}
