// NetCDF files made by netCDF-C's own tools (netCDF4-python, ncgen, libnetcdf's in-place rename),
// generated at test time by test/support/sources/netcdf_make.py, converted and compared value for
// value (NaN-aware), name for name and attribute for attribute with what netCDF4-python reads:
// 0-length unlimited dimensions, NUL-padded names, CF decoding under --unpack (_Unsigned,
// scale/offset, _FillValue / missing_value / valid_* / default fills), group attributes, and the
// CLI's single error line when a conversion fails with tile writes in flight.
import { ROOT, SOURCES } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert';
import { exportZarr } from '../../lib/export';
import { open } from '../../lib';
import { PYTHON, pythonAvailable } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-nc-real-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const have = pythonAvailable() && spawnSync('ncgen', ['-version']).status !== null;

type Value = number | string | null;
interface NcVar { shape: number[]; dims: string[]; dtype: string; raw: Value[]; decoded: Value[]; decoded_dtype: string; attrs: string[] }
type NcFile = Record<string, NcVar> & { __groups__: any; __dims__: Record<string, number>; __names__?: any };
let expected: Record<string, NcFile>;

beforeAll(() => {
  if (!have) return;
  const text = execFileSync(PYTHON, [join(SOURCES, 'netcdf_make.py'), work],
    { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
  expected = JSON.parse(text);
}, 60_000);

const TET_DTYPE: Record<string, string> = { '<f4': 'f32', '<f8': 'f64', '<i2': 'i16', '<i4': 'i32', '<u2': 'u16', '|u1': 'u8', '<u4': 'u32', '|i1': 'i16' };

async function readAll(file: string) {
  const f = await open(file);
  try {
    const out = new Map<string, { dtype: string; shape: number[]; values: number[] }>();
    for (const d of f.datasets) {
      const { data } = await f.read(d.name);
      out.set(d.name, { dtype: d.dtype, shape: d.shape, values: Array.from(data as ArrayLike<number | bigint>, Number) });
    }
    return { sets: out, metadata: f.metadata as any };
  } finally {
    f.close();
  }
}

const MASK_ATTRS = ['_FillValue', 'missing_value', 'valid_min', 'valid_max', 'valid_range', 'scale_factor', 'add_offset'];

/** netCDF4-python's value (None = masked) -> the number the converter must write. */
function want(x: Value): number {
  return x === null ? NaN : typeof x === 'string' ? Number(x) : x;
}

/** Same value: NaN where masked; f32 results within one rounding of f32 (netCDF4-python computes
 *  x * scale + offset in f32 with two roundings, the converter in f64 with one). */
function expectClose(got: number[], exp: Value[], f32: boolean, label: string) {
  expect(got.length, label).toBe(exp.length);
  got.forEach((g, i) => {
    const e = want(exp[i]);
    if (Number.isNaN(e)) expect(g, `${label}[${i}]`).toBeNaN();
    else if (f32) expect(Math.abs(g - e), `${label}[${i}] ${g} vs ${e}`).toBeLessThanOrEqual(Math.abs(e) * 2 ** -22 + 1e-30);
    else expect(g, `${label}[${i}]`).toBe(e);
  });
}

describe.skipIf(!have)('NetCDF made by netCDF-C tools', () => {
  it.each(['empty3.nc', 'empty4.nc'])('%s: a 0-length unlimited dimension skips only its variables, recorded in report and metadata', async (name) => {
    const out = join(work, `${name}.tet`);
    const report = await convert(join(work, name), out, { codec: 'raw' });
    const exp = expected[name];
    const emptyNames = Object.keys(exp).filter((k) => !k.startsWith('__') && exp[k].shape.includes(0)).sort();
    expect(emptyNames).toEqual(['temp', 'time']);
    expect(report.skipped.filter((s) => s.code === 'TET_CONVERT_EMPTY').map((s) => s.name).sort()).toEqual(emptyNames);
    expect(report.skipped.find((s) => s.name === 'temp')).toMatchObject({ shape: [0, 4], code: 'TET_CONVERT_EMPTY' });
    const { sets, metadata } = await readAll(out);
    const full = Object.keys(exp).filter((k) => !k.startsWith('__') && !exp[k].shape.includes(0)).sort();
    expect([...sets.keys()].sort()).toEqual(full);
    for (const k of full) {
      expect(sets.get(k)!.dtype, k).toBe(TET_DTYPE[exp[k].dtype]);
      expect(sets.get(k)!.shape, k).toEqual(exp[k].shape);
      expectClose(sets.get(k)!.values, exp[k].raw, false, k);
      expect(Object.keys(metadata.datasets?.[k]?.attrs ?? {}).sort(), k).toEqual([...exp[k].attrs].sort());
    }
    expect(metadata.empty_datasets.temp).toMatchObject({ shape: [0, 4], dim_names: ['time', 'x'], dtype: 'f32', attrs: { units: 'K' } });
    expect(metadata.empty_datasets.time).toMatchObject({ shape: [0], dim_names: ['time'], attrs: { units: 'days since 2000-01-01' } });
    expect(metadata.attrs).toMatchObject({ title: 'no records yet' });
    // Group attributes (NetCDF-4) as every reader shows them.
    const groups = exp.__groups__ as Record<string, Record<string, unknown>>;
    if (Object.keys(groups).length) expect(metadata.group_attrs).toEqual(groups);
    // A round trip through Zarr keeps the empty variables as empty arrays.
    const zarr = join(work, `${name}.zarr`);
    const ex = await exportZarr(out, zarr, {});
    expect(ex.arrays.find((a) => a.name === 'temp')).toMatchObject({ shape: [0, 4] });
    const zmeta = JSON.parse(readFileSync(join(zarr, 'temp', 'zarr.json'), 'utf8'));
    expect(zmeta.shape).toEqual([0, 4]);
    expect(zmeta.dimension_names).toEqual(['time', 'x']);
  });

  it.each(['template3.nc', 'template4.nc'])('%s: a template with no records converts to a file that records every variable', async (name) => {
    const out = join(work, `${name}.tet`);
    const report = await convert(join(work, name), out, {});
    expect(report.datasets).toEqual([]);
    expect(report.skipped.map((s) => [s.name, s.code])).toEqual([['time', 'TET_CONVERT_EMPTY'], ['obs', 'TET_CONVERT_EMPTY']]);
    const { sets, metadata } = await readAll(out);
    expect(sets.size).toBe(0);
    expect(metadata.attrs).toEqual({ Conventions: 'CF-1.8' });
    expect(metadata.empty_datasets.obs).toMatchObject({ shape: [0, 3], dim_names: ['time', 'station'], attrs: { _FillValue: -999 } });
    expect(metadata.empty_datasets.time.attrs).toEqual({ units: 'hours since 2020-01-01' });
  });

  it('names padded with NULs by an in-place rename read as netCDF-C reads them, and export them', async () => {
    const src = join(work, 'renamed.nc');
    const exp = expected['renamed.nc'].__names__;
    expect(readFileSync(src).includes(Buffer.from('t\0\0\0'))).toBe(true);
    const out = join(work, 'renamed.tet');
    await convert(src, out, { codec: 'raw' });
    const { sets, metadata } = await readAll(out);
    expect([...sets.keys()].sort()).toEqual([...exp.vars].sort());
    expect(metadata.datasets.t.dim_names).toEqual(exp.dims);
    expect(Object.keys(metadata.datasets.t.attrs)).toEqual(exp.t_attrs);
    expect(metadata.datasets.t.attrs.u).toBe(exp.t_u);
    expect(metadata.datasets.t.coords).toEqual({ x: { labels: [7, 8, 9] } });
    expect(sets.get('t')!.values).toEqual([1, 2, 3]);
    const zarr = join(work, 'renamed.zarr');
    await exportZarr(out, zarr, {});
    expect(readdirSync(zarr).sort()).toEqual(['t', 'x', 'zarr.json']);
  });

  it.each(['packed3.nc', 'packed5.nc', 'packed4.nc'])('%s: --unpack decodes as netCDF4-python (mask and scale)', async (name) => {
    const out = join(work, `${name}.unpacked.tet`);
    const report = await convert(join(work, name), out, { codec: 'raw', unpack: true });
    const exp = expected[name];
    const { sets, metadata } = await readAll(out);
    for (const [k, v] of Object.entries(exp) as [string, NcVar][]) {
      if (k.startsWith('__')) continue;
      const got = sets.get(k)!;
      expect(got, k).toBeDefined();
      const decodedKind = v.decoded_dtype.slice(1);
      if (decodedKind.startsWith('f')) {
        // Float results: same values (NaN where netCDF4-python masks); f32 when it is f32.
        expect(got.dtype, k).toBe(decodedKind === 'f4' ? 'f32' : 'f64');
        expectClose(got.values, v.decoded, got.dtype === 'f32', k);
        const unpacked = report.datasets.find((d) => d.name === k)!.unpacked;
        if (unpacked) for (const a of ['scale_factor', 'add_offset', '_FillValue', 'valid_range', '_Unsigned']) expect(metadata.datasets?.[k]?.attrs ?? {}, `${k} ${a}`).not.toHaveProperty(a);
      } else if (v.decoded.includes(null) && !v.attrs.some((a: string) => MASK_ATTRS.includes(a))) {
        // Integers that netCDF4-python masks only by the default fill: kept as stored integers
        // (xarray's rule; see lib/convert/README.md), the same bits as its unmasked data.
        expect(got.dtype, k).toBe(TET_DTYPE[v.decoded_dtype]);
        expect(got.values, k).toEqual(v.raw.map(want));
      } else if (v.decoded.includes(null)) {
        // Integers masked by their own attributes: a masked integer array in netCDF4-python,
        // float with NaN here (f32 up to 16 bits, else f64), equal values elsewhere.
        expect(got.dtype, k).toBe(['i1', 'u1', 'i2', 'u2'].includes(decodedKind) ? 'f32' : 'f64');
        expectClose(got.values, v.decoded, false, k);
      } else {
        expect(got.dtype, k).toBe(TET_DTYPE[v.decoded_dtype]);
        expect(got.values, k).toEqual(v.decoded);
      }
    }
    // Spot checks against hand-derived values (GOES-16 style radiances).
    const rad = sets.get('rad')!.values;
    expect(rad[0]).toBeNaN();                                    // 1023 = _FillValue
    expect(rad[3]).toBeNaN();                                    // -25536 = 40000 unsigned > 1022
    expect(rad[5]).toBeNaN();                                    // -1 = 65535 unsigned
    expect(rad[1]).toBeCloseTo(1022 * 0.1571 - 1.3, 4);
    expect(sets.get('b_unsigned')!.values.slice(1, 5)).toEqual([0, 0.5, 63.5, 64]); // -128 -> 128 * 0.5
    expect(sets.get('s_unsigned_only')!.dtype).toBe('u16');
    if (sets.has('u_byte')) expect(sets.get('u_byte')!.values[0]).toBe(255);
    expect(metadata.datasets.s_unsigned_only?.attrs?._Unsigned).toBeUndefined();
  });

  it('without --unpack the stored values and every attribute are kept', async () => {
    const out = join(work, 'packed4.raw.tet');
    await convert(join(work, 'packed4.nc'), out, { codec: 'raw' });
    const exp = expected['packed4.nc'];
    const { sets, metadata } = await readAll(out);
    for (const [k, v] of Object.entries(exp) as [string, NcVar][]) {
      if (k.startsWith('__')) continue;
      expect(sets.get(k)!.values, k).toEqual(v.raw.map(want));
      expect(Object.keys(metadata.datasets[k]?.attrs ?? {}).sort(), k).toEqual([...v.attrs].sort());
    }
    expect(metadata.datasets.rad.attrs._Unsigned).toBe('true');
  });
});

describe.skipIf(!have)('tet convert failing with tile writes in flight', () => {
  it('prints one error line, no unhandled rejection, and leaves nothing behind', () => {
    const store = join(work, 'corrupt.zarr');
    execFileSync(PYTHON, ['-c', `
import sys, zarr, numpy as np, numcodecs
z = zarr.open(sys.argv[1], mode='w', shape=(64, 256), chunks=(1, 256), dtype='f8', compressor=numcodecs.Zlib(1))
z[:] = np.arange(64 * 256, dtype='f8').reshape(64, 256)
open(sys.argv[1] + '/40.0', 'wb').write(b'not zlib at all')
`, store]);
    const out = join(work, 'corrupt.tet');
    const cli = join(ROOT, 'bin', 'tet.js');
    if (!existsSync(join(ROOT, 'dist', 'cli.cjs'))) return; // built by npm ci (prepare)
    const r = spawnSync(process.execPath, [cli, 'convert', store, out, '--chunk', '1,256', '--codec', 'raw', '-q'],
      { encoding: 'utf8' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: cannot read corrupt .*numcodecs\.zlib/);
    expect(existsSync(out)).toBe(false);
    // Through the SDK with one-row slabs, so the failing read meets tile writes still in flight:
    // the rejection is TET_CONVERT_READ and nothing rejects unobserved.
    const script = `
const { convert } = require(${JSON.stringify(join(ROOT, 'dist', 'index.cjs'))});
let unhandled = 0;
process.on('unhandledRejection', (e) => { unhandled++; console.error('UNHANDLED', e && e.message); });
convert(process.argv[1], process.argv[2], { chunk: [1, 256], codec: 'raw', slabBytes: 4096 })
  .then(() => console.log('resolved'), (e) => console.log('rejected', e.code))
  .then(() => new Promise((r) => setTimeout(r, 200))).then(() => console.log('unhandled', unhandled));`;
    const s = spawnSync(process.execPath, ['-e', script, store, out], { encoding: 'utf8' });
    expect(s.stdout.trim().split('\n'), s.stderr).toEqual(['rejected TET_CONVERT_READ', 'unhandled 0']);
    expect(s.status).toBe(0);
    expect(readdirSync(work).filter((f) => f.includes('corrupt.tet'))).toEqual([]);
  });
});
