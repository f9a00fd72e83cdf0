// The SDK's parts: code only some calls need, built in the CommonJS build as files of their own
// (dist/sdk-part-<name>.cjs from `entry`) that the package loader compiles with code caches of
// their own (lib/loader/sdk-loader.ts). In that build `module` (what lib/ imports) is replaced by
// `loader`, which asks the package loader for the part; the ES build and vitest keep `module` as
// written. Read by tsup.config.ts (the builds) and by the loader (which parts load with the bundle).
export interface SdkPart {
  name: string;
  /** The part's source: its build's entry. */
  entry: string;
  /** The module of lib/ the part stands for, replaced by `loader` in the bundle. */
  module: string;
  loader: string;
  /**
   * Loaded with the bundle by `require('tetration')` (a program's first call pays nothing for it),
   * except where the caller asks for parts on first use (the CLI); otherwise on first use always.
   */
  eager: boolean;
  /**
   * The files the part's build holds (paths under lib/, a folder ending in '/'). Any other module
   * of lib/ it imports is the bundle's own instance (one TetError class, one addon), handed over
   * by the part's `loader` (its SHARED_MODULES). Without `own` the part imports nothing of lib/.
   */
  own?: readonly string[];
}

export const SDK_PARTS: readonly SdkPart[] = [
  // the query schema's generated validator: ~100 KB, a quarter of the bundle
  { name: 'validate', entry: 'lib/query/generated/validate.js', module: 'lib/query/schema-validator.ts', loader: 'lib/loader/validator-part.ts', eager: true },
  // conversion, export, pictures and notebook display: ~150 KB that no query or `tet info` runs
  {
    name: 'extras', entry: 'lib/extras.ts', module: 'lib/extras.ts', loader: 'lib/extras-part.ts', eager: false,
    own: ['lib/extras.ts', 'lib/convert/', 'lib/export/', 'lib/plot/', 'lib/notebook.ts'],
  },
];
