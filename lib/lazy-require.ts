// Dependencies that only some paths need, loaded on first use instead of at import time, so
// `tet --version`, `tet info` and `require('tetration')` do not pay for them (docs/performance.md
// "CLI start-up"). A plain require through createRequire: synchronous, cached by Node, and the
// same in dist/index.cjs, dist/index.mjs, dist/cli.cjs and lib/ under vitest (as lib/binding.ts).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

function thisFile(): string {
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);
}

/** A loader of `id` that requires it on its first call. */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= createRequire(thisFile())(id) as T);
}
