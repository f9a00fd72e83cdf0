// Error codes from one definition (native/include/tet/error_codes.def): the generated TS file
// matches it, every code literal raised in native/ and lib/ is in it, classes follow it, and
// errors carry `detail` and narrow by code.
import { ROOT, SHARED } from '../support/paths';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as api from '../../lib/index';
import { convertError } from '../../lib/convert/errors';
import { errorCodeInfo } from '../../lib/error-codes.generated';
import { errorClassByPrefix, errorClassFor, toTetError, TetError } from '../../lib/errors';

const root = ROOT;
const shared = SHARED;
// @ts-expect-error plain .mjs script without types
const gen = (await import('../../scripts/gen-error-codes.mjs')) as {
  generate(): string; parseDef(text: string): { code: string; cls: string; meaning: string }[]; OUT_PATH: string; DEF_PATH: string;
};
const rows = gen.parseDef(readFileSync(gen.DEF_PATH, 'utf8'));
const defCodes = new Set(rows.map((r) => r.code));

// Names shaped like codes that are environment variables, or the code of a warning
// (process.emitWarning: an onProgress callback threw, lib/progress.ts), which is not an error.
const NOT_CODES = new Set(['TET_DEBUG', 'TET_QUERY_HISTORY_MAX', 'TET_FUZZ_FIXTURES', 'TET_FUZZ_SEEDS_OUT',
  'TET_PROGRESS_CALLBACK', 'TET_CUDA_MODULE', 'TET_CUDA_DRIVER', 'TET_CUDA_CACHE_BYTES']);

function literals(dir: string, ext: RegExp, quote: RegExp): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) { if (n !== 'vendor' && n !== 'tests') walk(p); continue; }
      if (!ext.test(n)) continue;
      for (const m of readFileSync(p, 'utf8').matchAll(quote)) if (!found.has(m[2])) found.set(m[2], p);
    }
  };
  walk(dir);
  return found;
}

