// read() writes into a caller-owned typed array (lib/plan/output.ts; native/napi ExecuteWorker
// with an output): multi-chunk strided and index-list selections equal an independent
// expectation computed here from the values written (plain row-major index arithmetic, no
// tetration code), every dtype arrives in its natural array (f16 widened to Float32Array),
// aborting a long read rejects TET_CANCELLED, and the binding refuses an output of the wrong
// type or size.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type TetFile } from '../../lib/index';
import { binding } from '../../lib/binding';
import { encodePlan } from '../../lib/plan/encode';

const work = mkdtempSync(join(tmpdir(), 'tet-read-output-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const R = 61, C = 47;  // chunks 8 x 6: clipped edge tiles on both axes
const value = (r: number, c: number) => r * 1000 + c;
let file: TetFile;
let big: TetFile;

beforeAll(async () => {
  const path = join(work, 'grid.tet');
  const w = await TetWriter.create(path);
  const n = R * C;
  const f32 = new Float32Array(n), i64 = new BigInt64Array(n), f16 = new Uint16Array(n), u16 = new Uint16Array(n);
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) {
    const i = r * C + c;
    f32[i] = value(r, c) + 0.5;
    i64[i] = BigInt(value(r, c)) * 1000000007n - 5n;
    u16[i] = (value(r, c) * 7) & 0xffff;
    f16[i] = 0x3c00 + (i % 1024);  // 1 + k/1024: exact in f16 and f32
  }
  w.addDataset({ name: 'f32', dtype: 'f32', shape: [R, C], chunkShape: [8, 6], codec: 'raw', data: f32 });
  w.addDataset({ name: 'z32', dtype: 'f32', shape: [R, C], chunkShape: [8, 6], codec: 'zstd', data: f32 });
  w.addDataset({ name: 'i64', dtype: 'i64', shape: [R, C], chunkShape: [8, 6], codec: 'raw', data: i64 });
  w.addDataset({ name: 'u16', dtype: 'u16', shape: [R, C], chunkShape: [8, 6], codec: 'zstd', data: u16 });
  w.addDataset({ name: 'f16', dtype: 'f16', shape: [R, C], chunkShape: [8, 6], codec: 'raw', data: f16 });
  await w.commit();
  file = await open(path);
  // Many small tiles: long enough to be cancelled part way through.
  const bigPath = join(work, 'big.tet');
  const wb = await TetWriter.create(bigPath);
  wb.addDataset({ name: 'data', dtype: 'f32', shape: [4096, 4096], chunkShape: [32, 32], codec: 'zstd', data: new Float32Array(4096 * 4096).fill(1.5) });
  await wb.commit();
  big = await open(bigPath);
}, 60_000);
afterAll(() => { file?.close(); big?.close(); });

const span = (start: number, stop: number, step = 1) => {
  const out: number[] = [];
  for (let i = start; i < stop; i += step) out.push(i);
  return out;
};

describe('read() into a caller-owned output', () => {
  const rows = span(3, 59, 5), cols = span(1, 47, 4);
  const irows = [0, 7, 8, 9, 31, 55, 56, 60], icols = [2, 5, 6, 11, 12, 40, 46];
  const cases: [string, Parameters<TetFile['read']>[1], number[], number[]][] = [
    ['strided', [{ start: 3, stop: 59, step: 5 }, { start: 1, step: 4 }], rows, cols],
    ['index lists', [{ indices: irows }, { indices: icols }], irows, icols],
    ['index list x strided', [{ indices: irows }, { start: 1, step: 4 }], irows, cols],
    ['whole', undefined, span(0, R), span(0, C)],
  ];

  it.each(cases)('%s selection equals the row-major expectation for f32 raw / zstd, i64, u16, f16', async (_n, sel, rs, cs) => {
    const expF32 = rs.flatMap((r) => cs.map((c) => value(r, c) + 0.5));
    for (const name of ['f32', 'z32']) {
      const got = await file.read(name, sel);
      expect(got.data).toBeInstanceOf(Float32Array);
      expect(got.shape).toEqual([rs.length, cs.length]);
      expect(Array.from(got.data as Float32Array)).toEqual(expF32);
    }
    const i64 = await file.read('i64', sel);
    expect(i64.data).toBeInstanceOf(BigInt64Array);
    expect(Array.from(i64.data as BigInt64Array)).toEqual(rs.flatMap((r) => cs.map((c) => BigInt(value(r, c)) * 1000000007n - 5n)));
    const u16 = await file.read('u16', sel);
    expect(u16.data).toBeInstanceOf(Uint16Array);
    expect(Array.from(u16.data as Uint16Array)).toEqual(rs.flatMap((r) => cs.map((c) => (value(r, c) * 7) & 0xffff)));
    const f16 = await file.read('f16', sel);
    expect(f16.data).toBeInstanceOf(Float32Array);
    expect(Array.from(f16.data as Float32Array)).toEqual(rs.flatMap((r) => cs.map((c) => 1 + ((r * C + c) % 1024) / 1024)));
  });

  it('each read gets its own buffer (concurrent reads do not share outputs)', async () => {
    const [a, b] = await Promise.all([file.read('f32', [{ indices: [1] }, null]), file.read('f32', [{ indices: [2] }, null])]);
    expect(a.data.buffer).not.toBe(b.data.buffer);
    expect(Array.from(a.data as Float32Array)).toEqual(span(0, C).map((c) => value(1, c) + 0.5));
    expect(Array.from(b.data as Float32Array)).toEqual(span(0, C).map((c) => value(2, c) + 0.5));
  });

  it('aborting a read in flight rejects TET_CANCELLED, and the file still reads afterwards', async () => {
    const ac = new AbortController();
    const pending = big.read('data', undefined, { signal: ac.signal });
    ac.abort();
    await expect(pending).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    const again = await big.read('data', [{ start: 4000, stop: 4002 }, { start: 10, stop: 13 }]);
    expect(Array.from(again.data as Float32Array)).toEqual([1.5, 1.5, 1.5, 1.5, 1.5, 1.5]);
  });

  it('the binding refuses an output of the wrong type or size', async () => {
    const ds = file.dataset('f32');
    const plan = encodePlan({
      datasetId: ds.id, start: [0, 0], step: [1, 1], count: [2, 3], op: 'none', reduceAxes: [],
      strategy: 'capped_in_memory', ioMode: 'parallel_chunks', previewMax: 6,
    });
    const b = binding();
    const out = new Float32Array(6);
    await expect(b.execute(file.native, plan, null, out)).resolves.toBe(out);
    expect(Array.from(out)).toEqual([0.5, 1.5, 2.5, 1000.5, 1001.5, 1002.5]);
    await expect(b.execute(file.native, plan, null, new Float32Array(5))).rejects.toMatchObject({ code: 'TET_PLAN_INVALID' });
    await expect(b.execute(file.native, plan, null, new Float64Array(6))).rejects.toMatchObject({ code: 'TET_BINDING_BAD_ARGUMENT' });
    await expect(b.execute(file.native, plan, null, [1, 2] as unknown as Float32Array)).rejects.toMatchObject({ code: 'TET_BINDING_BAD_ARGUMENT' });
    // a view at an offset is written at its own first element, nothing outside it
    const backing = new Float32Array(10).fill(-1);
    const view = backing.subarray(2, 8);
    await b.execute(file.native, plan, null, view);
    expect(Array.from(backing)).toEqual([-1, -1, 0.5, 1.5, 2.5, 1000.5, 1001.5, 1002.5, -1, -1]);
    // a reduction plan cannot take an output
    const sum = encodePlan({
      datasetId: ds.id, start: [0, 0], step: [1, 1], count: [2, 3], op: 'sum', reduceAxes: [0, 1],
      strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax: 0,
    });
    await expect(b.execute(file.native, sum, null, new Float32Array(0))).rejects.toMatchObject({ code: 'TET_PLAN_INVALID' });
  });

  it('a partial reduction writes its values into a caller-owned output; wrong size or type is refused', async () => {
    const b = binding();
    const cases: [string, 'sum' | 'max' | 'arg_max' | 'min', number[], () => Float64Array | BigInt64Array | BigUint64Array][] = [
      ['f32', 'sum', [0], () => new Float64Array(12)],
      ['z32', 'sum', [1], () => new Float64Array(11)],
      ['i64', 'max', [0], () => new BigInt64Array(12)],
      ['u16', 'min', [1], () => new BigUint64Array(11)],
      ['f16', 'arg_max', [0], () => new BigUint64Array(12)],
    ];
    for (const [name, op, reduceAxes, make] of cases) {
      const ds = file.dataset(name);
      const plan = encodePlan({
        datasetId: ds.id, start: [3, 1], step: [5, 4], count: [11, 12], op, reduceAxes,
        strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax: 3,
      });
      const owned = await b.execute(file.native, plan, null);
      const out = make();
      const res = await b.execute(file.native, plan, null, out) as unknown as typeof owned;
      expect(res.values).toBe(out);
      expect(Array.from(out as ArrayLike<unknown>)).toEqual(Array.from(owned.values as ArrayLike<unknown>));
      expect(res.reducedShape).toEqual(owned.reducedShape);
      expect(Array.from(res.preview as unknown as ArrayLike<unknown>)).toEqual(Array.from(owned.preview as unknown as ArrayLike<unknown>));
      const short = new (out.constructor as new (n: number) => typeof out)(out.length - 1);
      await expect(b.execute(file.native, plan, null, short)).rejects.toMatchObject({ code: 'TET_PLAN_INVALID' });
      // same bytes, wrong element type
      const wrong = out instanceof Float64Array ? new BigInt64Array(out.length) : new Float64Array(out.length);
      await expect(b.execute(file.native, plan, null, wrong)).rejects.toMatchObject({ code: 'TET_BINDING_BAD_ARGUMENT' });
    }
  });
});
