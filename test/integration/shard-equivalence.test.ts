// Exact sharded execution: for every op x every dtype (10) x k in {1, 2, 3, 7} shards, on a
// multi-chunk file whose 5 work units leave some of 7 shards empty, mergePartials of
// file.queryPartial(doc, { shard: [i, k] }) for every i is the response file.query(doc) gives,
// bit for bit (f64 compared by their bit patterns, integers as BigInt / exact numbers), except the
// fields documented in lib/run/shard.ts (timing and host-dependent ones). The same through
// `tet query -x --shard I/N --partial-out` in separate processes and `tet merge`. And the
// TET_SHARD_* errors: missing / duplicate shard, different query, different file, different
// shard count, a flipped byte.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePartials, open, TetWriter } from '../../lib';
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

async function makeFile(path: string, dtype: DTypeName, chunk = CHUNK, codec: 'raw' | 'zstd' = 'raw'): Promise<void> {
  const data = values(dtype, SHAPE[0] * SHAPE[1]);
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'x', dtype, shape: SHAPE, chunkShape: chunk, codec });
  const grid = SHAPE.map((s, a) => Math.ceil(s / chunk[a]));
  const writes: Promise<void>[] = [];
  forEachChunk(grid, (c) => writes.push(w.writeChunk('x', c, extractTile(data, SHAPE, chunk, c))));
  await Promise.all(writes);
  await w.commit();
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
  return out;
}

// Fields the merged response takes from the merge / the shards rather than one execution.
const DIFFERING = ['seconds', 'threads', 'chunks_read', 'stored_bytes_read', 'total_bytes_read_from_disk', 'host_available_ram_bytes',
  'memory_budget_bytes'];

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
          const parts = await partials(file, doc, k);
          const got = canon(await mergePartials(k > 2 ? [...parts].reverse() : parts));
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
  const cases: [DTypeName, object][] = [
    ['f64', { dataset: 'x', sum: [] }],
    ['f32', { dataset: 'x', var: [0] }],
    ['i16', { dataset: 'x', median: [] }],
    ['u8', { dataset: 'x', histogram: { bins: 9, axes: [1] } }],
    ['f16', { dataset: 'x', arg_max: [1] }],
  ];
  it.skipIf(!ready).each(cases)('%s %j', async (dtype, doc) => {
    const path = join(dir, `cli-${dtype}.tet`);
    if (!existsSync(path)) await makeFile(path, dtype);
    const q = JSON.stringify(doc);
    const direct = tet(['query', q, '-t', path, '-x', '--format', 'json', '--no-history']);
    expect(direct.status, direct.stderr).toBe(0);
    for (const k of [1, 3]) {
      const files: string[] = [];
      for (let i = 0; i < k; i++) {
        const out = join(dir, `cli-${dtype}-${i}of${k}.tps`);
        const r = tet(['query', q, '-t', path, '-x', '--shard', `${i}/${k}`, '--partial-out', out, '--no-history']);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toBe('');
        files.push(out);
      }
      const merged = tet(['merge', ...files.reverse(), '--format', 'json']);
      expect(merged.status, merged.stderr).toBe(0);
      const strip = (text: string) => {
        const o = JSON.parse(text);
        for (const key of DIFFERING) delete o.execution[key];
        return o;
      };
      expect(strip(merged.stdout)).toEqual(strip(direct.stdout));
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
