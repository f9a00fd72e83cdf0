// lib/extras.ts in the CommonJS bundle (lib/loader/parts.ts): conversion, export, pictures and
// notebook display are dist/sdk-part-extras.cjs, which the package loader compiles (with a code
// cache of its own) at the first call of any of them.
//   SHARED_MODULES: the bundle's modules the part imports, handed to it as it loads (hooks.part).
// The part's build turns each of its imports of them into the bundle's instance (tsup.config.ts),
// so there is one of each class (an error the part throws is a TetError of the bundle's), one
// addon, one set of module state. tsup.config.ts reads the keys from this file's text (one
// `'lib/...ts': name,` per line) and fails the part's build on an import of lib/ that is neither
// the part's own nor listed; test/unit/sdk-parts.test.ts checks each key names its module.
import type * as Extras from './extras';
import { loaderHooks } from './loader/hooks';
import * as errors from './errors';
import * as esm from './esm';
import * as file from './file';
import * as opsGenerated from './ops.generated';
import * as planMetadata from './plan/metadata';
import * as progress from './progress';
import * as tablesNormalize from './tables/normalize';
import * as tablesUtf8 from './tables/utf8';
import * as tablesValues from './tables/values';
import * as types from './types';
import * as writer from './writer';

export const SHARED_MODULES: Readonly<Record<string, unknown>> = {
  'lib/errors.ts': errors,
  'lib/esm.ts': esm,
  'lib/file.ts': file,
  'lib/ops.generated.ts': opsGenerated,
  'lib/plan/metadata.ts': planMetadata,
  'lib/progress.ts': progress,
  'lib/tables/normalize.ts': tablesNormalize,
  'lib/tables/utf8.ts': tablesUtf8,
  'lib/tables/values.ts': tablesValues,
  'lib/types.ts': types,
  'lib/writer.ts': writer,
};

let extras: typeof Extras | undefined;

function part(): typeof Extras {
  if (!extras) {
    const hooks = loaderHooks();
    // dist/sdk.cjs runs under dist/index.cjs, which always passes its hooks
    if (!hooks) throw new Error('tetration: dist/sdk.cjs was loaded without dist/index.cjs');
    extras = hooks.part('extras', SHARED_MODULES) as typeof Extras;
  }
  return extras;
}

// The async ones return a rejected promise where the part cannot be loaded, as they would reject
// for any other failure; the sync ones throw.
async function later<T>(call: (x: typeof Extras) => Promise<T>): Promise<T> {
  return call(part());
}

export function display(...args: Parameters<typeof Extras.display>): ReturnType<typeof Extras.display> {
  return later((x) => x.display(...args));
}
export function toHTML(...args: Parameters<typeof Extras.toHTML>): ReturnType<typeof Extras.toHTML> {
  return part().toHTML(...args);
}
export function renderPlot(...args: Parameters<typeof Extras.renderPlot>): ReturnType<typeof Extras.renderPlot> {
  return later((x) => x.renderPlot(...args));
}
export function plotSpec(...args: Parameters<typeof Extras.plotSpec>): ReturnType<typeof Extras.plotSpec> {
  return part().plotSpec(...args);
}
export function convert(...args: Parameters<typeof Extras.convert>): ReturnType<typeof Extras.convert> {
  return later((x) => x.convert(...args));
}
export function detectSource(...args: Parameters<typeof Extras.detectSource>): ReturnType<typeof Extras.detectSource> {
  return part().detectSource(...args);
}
export function exportZarr(...args: Parameters<typeof Extras.exportZarr>): ReturnType<typeof Extras.exportZarr> {
  return later((x) => x.exportZarr(...args));
}
