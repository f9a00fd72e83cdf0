// NetCDF classic sources: a CDF-1 file built byte by byte here (record dimension, padding, byte
// widening), and CDF-1/2/5 files written by the netCDF-C library (python netCDF4), compared with
// what netCDF4 reads back.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert';
import { readIndependently } from '../support/sdk-independent-reader';
import { decodePy, footerOf, python, pythonAvailable, pythonDump, TET_DTYPE_OF } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-cdf-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const DTYPE_TAG: Record<string, number> = { f32: 1, f64: 2, i32: 3, i64: 4, u8: 5, u16: 6, i16: 7, u32: 8, f16: 9, u64: 10 };

/** Minimal CDF-1 writer: big-endian header per the classic format grammar, then data. */
function cdf1(): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
  const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
  const name = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), pad(Buffer.from(s))]);
  const charAttr = (n: string, v: string) => Buffer.concat([name(n), u32(2), u32(v.length), pad(Buffer.from(v))]);
  const floatAttr = (n: string, v: number) => { const b = Buffer.alloc(4); b.writeFloatBE(v); return Buffer.concat([name(n), u32(5), u32(1), b]); };
  const shortAttr = (n: string, v: number) => { const b = Buffer.alloc(2); b.writeInt16BE(v); return Buffer.concat([name(n), u32(3), u32(1), pad(b)]); };
  const attrs = (list: Buffer[]) => list.length ? Buffer.concat([u32(12), u32(list.length), ...list]) : Buffer.concat([u32(0), u32(0)]);
  const header = (begins: number[]) => Buffer.concat([
    Buffer.from('CDF\x01', 'latin1'), u32(2),
    u32(10), u32(2), name('time'), u32(0), name('x'), u32(3),
    attrs([charAttr('title', 'hand made')]),
    u32(11), u32(4),
    name('x'), u32(1), u32(1), attrs([charAttr('units', 'm')]), u32(4), u32(12), u32(begins[0]),
    name('b'), u32(1), u32(1), attrs([]), u32(1), u32(4), u32(begins[1]),
    name('time'), u32(1), u32(0), attrs([charAttr('units', 'days')]), u32(6), u32(8), u32(begins[2]),
    name('temp'), u32(2), u32(0), u32(1), attrs([floatAttr('scale_factor', 0.5), floatAttr('add_offset', 10), shortAttr('_FillValue', -1)]),
    u32(3), u32(8), u32(begins[3]),
  ]);
  const h = header([0, 0, 0, 0]).length;
  parts.push(header([h, h + 12, h + 16, h + 24]));
  const x = Buffer.alloc(12); [10, 20, 30].forEach((v, i) => x.writeInt32BE(v, i * 4));
  const b = Buffer.from([0xff, 0x05, 0x80, 0x00]); // -1, 5, -128 (+ padding)
  parts.push(x, b);
  for (let r = 0; r < 2; r++) {
    const t = Buffer.alloc(8); t.writeDoubleBE(r + 0.5);
    const temp = Buffer.alloc(8); [r * 3 + 1, -1, r * 3 + 3].forEach((v, i) => temp.writeInt16BE(v, i * 2));
    parts.push(t, temp);
  }
  return Buffer.concat(parts);
}

