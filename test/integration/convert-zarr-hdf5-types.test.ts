// Element types and layouts beyond the reference fixtures: HDF5 bool / int8 / float16 / big-endian /
// uint64 / strings / compounds / dimension scales written by h5py, and Zarr v2 directories
// (raw and zlib chunks, _ARRAY_DIMENSIONS, clipped edge chunks, missing chunks) built byte by byte.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert';
import { readIndependently } from '../support/sdk-independent-reader';
import { decodePy, footerOf, python, pythonAvailable, pythonDump } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-types-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const TAG = { f32: 1, f64: 2, i32: 3, i64: 4, u8: 5, u16: 6, i16: 7, u32: 8, f16: 9, u64: 10 };

describe.skipIf(!pythonAvailable())('HDF5 element types', () => {
  it('bool -> u8, int8 -> i16, f16, big-endian, u64; strings and compounds skipped with a notice', async () => {
    const src = join(work, 'types.h5');
    python(`
with h5py.File(sys.argv[1], 'w') as f:
    f['flags'] = np.array([[True, False, True], [False, False, True]])
    f['small'] = np.array([-128, -1, 0, 127], dtype='i1')
    f['half'] = np.array([1.5, -2.25, 65504, 6.1e-5], dtype='f2')
    f.create_dataset('be', data=np.arange(30, dtype='>f8').reshape(5, 6) / 7, chunks=(2, 6))
    f['big'] = np.array([0, 2**63 + 11, 2**64 - 1], dtype='u8')
    f['names'] = np.array([b'ab', b'cd'])
    f['rec'] = np.zeros(2, dtype=[('x', 'f4'), ('y', 'i4')])
    g = f.create_group('grid')
    g['x'] = np.arange(6, dtype='f4') * 0.5; g['x'].make_scale('x')
    g['y'] = np.arange(5, dtype='i4') * 10; g['y'].make_scale('y')
    g['field'] = np.arange(30, dtype='i2').reshape(5, 6)
    g['field'].dims[0].attach_scale(g['y']); g['field'].dims[1].attach_scale(g['x'])
    g['field'].attrs['units'] = 'm/s'
    g['field'].attrs['valid_max'] = np.uint64(2**63 + 5)
`, src);
    const want = pythonDump('h5', src);
    const out = join(work, 'types.tet');
    const notices: string[] = [];
    const report = await convert(src, out, { codec: 'zstd', onNotice: (m) => notices.push(m) });
    expect(report.skipped.map((s) => s.name).sort()).toEqual(['names', 'rec']);
    expect(notices.length).toBe(2);
    const sets = new Map(readIndependently(out).map((d) => [d.name, d]));
    // zstd tiles are not decodable by the independent reader; compare through a raw conversion too.
    const rawOut = join(work, 'types-raw.tet');
    await convert(src, rawOut, { codec: 'raw' });
    const raw = new Map(readIndependently(rawOut).map((d) => [d.name, d]));
    expect([...sets.keys()].sort()).toEqual(['be', 'big', 'flags', 'grid/field', 'grid/x', 'grid/y', 'half', 'small']);
    expect(raw.get('flags')!.dtypeTag).toBe(TAG.u8);
    expect(raw.get('flags')!.values).toEqual([1, 0, 1, 0, 0, 1]);
    expect(raw.get('small')!.dtypeTag).toBe(TAG.i16);
    expect(raw.get('small')!.values).toEqual([-128, -1, 0, 127]);
    expect(raw.get('half')!.dtypeTag).toBe(TAG.f16);
    expect(raw.get('half')!.values).toEqual(decodePy(want.half));
    expect(raw.get('be')!.values).toEqual(decodePy(want.be));
    expect(raw.get('be')!.chunkShape).toEqual([5, 6]); // 96-byte source chunks are too small to keep
    expect(raw.get('big')!.values).toEqual([0n, 2n ** 63n + 11n, 2n ** 64n - 1n]);
    const meta = footerOf(out).metadata.datasets;
    expect(meta['grid/field'].dim_names).toEqual(['y', 'x']);
    expect(meta['grid/field'].coords).toEqual({ y: { labels: [0, 10, 20, 30, 40] }, x: { labels: [0, 0.5, 1, 1.5, 2, 2.5] } });
    expect(meta['grid/field'].attrs).toEqual({ units: 'm/s', valid_max: String(2n ** 63n + 5n) });
  });
});

/** Writes a Zarr v2 array directory by hand. */
function zarrV2Array(dir: string, meta: Record<string, unknown>, attrs: Record<string, unknown>, chunks: Record<string, Buffer>) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.zarray'), JSON.stringify({ zarr_format: 2, order: 'C', filters: null, fill_value: 0, ...meta }));
  writeFileSync(join(dir, '.zattrs'), JSON.stringify(attrs));
  for (const [key, bytes] of Object.entries(chunks)) writeFileSync(join(dir, key), bytes);
}

