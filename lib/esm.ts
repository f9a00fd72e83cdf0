// import() of the ES-only dependencies (vega, sharp, h5wasm, zarrita, hyparquet, apache-arrow,
// numcodecs), in one place. Under the package loader the CommonJS bundle runs as a vm script for
// its code cache, where a bare import() has no module loader to call: the loader's import() does
// it (lib/loader/hooks.ts). Everywhere else this is import() itself.
import { loaderHooks } from './loader/hooks';

/** `import(specifier)`, through the package loader where the bundle runs under it. */
export function importEsm<T>(specifier: string): Promise<T> {
  const hooks = loaderHooks();
  return (hooks ? hooks.import(specifier) : import(specifier)) as Promise<T>;
}
