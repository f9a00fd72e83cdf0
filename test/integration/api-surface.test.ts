// The public API surface: exported runtime names of lib/index.ts and of the built bundles
// (dist/index.cjs via require, dist/index.mjs via import; built by `npm run build:ts`).
import { ROOT, SHARED } from '../support/paths';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../../lib/index';

const PUBLIC_NAMES = [
  'DTYPE_BY_TAG', 'DTYPE_SIZE', 'DTYPE_TAG', 'ERROR_CODES', 'MAX_SHARD_ROUNDS', 'QUERY_LIMITS', 'QUICK_DECODE_BYTES', 'QUICK_DECODE_CHUNKS', 'REPAIR_CODES', 'WHERE_OPS',
  'TetBudgetError', 'TetCancelledError', 'TetConvertError', 'TetDeviceError', 'TetError', 'TetFile', 'TetFormatError', 'TetIoError',
  'TetQueryError', 'TetWriter', 'convert', 'detectSource', 'display', 'exportZarr', 'f32Text', 'plotSpec', 'renderPlot', 'hostInfo', 'isTetError', 'mergePartials', 'mergeRound', 'open', 'openSync',
  'parseQueryFile', 'parseQueryText', 'planQuery', 'queryJsonSchema', 'repair', 'runQuery', 'runSharded', 'toHTML', 'toJsonText', 'validateQuery',
  'validatedResponse', 'verify',
].sort();

const names = (m: object) => Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort();
const root = ROOT;

describe('public API surface', () => {
  it('lib/index.ts exports exactly the public names', () => {
    expect(names(api)).toEqual(PUBLIC_NAMES);
  });

  it('error classes form one hierarchy under TetError', () => {
    for (const C of [api.TetQueryError, api.TetFormatError, api.TetBudgetError, api.TetIoError, api.TetCancelledError, api.TetDeviceError, api.TetConvertError]) {
      const e = new C('TET_X', 'm');
      expect(e).toBeInstanceOf(api.TetError);
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe(C.name);
    }
  });

  const cjs = join(root, 'dist/index.cjs');
  const esm = join(root, 'dist/index.mjs');
  it.skipIf(!existsSync(cjs))('dist/index.cjs (require) exports the same names', () => {
    const mod = createRequire(__filename)(cjs) as typeof api;
    expect(names(mod)).toEqual(PUBLIC_NAMES);
    expect(mod.hostInfo().cores).toBeGreaterThanOrEqual(1);  // the addon loads from dist/
  });
  it.skipIf(!existsSync(esm))('dist/index.mjs (import) exports the same names', async () => {
    const mod = (await import(pathToFileURL(esm).href)) as typeof api;
    expect(names(mod)).toEqual(PUBLIC_NAMES);
    const f = await mod.open(join(SHARED, 'fixtures/reference/tet/sample.tet'));
    expect(Array.from((await f.read('temperature')).data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    f.close();
  });
  it.skipIf(!existsSync(join(root, 'dist/index.d.ts')))('dist/index.d.ts declares the public names', async () => {
    const { readFileSync } = await import('node:fs');
    const dts = readFileSync(join(root, 'dist/index.d.ts'), 'utf8');
    for (const n of PUBLIC_NAMES) expect(dts, n).toMatch(new RegExp(`\\b${n}\\b`));
  });
});

describe('error codes', () => {
  it('every code the native core raises is listed in ERROR_CODES and maps to its area class', async () => {
    const { readFileSync, readdirSync, statSync } = await import('node:fs');
    const walk = (d: string): string[] => readdirSync(d).flatMap((n) => {
      const p = join(d, n);
      return statSync(p).isDirectory() ? (n === 'vendor' || n === 'tests' ? [] : walk(p)) : /\.(cpp|h)$/.test(n) ? [p] : [];
    });
    const native = new Set<string>();
    for (const f of walk(join(root, 'native'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/"(TET_[A-Z0-9_]*[A-Z0-9])"/g)) native.add(m[1]);
    }
    const listed = new Set<string>(api.ERROR_CODES);
    // TET_FUZZ_* and TET_CUDA_* are environment variables (fuzz replay; the device module's
    // loader and tile cache, native/exec/device*.cpp), not codes.
    expect([...native].filter((c) => !listed.has(c) && !c.startsWith('TET_FUZZ') && !c.startsWith('TET_CUDA_'))).toEqual([]);
    const { errorClassFor } = await import('../../lib/errors');
    expect(errorClassFor('TET_INDEX_DUPLICATE_CHUNK')).toBe(api.TetFormatError);
    expect(errorClassFor('TET_WRITE_SEALED')).toBe(api.TetIoError);
    expect(errorClassFor('TET_PLAN_INVALID')).toBe(api.TetQueryError);
    expect(errorClassFor('TET_BUDGET_EXCEEDED')).toBe(api.TetBudgetError);
    expect(errorClassFor('TET_CANCELLED')).toBe(api.TetCancelledError);
    expect(errorClassFor('TET_DEVICE_LOST')).toBe(api.TetDeviceError);
    expect(errorClassFor('TET_INTERNAL')).toBe(api.TetError);
    expect(errorClassFor('TET_CONVERT_OPEN')).toBe(api.TetConvertError);
    expect(errorClassFor('TET_EXPORT_OUTPUT_EXISTS')).toBe(api.TetConvertError);
  });
});

describe('the SDK bundle loads no CLI dependency', () => {
  const cjs = join(root, 'dist', 'index.cjs');
  it.skipIf(!existsSync(cjs))("require('tetration') (dist/index.cjs) pulls in neither commander, string-width, cli-progress, nor the plotting libraries (vega, sharp)", async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `require(${JSON.stringify(cjs)});
const loaded = Object.keys(require.cache).filter((k) => /node_modules[\\\\/](commander|string-width|cli-progress|vega[a-z-]*|sharp|@img)[\\\\/]/.test(k));
console.log(JSON.stringify(loaded));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});