describe('error_codes.def', () => {
  it('lib/error-codes.generated.ts is what scripts/gen-error-codes.mjs makes of the def', () => {
    expect(readFileSync(gen.OUT_PATH, 'utf8')).toBe(gen.generate());
  });

  it('ERROR_CODES is the def, in order, and keeps every code it listed before', () => {
    expect([...api.ERROR_CODES]).toEqual(rows.map((r) => r.code));
    for (const c of ['TET_FORMAT_BAD_MAGIC', 'TET_INDEX_MISSING_CHUNK', 'TET_DECODE_ZSTD', 'TET_QUERY_REPAIR_CODE',
      'TET_PLAN_INVALID', 'TET_BUDGET_EXCEEDED', 'TET_CANCELLED', 'TET_WRITE_COMPRESS', 'TET_BINDING_LOAD', 'TET_INTERNAL',
      'TET_CONVERT_UNSUPPORTED_FILTER', 'TET_CONVERT_EMPTY', 'TET_CONVERT_UNSUPPORTED', 'TET_CONVERT_READ',
      'TET_EXPORT_BAD_NAME', 'TET_SHARD_MISMATCH', 'TET_SHARD_MISSING', 'TET_SHARD_DUPLICATE', 'TET_SHARD_CORRUPT', 'TET_SHARD_ROUND_NEEDED']) {
      expect(defCodes.has(c), c).toBe(true);
    }
    for (const r of rows) expect(r.meaning.length, r.code).toBeGreaterThan(10);
  });

  it('every code literal in native/ and lib/ is in the def (drift check)', () => {
    const native = literals(join(root, 'native'), /\.(cpp|h)$/, /(")(TET_[A-Z0-9_]*[A-Z0-9])"/g);
    const lib = literals(join(root, 'lib'), /\.ts$/, /(['"`])(TET_[A-Z0-9_]*[A-Z0-9])\1/g);
    expect(native.size).toBeGreaterThan(40);
    expect(lib.size).toBeGreaterThan(40);
    const missing = [...native, ...lib].filter(([c]) => !defCodes.has(c) && !NOT_CODES.has(c)).map(([c, p]) => `${c} (${p})`);
    expect(missing).toEqual([]);
  });

  it("each row's class is its prefix's class, and errorClassFor follows the def", () => {
    const byName: Record<string, unknown> = {
      Base: api.TetError, Query: api.TetQueryError, Format: api.TetFormatError, Budget: api.TetBudgetError,
      Io: api.TetIoError, Cancelled: api.TetCancelledError, Device: api.TetDeviceError, Convert: api.TetConvertError,
    };
    for (const r of rows) {
      expect(errorClassFor(r.code), r.code).toBe(byName[r.cls]);
      expect(errorClassByPrefix(r.code), r.code).toBe(byName[r.cls]);
      expect(errorCodeInfo()[r.code as api.KnownErrorCode].cls).toBe(r.cls);
    }
    expect(errorClassFor('TET_DEVICE_LOST')).toBe(api.TetDeviceError);  // not in the def: by prefix
    expect(errorClassFor('TET_SOMETHING_NEW')).toBe(api.TetError);
  });
});

describe('TetConvertError', () => {
  it('convertError builds the class errorClassFor picks, with cause and detail', () => {
    const cause = new Error('disk');
    const e = convertError('TET_CONVERT_READ', 'cannot read v', cause, { dataset: 'v', path: '/x.nc' });
    expect(e).toBeInstanceOf(api.TetConvertError);
    expect(e).toBeInstanceOf(api.TetError);
    expect(e.name).toBe('TetConvertError');
    expect(e.cause).toBe(cause);
    expect(e.detail).toEqual({ dataset: 'v', path: '/x.nc' });
    const x = convertError('TET_EXPORT_OUTPUT_EXISTS', 'exists');
    expect(x).toBeInstanceOf(api.TetConvertError);
    expect('cause' in x).toBe(false);
    expect(x.detail).toBeUndefined();
  });
});

describe('isTetError(err, ...codes)', () => {
  const zstd = new api.TetFormatError('TET_DECODE_ZSTD', 'bad frame');
  it('without codes: any TetError', () => {
    expect(api.isTetError(zstd)).toBe(true);
    expect(api.isTetError(new Error('x'))).toBe(false);
    expect(api.isTetError(Object.assign(new Error('x'), { code: 'TET_DECODE_ZSTD' }))).toBe(false);
    expect(api.isTetError(undefined)).toBe(false);
  });
  it('with codes: only those codes, and err.code narrows to their union', () => {
    expect(api.isTetError(zstd, 'TET_DECODE_ZSTD')).toBe(true);
    expect(api.isTetError(zstd, 'TET_DECODE_LENGTH', 'TET_DECODE_ZSTD')).toBe(true);
    expect(api.isTetError(zstd, 'TET_DECODE_LENGTH')).toBe(false);
    const err: unknown = zstd;
    if (api.isTetError(err, 'TET_DECODE_ZSTD', 'TET_DECODE_LENGTH')) {
      expectTypeOf(err.code).toEqualTypeOf<'TET_DECODE_ZSTD' | 'TET_DECODE_LENGTH'>();
      expectTypeOf(err).toMatchTypeOf<api.TetError>();
    }
    if (api.isTetError(err)) expectTypeOf(err.code).toEqualTypeOf<string>();
    // @ts-expect-error a code that is not in error_codes.def
    api.isTetError(err, 'TET_DECODE_TYPO');
  });
});

describe('err.detail', () => {
  it('toTetError keeps a native error\'s detail (a copy) and its cause', () => {
    const native = Object.assign(new Error('dataset \'a\' ...'), { code: 'TET_DECODE_ZSTD', detail: { dataset: 'a', chunk: [1, 2] } });
    const e = toTetError(native);
    expect(e).toBeInstanceOf(api.TetFormatError);
    expect(e.detail).toEqual({ dataset: 'a', chunk: [1, 2] });
    expect(e.detail).not.toBe(native.detail);
    expect(e.cause).toBe(native);
    expect(toTetError(Object.assign(new Error('m'), { code: 'TET_IO_OPEN' })).detail).toBeUndefined();
    expect(new TetError('TET_INTERNAL', 'm').detail).toBeUndefined();
  });

  const fixtures = join(shared, 'conformance/fixtures');
  it.skipIf(!existsSync(fixtures))('a corrupt zstd chunk rejects with detail { dataset, chunk, path } from the core', async () => {
    const path = join(fixtures, 'm_zstd_short.tet');
    const f = await api.open(path);
    try {
      const err = await f.read('a').then(() => undefined, (e: unknown) => e);
      expect(api.isTetError(err, 'TET_DECODE_LENGTH')).toBe(true);
      expect((err as api.TetError).detail).toEqual({ dataset: 'a', chunk: [0, 0], path });
    } finally {
      f.close();
    }
  });
  it.skipIf(!existsSync(fixtures))('an index entry outside the grid fails open with the entry\'s chunk in detail', async () => {
    const err = await api.open(join(fixtures, 'm_chunk_coord_oob.tet')).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(api.TetFormatError);
    expect((err as api.TetError).code).toBe('TET_INDEX_CHUNK_OUT_OF_GRID');
    expect((err as api.TetError).detail).toEqual({ dataset: 'a', chunk: [5, 1] });
  });
  it.skipIf(!existsSync(fixtures))('a chunk missing from the index fails open naming it in detail', async () => {
    // conformance manifest: "index lists 3 of the 4 tiles (tile (1,0) missing)"
    const err = await api.open(join(fixtures, 'm_missing_chunk.tet')).then(() => undefined, (e: unknown) => e);
    expect(api.isTetError(err, 'TET_INDEX_MISSING_CHUNK')).toBe(true);
    expect((err as api.TetError).detail).toEqual({ dataset: 'a', chunk: [1, 0] });
  });
  it.skipIf(!existsSync(fixtures))('errors not about a chunk carry no detail', async () => {
    const err = await api.open(join(fixtures, 'm_bad_magic.tet')).then(() => undefined, (e: unknown) => e);
    expect((err as api.TetError).code).toBe('TET_FORMAT_BAD_MAGIC');
    expect((err as api.TetError).detail).toBeUndefined();
  });
});
