// The SDK (lib/index.ts), loaded by the first command that needs it instead of at start-up:
// `tet --version`, `tet --help` and `tet qhist list` never compile it (the import() becomes a
// require of the package's own dist/index.cjs in dist/cli.cjs; docs/performance.md "CLI start-up").
// Only the public API, as everywhere in cli/: value imports of lib/ go through here, types are
// imported with `import type`.
import type * as Sdk from '../index';

export type TetSdk = typeof Sdk;

let loading: Promise<TetSdk> | undefined;
let loaded: TetSdk | undefined;

/**
 * The SDK, imported on the first call. Its parts (the query validator: lib/loader/README.md) load
 * when a command first needs them: `tet info` validates no query.
 */
export function sdk(): Promise<TetSdk> {
  (globalThis as Record<symbol, unknown>)[Symbol.for('tetration.sdk.lazyParts')] = true;
  loading ??= import('../index').then((m) => (loaded = m));
  return loading;
}

/** The SDK if a command has loaded it (a TetError can only come from a loaded SDK), else undefined. */
export function loadedSdk(): TetSdk | undefined {
  return loaded;
}
