// Resource bounds: memory budget (queries and reads cannot allocate beyond it), preview and
// history caps, and pathological but valid files — 1 million tiny chunks, rank 8 with extent 1,
// a 100 GiB logical shape with a few stored bytes — that either work within bounds or fail fast
// with a clear error.
import { SHARED } from '../support/paths';
import { mkdtempSync, openSync as fsOpen, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetError, TetWriter } from '../../lib/index';
import { appendHistory, readHistory } from '../../lib/cli/history';

const dir = mkdtempSync(join(tmpdir(), 'tet-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BIG = join(SHARED, 'conformance/fixtures/big_f32.tet');  // f32 [3000,1500] = 18 MB logical

async function rejection(p: Promise<unknown>): Promise<TetError> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(TetError);
  return e as TetError;
}
function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  return fn().then((v) => [v, performance.now() - t0]);
}

describe('memory budget', () => {
  it('a selection without reduction over the budget is TET_BUDGET_EXCEEDED before any I/O', async () => {
    const f = await open(BIG);
    const e = await rejection(f.query({ dataset: 'data', execution: { memory_budget_bytes: 1_000_000 } }, { preview: 10 }));
    expect(e.code).toBe('TET_BUDGET_EXCEEDED');
    expect(e.message).toMatch(/18000000 bytes .* budget is 1000000 bytes/);
    f.close();
  });

  it('a tier-C op over the budget spills to a temp file instead of allocating, and is still right', async () => {
    const f = await open(BIG);
    const all = (await f.read('data')).data as Float32Array;
    const sorted = Float64Array.from(all).sort();
    const want = (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    const r = await f.query({ dataset: 'data', median: [], execution: { memory_budget_bytes: 1_000_000 } }, { preview: 0 });
    expect(r.execution!.memory_strategy).toBe('temp_spill_materialize');
    expect(r.execution!.operation_median).toBe(want);
    f.close();
  });

  it('a preview larger than the budget is refused (the preview is an allocation too)', async () => {
    const f = await open(BIG);
    const e = await rejection(f.query({ dataset: 'data', sum: [], execution: { memory_budget_bytes: 1_000_000 } }, { preview: 4_000_000 }));
    expect(e.code).toBe('TET_BUDGET_EXCEEDED');
    const ok = await f.query({ dataset: 'data', sum: [], execution: { memory_budget_bytes: 1_000_000 } }, { preview: 1000 });
    expect(ok.execution!.preview_length).toBe(1000);
    f.close();
  });
});

describe('history cap', () => {
  it('query history keeps only the newest TET_QUERY_HISTORY_MAX entries; 0 disables it', () => {
    const env = { XDG_CACHE_HOME: join(dir, 'cache'), TET_QUERY_HISTORY_MAX: '5' };
    for (let i = 0; i < 12; i++) appendHistory({ at: `t${i}`, tet: null, execute: false, query: { dataset: `d${i}` } as never }, env);
    expect(readHistory(env).map((e) => e.at)).toEqual(['t7', 't8', 't9', 't10', 't11']);
    const off = { XDG_CACHE_HOME: join(dir, 'cache-off'), TET_QUERY_HISTORY_MAX: '0' };
    appendHistory({ at: 'x', tet: null, execute: false, query: { dataset: 'd' } as never }, off);
    expect(readHistory(off)).toEqual([]);
  });
});

describe('pathological but valid files', () => {
  // Written here straight from layout_v1.md (superblock, one dataset record, TIDX index, raw
  // 1-byte payloads): TetWriter takes one async native call per tile, too slow for 10^6 in CI.
  function millionChunkFile(path: string, n: number, value: (i: number) => number): void {
    const entries = n * n;
    const indexOffset = 96, indexLength = 32 + entries * 104, payloads = indexOffset + indexLength;
    const b = Buffer.alloc(payloads + entries);
    b.write('TETR', 0, 'latin1'); b.writeUInt32LE(1, 4); b.writeUInt32LE(1, 8); b.writeUInt32LE(0, 12);
    b.writeBigUInt64LE(BigInt(indexOffset), 16); b.writeBigUInt64LE(BigInt(indexLength), 24);
    b.writeBigUInt64LE(56n, 32);                                   // dataset_blob_len
    b.writeUInt32LE(1, 40); b.writeUInt32LE(5, 44); b.writeUInt32LE(2, 48); b.write('m', 56, 'latin1');  // u8 rank 2
    b.writeBigUInt64LE(BigInt(n), 64); b.writeBigUInt64LE(BigInt(n), 72);  // shape
    b.writeBigUInt64LE(1n, 80); b.writeBigUInt64LE(1n, 88);               // chunk_shape
    b.write('TIDX', indexOffset, 'latin1'); b.writeUInt32LE(1, indexOffset + 4); b.writeBigUInt64LE(BigInt(entries), indexOffset + 8);
    for (let i = 0; i < entries; i++) {
      const e = indexOffset + 32 + i * 104;
      b.writeUInt32LE(Math.floor(i / n), e + 8); b.writeUInt32LE(i % n, e + 16);  // coords (u64, high words 0)
      b.writeUInt32LE(payloads + i, e + 72); b.writeUInt32LE(1, e + 80); b.writeUInt32LE(1, e + 88);
      b[payloads + i] = value(i);
    }
    const fd = fsOpen(path, 'w');
    writeSync(fd, b);
    closeSync(fd);
  }

  it('1 million tiny chunks: opened and folded within bounds', async () => {
    const path = join(dir, 'million.tet');
    const n = 1000;
    millionChunkFile(path, n, (i) => i % 251);
    let want = 0;
    for (let i = 0; i < n * n; i++) want += i % 251;
    const [f, openMs] = await timed(() => open(path));
    expect(f.dataset('m').chunkCount).toBe(1_000_000);
    const [r, sumMs] = await timed(() => f.query({ dataset: 'm', sum: [] }, { preview: 0 }));
    expect(r.execution!.operation_sum).toBe(want);
    const part = await f.query({ dataset: 'm', max: [1], selection: [{ start: 10, stop: 20 }, {}] }, { preview: 0 });
    expect(Array.from(part.execution!.operation_reduced_max as ArrayLike<number>)).toEqual(Array(10).fill(250));
    const [med, medMs] = await timed(() => f.query({ dataset: 'm', median: [] }, { preview: 0 }));
    expect(med.execution!.operation_median).toBe(125);
    f.close();
    // Generous bounds for a 2-core CI box; a quadratic path would blow far past them.
    expect(openMs).toBeLessThan(5_000);
    expect(sumMs).toBeLessThan(10_000);
    console.log(`1M chunks: open ${openMs.toFixed(0)} ms, sum ${sumMs.toFixed(0)} ms, median ${medMs.toFixed(0)} ms`);
  }, 120_000);

  it('rank 8 with extent 1 (and one axis of 5): reads, scalar and partial reductions', async () => {
    const path = join(dir, 'rank8.tet');
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'r8', dtype: 'f64', shape: [1, 1, 1, 1, 1, 1, 1, 5], chunkShape: [1, 1, 1, 1, 1, 1, 1, 2], data: Float64Array.from([1, 2, 3, 4, 5]), codec: 'zstd' });
    await w.commit();
    const f = await open(path);
    expect(Array.from((await f.read('r8')).data as Float64Array)).toEqual([1, 2, 3, 4, 5]);
    expect((await f.query({ dataset: 'r8', sum: [] }, { preview: 0 })).execution!.operation_sum).toBe(15);
    expect((await f.query({ dataset: 'r8', median: [] }, { preview: 0 })).execution!.operation_median).toBe(3);
    const part = await f.query({ dataset: 'r8', mean: [0, 1, 2, 3, 4, 5, 6] }, { preview: 0 });
    expect(Array.from(part.execution!.operation_reduced_mean as Float64Array)).toEqual([1, 2, 3, 4, 5]);
    f.close();
  });

  // A 100 GiB logical shape needs its tiles to exist; a zstd frame can expand at most ~32768x, so
  // a file claiming 100 GiB from a few stored bytes is refused when the tile is decoded (and a
  // dense read/preview of it is refused by the budget before anything is allocated).
  it('100 GiB logical u8 from a 4-byte tile: opens (catalog is consistent), queries fail fast', async () => {
    const small = join(dir, 'huge-src.tet');
    const w = await TetWriter.create(small);
    w.addDataset({ name: 'h', dtype: 'u8', shape: [4], chunkShape: [4], data: new Uint8Array(4), codec: 'zstd' });
    await w.commit();
    const bytes = Buffer.from(readFileSync(small));
    const GiB100 = 100n * 2n ** 30n;
    // Dataset record at 40: name_len, dtype, ndim, reserved, "h", pad to 8 -> shape at 64, chunk at 72.
    expect(bytes.readUInt32LE(40)).toBe(1);
    bytes.writeBigUInt64LE(GiB100, 64);
    bytes.writeBigUInt64LE(GiB100, 72);
    const index = Number(bytes.readBigUInt64LE(16));
    expect(bytes.toString('latin1', index, index + 4)).toBe('TIDX');
    bytes.writeBigUInt64LE(GiB100, index + 32 + 80);  // entry 0 raw_byte_len
    const path = join(dir, 'huge.tet');
    const fd = fsOpen(path, 'w');
    writeSync(fd, bytes);
    closeSync(fd);

    const f = await open(path);
    expect(f.dataset('h').logicalBytes).toBe(Number(GiB100));
    const rssBefore = process.memoryUsage().rss;
    for (const [label, run] of [
      ['sum', () => f.query({ dataset: 'h', sum: [] }, { preview: 0 })],
      ['max over a window', () => f.query({ dataset: 'h', max: [], selection: [{ start: 5, stop: 9 }] }, { preview: 0 })],
      ['median', () => f.query({ dataset: 'h', median: [] }, { preview: 0 })],
      ['dense query', () => f.query({ dataset: 'h' }, { preview: 10 })],
      ['read', () => f.read('h')],
      ['read window', () => f.read('h', [{ start: 0, stop: 16 }])],
    ] as [string, () => Promise<unknown>][]) {
      const [e, ms] = await timed(() => rejection(run()));
      expect(e.code, `${label}: ${e.message}`).toMatch(/^TET_(DECODE_LENGTH|BUDGET_EXCEEDED)$/);
      expect(ms, label).toBeLessThan(2_000);
      console.log(`100 GiB file, ${label}: ${e.code} in ${ms.toFixed(0)} ms — ${e.message}`);
    }
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(512 * 2 ** 20);
    f.close();
  }, 60_000);
});
