// import() for the CommonJS bundle (dist/dynamic-import.cjs, beside dist/index.cjs, so that it
// resolves from the same folder): the loader's `hooks.import` (lib/loader/hooks.ts) requires this
// file at the first dynamic import. It is not in dist/index.cjs itself because the CLI's code cache
// leaves a module with an import() to Node's own compile: the CLI compiled the loader from source
// at every start (~0.3 ms of `tet query` and `tet info`) to keep one line it rarely runs.
export function dynamicImport(specifier: string): Promise<unknown> {
  return import(specifier);
}
