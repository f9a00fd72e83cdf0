// Concurrency: many queries in flight on one handle, N worker_threads x M queries on one file,
// close() while queries run, workers terminated mid-query. Results must be bit-identical to
// serial runs (folds use a canonical order whatever the thread count) and match a JS model
// computed from the raw values; nothing may leak (the file's mappings and descriptors are gone
// from /proc/self once the last query holding them ends) and the process must stay healthy.
import { SHARED } from '../support/paths';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetError, type TetFile } from '../../lib/index';
import { packageRoot } from '../../lib/binding';
import { runEvalWorker } from '../support/worker-support';

const BIG = join(SHARED, 'conformance/fixtures/big_f32.tet');  // f32 [3000,1500], 96 raw tiles
const COLS = 1500;
const dir = mkdtempSync(join(tmpdir(), 'tet-conc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Plan wire (native/include/tet/plan.h): op, reduce mask, strategy, row window.
interface PlanSpec { op: number; mask: number; strategy: number; row0: number; rows: number }
function encode(p: PlanSpec): Uint8Array {
  const buf = new Uint8Array(288), v = new DataView(buf.buffer);
  v.setUint32(0, 0x4e4c5054, true); v.setUint32(4, 1, true); v.setUint32(8, 0, true); v.setUint32(12, 2, true);
  v.setUint32(16, p.op, true); v.setUint32(20, p.mask, true); v.setFloat64(32, 0.5, true); v.setUint32(68, p.strategy, true);
  const start = [p.row0, 0], count = [p.rows, COLS];
  for (let a = 0; a < 8; a++) {
    v.setBigUint64(88 + 8 * a, BigInt(a < 2 ? start[a]! : 0), true);
    v.setBigUint64(152 + 8 * a, 1n, true);
    v.setBigUint64(216 + 8 * a, BigInt(a < 2 ? count[a]! : 1), true);
  }
  return buf;
}
const SUM = 1, MEAN = 2, MIN = 3, MEDIAN = 21;
const PLANS: PlanSpec[] = [];
for (let k = 0; k < 12; k++) {
  const row0 = (k * 211) % 2500, rows = 100 + ((k * 97) % 400);
  PLANS.push({ op: [SUM, MIN, MEAN, MEDIAN][k % 4]!, mask: k % 4 === 2 ? 1 : 3, strategy: k % 4 === 3 ? 1 : 0, row0, rows });
}

function mapsOf(path: string): number {
  return readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.endsWith(path)).length;
}
function fdsOf(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try { if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++; } catch { /* closed meanwhile */ }
  }
  return n;
}
async function eventually(cond: () => boolean, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (cond()) return true;
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

// The JS model: values from a full read (the capped-preview copy path, not the fold path).
let data: Float32Array;
function model(p: PlanSpec): number[] {
  const rows = Array.from({ length: p.rows }, (_, i) => data.subarray((p.row0 + i) * COLS, (p.row0 + i + 1) * COLS));
  if (p.op === SUM) return [rows.reduce((s, r) => r.reduce((a, x) => a + x, s), 0)];
  if (p.op === MIN) return [rows.reduce((m, r) => r.reduce((a, x) => Math.min(a, x), m), Infinity)];
  if (p.op === MEAN) return Array.from({ length: COLS }, (_, c) => rows.reduce((s, r) => s + r[c]!, 0) / p.rows);
  const all = Float64Array.from(rows.flatMap((r) => Array.from(r))).sort();
  const n = all.length;
  return [n % 2 ? all[(n - 1) / 2]! : (all[n / 2 - 1]! + all[n / 2]!) / 2];
}
function closeTo(got: number[], want: number[]): void {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i]!)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want[i]!))));
}

type Binding = {
  openFile(p: string, v: boolean): Promise<unknown>; execute(f: unknown, plan: Uint8Array, c: unknown): Promise<{ values: ArrayLike<number> }>;
  closeFile(f: unknown): void;
};
let b: Binding;
let serial: number[][];

beforeAll(async () => {
  const root = packageRoot();
  b = require(require.resolve('node-gyp-build', { paths: [root] }))(root) as Binding;
  const f = await open(BIG);
  data = (await f.read('data')).data as Float32Array;
  serial = [];
  for (const p of PLANS) serial.push(Array.from((await b.execute(f.native, encode(p), null)).values));
  f.close();
  PLANS.forEach((p, k) => closeTo(serial[k]!, model(p)));
}, 120_000);

