// Exact sharded execution: for every op x every dtype (10) x k in {1, 2, 3, 7} shards, on a
// multi-chunk file whose 5 work units leave some of 7 shards empty, mergePartials of
// file.queryPartial(doc, { shard: [i, k] }) for every i is the response file.query(doc) gives,
// bit for bit (f64 compared by their bit patterns, integers as BigInt / exact numbers), except the
// fields documented in lib/run/shard.ts (timing and host-dependent ones). The same through
// `tet query -x --shard I/N --partial-out` in separate processes and `tet merge`. And the
// TET_SHARD_* errors: missing / duplicate shard, different query, different file, different
// shard count, a flipped byte. Tier C (median, quantile, histogram, covariance, correlation) runs
// its rounds through runSharded (and `tet merge --round-out` / `tet query --round` in separate
// processes) on data with NaN, ties, negative zero, constant values and 64-bit integers beyond
// 2^53, bit for bit; every tier-C partial of a 4M-element selection is < 1/20 of its bytes; and
// the round errors: a request of another query, a stale round's partial, a corrupted request.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePartials, mergeRound, open, runSharded, TetWriter } from '../../lib';
import type { TetFile } from '../../lib';
import { extractTile, forEachChunk } from '../../lib/writer';
import type { DTypeName, TetTypedArray } from '../../lib/types';

