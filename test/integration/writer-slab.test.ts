// TetWriter.writeSlab (one native call per block of tiles, cut and compressed in parallel) and
// unordered writes: an ordered slab gives the same bytes as writeChunk per tile in grid order;
// unordered writes give the same values (checked by the spec-only reader); bad blocks are typed
// errors that leave the writer usable; 1 M tiny tiles of whole data go through in one call.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetError, TetWriter } from '../../lib';
import { extractTile, forEachChunk } from '../../lib/writer';
import type { DTypeName, TetTypedArray } from '../../lib/types';
import { readIndependently } from '../support/sdk-independent-reader';

const dir = mkdtempSync(join(tmpdir(), 'tet-slab-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function values(dtype: DTypeName, n: number, seed: number): TetTypedArray {
  const f = (i: number) => ((i * 2654435761 + seed * 40503) >>> 0) % 1000;
  switch (dtype) {
    case 'f32': return Float32Array.from({ length: n }, (_, i) => f(i) / 7 - 50);
    case 'f64': return Float64Array.from({ length: n }, (_, i) => f(i) / 3 - 100);
    case 'i64': return BigInt64Array.from({ length: n }, (_, i) => BigInt(f(i) - 500) * 1_000_000_007n);
    case 'u8': return Uint8Array.from({ length: n }, (_, i) => f(i) % 256);
    case 'i16': return Int16Array.from({ length: n }, (_, i) => f(i) * 30 - 15000);
    case 'f16': return Uint16Array.from({ length: n }, (_, i) => 0x3c00 + (f(i) % 512));
    default: return Int32Array.from({ length: n }, (_, i) => f(i) * 100_000 - 7);
  }
}

const CASES: { dtype: DTypeName; shape: number[]; chunk: number[] }[] = [
  { dtype: 'f32', shape: [37], chunk: [8] },
  { dtype: 'f64', shape: [13, 17], chunk: [4, 5] },
  { dtype: 'i64', shape: [9, 10, 11], chunk: [2, 3, 4] },
  { dtype: 'u8', shape: [5, 6, 7, 8], chunk: [2, 4, 3, 5] },
  { dtype: 'i16', shape: [64, 64], chunk: [64, 16] },
  { dtype: 'f16', shape: [33, 9], chunk: [8, 9] },
];

/** Block [origin*chunk, min((origin+count)*chunk, shape)) of a row-major array. */
function block(data: TetTypedArray, shape: number[], chunk: number[], origin: number[], count: number[]): TetTypedArray {
  const lo = origin.map((o, a) => o * chunk[a]);
  const ext = origin.map((o, a) => Math.min((o + count[a]) * chunk[a], shape[a]) - lo[a]);
  const tmpChunk = ext; // one "tile" equal to the block, at block coordinates lo / ext
  const coords = lo.map((l, a) => l / ext[a]);
  if (coords.every(Number.isInteger)) return extractTile(data, shape, tmpChunk, coords);
  // lo is not a multiple of ext: copy element by element
  const n = ext.reduce((x, y) => x * y, 1);
  const out = new (data.constructor as new (n: number) => TetTypedArray)(n);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let src = 0;
    for (let a = 0; a < shape.length; a++) src = src * shape[a] + lo[a] + idx[a];
    (out as Float64Array)[i] = (data as Float64Array)[src];
    for (let a = shape.length - 1; a >= 0; a--) { if (++idx[a] < ext[a]) break; idx[a] = 0; }
  }
  return out;
}

