// tet export: .tet -> Zarr v3 read back by zarrita (and by decoding chunk files with numcodecs),
// then Zarr v3 -> .tet again: values, dim names, coordinates and attributes survive for every dtype,
// with clipped edge tiles padded by the fill value.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as zarr from 'zarrita';
import FileSystemStore from '@zarrita/storage/fs';
import Zstd from 'numcodecs/zstd';
import { convert } from '../../lib/convert';
import { exportZarr } from '../../lib/export';
import { TetWriter } from '../../lib/writer';
import type { DTypeName } from '../../lib/types';
import { readIndependently } from '../support/sdk-independent-reader';
import { footerOf, halfToNumber } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const DTYPES: DTypeName[] = ['f32', 'f64', 'i32', 'i64', 'u8', 'u16', 'i16', 'u32', 'f16', 'u64'];
const ZARR: Record<DTypeName, string> = { f32: 'float32', f64: 'float64', i32: 'int32', i64: 'int64', u8: 'uint8',
  u16: 'uint16', i16: 'int16', u32: 'uint32', f16: 'float16', u64: 'uint64' };
const SHAPE = [5, 7];
const CHUNK = [2, 3];
const FILL: Record<DTypeName, number> = { f32: -1.5, f64: -1.5, f16: -1.5, i32: -9, i64: -9, i16: -9, u8: 9, u16: 9, u32: 9, u64: 9 };

/** Hand-chosen values per dtype: exact in every type, including f16. */
function valuesOf(d: DTypeName): (number | bigint)[] {
  const n = SHAPE[0] * SHAPE[1];
  return Array.from({ length: n }, (_, i) => {
    if (d === 'i64') return BigInt(i * 3 - 50) * 1_000_000_007n;
    if (d === 'u64') return BigInt(i) * 2n ** 58n + 1n;
    if (d.startsWith('f')) return i * 0.25 - 3;
    if (d.startsWith('u')) return i * 7;
    return i * 3 - 50;
  });
}
function typed(d: DTypeName, vals: (number | bigint)[]) {
  switch (d) {
    case 'f32': case 'f16': return Float32Array.from(vals as number[]);
    case 'f64': return Float64Array.from(vals as number[]);
    case 'i32': return Int32Array.from(vals as number[]);
    case 'i64': return BigInt64Array.from(vals as bigint[]);
    case 'u8': return Uint8Array.from(vals as number[]);
    case 'u16': return Uint16Array.from(vals as number[]);
    case 'i16': return Int16Array.from(vals as number[]);
    case 'u32': return Uint32Array.from(vals as number[]);
    case 'u64': return BigUint64Array.from(vals as bigint[]);
  }
}
const ROW_LABELS = [0, 10, 20, 30, 40.5];
const COL_LABELS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

const src = join(work, 'all.tet');
beforeAll(async () => {
  const w = await TetWriter.create(src);
  for (const d of DTYPES) w.addDataset({ name: `a/b/${d}`, dtype: d, shape: SHAPE, chunkShape: CHUNK, codec: 'zstd', data: typed(d, valuesOf(d)) });
  w.addDataset({ name: 'plain', dtype: 'i32', shape: [4], chunkShape: [3], codec: 'raw', data: Int32Array.from([1, 2, 3, 4]) });
  for (const d of DTYPES) {
    w.setMetadata(`a/b/${d}`, {
      dim_names: ['row', 'col'],
      coords: { row: { labels: ROW_LABELS }, col: { labels: COL_LABELS } },
      attrs: { units: 'K', long_name: `field ${d}`, _FillValue: FILL[d], scale_factor: 0.5, flags: [1, 2, 3] },
    });
  }
  w.addHistory({ op: 'create', source: 'test', at: '2024-01-01T00:00:00Z' });
  await w.commit();
});