const BIN = join(ROOT, 'bin', 'tet.js');
const dir = mkdtempSync(join(tmpdir(), 'tet-shard-'));
const env = { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 600 x 300 in 500 x 280 tiles: tile (0,0) holds 140000 elements = 2 work units, 5 in all.
const SHAPE = [600, 300];
const CHUNK = [500, 280];
const DTYPES: DTypeName[] = ['f32', 'f64', 'f16', 'u8', 'u16', 'i16', 'i32', 'u32', 'i64', 'u64'];
const KS = [1, 2, 3, 7];

function values(dtype: DTypeName, n: number): TetTypedArray {
  let s = 0x9e3779b9;
  const r = () => { s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0; return s; };
  const f = () => (r() % 2001) - 1000 + (r() % 1000) / 1000;
  switch (dtype) {
    case 'f32': case 'f64': {
      const a = dtype === 'f32' ? new Float32Array(n) : new Float64Array(n);
      for (let i = 0; i < n; i++) { const k = r() % 5000; a[i] = k === 0 ? NaN : k === 1 ? Infinity : k === 2 ? -Infinity : k === 3 ? 0 : f(); }
      return a;
    }
    case 'f16': return Uint16Array.from({ length: n }, () => { const h = r() & 0xffff; return (h & 0x7c00) === 0x7c00 && r() % 20 !== 0 ? h & 0xbfff : h; });
    case 'u8': return Uint8Array.from({ length: n }, () => r() & 0xff);
    case 'u16': return Uint16Array.from({ length: n }, () => r() & 0xffff);
    case 'i16': return Int16Array.from({ length: n }, () => (r() & 0xffff) - 0x8000);
    case 'i32': return Int32Array.from({ length: n }, () => r() | 0);
    case 'u32': return Uint32Array.from({ length: n }, () => r());
    case 'i64': return BigInt64Array.from({ length: n }, () => BigInt.asIntN(64, (BigInt(r()) << 32n) | BigInt(r())));
    default: return BigUint64Array.from({ length: n }, () => (BigInt(r()) << 32n) | BigInt(r()));
  }
}

/** Ties (a few distinct values), -0 next to +0 for floats, no NaN; 64-bit ints near +-2^63 (beyond 2^53). */
function tieValues(dtype: DTypeName, n: number): TetTypedArray {
  let s = 0x1234567;
  const r = () => { s = (Math.imul(s ^ (s >>> 13), 0x5bd1e995) + 0x3c6ef372) >>> 0; return s; };
  const fl = [-0, 0, 0, -0, 1.5, -2.25, 3, 1e-300, -7, 2.5];
  switch (dtype) {
    case 'f32': return Float32Array.from({ length: n }, () => fl[r() % fl.length]);
    case 'f64': return Float64Array.from({ length: n }, () => fl[r() % fl.length]);
    case 'f16': return Uint16Array.from({ length: n }, () => [0x8000, 0x0000, 0x3c00, 0xbc00, 0x3e00, 0x0001, 0x8001][r() % 7]);
    case 'u8': return Uint8Array.from({ length: n }, () => [0, 7, 7, 255, 128][r() % 5]);
    case 'u16': return Uint16Array.from({ length: n }, () => [0, 700, 700, 65535, 32768][r() % 5]);
    case 'i16': return Int16Array.from({ length: n }, () => [-32768, -1, 0, 0, 5, 32767][r() % 6]);
    case 'i32': return Int32Array.from({ length: n }, () => [-2147483648, -1, 0, 0, 5, 2147483647][r() % 6]);
    case 'u32': return Uint32Array.from({ length: n }, () => [0, 1, 1, 4294967295, 2147483648][r() % 5]);
    case 'i64': return BigInt64Array.from({ length: n }, () =>
      [-(2n ** 63n), -(2n ** 63n) + 1n, -1n, 0n, 2n ** 53n + 1n, 2n ** 62n + 3n, 2n ** 63n - 1n, 2n ** 63n - 2n][r() % 8]);
    default: return BigUint64Array.from({ length: n }, () =>
      [0n, 1n, 2n ** 53n + 1n, 2n ** 53n + 3n, 2n ** 63n + 5n, 2n ** 64n - 1n, 2n ** 64n - 2n][r() % 7]);
  }
}
/** Every element the same value. */
function constValues(dtype: DTypeName, n: number): TetTypedArray {
  const one = tieValues(dtype, 1);
  const a = new (one.constructor as new (n: number) => TetTypedArray)(n);
  (a as unknown as { fill(v: unknown): void }).fill(dtype.startsWith('f') && dtype !== 'f16' ? -0 : (one as unknown as ArrayLike<unknown>)[0]);
  return a;
}

async function makeFile(path: string, dtype: DTypeName, chunk = CHUNK, codec: 'raw' | 'zstd' = 'raw',
  extra: [string, TetTypedArray][] = []): Promise<void> {
  const data = values(dtype, SHAPE[0] * SHAPE[1]);
  const w = await TetWriter.create(path);
  const grid = SHAPE.map((s, a) => Math.ceil(s / chunk[a]));
  const writes: Promise<void>[] = [];
  const all = [['x', data] as [string, TetTypedArray], ...extra];
  for (const [name] of all) w.addDataset({ name, dtype, shape: SHAPE, chunkShape: chunk, codec });
  for (const [name, d] of all) forEachChunk(grid, (c) => writes.push(w.writeChunk(name, c, extractTile(d, SHAPE, chunk, c))));
  await Promise.all(writes);
  await w.commit();
}

/** Runs doc on k shards through runSharded; counts the rounds. */
async function sharded(file: TetFile, doc: object, k: number, stats?: { rounds: number }) {
  return runSharded(k, async (i, round) => {
    if (i === 0 && stats) stats.rounds++;
    return file.queryPartial(doc, { shard: [i, k], ...(round ? { round } : {}) });
  });
}

/** Every op, scalar and over each axis; tier-C ops too (histogram with and without a range). */
function docs(): object[] {
  const simple = ['sum', 'mean', 'min', 'max', 'count', 'var', 'std', 'product', 'norm_l1', 'norm_l2', 'all_finite',
    'any_nan', 'any_inf', 'arg_min', 'arg_max', 'nan_count', 'inf_count', 'nan_mean', 'nan_std', 'median'];
  const out: object[] = [];
  for (const axes of [[], [0], [1]]) {
    for (const op of simple) out.push({ dataset: 'x', [op]: axes });
    out.push({ dataset: 'x', null_count: { fill: 0, axes } });
    out.push({ dataset: 'x', quantile: { q: 0.3, axes } });
    out.push({ dataset: 'x', histogram: { bins: 7, axes } });
    out.push({ dataset: 'x', histogram: { bins: 5, min: -300, max: 40000, axes } });
  }
  out.push({ dataset: 'x', selection: [{ start: 3, step: 2 }, { start: 1, stop: 200, step: 3 }], sum: [0] });
  out.push({ dataset: 'x', selection: [{ start: 3, step: 2 }, { start: 1, stop: 200, step: 3 }], median: [1] });
  out.push({ dataset: 'x', selection: [{}, { stop: 40 }], covariance: { axis: 0 } });
  out.push({ dataset: 'x', selection: [{ stop: 30 }, {}], correlation: { axis: 1 } });
  // Index lists (each crossing the tile edge at 500 / 280), alone and beside a box on the other axis.
  const rows = { indices: [0, 3, 4, 99, 499, 500, 501, 577, 599] }, cols = { indices: [1, 2, 279, 280, 281, 299] };
  for (const op of ['sum', 'mean', 'min', 'max', 'var', 'arg_max', 'median']) {
    for (const axes of [[], [0], [1]]) out.push({ dataset: 'x', selection: [rows, { start: 5, stop: 290, step: 2 }], [op]: axes });
    out.push({ dataset: 'x', selection: [{ start: 10, stop: 560 }, cols], [op]: [0] });
    out.push({ dataset: 'x', selection: [rows, cols], [op]: [] });
  }
  out.push({ dataset: 'x', selection: [rows, cols], histogram: { bins: 6, axes: [1] } });
  out.push({ dataset: 'x', selection: [rows, {}], covariance: { axis: 0 } });
  return out;
}

// Fields the merged response takes from the merge / the shards rather than one execution.
const DIFFERING = ['seconds', 'threads', 'chunks_read', 'stored_bytes_read', 'total_bytes_read_from_disk', 'host_available_ram_bytes',
  'memory_budget_bytes', 'read_by_pread'];

const bits = new Float64Array(1);
const bitsU = new BigUint64Array(bits.buffer);
/** A structure where every number is its f64 bit pattern and every typed array a plain list. */
function canon(v: unknown): unknown {
  if (typeof v === 'number') { bits[0] = v; return `f64:${bitsU[0].toString(16)}`; }
  if (typeof v === 'bigint') return `big:${v}`;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>, canon);
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!DIFFERING.includes(k)) o[k] = canon(x);
    return o;
  }
  return v;
}

