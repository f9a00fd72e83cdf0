// A selection inside one tile runs on every core (issue 16): the tile's units (scalar folds) or
// its group's segments (partial folds) spread over the pool, and the answer does not depend on
// the thread count (bit for bit) and equals the hand-computed f64 value. Raw and zstd tiles,
// scalar and partial folds, `fold_parallel: false` (sequential visits) included.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type TetFile } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-one-tile-'));
const ROWS = 512, COLS = 2048;  // one tile of 1 Mi f32 (8 scalar units)
// Values with a non-trivial f64 sum (rounding differs between orders if the order changed).
const data = Float32Array.from({ length: ROWS * COLS }, (_, i) => Math.sin(i * 0.37) * 1000 + (i % 97) * 0.001);
const files: Record<string, TetFile> = {};

beforeAll(async () => {
  for (const codec of ['raw', 'zstd'] as const) {
    const path = join(dir, `${codec}.tet`);
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'x', dtype: 'f32', shape: [ROWS, COLS], chunkShape: [ROWS, COLS], codec, data });
    await w.commit();
    files[codec] = await open(path);
  }
});
afterAll(() => {
  for (const f of Object.values(files)) f.close();
  rmSync(dir, { recursive: true, force: true });
});

const cores = Math.min(availableParallelism(), 2);

type Resp = Awaited<ReturnType<TetFile['query']>>;
function field(r: Resp, key: string): unknown {
  return (r.execution as Record<string, unknown> | undefined)?.[key];
}
// A partial result's values as comparable bytes (Float64Array) or JSON (integer lists).
function reducedBytes(r: Resp, name: string): Buffer {
  const v = field(r, `operation_reduced_${name}`);
  if (v instanceof Float64Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  expect(Array.isArray(v)).toBe(true);
  return Buffer.from(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));
}

function rowMean(r0: number, r1: number): number {
  let s = 0;
  for (let i = r0 * COLS; i < r1 * COLS; i++) s += data[i];
  return s / ((r1 - r0) * COLS);
}

function colMeans(r0: number, r1: number): Float64Array {
  const out = new Float64Array(COLS);
  for (let r = r0; r < r1; r++) for (let c = 0; c < COLS; c++) out[c] += data[r * COLS + c];
  for (let c = 0; c < COLS; c++) out[c] /= r1 - r0;
  return out;
}

describe('one tile on every core', () => {
  for (const codec of ['raw', 'zstd'] as const) {
    for (const foldParallel of [undefined, false]) {
      const hint = foldParallel === undefined ? '' : ', fold_parallel false';
      it(`${codec}${hint}: scalar mean of a row range inside the tile`, async () => {
        const q = (threads: number) => files[codec].query({
          dataset: 'x', selection: [{ start: 100, stop: 420 }, null], mean: [],
          execution: { threads, ...(foldParallel === undefined ? {} : { fold_parallel: foldParallel }) },
        }, { preview: 0 });
        const one = await q(1), all = await q(cores);
        expect(one.execution!.io_mode).toBe('sequential_chunks');
        expect(all.execution!.threads).toBe(cores);
        expect(Object.is(field(all, 'operation_mean'), field(one, 'operation_mean'))).toBe(true);  // bit-identical
        expect(field(all, 'operation_mean') as number).toBeCloseTo(rowMean(100, 420), 9);
      });

      it(`${codec}${hint}: mean over rows (partial fold) of the one tile`, async () => {
        const q = (threads: number) => files[codec].query({
          dataset: 'x', mean: 0,
          execution: { threads, ...(foldParallel === undefined ? {} : { fold_parallel: foldParallel }) },
        });
        const one = await q(1), all = await q(cores);
        expect(all.execution!.threads).toBe(cores);
        expect(reducedBytes(all, 'mean').equals(reducedBytes(one, 'mean'))).toBe(true);
        const a = field(all, 'operation_reduced_mean') as Float64Array;
        const want = colMeans(0, ROWS);
        for (let c = 0; c < COLS; c += 61) expect(a[c]).toBeCloseTo(want[c], 9);
      });
    }
  }

  it('repeated partial queries of different ops and dtypes agree with the first run (recycled scratch)', async () => {
    const ops: [Record<string, number>, string][] = [[{ sum: 0 }, 'sum'], [{ arg_max: 0 }, 'argmax'], [{ var: 0 }, 'var'],
      [{ nan_mean: 1 }, 'nan_mean'], [{ max: 1 }, 'max'], [{ arg_min: 1 }, 'argmin'], [{ sum: 1 }, 'sum']];
    const first: Buffer[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < ops.length; i++) {
        const r = await files.raw.query({ dataset: 'x', ...ops[i][0] });
        const b = reducedBytes(r, ops[i][1]);
        if (round === 0) first.push(Buffer.from(b));
        else expect(b.equals(first[i])).toBe(true);
      }
    }
    // and the argmax over rows is the hand-computed one
    const r = await files.raw.query({ dataset: 'x', arg_max: 0 });
    const v = field(r, 'operation_reduced_argmax') as ArrayLike<number>;
    for (let c = 0; c < COLS; c += 97) {
      let best = -Infinity, at = -1;
      for (let row = 0; row < ROWS; row++) {
        if (data[row * COLS + c] > best) { best = data[row * COLS + c]; at = row; }
      }
      expect(Number(v[c])).toBe(at);
    }
  });
});
