// What the package loader (lib/loader/sdk-loader.ts) hands the CommonJS bundle it compiles: one
// extra parameter of the bundle's wrapper, `__tetLoader`. Undefined everywhere else (the ES
// build, vitest on lib/).
export interface LoaderHooks {
  /** import() from a module Node's loader loaded (a vm script has no loader of its own). */
  import(specifier: string): Promise<unknown>;
  /** The first answer of this process came: the loader takes its code cache. */
  answered(): void;
}

declare const __tetLoader: LoaderHooks | undefined;

/** The loader's hooks, where the bundle runs under it. */
export function loaderHooks(): LoaderHooks | undefined {
  return typeof __tetLoader === 'object' && __tetLoader !== null ? __tetLoader : undefined;
}