async function partials(file: TetFile, doc: object, k: number): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < k; i++) parts.push(await file.queryPartial(doc, { shard: [i, k] }));
  return parts;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try { await p; return 'resolved'; } catch (e) { return (e as { code?: string }).code ?? String(e); }
}

describe('shard equivalence: every op x every dtype x k shards = the unsharded response', () => {
  it.each(DTYPES)('%s', async (dtype) => {
    const path = join(dir, `eq-${dtype}.tet`);
    await makeFile(path, dtype, CHUNK, dtype.startsWith('f') || dtype === 'i64' ? 'zstd' : 'raw');
    const file = await open(path);
    try {
      let checked = 0;
      for (const doc of docs()) {
        const want = canon(await file.query(doc));
        for (const k of KS) {
          const got = canon(await sharded(file, doc, k));
          if (JSON.stringify(got) !== JSON.stringify(want)) expect({ doc, k, got }).toEqual({ doc, k, got: want });
          checked++;
        }
      }
      expect(checked).toBe(docs().length * KS.length);
    } finally {
      file.close();
    }
  }, 120_000);
});

describe('sharded index lists against values computed here', () => {
  it('i32: sum, max and median of rows x columns index lists over k shards equal the values summed in JS', async () => {
    const path = join(dir, 'idx-i32.tet');
    await makeFile(path, 'i32');
    const data = values('i32', SHAPE[0] * SHAPE[1]) as Int32Array;
    const rows = [0, 3, 4, 99, 499, 500, 501, 577, 599], cols = [1, 2, 279, 280, 281, 299];
    const picked = rows.flatMap((r) => cols.map((c) => data[r * SHAPE[1] + c])).sort((a, b) => a - b);
    const selection = [{ indices: rows }, { indices: cols }];
    const file = await open(path);
    try {
      for (const k of KS) {
        const sum = (await sharded(file, { dataset: 'x', selection, sum: [] }, k)).execution;
        expect(Number(sum?.operation_sum)).toBe(picked.reduce((a, b) => a + b, 0));
        const max = (await sharded(file, { dataset: 'x', selection, max: [] }, k)).execution;
        expect(Number(max?.operation_max)).toBe(picked[picked.length - 1]);
        const med = (await sharded(file, { dataset: 'x', selection, median: [] }, k)).execution;
        expect(Number(med?.operation_median)).toBe((picked[picked.length / 2 - 1] + picked[picked.length / 2]) / 2);
      }
    } finally {
      file.close();
    }
  });
});

