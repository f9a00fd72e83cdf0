// Progress reporting (lib/progress.ts, native tet::Progress behind the cancel token): the
// native counters after a run against the selection's bytes computed here, and the SDK's
// onProgress on multi-MB queries, reads, shards and conversions: monotone, throttled (>= 100 ms
// between calls), ending with one call at bytesDone = bytesTotal = the bytes expected here, and
// a throwing callback that does not break the operation.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binding } from '../../lib/binding';
import { convert, open, TetWriter, type ConvertProgress, type Progress, type TetFile } from '../../lib';
import { encodePlan } from '../../lib/plan/encode';

const dir = mkdtempSync(join(tmpdir(), 'tet-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 4 MiB of u8 in 4-byte tiles: 2^20 tiles, so a query reads for a few hundred ms and the
// counters move tile by tile. And a small f32 dataset in 3 x 5 tiles for exact counter checks.
const N = 1 << 22;
const big = join(dir, 'big.tet');
const small = join(dir, 'small.tet');
let f: TetFile;

beforeAll(async () => {
  const w = await TetWriter.create(big);
  w.addDataset({ name: 'm', dtype: 'u8', shape: [N], chunkShape: [4], data: Uint8Array.from({ length: N }, (_, i) => i % 7) });
  await w.commit();
  const s = await TetWriter.create(small);
  s.addDataset({ name: 'x', dtype: 'f32', shape: [6, 10], chunkShape: [2, 2], data: Float32Array.from({ length: 60 }, (_, i) => i) });
  await s.commit();
  f = await open(big);
}, 120_000);
afterAll(() => f?.close());

type Seen = { at: number; p: Progress };
function recorder() {
  const seen: Seen[] = [];
  return { seen, onProgress: (p: Progress) => { seen.push({ at: performance.now(), p }); } };
}

/** The rules every onProgress stream follows, against the total computed by the test. */
function checkStream(seen: Seen[], total: number) {
  expect(seen.length).toBeGreaterThan(0);
  for (let i = 0; i < seen.length; i++) {
    const { p } = seen[i];
    expect(p.bytesTotal).toBe(total);
    expect(p.bytesDone).toBeGreaterThanOrEqual(0);
    expect(p.bytesDone).toBeLessThanOrEqual(total);
    expect(p.fraction).toBeCloseTo(p.bytesDone / total, 12);
    if (i > 0) expect(p.bytesDone).toBeGreaterThanOrEqual(seen[i - 1].p.bytesDone);
    // throttled: the intermediate calls, and the last of them before the final call
    if (i > 0 && i < seen.length - 1) expect(seen[i].at - seen[i - 1].at).toBeGreaterThanOrEqual(99);
  }
  const last = seen[seen.length - 1].p;
  expect(last).toEqual({ bytesDone: total, bytesTotal: total, fraction: 1 });
  // only the final call is at the total, or an intermediate one reached it just before
  expect(seen.filter((s) => s.p.bytesDone === total).length).toBeLessThanOrEqual(2);
}

describe('native progress counters (progressOf)', () => {
  const b = binding();
  const plan = (over: Record<string, unknown>) => encodePlan({
    datasetId: 0, start: [0, 0], step: [1, 1], count: [6, 10], op: 'sum', reduceAxes: [0, 1],
    strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax: 0, ...over,
  } as Parameters<typeof encodePlan>[0]);

  it('a token no query ran with reads { done: 0, total: 0 }', () => {
    expect(b.progressOf(b.createCancelToken())).toEqual({ done: 0, total: 0 });
  });

  it('after a run: total = selected elements x 4 bytes, done = the same (each tile counted once)', async () => {
    const file = await b.openFile(small, true);
    try {
      const cases: [Record<string, unknown>, number][] = [
        [{}, 60],                                                             // whole dataset
        [{ start: [1, 3], count: [4, 6] }, 24],                               // a box across tile edges
        [{ start: [0, 1], step: [2, 3], count: [3, 3] }, 9],                  // strided
        [{ op: 'median', strategy: 'in_memory_materialize' }, 60],              // tier C: the first pass only
        [{ op: 'mean', reduceAxes: [1] }, 60],                                // partial reduction
        [{ op: 'none', reduceAxes: [], strategy: 'capped_in_memory', previewMax: 60 }, 60], // a read
      ];
      for (const [over, elems] of cases) {
        const token = b.createCancelToken();
        await b.execute(file, plan(over), token);
        expect(b.progressOf(token), JSON.stringify(over)).toEqual({ done: elems * 4, total: elems * 4 });
      }
    } finally {
      b.closeFile(file);
    }
  });

  it('rejects what is not a cancel token', () => {
    expect(() => b.progressOf({} as never)).toThrow(/cancel token/);
  });
});

describe('onProgress', () => {
  it('a multi-MB query reports monotone, throttled values ending at the selection\'s bytes', async () => {
    const r = recorder();
    const resp = await f.query({ dataset: 'm', selection: [{ start: 3 }], sum: [] }, { onProgress: r.onProgress });
    let sum = 0;
    for (let i = 3; i < N; i++) sum += i % 7;
    expect(resp.execution?.operation_sum).toBe(sum);
    checkStream(r.seen, N - 3);
    // 2^20 tiles take far longer than one poll: some call came before the end, below the total
    expect(r.seen.length).toBeGreaterThanOrEqual(2);
    expect(r.seen[0].p.bytesDone).toBeLessThan(N - 3);
  });

  it('a read of the whole dataset and a partial reduction report the same way', async () => {
    const r = recorder();
    const out = await f.read('m', [{ start: 0, stop: N / 2 }], { onProgress: r.onProgress });
    expect(out.data.length).toBe(N / 2);
    checkStream(r.seen, N / 2);
    const r2 = recorder();
    await f.query({ dataset: 'm', selection: [{ step: 2 }], max: [] }, { onProgress: r2.onProgress });
    checkStream(r2.seen, N / 2);
  });

  it('a shard reports its share of the units', async () => {
    const shares: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = recorder();
      await f.queryPartial({ dataset: 'm', sum: [] }, { shard: [i, 3], onProgress: r.onProgress });
      const total = r.seen[r.seen.length - 1].p.bytesTotal;
      checkStream(r.seen, total);
      shares.push(total);
    }
    // the units are of equal size: the shares add up to the dataset within a unit's rounding
    expect(Math.abs(shares.reduce((a, b) => a + b, 0) - N)).toBeLessThanOrEqual(3);
    for (const s of shares) expect(Math.abs(s - N / 3)).toBeLessThan(N / 100);
  });

  it('no call after a failed query, and a throwing callback breaks nothing (one warning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      let calls = 0;
      const resp = await f.query({ dataset: 'm', count: [] }, { onProgress: () => { calls++; throw new Error('boom'); } });
      expect(Number(resp.execution?.operation_element_count)).toBe(N);
      expect(calls).toBeGreaterThan(0);
      await new Promise((res) => setImmediate(res));
      const ours = warnings.filter((w) => (w as { code?: string }).code === 'TET_PROGRESS_CALLBACK');
      expect(ours).toHaveLength(1);
      expect(ours[0].message).toMatch(/boom/);
    } finally {
      process.off('warning', onWarning);
    }
    const ac = new AbortController();
    const seen: Progress[] = [];
    const q = f.query({ dataset: 'm', selection: [{ start: 1 }], sum: [] }, { signal: ac.signal, onProgress: (p) => seen.push(p) });
    setTimeout(() => ac.abort(), 5);
    await expect(q).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    expect(seen.every((p) => p.bytesDone < p.bytesTotal)).toBe(true);
  });

  it('convert() reports source bytes and tiles, ending at the dataset\'s bytes', async () => {
    // A CDF-1 file with one f64 variable of 2^20 values (8 MiB), read in 64 KiB slabs.
    const n = 1 << 20;
    const u32 = (v: number) => { const x = Buffer.alloc(4); x.writeUInt32BE(v); return x; };
    const name = (s: string) => Buffer.concat([u32(s.length), Buffer.from(s), Buffer.alloc((4 - (s.length % 4)) % 4)]);
    const header = (begin: number) => Buffer.concat([
      Buffer.from('CDF\x01', 'latin1'), u32(0),
      u32(10), u32(1), name('x'), u32(n),           // dimensions
      u32(0), u32(0),                               // no global attributes
      u32(11), u32(1), name('v'), u32(1), u32(0), u32(0), u32(0), u32(6), u32(n * 8), u32(begin),
    ]);
    const h = header(0).length;
    const data = Buffer.alloc(n * 8);
    for (let i = 0; i < n; i++) data.writeDoubleBE(i * 0.5, i * 8);
    const src = join(dir, 'v.nc');
    writeFileSync(src, Buffer.concat([header(h), data]));
    const seen: { at: number; p: ConvertProgress }[] = [];
    await convert(src, join(dir, 'v.tet'), { codec: 'raw', chunk: [4096], slabBytes: 1 << 16, onProgress: (p) => seen.push({ at: performance.now(), p }) });
    checkStream(seen.map((s) => ({ at: s.at, p: { bytesDone: s.p.bytesDone, bytesTotal: s.p.bytesTotal, fraction: s.p.fraction } })), n * 8);
    const last = seen[seen.length - 1].p;
    expect(last).toMatchObject({ dataset: 'v', chunksDone: n / 4096, chunksTotal: n / 4096 });
    for (const s of seen) expect(s.p.chunksDone).toBeLessThanOrEqual(n / 4096);
    const g = await open(join(dir, 'v.tet'));
    try {
      const r = await g.query({ dataset: 'v', max: [] });
      expect(r.execution?.operation_max).toBe((n - 1) * 0.5);
    } finally {
      g.close();
    }
  });
});
