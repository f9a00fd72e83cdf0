// Zarr sources as zarr-python / xarray write them (v2) and as the v3 spec lays them out (hand-built
// from numpy, test/support/sources/zarr_common.py), converted and read back through the SDK, value for
// value against what zarr-python / numpy read: Fortran order and v3 transpose permutations,
// NaN / Infinity tokens in the metadata, float16 through every codec (sharding included), group
// attributes (v2, v3, consolidated-only), 0-length axes, filters, unsupported codecs and types.
import { SOURCES } from '../support/paths';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../lib';
import { convert, openSource } from '../../lib/convert';
import { openZarr, parseZarrJson } from '../../lib/convert/zarr';
import { PYTHON } from '../support/convert-support';

interface Expected { dtype: string; shape: number[]; b64: string }
interface StoreEntry {
  arrays: Record<string, Expected>;
  attrs?: Record<string, Record<string, unknown>>;
  dims?: Record<string, string[] | null>;
  global: Record<string, unknown>;
  groups: Record<string, Record<string, unknown>>;
  skips?: Record<string, [string | null, string]>;
}

function zarrPythonAvailable(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import zarr, numcodecs, xarray, numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The expected values as plain numbers / bigints (NaN compares equal to NaN under toEqual). */
function expectedValues(e: Expected): (number | bigint)[] {
  const buf = Buffer.from(e.b64, 'base64');
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const ctor = ({
    '|b1': Uint8Array, '|u1': Uint8Array, '<i2': Int16Array, '<u2': Uint16Array, '<i4': Int32Array, '<u4': Uint32Array,
    '<i8': BigInt64Array, '<u8': BigUint64Array, '<f4': Float32Array, '<f8': Float64Array,
  } as Record<string, any>)[e.dtype];
  if (!ctor) throw new Error(`dtype ${e.dtype}`);
  return Array.from(new ctor(ab) as ArrayLike<number | bigint>);
}

/** Converts `src` and checks every expected array, its attrs and dims, and the root attrs. */
async function checkStore(src: string, out: string, want: StoreEntry, opts: Parameters<typeof convert>[2] = {}) {
  const report = await convert(src, out, { codec: 'zstd', ...opts });
  const file = await open(out);
  try {
    const meta: any = file.metadata;
    expect(file.datasets.map((d) => d.name).sort()).toEqual(Object.keys(want.arrays).sort());
    for (const [name, e] of Object.entries(want.arrays)) {
      const got = await file.read(name);
      expect(got.shape, name).toEqual(e.shape);
      expect(Array.from(got.data as ArrayLike<number | bigint>), name).toEqual(expectedValues(e));
      const attrs = want.attrs?.[name];
      if (attrs) expect(meta.datasets?.[name]?.attrs ?? {}, `${name} attrs`).toEqual(attrs);
      const dims = want.dims?.[name];
      if (dims) expect(meta.datasets?.[name]?.dim_names, `${name} dims`).toEqual(dims);
    }
    expect(meta.attrs ?? {}).toEqual(want.global);
  } finally {
    file.close();
  }
  return report;
}

const work = mkdtempSync(join(tmpdir(), 'tet-real-zarr-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let manifest: Record<string, StoreEntry> = {};
const store = (name: string) => join(work, `${name}.zarr`);

describe('parseZarrJson (Python json dialect)', () => {
  it('accepts bare NaN / Infinity / -Infinity outside strings only', () => {
    const doc = parseZarrJson('{"a": NaN, "b": [Infinity, -Infinity, 1e3], "s": "NaN, Infinity \\" NaN", "n": {"x": -Infinity}}');
    expect(doc.a).toBeNaN();
    expect(doc.b).toEqual([Infinity, -Infinity, 1000]);
    expect(doc.s).toBe('NaN, Infinity " NaN');
    expect(doc.n.x).toBe(-Infinity);
    expect(() => parseZarrJson('{"a": nan}')).toThrow();
    expect(() => parseZarrJson('{"a": NaNa}')).toThrow();
  });
});

describe.skipIf(!zarrPythonAvailable())('Zarr stores written by zarr-python / xarray / the v3 spec', () => {
  beforeAll(() => {
    const text = execFileSync(PYTHON, [join(SOURCES, 'zarr_sources.py'), work], { encoding: 'utf8', maxBuffer: 1 << 28 });
    manifest = JSON.parse(text);
  });

  it('v2 order "F": every dtype, rank 1-4, edge chunks, whole and partial slabs', async () => {
    await checkStore(store('forder'), join(work, 'forder.tet'), manifest.forder);
    // Slabs of one source row and tiles that cut across the source chunks.
    await checkStore(store('forder'), join(work, 'forder-slabs.tet'), manifest.forder, { slabBytes: 48, chunk: [2, 3], codec: 'raw' });
  });

  it('v3 transpose codec with arbitrary permutations (and float16, int8, bool, big-endian int64)', async () => {
    await checkStore(store('perm3'), join(work, 'perm3.tet'), manifest.perm3);
    await checkStore(store('perm3'), join(work, 'perm3-slabs.tet'), manifest.perm3, { slabBytes: 40, chunk: [1, 2] });
  });

  it('bare NaN / Infinity in .zattrs, .zarray, .zmetadata and zarr.json; NaN fill for missing chunks', async () => {
    await checkStore(store('nan_xr'), join(work, 'nan_xr.tet'), manifest.nan_xr);
    expect(manifest.nan_xr.attrs!.t).toEqual({ missing_marker: 'NaN', vmax: 'Infinity', units: 'K' });
    await checkStore(store('nan_raw'), join(work, 'nan_raw.tet'), manifest.nan_raw);
    expect(manifest.nan_raw.attrs!.sparse).toMatchObject({ valid_max: 'Infinity', valid_min: '-Infinity', _FillValue: 'NaN' });
    // A bare token in the root zarr.json, through detection and convert(), and the reader itself.
    await checkStore(store('nan3'), join(work, 'nan3.tet'), manifest.nan3);
    const reader = await openZarr(store('nan3'), 3);
    const want = manifest.nan3;
    expect(reader.globalAttrs).toEqual(want.global);
    const v = reader.variables.find((x) => x.name === 'v')!;
    expect(v.attrs).toEqual(want.attrs!.v);
    expect(v.dimNames).toEqual(['a', 'b']);
    expect(Array.from(await reader.read(v, [0, 0], v.shape) as Float32Array)).toEqual(expectedValues(want.arrays.v));
    expect(Array.from(await reader.read(v, [1, 1], [3, 3]) as Float32Array))
      .toEqual(expectedValues(want.arrays.v).filter((_, i) => Math.floor(i / 5) >= 1 && i % 5 >= 1 && i % 5 < 4));
    reader.close();
  });

  it('float16: blosc, zstd, gzip, zlib, lz4, raw, big-endian F order, NaN and 1.5 fills (v2); bytes, blosc, zstd, gzip, sharding, hex fill (v3)', async () => {
    await checkStore(store('f16v2'), join(work, 'f16v2.tet'), manifest.f16v2);
    await checkStore(store('f16v3'), join(work, 'f16v3.tet'), manifest.f16v3, { chunk: [3, 4] });
    const reader = await openSource(store('f16v3'));
    expect(reader.variables.find((v) => v.name === 'sharded')!.dtype).toBe('f16');
    reader.close();
  });

  it('attributes of non-root groups (v2, v3, consolidated .zmetadata only)', async () => {
    for (const name of ['groups', 'groups3', 'consolidated']) {
      await checkStore(store(name), join(work, `${name}.tet`), manifest[name]);
      const reader = await openSource(store(name));
      expect(reader.groupAttrs, name).toEqual(manifest[name].groups);
      expect(reader.globalAttrs, name).toEqual(manifest[name].global);
      reader.close();
    }
    expect(manifest.groups.groups).toEqual({ g1: { level: 1, tags: ['a', 'b'] }, 'g1/g2': { level: 2, nested: { k: [1.5, 2] }, edge: 'NaN' } });
    expect(manifest.consolidated.attrs!['s/v']).toEqual({ note: 'only in .zmetadata' });
  });

  it('0-length axes, "/" chunk keys, delta / shuffle / fixedscaleoffset filters, missing chunks; unsupported codecs and types skipped', async () => {
    const want = manifest.misc;
    const report = await checkStore(store('misc'), join(work, 'misc.tet'), want);
    expect(report.skipped.map((s) => s.name).sort()).toEqual(Object.keys(want.skips!).sort());
    const reader = await openSource(store('misc'));
    for (const [name, [code, reason]] of Object.entries(want.skips!)) {
      const v = reader.variables.find((x) => x.name === name)!;
      expect(v.skipCode, name).toBe(code ?? undefined);
      expect(v.skipReason, name).toContain(reason);
    }
    // A skipped variable is never read.
    const empty = reader.variables.find((x) => x.name === 'empty')!;
    await expect(reader.read(empty, [0, 0], [0, 5])).rejects.toMatchObject({ code: 'TET_CONVERT_EMPTY' });
    reader.close();
  });
});