/** Tier-C docs on dataset d: scalar and per-axis forms, q in {0, 0.3, 1}, histograms with and without a range. */
function tierCDocs(d: string): object[] {
  const out: object[] = [];
  for (const axes of [[], [0], [1]]) {
    out.push({ dataset: d, median: axes });
    for (const q of [0, 0.3, 1]) out.push({ dataset: d, quantile: { q, axes } });
    out.push({ dataset: d, histogram: { bins: 7, axes } });
    out.push({ dataset: d, histogram: { bins: 5, min: -300, max: 40000, axes } });
  }
  out.push({ dataset: d, selection: [{}, { stop: 40 }], covariance: { axis: 0 } });
  out.push({ dataset: d, selection: [{ stop: 30 }, {}], correlation: { axis: 1 } });
  return out;
}

describe('tier C: rounds over shards = the unsharded response bit for bit (NaN, ties, -0, constant, 64-bit)', () => {
  it.each(DTYPES)('%s', async (dtype) => {
    const path = join(dir, `tc-${dtype}.tet`);
    const n = SHAPE[0] * SHAPE[1];
    await makeFile(path, dtype, CHUNK, 'raw', [['ties', tieValues(dtype, n)], ['const', constValues(dtype, n)]]);
    const file = await open(path);
    try {
      let multi = 0;
      for (const d of ['x', 'ties', 'const']) {
        for (const doc of tierCDocs(d)) {
          const want = canon(await file.query(doc));
          for (const k of KS) {
            const st = { rounds: 0 };
            const got = canon(await sharded(file, doc, k, st));
            if (st.rounds > 1) multi++;
            if (JSON.stringify(got) !== JSON.stringify(want)) expect({ doc, k, got }).toEqual({ doc, k, got: want });
            expect(st.rounds).toBeLessThanOrEqual(4);
          }
        }
      }
      expect(multi).toBeGreaterThan(0);
    } finally {
      file.close();
    }
  }, 180_000);

  it('every tier-C partial of a 4M-element selection is < 1/20 of the selection bytes', async () => {
    const path = join(dir, 'big.tet');
    const w = await TetWriter.create(path);
    const side = 2048;
    w.addDataset({ name: 'x', dtype: 'f32', shape: [side, side], chunkShape: [512, 512], codec: 'raw' });
    w.addDataset({ name: 'obs', dtype: 'f32', shape: [262144, 16], chunkShape: [65536, 16], codec: 'raw' });
    let s = 7;
    const r = () => { s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0; return s / 4294967296; };
    for (let a = 0; a < 4; a++) {
      for (let b = 0; b < 4; b++) await w.writeChunk('x', [a, b], Float32Array.from({ length: 512 * 512 }, () => (r() - 0.5) * 2000));
    }
    for (let a = 0; a < 4; a++) await w.writeChunk('obs', [a, 0], Float32Array.from({ length: 65536 * 16 }, () => r() * 10));
    await w.commit();
    const file = await open(path);
    try {
      const bytes = side * side * 4;
      const docs: object[] = [
        { dataset: 'x', median: [] }, { dataset: 'x', quantile: { q: 0.3, axes: [] } },
        { dataset: 'x', histogram: { bins: 64, axes: [] } }, { dataset: 'x', histogram: { bins: 64, min: -1, max: 1, axes: [] } },
        { dataset: 'x', median: [0] }, { dataset: 'x', histogram: { bins: 7, axes: [1] } },
        { dataset: 'obs', covariance: { axis: 0 } }, { dataset: 'obs', correlation: { axis: 0 } },
      ];
      for (const doc of docs) {
        const want = canon(await file.query(doc, { preview: 0 }));
        let largest = 0;
        const got = canon(await runSharded(3, async (i, round) => {
          const p = await file.queryPartial(doc, { shard: [i, 3], preview: 0, ...(round ? { round } : {}) });
          largest = Math.max(largest, p.length);
          return p;
        }));
        expect(got).toEqual(want);
        expect(largest, JSON.stringify(doc)).toBeLessThan(bytes / 20);
        process.stdout.write(`  partial size ${JSON.stringify(doc)}: largest ${largest} bytes (selection ${bytes})\n`);
      }
    } finally {
      file.close();
    }
  }, 120_000);

  it('round errors: another query, a stale round, corrupted request bytes', async () => {
    const path = join(dir, 'round-err.tet');
    await makeFile(path, 'f64', CHUNK, 'raw', [['ties', tieValues('f64', SHAPE[0] * SHAPE[1])]]);
    const file = await open(path);
    try {
      const doc = { dataset: 'ties', selection: [{}, { start: 1 }], quantile: { q: 0.7, axes: [] } };
      const p1 = await partials(file, doc, 3);
      expect(await codeOf(mergePartials(p1))).toBe('TET_SHARD_ROUND_NEEDED');
      const m = await mergeRound(p1);
      expect(m.done).toBe(false);
      if (m.done) return;
      const run = (d: object, i: number, round: Uint8Array) => file.queryPartial(d, { shard: [i, 3], round });
      // a request of another query (other q, other dataset, other shard count)
      expect(await codeOf(run({ ...doc, quantile: { q: 0.5, axes: [] } }, 1, m.round))).toBe('TET_SHARD_MISMATCH');
      expect(await codeOf(run({ ...doc, dataset: 'x' }, 1, m.round))).toBe('TET_SHARD_MISMATCH');
      expect(await codeOf(file.queryPartial(doc, { shard: [1, 4], round: m.round }))).toBe('TET_SHARD_MISMATCH');
      expect(await codeOf(run({ dataset: 'x', sum: [] }, 1, m.round))).toBe('TET_SHARD_MISMATCH');
      // corrupted / truncated request bytes
      for (const at of [0, 4, 9, 20, 40, m.round.length - 1]) {
        const bad = new Uint8Array(m.round);
        bad[at] ^= 0x20;
        expect(await codeOf(run(doc, 1, bad))).toBe('TET_SHARD_CORRUPT');
      }
      expect(await codeOf(run(doc, 1, m.round.subarray(0, m.round.length - 3)))).toBe('TET_SHARD_CORRUPT');
      // a partial of round 1 mixed into round 2
      const p2 = await Promise.all([0, 1, 2].map((i) => run(doc, i, m.round)));
      expect(await codeOf(mergeRound([p2[0], p1[1], p2[2]]))).toBe('TET_SHARD_MISMATCH');
      const done = await mergeRound(p2);
      const want = canon(await file.query(doc));
      if (done.done) {
        expect(canon(done.result)).toEqual(want);
      } else {
        expect(canon(await sharded(file, doc, 3))).toEqual(want);
      }
    } finally {
      file.close();
    }
  });
});

