// A CommonJS Module for one of the package's files that a loader compiles itself (sdk-loader.ts:
// the SDK bundle and its parts; compile-cache.ts: the CLI bundle), set up as Node's `require`
// would set it up: its filename, its node_modules lookup paths, its parent.
import { Module } from 'node:module';
import { dirname } from 'node:path';

type CompileFn = (this: Module, content: string, filename: string, ...rest: unknown[]) => unknown;

/** The loader internals of Node's Module that the package's loaders use (compile-cache.ts checks the optional ones). */
export const moduleInternals = Module as unknown as typeof Module & {
  _nodeModulePaths(dir: string): string[];
  _cache: Record<string, Module>;
  wrap?: (script: string) => string;
  prototype: { _compile?: CompileFn };
  _resolveFilename(request: string, parent: Module, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: Module): string[] | null;
  _extensions: unknown;
};

/** A fresh Module for `file`, a child of `parent`; not registered in the module cache. */
export function moduleFor(file: string, parent: Module): Module {
  const mod = new Module(file, parent);
  mod.filename = file;
  mod.paths = moduleInternals._nodeModulePaths(dirname(file));
  return mod;
}
