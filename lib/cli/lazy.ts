// CLI dependencies that only some output needs (cli-progress for bars),
// loaded on first use so start-up does not pay for them. `load` is a `() => require('pkg')` with
// a literal name: tsup bundles the package into dist/cli.cjs (tsup.config.ts `noExternal`) and
// the require becomes a call of its module wrapper, run on the first use only (vitest provides
// `require` to lib/ as it runs the sources).

/** A loader that calls `load` on its first call and returns that result ever after. */
export function lazy<T>(load: () => T): () => T {
  let mod: { value: T } | undefined;
  return () => (mod ??= { value: load() }).value;
}