describe('shard errors', () => {
  let file: TetFile;
  let other: TetFile;
  const doc = { dataset: 'x', var: [0] };
  beforeAll(async () => {
    await makeFile(join(dir, 'err.tet'), 'f64');
    await makeFile(join(dir, 'err-other.tet'), 'f64', [300, 300]);
    file = await open(join(dir, 'err.tet'));
    other = await open(join(dir, 'err-other.tet'));
  });
  afterAll(() => { file.close(); other.close(); });

  it('missing, duplicate, different query / file / shard count, corrupted bytes', async () => {
    const p = await partials(file, doc, 3);
    expect(canon(await mergePartials(p))).toEqual(canon(await file.query(doc)));
    expect(await codeOf(mergePartials([p[0], p[2]]))).toBe('TET_SHARD_MISSING');
    expect(await codeOf(mergePartials([]))).toBe('TET_SHARD_MISSING');
    expect(await codeOf(mergePartials([p[0], p[1], p[1], p[2]]))).toBe('TET_SHARD_DUPLICATE');
    const q = await partials(file, { dataset: 'x', std: [0] }, 3);
    expect(await codeOf(mergePartials([p[0], q[1], p[2]]))).toBe('TET_SHARD_MISMATCH');
    const f = await partials(other, doc, 3);
    expect(await codeOf(mergePartials([p[0], f[1], p[2]]))).toBe('TET_SHARD_MISMATCH');
    const two = await partials(file, doc, 2);
    expect(await codeOf(mergePartials([p[0], two[1], p[2]]))).toBe('TET_SHARD_MISMATCH');
    for (const at of [0, 5, 40, 200, Math.floor(p[1].length / 2), p[1].length - 1]) {
      const bad = new Uint8Array(p[1]);
      bad[at] ^= 0x01;
      expect(await codeOf(mergePartials([p[0], bad, p[2]]))).toBe('TET_SHARD_CORRUPT');
    }
    expect(await codeOf(mergePartials([p[0], p[1].subarray(0, p[1].length - 9), p[2]]))).toBe('TET_SHARD_CORRUPT');
    expect(await codeOf(file.queryPartial(doc, { shard: [3, 3] }))).toBe('TET_SHARD_MISMATCH');
  });
});