describe('export to Zarr v3', () => {
  const out = join(work, 'all.zarr');
  beforeAll(async () => { await exportZarr(src, out); });

  it('writes one array per dataset in nested groups with bytes+zstd, dimension_names, attributes', () => {
    expect(JSON.parse(readFileSync(join(out, 'zarr.json'), 'utf8'))).toMatchObject({ zarr_format: 3, node_type: 'group' });
    expect(JSON.parse(readFileSync(join(out, 'a', 'b', 'zarr.json'), 'utf8')).node_type).toBe('group');
    for (const d of DTYPES) {
      const meta = JSON.parse(readFileSync(join(out, 'a', 'b', d, 'zarr.json'), 'utf8'));
      expect(meta).toMatchObject({
        zarr_format: 3, node_type: 'array', shape: SHAPE, data_type: ZARR[d], fill_value: FILL[d],
        chunk_grid: { name: 'regular', configuration: { chunk_shape: CHUNK } }, dimension_names: ['row', 'col'],
      });
      expect(meta.codecs.map((c: { name: string }) => c.name)).toEqual(['bytes', 'zstd']);
      expect(meta.codecs[0].configuration.endian).toBe('little');
      expect(meta.attributes).toMatchObject({ units: 'K', long_name: `field ${d}`, _FillValue: FILL[d], flags: [1, 2, 3] });
    }
    const row = JSON.parse(readFileSync(join(out, 'a', 'b', 'row', 'zarr.json'), 'utf8'));
    expect(row).toMatchObject({ shape: [5], data_type: 'float64', dimension_names: ['row'] });
  });

  it('opens in zarrita with identical values (float16 decoded from the chunk files)', async () => {
    const root = zarr.root(new FileSystemStore(out));
    for (const d of DTYPES) {
      if (d === 'f16') continue; // zarrita needs Float16Array (Node >= 24)
      const arr = await zarr.open.v3(root.resolve(`a/b/${d}`), { kind: 'array' });
      const got = await zarr.get(arr);
      expect(got.shape).toEqual(SHAPE);
      expect(Array.from(got.data as ArrayLike<number | bigint>), d).toEqual(valuesOf(d));
    }
    const rowArr = await zarr.open.v3(root.resolve('a/b/row'), { kind: 'array' });
    expect(Array.from((await zarr.get(rowArr)).data as Float64Array)).toEqual(ROW_LABELS);
    const plain = await zarr.open.v3(root.resolve('plain'), { kind: 'array' });
    expect(Array.from((await zarr.get(plain)).data as Int32Array)).toEqual([1, 2, 3, 4]);
  });

  it('pads clipped edge chunks with the fill value', async () => {
    const zstd = Zstd.fromConfig({ id: 'zstd' });
    for (const d of ['f16', 'i32', 'u64'] as DTypeName[]) {
      // Chunk (2, 2) covers rows 4..5 and cols 6..8 of a 5 x 7 array: only element [0][0] is data.
      const bytes = await zstd.decode(readFileSync(join(out, 'a', 'b', d, 'c', '2', '2')));
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const size = bytes.byteLength / 6;
      expect(size).toBe({ f16: 2, i32: 4, u64: 8 }[d as 'f16']);
      const read = (k: number) => d === 'f16' ? halfToNumber(view.getUint16(k * 2, true))
        : d === 'i32' ? view.getInt32(k * 4, true) : view.getBigUint64(k * 8, true);
      expect(read(0)).toEqual(valuesOf(d)[4 * 7 + 6]);
      for (let k = 1; k < 6; k++) expect(read(k)).toEqual(d === 'u64' ? BigInt(FILL[d]) : FILL[d]);
    }
    // float16 values through the chunk files: all chunks
    const zstdAll = Zstd.fromConfig({ id: 'zstd' });
    const got: number[] = new Array(35);
    for (let gr = 0; gr < 3; gr++) for (let gc = 0; gc < 3; gc++) {
      const b = await zstdAll.decode(readFileSync(join(out, 'a', 'b', 'f16', 'c', String(gr), String(gc))));
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let r = 0; r < 2; r++) for (let c = 0; c < 3; c++) {
        const R = gr * 2 + r, C = gc * 3 + c;
        if (R < 5 && C < 7) got[R * 7 + C] = halfToNumber(v.getUint16((r * 3 + c) * 2, true));
      }
    }
    expect(got).toEqual(valuesOf('f16'));
  });

  it('round trip .tet -> Zarr v3 -> .tet keeps values, names, coords and attrs for every dtype', async () => {
    const back = join(work, 'back.tet');
    // 24-byte source chunks are below the keep threshold; --chunk asks for them explicitly.
    const report = await convert(out, back, { codec: 'raw', chunk: CHUNK });
    const sets = new Map(readIndependently(back).map((s) => [s.name, s]));
    // coordinate-only arrays are consumed as labels, not datasets
    expect([...sets.keys()].sort()).toEqual([...DTYPES.map((d) => `a/b/${d}`), 'plain'].sort());
    expect(report.datasets.find((d) => d.name === 'a/b/f32')!.chunkShape).toEqual(CHUNK);
    const meta = footerOf(back).metadata.datasets;
    for (const d of DTYPES) {
      const s = sets.get(`a/b/${d}`)!;
      expect(s.shape).toEqual(SHAPE);
      expect(s.chunkShape).toEqual(CHUNK);
      expect(s.values, d).toEqual(valuesOf(d));
      expect(meta[`a/b/${d}`]).toEqual({
        dim_names: ['row', 'col'],
        coords: { row: { labels: ROW_LABELS }, col: { labels: COL_LABELS } },
        attrs: { units: 'K', long_name: `field ${d}`, _FillValue: FILL[d], scale_factor: 0.5, flags: [1, 2, 3] },
      });
    }
    expect(sets.get('plain')!.values).toEqual([1, 2, 3, 4]);
  });

  it('--dataset selects arrays; existing output and unknown datasets are errors that leave nothing', async () => {
    const one = join(work, 'one.zarr');
    const report = await exportZarr(src, one, { datasets: ['plain'], codec: 'raw' });
    expect(report.arrays.map((a) => a.name)).toEqual(['plain']);
    expect(readdirSync(one).sort()).toEqual(['plain', 'zarr.json']);
    const e1 = await exportZarr(src, one).then(() => null, (e) => e);
    expect(e1.code).toBe('TET_EXPORT_OUTPUT_EXISTS');
    const missing = join(work, 'missing.zarr');
    const e2 = await exportZarr(src, missing, { datasets: ['nope'] }).then(() => null, (e) => e);
    expect(e2.code).toBe('TET_EXPORT_UNKNOWN_DATASET');
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(work).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });
});
