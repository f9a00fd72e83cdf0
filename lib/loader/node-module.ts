// `node:module` for the package's CommonJS builds (tsup.config.ts `moduleFromModuleObject`
// resolves lib/'s imports of node:module here in those builds; the ES build and vitest keep the
// builtin). Node's Module class is the constructor of the `module` object every CommonJS file is
// given, so the class and its createRequire are had without loading the node:module builtin,
// which costs a fresh process ~0.2-0.3 ms (its ES-module loader and source-map parts: a `tet`
// command and `require('tetration')` need neither; docs/performance.md "CLI start-up"). Where
// `module` is not Node's (a test runner's module registry), the builtin as before.
import type * as NodeModuleBuiltin from 'node:module';

declare const module: { constructor?: unknown } | undefined;
declare const require: (id: string) => unknown;

type ModuleClass = typeof NodeModuleBuiltin.Module;

function nodeModuleClass(): ModuleClass {
  const ctor: unknown = typeof module === 'object' && module !== null ? module.constructor : undefined;
  const c = ctor as Record<'createRequire' | '_nodeModulePaths' | 'wrap' | '_resolveFilename', unknown>;
  if (typeof ctor === 'function' && typeof c.createRequire === 'function' && typeof c._nodeModulePaths === 'function' &&
      typeof c.wrap === 'function' && typeof c._resolveFilename === 'function') {
    return ctor as ModuleClass;
  }
  // 'module', not 'node:module': the build resolves the latter to this file
  return (require('module') as typeof NodeModuleBuiltin).Module;
}

export const Module: ModuleClass = nodeModuleClass();
export const createRequire: typeof NodeModuleBuiltin.createRequire = (path) => Module.createRequire(path);