describe('tet query --shard + tet merge in separate processes', () => {
  const tet = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  const ready = existsSync(join(ROOT, 'dist', 'cli.cjs'));
  // [dtype, doc, whether the merge must ask for another round]
  const cases: [DTypeName, object, boolean?][] = [
    ['f64', { dataset: 'x', sum: [] }],
    ['f32', { dataset: 'x', var: [0] }],
    ['i16', { dataset: 'x', median: [] }],
    ['u8', { dataset: 'x', histogram: { bins: 9, axes: [1] } }],
    ['f16', { dataset: 'x', arg_max: [1] }],
    ['f64', { dataset: 'nonan', median: [] }, true],
    ['f32', { dataset: 'x', histogram: { bins: 9, axes: [] } }, true],
    ['f64', { dataset: 'x', selection: [{}, { stop: 20 }], covariance: { axis: 0 } }],
  ];
  it.skipIf(!ready).each(cases)('%s %j', async (dtype, doc, multiRound) => {
    const path = join(dir, `cli-${dtype}.tet`);
    if (!existsSync(path)) await makeFile(path, dtype, CHUNK, 'raw', [['nonan', tieValues(dtype, SHAPE[0] * SHAPE[1])]]);
    const q = JSON.stringify(doc);
    const direct = tet(['query', q, '-t', path, '-x', '--format', 'json', '--no-history']);
    expect(direct.status, direct.stderr).toBe(0);
    for (const k of [1, 3]) {
      const files: string[] = [];
      const roundFile = join(dir, `cli-${dtype}-${k}.tpr`);
      let merged: ReturnType<typeof tet> | undefined;
      let rounds = 0;
      for (let round = 1; round <= 8; round++) {
        files.length = 0;
        for (let i = 0; i < k; i++) {
          const out = join(dir, `cli-${dtype}-${i}of${k}${round > 1 ? `-r${round}` : ''}.tps`);
          const r = tet(['query', q, '-t', path, '-x', '--shard', `${i}/${k}`, '--partial-out', out, '--no-history',
            ...(round > 1 ? ['--round', roundFile] : [])]);
          expect(r.status, r.stderr).toBe(0);
          expect(r.stdout).toBe('');
          files.push(out);
        }
        if (round === 1) {
          // without --round-out a multi-round merge names the flag to add
          const plain = tet(['merge', ...files, '--format', 'json']);
          if (plain.status !== 0) {
            expect(plain.status).toBe(1);
            expect(plain.stderr).toMatch(/--round-out/);
          }
        }
        merged = tet(['merge', ...[...files].reverse(), '--format', 'json', '--round-out', roundFile]);
        rounds = round;
        if (merged.status !== 3) break;
        expect(merged.stderr).toMatch(new RegExp(`round ${round + 1} of the .* needs each shard again: tet query .* --round `));
        expect(existsSync(roundFile)).toBe(true);
      }
      expect(merged!.status, merged!.stderr).toBe(0);
      if (multiRound) expect(rounds).toBeGreaterThan(1);
      const strip = (text: string) => {
        const o = JSON.parse(text);
        for (const key of DIFFERING) delete o.execution[key];
        return o;
      };
      expect(strip(merged!.stdout)).toEqual(strip(direct.stdout));
    }
    // a missing shard and a corrupted partial fail with their codes
    const miss = tet(['merge', join(dir, `cli-${dtype}-0of3.tps`), join(dir, `cli-${dtype}-2of3.tps`)]);
    expect(miss.status).toBe(1);
    expect(miss.stderr).toMatch(/shards missing/);
    const bad = join(dir, `cli-${dtype}-bad.tps`);
    const bytes = readFileSync(join(dir, `cli-${dtype}-1of3.tps`));
    bytes[bytes.length - 20] ^= 0xff;
    writeFileSync(bad, bytes);
    const corrupt = tet(['merge', join(dir, `cli-${dtype}-0of3.tps`), bad, join(dir, `cli-${dtype}-2of3.tps`)]);
    expect(corrupt.status).toBe(1);
    expect(corrupt.stderr).toMatch(/corrupt/);
  }, 60_000);
});