describe('one thread, many queries in flight', () => {
  it('64 concurrent queries on one handle equal the serial results bit for bit', async () => {
    const f = await open(BIG);
    const ks = Array.from({ length: 64 }, (_, i) => (i * 5) % PLANS.length);
    const got = await Promise.all(ks.map((k) => b.execute(f.native, encode(PLANS[k]!), null)));
    got.forEach((r, i) => expect(Array.from(r.values)).toEqual(serial[ks[i]!]));
    f.close();
  }, 120_000);

  it('the public query API under concurrency agrees with itself run serially and with the model', async () => {
    const f = await open(BIG);
    const cases = Array.from({ length: 24 }, (_, i) => ({
      isMax: i % 2 === 1,
      rows: [i * 100, i * 100 + 150] as const,
      col0: i, step: 1 + (i % 3),
    }));
    const one = async (c: (typeof cases)[number]) => {
      const doc = {
        dataset: 'data', selection: [{ start: c.rows[0], stop: c.rows[1] }, { start: c.col0, stop: COLS, step: c.step }],
        ...(c.isMax ? { max: [] } : { sum: [] }),
      };
      const e = (await f.query(doc, { preview: 0 })).execution!;
      return c.isMax ? Number(e.operation_max) : e.operation_sum!;
    };
    const ser: number[] = [];
    for (const c of cases) ser.push(await one(c));
    expect(await Promise.all(cases.map(one))).toEqual(ser);
    cases.forEach((c, i) => {
      let acc = c.isMax ? -Infinity : 0;
      for (let r = c.rows[0]; r < c.rows[1]; r++) {
        for (let col = c.col0; col < COLS; col += c.step) acc = c.isMax ? Math.max(acc, data[r * COLS + col]!) : acc + data[r * COLS + col]!;
      }
      expect(Math.abs(ser[i]! - acc)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(acc)));
    });
    f.close();
  }, 120_000);
});

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const b = require(workerData.nodeGypBuild)(workerData.root);
(async () => {
  const f = await b.openFile(workerData.path, true);
  const ks = Array.from({ length: workerData.queries }, (_, m) => (workerData.id * 7 + m) % workerData.plans.length);
  const pending = ks.map((k) => b.execute(f, workerData.plans[k], null).then((r) => [k, Array.from(r.values)]));
  if (workerData.terminateEarly) { parentPort.postMessage('started'); await new Promise(() => {}); }
  const out = await Promise.all(pending);
  b.closeFile(f);
  parentPort.postMessage(out);
})().catch((e) => parentPort.postMessage({ error: e.code + ' ' + e.message }));
`;
function runWorker(id: number, path: string, queries: number, terminateEarly = false): Promise<unknown> {
  return runEvalWorker(WORKER, { id, path, queries, plans: PLANS.map(encode) }, terminateEarly);
}

describe('worker_threads', () => {
  it('N workers x M queries on one file equal the serial results', async () => {
    const N = 4, M = 10;
    const results = await Promise.all(Array.from({ length: N }, (_, id) => runWorker(id, BIG, M)));
    for (const r of results) {
      expect(r).not.toHaveProperty('error');
      const rows = r as [number, number[]][];
      expect(rows.length).toBe(M);
      for (const [k, values] of rows) expect(values).toEqual(serial[k]);
    }
  }, 120_000);

  it('workers terminated mid-query: no crash, no leaked mapping or descriptor, later queries fine', async () => {
    const path = join(dir, 'terminate.tet');
    copyFileSync(BIG, path);
    const rssBefore = process.memoryUsage().rss;
    for (let round = 0; round < 6; round++) expect(await runWorker(round, path, 24, true)).toBe('started');
    // In-flight queries keep the file alive until they finish; then it must be released.
    expect(await eventually(() => mapsOf(path) === 0 && fdsOf(path) === 0)).toBe(true);
    const f = await open(path);
    expect(mapsOf(path)).toBe(1);
    expect(Array.from((await b.execute(f.native, encode(PLANS[0]!), null)).values)).toEqual(serial[0]);
    f.close();
    expect(await eventually(() => mapsOf(path) === 0 && fdsOf(path) === 0)).toBe(true);
    // 6 x 24 median/sum queries over 18 MB: anything retained per query would show up here.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(400 * 2 ** 20);
  }, 120_000);
});

describe('close() while queries run', () => {
  it('in-flight queries finish with the right values, new ones reject TET_IO_CLOSED, the file is released', async () => {
    const path = join(dir, 'close.tet');
    copyFileSync(BIG, path);
    const f: TetFile = await open(path);
    const handle = f.native;
    const pending = PLANS.map((p) => b.execute(handle, encode(p), null));
    const viaSdk = f.query({ dataset: 'data', sum: [] }, { preview: 0 });
    f.close();
    f.close();  // idempotent
    const got = await Promise.all(pending);
    got.forEach((r, k) => expect(Array.from(r.values)).toEqual(serial[k]));
    await expect(viaSdk).resolves.toBeTruthy();
    for (const late of [() => f.read('data') as Promise<unknown>, () => f.query({ dataset: 'data', sum: [] }) as Promise<unknown>]) {
      const err = await Promise.resolve().then(late).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TetError);
      expect((err as TetError).code).toBe('TET_IO_CLOSED');
    }
    await expect(b.execute(handle, encode(PLANS[0]!), null)).rejects.toMatchObject({ code: 'TET_IO_CLOSED' });
    expect(await eventually(() => mapsOf(path) === 0 && fdsOf(path) === 0)).toBe(true);
  }, 120_000);

  it('cancellation mid-query rejects TET_CANCELLED and leaves the handle usable', async () => {
    const f = await open(BIG);
    const ac = new AbortController();
    const q = f.query({ dataset: 'data', median: [] }, { signal: ac.signal, preview: 0 });
    setTimeout(() => ac.abort(), 1);
    const r = await q.then(() => 'resolved', (e: unknown) => e);
    if (r !== 'resolved') expect((r as TetError).code).toBe('TET_CANCELLED');
    const s = await f.query({ dataset: 'data', max: [] }, { preview: 0 });
    expect(Number(s.execution!.operation_max)).toBe(data.reduce((a, x) => Math.max(a, x), -Infinity));
    f.close();
  }, 60_000);
});