describe('Zarr v2 directories', () => {
  it('raw and zlib chunks, _ARRAY_DIMENSIONS, clipped and missing chunks, bool, int8, big-endian', async () => {
    const root = join(work, 'v2.zarr');
    mkdirSync(root);
    writeFileSync(join(root, '.zgroup'), JSON.stringify({ zarr_format: 2 }));
    writeFileSync(join(root, '.zattrs'), JSON.stringify({ title: 'v2 store' }));
    // temp: 3 x 5 int16 little-endian, chunks 2 x 3, zlib; chunk (1,1) missing -> fill 7.
    const temp = (r: number, c: number) => r * 10 + c;
    const chunk = (r0: number, c0: number) => {
      const b = Buffer.alloc(2 * 3 * 2);
      for (let r = 0; r < 2; r++) for (let c = 0; c < 3; c++) b.writeInt16LE(temp(r0 + r, c0 + c), (r * 3 + c) * 2);
      return b;
    };
    zarrV2Array(join(root, 'temp'), { shape: [3, 5], chunks: [2, 3], dtype: '<i2', compressor: { id: 'zlib', level: 1 }, fill_value: 7 },
      { _ARRAY_DIMENSIONS: ['y', 'x'], units: 'K' },
      { '0.0': deflateSync(chunk(0, 0)), '0.1': deflateSync(chunk(0, 3)), '1.0': deflateSync(chunk(2, 0)) });
    const xs = Buffer.alloc(5 * 8); [0, 0.25, 0.5, 0.75, 1].forEach((v, i) => xs.writeDoubleBE(v, i * 8));
    zarrV2Array(join(root, 'x'), { shape: [5], chunks: [5], dtype: '>f8', compressor: null }, { _ARRAY_DIMENSIONS: ['x'] }, { 0: xs });
    zarrV2Array(join(root, 'mask'), { shape: [4], chunks: [4], dtype: '|b1', compressor: null, fill_value: false }, {}, { 0: Buffer.from([1, 0, 0, 1]) });
    zarrV2Array(join(root, 'tiny'), { shape: [3], chunks: [3], dtype: '|i1', compressor: null }, {}, { 0: Buffer.from([0x80, 0xff, 0x7f]) });
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', '.zgroup'), JSON.stringify({ zarr_format: 2 }));
    zarrV2Array(join(root, 'sub', 'cnt'), { shape: [2, 2], chunks: [1, 2], dtype: '<u4', compressor: null }, {},
      { '0.0': Buffer.from(new Uint32Array([1, 2]).buffer), '1.0': Buffer.from(new Uint32Array([3, 4294967295]).buffer) });

    const out = join(work, 'v2.tet');
    const report = await convert(root, out, { codec: 'raw' });
    expect(report.kind).toBe('zarr2');
    const sets = new Map(readIndependently(out).map((d) => [d.name, d]));
    expect([...sets.keys()].sort()).toEqual(['mask', 'sub/cnt', 'temp', 'tiny', 'x']);
    expect(sets.get('temp')!.values).toEqual([0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 7, 7]);
    expect(sets.get('temp')!.chunkShape).toEqual([3, 5]); // 12-byte source chunks: one default tile
    expect(sets.get('x')!.values).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(sets.get('mask')!.dtypeTag).toBe(TAG.u8);
    expect(sets.get('mask')!.values).toEqual([1, 0, 0, 1]);
    expect(sets.get('tiny')!.dtypeTag).toBe(TAG.i16);
    expect(sets.get('tiny')!.values).toEqual([-128, -1, 127]);
    expect(sets.get('sub/cnt')!.values).toEqual([1, 2, 3, 4294967295]);
    const meta = footerOf(out).metadata;
    expect(meta.attrs).toEqual({ title: 'v2 store' });
    expect(meta.datasets.temp).toEqual({ dim_names: ['y', 'x'], coords: { x: { labels: [0, 0.25, 0.5, 0.75, 1] } }, attrs: { units: 'K' } });
  });

  it('Zarr v3 dimension_names and an xarray-style coordinate array', async () => {
    const root = join(work, 'v3.zarr');
    const arr = (p: string, shape: number[], dataType: string, dims: string[], bytes: Buffer) => {
      mkdirSync(join(root, p, 'c'), { recursive: true });
      writeFileSync(join(root, p, 'zarr.json'), JSON.stringify({
        zarr_format: 3, node_type: 'array', shape, data_type: dataType,
        chunk_grid: { name: 'regular', configuration: { chunk_shape: shape } },
        chunk_key_encoding: { name: 'default', configuration: { separator: '/' } }, fill_value: 0,
        codecs: [{ name: 'bytes', configuration: { endian: 'little' } }], attributes: { note: p }, dimension_names: dims,
      }));
      const key = join(root, p, 'c', ...shape.slice(0, -1).map(() => '0'));
      mkdirSync(key, { recursive: true });
      writeFileSync(join(key, '0'), bytes);
    };
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'zarr.json'), JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: {} }));
    arr('t', [3], 'int64', ['t'], Buffer.from(new BigInt64Array([100n, 200n, 300n]).buffer));
    arr('v', [3, 2], 'float32', ['t', 'c'], Buffer.from(new Float32Array([1, 2, 3, 4, 5, 6]).buffer));
    const out = join(work, 'v3.tet');
    await convert(root, out, { codec: 'raw' });
    const meta = footerOf(out).metadata.datasets;
    expect(meta.v).toEqual({ dim_names: ['t', 'c'], coords: { t: { labels: [100, 200, 300] } }, attrs: { note: 'v' } });
    expect(new Map(readIndependently(out).map((d) => [d.name, d])).get('v')!.values).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