describe('NetCDF classic', () => {
  it('hand-written CDF-1 with a record dimension converts with values, dims, coords, attrs', async () => {
    const src = join(work, 'hand.nc');
    writeFileSync(src, cdf1());
    const out = join(work, 'hand.tet');
    const report = await convert(src, out, { codec: 'raw' });
    expect(report.kind).toBe('netcdf3');
    const sets = new Map(readIndependently(out).map((d) => [d.name, d]));
    expect([...sets.keys()].sort()).toEqual(['b', 'temp', 'time', 'x']);
    expect(sets.get('x')!.values).toEqual([10, 20, 30]);
    expect(sets.get('b')!.dtypeTag).toBe(DTYPE_TAG.i16); // byte widens to i16
    expect(sets.get('b')!.values).toEqual([-1, 5, -128]);
    expect(sets.get('time')!.values).toEqual([0.5, 1.5]);
    expect(sets.get('temp')!.shape).toEqual([2, 3]);
    expect(sets.get('temp')!.values).toEqual([1, -1, 3, 4, -1, 6]);
    const meta = footerOf(out).metadata;
    expect(meta.attrs).toEqual({ title: 'hand made' });
    expect(meta.datasets.temp).toEqual({
      dim_names: ['time', 'x'],
      coords: { time: { labels: [0.5, 1.5] }, x: { labels: [10, 20, 30] } },
      attrs: { scale_factor: 0.5, add_offset: 10, _FillValue: -1 },
    });
    const unpacked = join(work, 'hand-unpacked.tet');
    await convert(src, unpacked, { codec: 'raw', unpack: true, include: ['temp'] });
    const u = readIndependently(unpacked)[0];
    expect(u.dtypeTag).toBe(DTYPE_TAG.f32);
    expect(u.values).toEqual([10.5, NaN, 11.5, 12, NaN, 13]);
  });

  it.skipIf(!pythonAvailable())('the hand-written CDF-1 reads the same in netCDF4', () => {
    const src = join(work, 'hand-py.nc');
    writeFileSync(src, cdf1());
    const want = pythonDump('nc', src);
    expect(decodePy(want.temp)).toEqual([1, -1, 3, 4, -1, 6]);
    expect(decodePy(want.b)).toEqual([-1, 5, -128]);
    expect(want.temp.dims).toEqual(['time', 'x']);
  });

  for (const format of ['NETCDF3_CLASSIC', 'NETCDF3_64BIT_OFFSET', 'NETCDF3_64BIT_DATA']) {
    it.skipIf(!pythonAvailable())(`${format} written by netCDF-C`, async () => {
      const src = join(work, `${format}.nc`);
      const cdf5 = format === 'NETCDF3_64BIT_DATA';
      python(`
fmt, path, cdf5 = sys.argv[1], sys.argv[2], sys.argv[3] == '1'
rng = np.random.default_rng(7)
with netCDF4.Dataset(path, 'w', format=fmt) as ds:
    ds.history = 'made for tet'
    ds.createDimension('t', None); ds.createDimension('y', 5); ds.createDimension('x', 7)
    t = ds.createVariable('t', 'f8', ('t',)); t[:] = np.arange(4) * 1.5; t.units = 'hours'
    y = ds.createVariable('y', 'f4', ('y',)); y[:] = np.linspace(-1, 1, 5)
    v = ds.createVariable('v', 'f4', ('t', 'y', 'x')); v[:] = rng.standard_normal((4, 5, 7)).astype('f4'); v.long_name = 'field'
    w = ds.createVariable('w', 'i2', ('t', 'x')); w[:] = rng.integers(-300, 300, (4, 7))
    s = ds.createVariable('s', 'i4', ('y', 'x')); s[:] = rng.integers(-2**31, 2**31 - 1, (5, 7))
    c = ds.createVariable('c', 'S1', ('x',))
    b = ds.createVariable('b', 'i1', ('y',)); b[:] = [-128, -1, 0, 1, 127]
    if cdf5:
        ds.createVariable('ub', 'u1', ('x',))[:] = np.arange(7) * 30
        ds.createVariable('us', 'u2', ('x',))[:] = np.arange(7) * 9000
        ds.createVariable('ui', 'u4', ('x',))[:] = np.arange(7) * 600000000
        ds.createVariable('i64', 'i8', ('t', 'x'))[:] = rng.integers(-2**62, 2**62, (4, 7))
        ds.createVariable('u64', 'u8', ('x',))[:] = np.arange(7, dtype='u8') * np.uint64(2**61)
`, format, src, cdf5 ? '1' : '0');
      const want = pythonDump('nc', src);
      const out = join(work, `${format}.tet`);
      const notices: string[] = [];
      const report = await convert(src, out, { codec: 'raw', slabBytes: 64, onNotice: (m) => notices.push(m) });
      expect(report.kind).toBe('netcdf3');
      expect(report.skipped.map((s) => s.name)).toEqual(['c']);
      expect(notices.some((n) => n.includes('c') && n.includes('char'))).toBe(true);
      const sets = new Map(readIndependently(out).map((d) => [d.name, d]));
      expect([...sets.keys()].sort()).toEqual(Object.keys(want).sort());
      const meta = footerOf(out).metadata;
      for (const [n, a] of Object.entries(want)) {
        expect(sets.get(n)!.shape, n).toEqual(a.shape);
        expect(sets.get(n)!.dtypeTag, n).toBe(DTYPE_TAG[TET_DTYPE_OF[a.dtype.replace(/^[<>|=]/, '')]]);
        expect(sets.get(n)!.values, n).toEqual(decodePy(a));
        expect(meta.datasets[n].dim_names, n).toEqual(a.dims);
        expect(meta.datasets[n].attrs ?? {}, n).toEqual(a.attrs);
      }
      expect(meta.datasets.v.coords.t.labels).toEqual([0, 1.5, 3, 4.5]);
      expect(meta.datasets.v.coords.y.labels).toEqual(decodePy(want.y));
      expect(meta.datasets.v.coords.x).toBeUndefined();
      expect(meta.attrs).toEqual({ history: 'made for tet' });
    });
  }
});
