// What the package loader (lib/loader/sdk-loader.ts) hands the CommonJS bundle it compiles: one
// extra parameter of the bundle's wrapper, `__tetLoader`. Undefined everywhere else (the ES
// build, vitest on lib/).
export interface LoaderHooks {
  /** import() from a module Node's loader loaded (a vm script has no loader of its own). */
  import(specifier: string): Promise<unknown>;
  /**
   * The first answer of this process came: the loader takes the code caches it has not accepted
   * on a later turn of the event loop (or at exit, if that comes first).
   */
  answered(): void;
  /**
   * The exports of a part of the bundle built as a file of its own (dist/sdk-part-<name>.cjs:
   * lib/loader/parts.ts), compiled with its own code cache on first use. `shared`: the bundle's
   * modules the part imports (lib/loader/shared.ts), which it gets through shared().
   */
  part(name: string, shared?: Readonly<Record<string, unknown>>): unknown;
  /** A module of the bundle that a part imports, by its path ('lib/errors.ts'). */
  shared(key: string): unknown;
}

declare const __tetLoader: LoaderHooks | undefined;

/** The loader's hooks, where the bundle runs under it. */
export function loaderHooks(): LoaderHooks | undefined {
  return typeof __tetLoader === 'object' && __tetLoader !== null ? __tetLoader : undefined;
}
