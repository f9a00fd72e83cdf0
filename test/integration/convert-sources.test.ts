// tet convert on the reference HDF5 / NetCDF-4 / Zarr v3 sources: values, dtypes, dim names,
// coordinate labels and attributes compared with what Python (h5py, netCDF4, numpy+zstandard)
// reads from the same files, and read back with the spec-written .tet reader.
import { SHARED } from '../support/paths';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert';
import { readIndependently, type IndependentDataset } from '../support/sdk-independent-reader';
import { decodePy, footerOf, pythonAvailable, pythonDump, TET_DTYPE_OF, type PyArray } from '../support/convert-support';

const REF = join(SHARED, 'fixtures/reference');
const work = mkdtempSync(join(tmpdir(), 'tet-convert-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const py = pythonAvailable();
const DTYPE_TAG: Record<string, number> = { f32: 1, f64: 2, i32: 3, i64: 4, u8: 5, u16: 6, i16: 7, u32: 8, f16: 9, u64: 10 };

async function convertRaw(src: string, opts = {}): Promise<{ out: string; sets: Map<string, IndependentDataset>; footer: any }> {
  const out = join(work, `${src.replace(/[^a-z0-9]+/gi, '_')}-${Math.random().toString(36).slice(2)}.tet`);
  await convert(src, out, { codec: 'raw', ...opts });
  const sets = new Map(readIndependently(out).map((d) => [d.name, d]));
  return { out, sets, footer: footerOf(out) };
}

function expectSameArray(got: IndependentDataset | undefined, want: PyArray, name: string): void {
  expect(got, name).toBeDefined();
  expect(got!.shape, name).toEqual(want.shape);
  expect(got!.dtypeTag, name).toBe(DTYPE_TAG[TET_DTYPE_OF[want.dtype.replace(/^[<>|=]/, '')]]);
  expect(got!.values, name).toEqual(decodePy(want));
}

const FIXTURES: [string, 'h5' | 'nc' | 'zarr3', string][] = [
  ...['cf_3d', 'groups_3d', 'tensor_3d', 'tensor_4d', 'tensor_5d'].map((n) => [n, 'h5', `${REF}/h5/${n}.h5`] as [string, 'h5', string]),
  ...['cf_3d', 'groups_3d', 'tensor_3d', 'tensor_4d', 'tensor_5d'].map((n) => [n, 'nc', `${REF}/netcdf/${n}.nc`] as [string, 'nc', string]),
  ...['groups_3d', 'tensor_3d', 'tensor_4d', 'tensor_5d'].map((n) => [n, 'zarr3', `${REF}/zarr/${n}`] as [string, 'zarr3', string]),
];

describe.skipIf(!py)('reference sources convert with the values an independent reader sees', () => {
  for (const [name, kind, src] of FIXTURES) {
    it(`${kind} ${name}`, async () => {
      const want = pythonDump(kind, src);
      const { sets, footer } = await convertRaw(src);
      // Every numeric array of rank >= 1 is a dataset; nothing else is.
      const expectedNames = Object.keys(want).filter((n) => !(kind === 'nc' && /^d\d$/.test(n))).sort();
      expect([...sets.keys()].sort()).toEqual(expectedNames);
      for (const n of expectedNames) expectSameArray(sets.get(n), want[n], `${src}:${n}`);
      const history = footer.history.at(-1);
      expect(history.op).toBe('convert');
      expect(history.source).toBe(src);
      expect(Number.isNaN(Date.parse(history.at))).toBe(false);
      expect(history.params).toMatchObject({ codec: 'raw', unpack: false });
    });
  }
});

describe.skipIf(!py)('the same tensor imported from HDF5, NetCDF and Zarr is identical', () => {
  for (const fixture of ['tensor_3d', 'tensor_4d', 'tensor_5d', 'groups_3d']) {
    it(fixture, async () => {
      const h5 = (await convertRaw(`${REF}/h5/${fixture}.h5`)).sets;
      const nc = (await convertRaw(`${REF}/netcdf/${fixture}.nc`)).sets;
      const zr = (await convertRaw(`${REF}/zarr/${fixture}`)).sets;
      const names = [...zr.keys()];
      expect(names.length).toBe(4);
      for (const n of names) {
        expect(h5.get(n)!.values, n).toEqual(zr.get(n)!.values);
        expect(nc.get(n)!.values, n).toEqual(zr.get(n)!.values);
        expect(h5.get(n)!.dtypeTag).toBe(zr.get(n)!.dtypeTag);
        expect(nc.get(n)!.shape).toEqual(zr.get(n)!.shape);
      }
    });
  }
});

describe.skipIf(!py)('metadata: dimension names, coordinates, attributes', () => {
  it('NetCDF-4 dims, coordinate variables and CF attributes', async () => {
    const want = pythonDump('nc', `${REF}/netcdf/cf_3d.nc`);
    const { footer } = await convertRaw(`${REF}/netcdf/cf_3d.nc`);
    const meta = footer.metadata.datasets.temperature;
    expect(meta.dim_names).toEqual(want.temperature.dims);
    for (const dim of ['time', 'lat', 'lon']) {
      expect(meta.coords[dim].labels).toEqual(decodePy(want[dim]).map(Number));
    }
    const attrs = want.temperature.attrs;
    expect(meta.attrs).toEqual(attrs);
    expect(meta.attrs.scale_factor).toBe(Math.fround(0.01));
    expect(meta.attrs.units).toBe('K');
    expect(footer.metadata.datasets.i64.dim_names).toEqual(want.i64.dims);
    // NetCDF dimensions without a variable (d0, d1, ...) name axes but are not datasets.
    const tensor = await convertRaw(`${REF}/netcdf/tensor_3d.nc`);
    expect(tensor.footer.metadata.datasets.f32.dim_names).toEqual(['d0', 'd1', 'd2']);
    expect(tensor.footer.metadata.datasets.f32.coords).toBeUndefined();
  });

  it('HDF5 CF coordinates attribute names axes the same way as NetCDF', async () => {
    const nc = (await convertRaw(`${REF}/netcdf/cf_3d.nc`)).footer.metadata.datasets.temperature;
    const h5 = (await convertRaw(`${REF}/h5/cf_3d.h5`)).footer.metadata.datasets.temperature;
    expect(h5.dim_names).toEqual(nc.dim_names);
    expect(h5.coords).toEqual(nc.coords);
    expect(h5.attrs.units).toBe('K');
    expect(h5.attrs._FillValue).toBe(-9999);
  });

  it('--unpack applies scale_factor/add_offset (f64 attributes: into f64) with the fill value as NaN', async () => {
    const want = pythonDump('nc', `${REF}/netcdf/cf_3d.nc`).temperature;
    const raw = decodePy(want) as number[];
    const { sets, footer } = await convertRaw(`${REF}/netcdf/cf_3d.nc`, { unpack: true, include: ['temperature'] });
    expect([...sets.keys()]).toEqual(['temperature']);
    const got = sets.get('temperature')!;
    // CF: the unpacked type is the type of scale_factor, a double in this file.
    expect(got.dtypeTag).toBe(2);
    const scale = want.attrs.scale_factor as number;
    const offset = want.attrs.add_offset as number;
    const expected = raw.map((x) => (x === -9999 ? NaN : x * scale + offset));
    expect(got.values).toEqual(expected);
    expect(footer.metadata.datasets.temperature.attrs.scale_factor).toBeUndefined();
    expect(footer.metadata.datasets.temperature.attrs.units).toBe('K');
  });

  it('--include / --exclude select datasets by exact name or glob', async () => {
    const a = await convertRaw(`${REF}/h5/groups_3d.h5`, { include: ['primary/*'], exclude: ['**/i64'] });
    expect([...a.sets.keys()].sort()).toEqual(['primary/f32', 'primary/f64', 'primary/i32']);
    const b = await convertRaw(`${REF}/h5/groups_3d.h5`, { include: ['aux/scale'] });
    expect([...b.sets.keys()]).toEqual(['aux/scale']);
    expect(b.footer.history.at(-1).params.include).toEqual(['aux/scale']);
  });

  it('keeps the source chunk shape when sensible, honours --chunk', async () => {
    const kept = await convertRaw(`${REF}/h5/tensor_3d.h5`);
    expect(kept.sets.get('f32')!.chunkShape).toEqual([8, 16, 16]);
    const forced = await convertRaw(`${REF}/h5/tensor_3d.h5`, { chunk: [5, 7, 32], slabBytes: 4096 });
    expect(forced.sets.get('f64')!.chunkShape).toEqual([5, 7, 32]);
    expect(forced.sets.get('f64')!.values).toEqual(kept.sets.get('f64')!.values);
  });
});

describe('bad sources give TET_CONVERT_* and leave nothing behind', () => {
  it('missing, unrecognized, truncated', async () => {
    const dir = mkdtempSync(join(work, 'bad-'));
    const { writeFileSync, readFileSync } = await import('node:fs');
    const cases: [string, string][] = [];
    cases.push([join(dir, 'missing.h5'), 'TET_CONVERT_OPEN']);
    writeFileSync(join(dir, 'garbage.h5'), 'not a data file at all');
    cases.push([join(dir, 'garbage.h5'), 'TET_CONVERT_UNKNOWN_FORMAT']);
    writeFileSync(join(dir, 'trunc.h5'), readFileSync(`${REF}/h5/tensor_3d.h5`).subarray(0, 2000));
    cases.push([join(dir, 'trunc.h5'), 'TET_CONVERT_']);
    writeFileSync(join(dir, 'trunc.nc'), Buffer.from('CDF\x01\0\0\0\0\0\0\0\x0a\0\0', 'latin1'));
    cases.push([join(dir, 'trunc.nc'), 'TET_CONVERT_SOURCE_INVALID']);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'empty.zarr'));
    cases.push([join(dir, 'empty.zarr'), 'TET_CONVERT_UNKNOWN_FORMAT']);
    for (const [src, code] of cases) {
      const out = join(dir, 'out.tet');
      const err = await convert(src, out).then(() => null, (e) => e);
      expect(err, src).not.toBeNull();
      expect(String(err.code), src).toMatch(new RegExp(`^${code}`));
      expect(err.message.length).toBeGreaterThan(10);
      expect(readdirSync(dir).filter((f) => f.startsWith('out')), src).toEqual([]);
    }
  });
});