describe('writeSlab', () => {
  it.each(CASES)('$dtype $shape / $chunk: ordered slabs = writeChunk per tile, byte for byte (raw and zstd)', async ({ dtype, shape, chunk }) => {
    for (const codec of ['raw', 'zstd'] as const) {
      const n = shape.reduce((a, b) => a * b, 1);
      const data = values(dtype, n, shape.length);
      const grid = shape.map((s, a) => Math.ceil(s / chunk[a]));
      const tiles = join(dir, `tiles-${dtype}-${codec}.tet`);
      const w1 = await TetWriter.create(tiles);
      w1.addDataset({ name: 'x', dtype, shape, chunkShape: chunk, codec });
      const pending: Promise<void>[] = [];
      forEachChunk(grid, (c) => pending.push(w1.writeChunk('x', c, extractTile(data, shape, chunk, c))));
      await Promise.all(pending);
      await w1.commit();
      // Slabs: rows of tiles along axis 0 (every other axis whole), in grid order.
      const slabs = join(dir, `slabs-${dtype}-${codec}.tet`);
      const w2 = await TetWriter.create(slabs);
      w2.addDataset({ name: 'x', dtype, shape, chunkShape: chunk, codec });
      const writes: Promise<void>[] = [];
      for (let r = 0; r < grid[0]; r += 2) {
        const origin = grid.map((_, a) => (a === 0 ? r : 0));
        const count = grid.map((g, a) => (a === 0 ? Math.min(2, grid[0] - r) : g));
        writes.push(w2.writeSlab('x', origin, count, block(data, shape, chunk, origin, count)));
      }
      await Promise.all(writes);
      await w2.commit();
      expect(readFileSync(slabs).equals(readFileSync(tiles)), `${dtype} ${codec}`).toBe(true);
      if (codec === 'raw') {
        const ind = readIndependently(slabs)[0];
        const want = Array.from(data as ArrayLike<number | bigint>, (x) => (typeof x === 'bigint' ? x : x));
        if (dtype !== 'f16') expect(ind.values).toEqual(dtype === 'i64' ? want : want.map(Number));
      }
    }
  });

  it('unordered writes (several slabs and tiles in flight) give the same values', async () => {
    const shape = [50, 40];
    const chunk = [7, 8];
    const data = values('f64', 2000, 3);
    const grid = shape.map((s, a) => Math.ceil(s / chunk[a]));
    const path = join(dir, 'unordered.tet');
    const w = await TetWriter.create(path, { ordered: false });
    w.addDataset({ name: 'x', dtype: 'f64', shape, chunkShape: chunk, codec: 'zstd' });
    const writes: Promise<void>[] = [];
    for (let r = 0; r < grid[0]; r++) {
      if (r % 3 === 2) {
        for (let c = 0; c < grid[1]; c++) writes.push(w.writeChunk('x', [r, c], extractTile(data, shape, chunk, [r, c])));
      } else {
        writes.push(w.writeSlab('x', [r, 0], [1, grid[1]], block(data, shape, chunk, [r, 0], [1, grid[1]])));
      }
    }
    await Promise.all(writes);
    await w.commit();
    const f = await open(path);
    expect(Array.from((await f.read('x')).data as Float64Array)).toEqual(Array.from(data as Float64Array));
    f.close();
  });

  it('a block outside the grid, of the wrong length or over written tiles is a typed error; the writer stays usable', async () => {
    const path = join(dir, 'errors.tet');
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'x', dtype: 'i32', shape: [10, 10], chunkShape: [4, 4] });
    const bad = async (p: Promise<unknown>, code: string, msg: RegExp) => {
      const e = await p.then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(TetError);
      expect((e as TetError).code).toBe(code);
      expect((e as TetError).message).toMatch(msg);
    };
    await bad(w.writeSlab('x', [2, 0], [2, 3], new Int32Array(10)), 'TET_WRITE_ARGUMENT', /outside grid/);
    await bad(w.writeSlab('x', [0, 0], [1, 3], new Int32Array(39)), 'TET_WRITE_ARGUMENT', /needs 40/);
    await bad(w.writeSlab('x', [0, 0], [1, 3], new Float32Array(40)), 'TET_WRITE_ARGUMENT', /expected Int32Array/);
    // Argument errors are found before anything is queued: the writer goes on.
    const data = Int32Array.from({ length: 100 }, (_, i) => i);
    await w.writeSlab('x', [0, 0], [1, 3], block(data, [10, 10], [4, 4], [0, 0], [1, 3]));
    await w.writeChunk('x', [1, 1], extractTile(data, [10, 10], [4, 4], [1, 1]));
    // A tile the native writer refuses (already written): nothing of that slab is kept, and the
    // failure is also commit()'s, so no file appears.
    await bad(w.writeSlab('x', [1, 0], [1, 3], new Int32Array(40)), 'TET_WRITE_DUPLICATE_CHUNK', /\(1, 1\) was already written/);
    await w.writeChunk('x', [1, 0], extractTile(data, [10, 10], [4, 4], [1, 0]));
    await w.writeChunk('x', [1, 2], extractTile(data, [10, 10], [4, 4], [1, 2]));
    await w.writeSlab('x', [2, 0], [1, 3], block(data, [10, 10], [4, 4], [2, 0], [1, 3]));
    await bad(w.commit(), 'TET_WRITE_DUPLICATE_CHUNK', /\(1, 1\)/);
    w.abort();
    expect(readdirSync(dir).filter((f) => f.includes('errors.tet'))).toEqual([]);
  });

  it('1 M tiny tiles of whole data go through one native call', async () => {
    const path = join(dir, 'million.tet');
    const n = 1 << 20;
    const w = await TetWriter.create(path);
    const data = Uint8Array.from({ length: n }, (_, i) => i % 251);
    w.addDataset({ name: 'm', dtype: 'u8', shape: [n], chunkShape: [1], data });
    await w.commit();
    const f = await open(path);
    expect(f.datasets[0].chunkCount).toBe(n);
    const r = await f.query({ dataset: 'm', sum: [] }, {});
    let want = 0;
    for (let i = 0; i < n; i++) want += i % 251;
    expect(Number((r as any).execution.operation_sum)).toBe(want);
    f.close();
  }, 120_000);
});
