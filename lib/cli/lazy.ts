// CLI dependencies that only some output needs (cli-table3 for tables, cli-progress for bars),
// required on first use so start-up does not pay for them. The same few lines as
// lib/lazy-require.ts, which cli/ may not import (it uses only the public API of lib/).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** A loader of package `id` that requires it on its first call (dist/cli.cjs, or lib/ under vitest). */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  const here = () => (typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url));
  return () => (mod ??= createRequire(here())(id) as T);
}
