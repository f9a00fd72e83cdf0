// `group_by` on tensor queries end to end (spec tables_and_filters.md §4.2, §4.4, §4.5): datasets
// with axis tables (temperature[time, station] f32 in 8 x 6 tiles; cube[a, b, c] f64; counts[time,
// station] i64 beyond 2^53) and with footer coordinate labels only (grid[lat, lon]). Every
// expectation comes from a plain JS model in this file: keys computed from the columns as
// written and ordered by the spec's rules, the members of each group, and the reductions over
// the raw arrays (f64 / BigInt arithmetic), never tetration output. Also: the three shapes of a
// grouped fold (group axis before a kept last axis, before a reduced last axis, and the last
// axis itself), where ∩ selection, empty groups and empty axes, median / quantile per group,
// thread-count and sharded runs bit-identical to the plain one, and every error by code.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePartials, open, runSharded, TetWriter, type TetFile } from '../../lib/index';

const work = mkdtempSync(join(tmpdir(), 'tet-group-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---- the data ----------------------------------------------------------------------------------

const T = 500, S = 300;
const temp = new Float32Array(T * S);
for (let i = 0; i < T * S; i++) temp[i] = ((i * 7919) % 10007) / 8 - 600;  // exact in f32, unique-ish
const T0 = Date.UTC(2020, 0, 30);  // ms; hourly: Jan 30 .. Feb 19
const tsUs = Array.from({ length: T }, (_, t) => BigInt(T0 + t * 3_600_000) * 1000n);
const COUNTRIES = ['DE', 'FR', null, 'IT', 'DE', 'AT', 'ES'];
const country = Array.from({ length: S }, (_, s) => COUNTRIES[(s * 5) % COUNTRIES.length]);
const elevation = Array.from({ length: S }, (_, s) => ((s * 37) % 2400) - 100);  // -100 .. 2299
const score: (number | null)[] = Array.from({ length: S }, (_, s) => (s % 17 === 0 ? null : s % 13 === 0 ? NaN : s % 11 === 0 ? -0 : ((s * 7) % 9) / 2 - 1));
const flag = Array.from({ length: S }, (_, s) => s % 3 === 0);

// cube[a, b, c] f64 with NaN / inf sprinkled in; axis tables on b (grp) and c (half)
const A = 5, B = 9, C = 70;
const cube = new Float64Array(A * B * C);
for (let i = 0; i < cube.length; i++) cube[i] = i % 97 === 0 ? NaN : i % 101 === 0 ? Infinity : ((i * 31) % 53) - 20.25;
const grp = Array.from({ length: B }, (_, b) => ['x', 'y', 'z'][(b * 2) % 3]);
const half = Array.from({ length: C }, (_, c) => (c * 7) % 5);

// counts[time, station] i64, values beyond 2^53 (exact sums as bigint)
const big = new BigInt64Array(T * S);
for (let i = 0; i < big.length; i++) big[i] = 2n ** 53n + BigInt((i * 13) % 1000);

const LAT = [-35, -25, -15, -5, 5, 15, 25, 35];
const LON = ['e000', 'w010', 'e000b', 'w010', 'e010'];
const grid = Float64Array.from({ length: LAT.length * LON.length }, (_, i) => (i * 37) % 101 - 50.5);

let file: TetFile;
beforeAll(async () => {
  const path = join(work, 'group.tet');
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'temperature', dtype: 'f32', shape: [T, S], chunkShape: [64, 50], data: temp });
  w.setMetadata('temperature', { dim_names: ['time', 'station'] });
  w.addTable({ name: 'time', axis: { dataset: 'temperature', dim: 'time' }, columns: { ts: { kind: 'timestamp', unit: 'us', tz: 'UTC', values: BigInt64Array.from(tsUs) } } });
  w.addTable({
    name: 'station', axis: { dataset: 'temperature', dim: 'station' },
    columns: {
      country: { kind: 'str', values: country },
      elevation_m: { kind: 'int', values: Int32Array.from(elevation) },
      score: { kind: 'float', values: score },
      flag: { kind: 'bool', values: flag },
    },
  });
  w.addDataset({ name: 'cube', dtype: 'f64', shape: [A, B, C], chunkShape: [2, 4, 16], data: cube, codec: 'zstd' });
  w.setMetadata('cube', { dim_names: ['a', 'b', 'c'] });
  w.addTable({ name: 'bt', axis: { dataset: 'cube', dim: 'b' }, columns: { grp: { kind: 'str', values: grp } } });
  w.addTable({ name: 'ct', axis: { dataset: 'cube', dim: 'c' }, columns: { half: { kind: 'int', values: Int32Array.from(half) } } });
  w.addDataset({ name: 'counts', dtype: 'i64', shape: [T, S], chunkShape: [100, 100], data: big });
  w.setMetadata('counts', { dim_names: ['time', 'station'] });
  w.addTable({ name: 'cstation', axis: { dataset: 'counts', dim: 'station' }, columns: { country: { kind: 'str', values: country } } });
  w.addDataset({ name: 'grid', dtype: 'f64', shape: [LAT.length, LON.length], chunkShape: [3, 2], data: grid });
  w.setMetadata('grid', { dim_names: ['lat', 'lon'], coords: { lat: { labels: LAT }, lon: { labels: LON } } });
  await w.commit();
  file = await open(path);
}, 120_000);
afterAll(() => file?.close());

// ---- the model ----------------------------------------------------------------------------------

type Key = string | number | boolean | null;
/** Keys ascending: numbers numerically (NaN after them), str by UTF-8 bytes, false < true, null last. */
function keyOrder(a: Key, b: Key): number {
  if (a === null || b === null) return Number(a === null) - Number(b === null);
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
  if (typeof a === 'boolean') return Number(a) - Number(b);
  const an = Number.isNaN(a), bn = Number.isNaN(b as number);
  return an || bn ? Number(an) - Number(bn) : a - (b as number);
}
const same = (a: Key, b: Key) => keyOrder(a, b) === 0 && (a === null) === (b === null);

interface Model { keys: Key[]; counts: number[]; members: number[][] }
/** Groups of the positions `pos` by key(p): sorted keys present, counts, members in order. */
function groupsOf(pos: readonly number[], key: (p: number) => Key): Model {
  const keys: Key[] = [];
  for (const p of pos) { const k = key(p); if (!keys.some((x) => same(x, k))) keys.push(k); }
  keys.sort(keyOrder);
  const members = keys.map((k) => pos.filter((p) => same(key(p), k)));
  return { keys, counts: members.map((m) => m.length), members };
}

type Vals = number[];
const REDUCE: Record<string, (x: Vals) => number | boolean> = {
  sum: (x) => x.reduce((s, v) => s + v, 0),
  mean: (x) => (x.length ? x.reduce((s, v) => s + v, 0) / x.length : NaN),
  min: (x) => (x.some(Number.isNaN) ? NaN : x.length ? Math.min(...x) : NaN),
  max: (x) => (x.some(Number.isNaN) ? NaN : x.length ? Math.max(...x) : NaN),
  count: (x) => x.length,
  var: (x) => { const m = REDUCE.mean(x) as number; return x.reduce((s, v) => s + (v - m) ** 2, 0) / x.length; },
  std: (x) => Math.sqrt(REDUCE.var(x) as number),
  norm_l1: (x) => x.reduce((s, v) => s + Math.abs(v), 0),
  norm_l2: (x) => Math.sqrt(x.reduce((s, v) => s + v * v, 0)),
  nan_count: (x) => x.filter(Number.isNaN).length,
  inf_count: (x) => x.filter((v) => v === Infinity || v === -Infinity).length,
  nan_mean: (x) => REDUCE.mean(x.filter((v) => !Number.isNaN(v))),
  nan_std: (x) => REDUCE.std(x.filter((v) => !Number.isNaN(v))),
  any_nan: (x) => x.some(Number.isNaN),
  any_inf: (x) => x.some((v) => v === Infinity || v === -Infinity),
  all_finite: (x) => x.every(Number.isFinite),
  median: (x) => quantile(x, 0.5),
};
function quantile(x: Vals, q: number): number {
  if (x.length === 0 || x.some(Number.isNaN)) return NaN;
  const s = x.slice().sort((a, b) => a - b);
  const h = (s.length - 1) * q, lo = Math.floor(h), hi = Math.ceil(h);
  return s[lo] + (s[hi] - s[lo]) * (h - lo);
}

/**
 * The model of a grouped query on an N-D array: output [G, ...kept axes], each cell the op over
 * the elements whose group-axis position is a member of the group, at the cell's kept positions,
 * over every other selected position of the reduced axes.
 */
function modelGrouped(data: ArrayLike<number>, shape: number[], sel: number[][], ga: number, g: Model, reduced: number[],
  op: (x: Vals) => number | boolean): (number | boolean)[] {
  const kept = shape.map((_, a) => a).filter((a) => !reduced.includes(a) && a !== ga);
  const strides = shape.map((_, a) => shape.slice(a + 1).reduce((p, n) => p * n, 1));
  const out: (number | boolean)[] = [];
  const keptCombos = product(kept.map((a) => sel[a]));
  for (const members of g.members) {
    for (const kc of keptCombos) {
      const axesSel = shape.map((_, a) => (a === ga ? members : kept.includes(a) ? [kc[kept.indexOf(a)]] : sel[a]));
      const vals: number[] = [];
      for (const c of product(axesSel)) vals.push(Number(data[c.reduce((o, p, a) => o + p * strides[a], 0)]));
      out.push(op(vals));
    }
  }
  return out;
}
function product(lists: number[][]): number[][] {
  return lists.reduce<number[][]>((acc, l) => acc.flatMap((c) => l.map((x) => [...c, x])), [[]]);
}
const range = (n: number, start = 0, step = 1) => Array.from({ length: n }, (_, i) => start + i * step);

function close(actual: ArrayLike<unknown>, expected: (number | boolean)[], rel = 1e-9, what = '') {
  expect(actual.length, what).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i] as number | boolean | bigint, e = expected[i];
    if (typeof e === 'boolean') { expect(a, `${what}[${i}]`).toBe(e); continue; }
    const x = Number(a);
    if (Number.isNaN(e)) { expect(Number.isNaN(x), `${what}[${i}] = ${x}, expected NaN`).toBe(true); continue; }
    if (!Number.isFinite(e)) { expect(x, `${what}[${i}]`).toBe(e); continue; }
    expect(Math.abs(x - e), `${what}[${i}] = ${x}, expected ${e}`).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(e)));
  }
}

type Exec = Record<string, unknown>;
async function exec(doc: object | string, opts = {}): Promise<Exec> {
  return (await file.query(doc, opts)).execution as unknown as Exec;
}

const monthKey = (t: number) => new Date(Date.UTC(2020, new Date(Number(tsUs[t] / 1000n)).getUTCMonth(), 1)).toISOString().replace('.000Z', 'Z');

// ---- grouped folds against the model ---------------------------------------------------------------

describe('group_by on a tensor: keys, counts and values', () => {
  it('station.country (the last axis, interleaved): [G] over every time, keys ordered, null last', async () => {
    const g = groupsOf(range(S), (s) => country[s]);
    expect(g.keys).toEqual(['AT', 'DE', 'ES', 'FR', 'IT', null]);
    for (const op of ['mean', 'sum', 'min', 'max', 'count', 'var', 'std', 'norm_l1', 'norm_l2']) {
      const e = await exec({ dataset: 'temperature', group_by: 'station.country', [op]: [] });
      expect(e.group_keys).toEqual(g.keys);
      expect(e.group_counts).toEqual(g.counts);
      expect(e.operation_reduced_shape).toEqual([g.keys.length]);
      expect(e.operation_reduced_axes).toEqual([0, 1]);
      close(e[`operation_grouped_${op}`] as ArrayLike<unknown>, modelGrouped(temp, [T, S], [range(T), range(S)], 1, g, [0], REDUCE[op]), 1e-9, op);
    }
  }, 60_000);

  it('time.ts by month (the first axis, kept last axis): [G, station]', async () => {
    const g = groupsOf(range(T), monthKey);
    expect(g.keys).toEqual(['2020-01-01T00:00:00Z', '2020-02-01T00:00:00Z']);
    const e = await exec({ dataset: 'temperature', group_by: { column: 'ts', bucket: 'month' }, mean: ['time'] });
    expect(e.group_keys).toEqual(g.keys);
    expect(e.group_counts).toEqual([48, 452]);
    expect(e.operation_reduced_shape).toEqual([2, S]);
    close(e.operation_grouped_mean as Float64Array, modelGrouped(temp, [T, S], [range(T), range(S)], 0, g, [], REDUCE.mean));
    // the same as TOML text (docs/queries.md)
    const toml = await exec('dataset = "temperature"\nmean = ["time"]\ngroup_by = { column = "ts", bucket = "month" }\n');
    expect(Array.from(toml.operation_grouped_mean as Float64Array)).toEqual(Array.from(e.operation_grouped_mean as Float64Array));
    // day buckets, reducing the stations too (first axis grouped, last axis reduced)
    const d = groupsOf(range(T), (t) => Math.floor(t / 24));
    const e2 = await exec({ dataset: 'temperature', group_by: { axis: 'time', column: 'ts', bucket: 'day' }, max: [] });
    expect((e2.group_keys as string[]).length).toBe(d.keys.length);
    expect((e2.group_keys as string[])[0]).toBe('2020-01-30T00:00:00Z');
    expect(e2.group_counts).toEqual(d.counts);
    close(e2.operation_grouped_max as Float64Array, modelGrouped(temp, [T, S], [range(T), range(S)], 0, d, [1], REDUCE.max));
  }, 60_000);

  it('int width, float keys (NaN after numbers, -0 as 0, null last), bool keys', async () => {
    const byElev = groupsOf(range(S), (s) => Math.floor(elevation[s] / 500) * 500);
    const e = await exec({ dataset: 'temperature', group_by: { column: 'elevation_m', width: 500 }, sum: ['station'] });
    expect(e.group_keys).toEqual([-500, 0, 500, 1000, 1500, 2000]);
    expect(e.group_counts).toEqual(byElev.counts);
    close(e.operation_grouped_sum as Float64Array, modelGrouped(temp, [T, S], [range(T), range(S)], 1, byElev, [], REDUCE.sum));
    const byScore = groupsOf(range(S), (s) => (score[s] === null ? null : score[s] === 0 ? 0 : score[s]));
    const f = await exec({ dataset: 'temperature', group_by: 'station.score', mean: [] });
    expect((f.group_keys as Key[]).slice(-2)).toEqual([NaN, null]);
    expect((f.group_keys as Key[]).filter((k) => Object.is(k, -0))).toEqual([]);
    expect(f.group_keys).toEqual(byScore.keys);
    expect(f.group_counts).toEqual(byScore.counts);
    close(f.operation_grouped_mean as Float64Array, modelGrouped(temp, [T, S], [range(T), range(S)], 1, byScore, [0], REDUCE.mean));
    const b = await exec({ dataset: 'temperature', group_by: 'flag', count: [] });
    expect(b.group_keys).toEqual([false, true]);
    expect(b.group_counts).toEqual([200, 100]);
    expect((b.operation_grouped_count as unknown[]).map(Number)).toEqual([200 * T, 100 * T]);
  }, 60_000);

  it('where ∩ selection: groups listed are those present among the selected positions', async () => {
    const sel = [{ start: 10, stop: 400, step: 3 }, { start: 5, stop: 290 }];
    const where = [{ column: 'elevation_m', lt: 1200 }, { column: 'ts', ge: '2020-02-01T00:00:00Z' }];
    const tPos = range(T).filter((t) => t >= 10 && t < 400 && (t - 10) % 3 === 0 && tsUs[t] >= BigInt(Date.UTC(2020, 1, 1)) * 1000n);
    const sPos = range(S).filter((s) => s >= 5 && s < 290 && elevation[s] < 1200);
    const g = groupsOf(sPos, (s) => country[s]);
    const e = await exec({ dataset: 'temperature', selection: sel, where, group_by: 'station.country', nan_mean: ['time'] });
    expect(e.group_keys).toEqual(g.keys);
    expect(e.group_counts).toEqual(g.counts);
    close(e.operation_grouped_nan_mean as Float64Array, modelGrouped(temp, [T, S], [tPos, sPos], 1, g, [0], REDUCE.nan_mean));
    // a where that leaves a single country: one group
    const one = await exec({ dataset: 'temperature', where: [{ column: 'country', eq: 'IT' }], group_by: 'station.country', count: [] });
    expect(one.group_keys).toEqual(['IT']);
  }, 60_000);

  it('cube (zstd f64 with NaN / inf): the middle axis with the last kept or reduced, the last axis itself', async () => {
    const shape = [A, B, C];
    const all = [range(A), range(B), range(C)];
    const gb = groupsOf(range(B), (b) => grp[b]);
    const gc = groupsOf(range(C), (c) => half[c]);
    for (const op of ['sum', 'mean', 'min', 'max', 'nan_count', 'inf_count', 'nan_mean', 'nan_std', 'any_nan', 'any_inf', 'all_finite', 'var']) {
      // b grouped, c kept: [G, a, c]... a reduced: ["a", "b"] → [G, c]
      const e1 = await exec({ dataset: 'cube', group_by: 'b.grp', [op]: ['a', 'b'] });
      expect(e1.operation_reduced_shape).toEqual([3, C]);
      close(e1[`operation_grouped_${op}`] as ArrayLike<unknown>, modelGrouped(cube, shape, all, 1, gb, [0], REDUCE[op]), 1e-9, `${op} b/c kept`);
      // b grouped, c reduced, a kept: [G, a]
      const e2 = await exec({ dataset: 'cube', group_by: 'b.grp', [op]: ['c'] });
      expect(e2.operation_reduced_shape).toEqual([3, A]);
      close(e2[`operation_grouped_${op}`] as ArrayLike<unknown>, modelGrouped(cube, shape, all, 1, gb, [2], REDUCE[op]), 1e-9, `${op} b/c reduced`);
      // c grouped (the last axis), a and b kept: [G, a, b]
      const e3 = await exec({ dataset: 'cube', group_by: 'c.half', [op]: ['c'] });
      expect(e3.operation_reduced_shape).toEqual([5, A, B]);
      expect(e3.group_keys).toEqual([0, 1, 2, 3, 4]);
      close(e3[`operation_grouped_${op}`] as ArrayLike<unknown>, modelGrouped(cube, shape, all, 2, gc, [], REDUCE[op]), 1e-9, `${op} c`);
    }
  }, 120_000);

  it('median and quantile per group (scalar per group and with a kept axis)', async () => {
    const g = groupsOf(range(S), (s) => country[s]);
    const sel = [{ start: 0, stop: 100 }, null];
    const m = await exec({ dataset: 'temperature', selection: sel, group_by: 'station.country', median: [] });
    expect(m.group_keys).toEqual(g.keys);
    close(m.operation_grouped_median as Float64Array, modelGrouped(temp, [T, S], [range(100), range(S)], 1, g, [0], REDUCE.median), 0);
    const q = await exec({ dataset: 'temperature', selection: [{ start: 0, stop: 30 }, null], group_by: 'station.country', quantile: { axes: ['station'], q: 0.9 } });
    expect(q.operation_reduced_shape).toEqual([g.keys.length, 30]);
    expect(q.operation_quantile_q).toBe(0.9);
    close(q.operation_grouped_quantile as Float64Array, modelGrouped(temp, [T, S], [range(30), range(S)], 1, g, [], (x) => quantile(x, 0.9)), 1e-12);
  }, 60_000);

  it('i64 beyond 2^53: exact sums per group (bigint)', async () => {
    const g = groupsOf(range(S), (s) => country[s]);
    const e = await exec({ dataset: 'counts', group_by: 'station.country', sum: [] });
    expect(e.group_keys).toEqual(g.keys);
    const expected = g.members.map((ms) => {
      let s = 0n;
      for (let t = 0; t < T; t++) for (const st of ms) s += big[t * S + st];
      return s;
    });
    // the integer sum is exact, rounded to f64 once (an f64 running sum would drift)
    expect(Array.from(e.operation_grouped_sum as Float64Array)).toEqual(expected.map(Number));
    const m = await exec({ dataset: 'counts', group_by: 'station.country', max: ['station'] });
    expect(m.operation_reduced_shape).toEqual([g.keys.length, T]);
    const want = g.members.flatMap((ms) => range(T).map((t) => ms.reduce((x, st) => (big[t * S + st] > x ? big[t * S + st] : x), -(2n ** 63n))));
    expect(m.operation_grouped_max).toEqual(want);
  });

  it('coordinate labels (the implicit axis table): float width and str keys', async () => {
    const g = groupsOf(range(LAT.length), (i) => Math.floor(LAT[i] / 20) * 20);
    const e = await exec({ dataset: 'grid', group_by: { axis: 'lat', column: 'lat', width: 20 }, mean: [] });
    expect(e.group_keys).toEqual([-40, -20, 0, 20]);
    expect(e.group_counts).toEqual(g.counts);
    close(e.operation_grouped_mean as Float64Array, modelGrouped(grid, [LAT.length, LON.length], [range(LAT.length), range(LON.length)], 0, g, [1], REDUCE.mean));
    const l = await exec({ dataset: 'grid', group_by: 'lon', sum: ['lon'] });
    expect(l.group_keys).toEqual(['e000', 'e000b', 'e010', 'w010']);
    expect(l.group_counts).toEqual([1, 1, 1, 2]);
    const gl = groupsOf(range(LON.length), (i) => LON[i]);
    close(l.operation_grouped_sum as Float64Array, modelGrouped(grid, [LAT.length, LON.length], [range(LAT.length), range(LON.length)], 1, gl, [], REDUCE.sum));
  });
});

// ---- empty inputs ---------------------------------------------------------------------------------

describe('group_by: empty groups and empty axes (§4.5)', () => {
  it('no selected position on the group axis: no groups, shape [0, ...kept]', async () => {
    const e = await exec({ dataset: 'temperature', where: [{ column: 'country', eq: 'XX' }], group_by: 'station.country', mean: ['station'] });
    expect(e.group_keys).toEqual([]);
    expect(e.group_counts).toEqual([]);
    expect(e.operation_reduced_shape).toEqual([0, T]);
    expect(Array.from(e.operation_grouped_mean as Float64Array)).toEqual([]);
  });
  it('another axis left empty by the where: every group present holds the empty value', async () => {
    const g = groupsOf(range(S), (s) => country[s]);
    for (const [op, empty] of [['sum', 0], ['count', 0], ['mean', NaN], ['all_finite', true]] as const) {
      const e = await exec({ dataset: 'temperature', where: [{ column: 'ts', lt: '2000-01-01T00:00:00Z' }], group_by: 'station.country', [op]: [] });
      expect(e.group_keys).toEqual(g.keys);
      expect(e.group_counts).toEqual(g.counts);
      close(e[`operation_grouped_${op}`] as ArrayLike<unknown>, g.keys.map(() => empty), 0, op);
    }
  });
});

// ---- determinism, sharding ----------------------------------------------------------------------------

describe('group_by: the same bits on 1 or 2 threads and sharded', () => {
  it('threads 1 vs 2, and queryPartial + runSharded vs the plain run', async () => {
    for (const doc of [
      { dataset: 'temperature', group_by: 'station.country', var: [] },
      { dataset: 'temperature', group_by: { column: 'ts', bucket: 'day' }, mean: ['time'] },
      { dataset: 'cube', where: [{ column: 'half', ne: 2 }], group_by: 'b.grp', nan_std: ['b'] },
      { dataset: 'temperature', where: [{ column: 'country', eq: 'XX' }], group_by: 'station.country', sum: [] },
    ]) {
      const whole = await file.query(doc);
      const one = await file.query({ ...doc, execution: { threads: 1 } });
      const pick = (r: typeof whole) => Object.fromEntries(Object.entries(r.execution as unknown as Exec)
        .filter(([k]) => k.startsWith('operation') || k.startsWith('group_')));
      expect(pick(one), JSON.stringify(doc)).toEqual(pick(whole));
      const n = 3;
      const merged = await runSharded(n, (i, round) => file.queryPartial(doc, { shard: [i, n], ...(round ? { round } : {}) }));
      expect(pick(merged), JSON.stringify(doc)).toEqual(pick(whole));
    }
  }, 60_000);

  it('a where that selects nothing: shards planned while the host\'s free RAM moved still merge; another query does not', async () => {
    // Such shards return a "TPSE" + JSON envelope; its context carries the planned fields, among
    // them host_available_ram_bytes, which the host measured when the shard was planned.
    const doc = { dataset: 'temperature', where: [{ column: 'country', eq: 'XX' }], group_by: 'station.country', sum: [] };
    const parts = [await file.queryPartial(doc, { shard: [0, 2] }), await file.queryPartial(doc, { shard: [1, 2] })];
    const rewrite = (b: Uint8Array, edit: (ctx: { fields: Record<string, unknown> }) => void) => {
      const env = JSON.parse(new TextDecoder().decode(b.subarray(4))) as { context: string };
      const ctx = JSON.parse(env.context) as { fields: Record<string, unknown> };
      edit(ctx);
      env.context = JSON.stringify(ctx);
      const body = new TextEncoder().encode(JSON.stringify(env));
      return Uint8Array.from([...b.subarray(0, 4), ...body]);
    };
    expect(Array.from(parts[0].subarray(0, 4))).toEqual([0x54, 0x50, 0x53, 0x45]);
    // the free RAM, and the default budget (25 % of it) with it
    const moved = rewrite(parts[1], (c) => { c.fields.host_available_ram_bytes = 12345; c.fields.memory_budget_bytes = 3086; });
    const whole = await file.query(doc);
    const merged = await mergePartials([parts[0], moved]);
    expect(merged.execution?.group_keys).toEqual(whole.execution?.group_keys);
    expect(merged.execution?.operation_grouped_sum).toEqual(whole.execution?.operation_grouped_sum);
    // a budget the query set is part of the query
    const other = rewrite(parts[1], (c) => { c.fields.memory_budget_bytes = 4096; c.fields.memory_budget_source = 'query_bytes'; });
    await expect(mergePartials([parts[0], other])).rejects.toMatchObject({ code: 'TET_SHARD_MISMATCH' });
  });
});

// ---- errors --------------------------------------------------------------------------------------------

describe('group_by: errors', () => {
  const cases: [object, string, RegExp?][] = [
    [{ group_by: 'station.country', arg_min: [] }, 'TET_QUERY_GROUP_BY', /arg_min/],
    [{ group_by: 'station.country', histogram: { axes: [], bins: 4 } }, 'TET_QUERY_GROUP_BY', /histogram/],
    [{ group_by: ['country', 'flag'], mean: [] }, 'TET_QUERY_GROUP_BY', /one key/],
    [{ group_by: 'station.nope', mean: [] }, 'TET_QUERY_UNKNOWN_COLUMN'],
    [{ group_by: { column: 'elevation_m', bucket: 'month' }, mean: [] }, 'TET_QUERY_GROUP_BY', /bucket/],
    [{ group_by: { column: 'country', width: 2 }, mean: [] }, 'TET_QUERY_GROUP_BY', /width/],
    [{ group_by: { column: 'elevation_m', width: 2.5 }, mean: [] }, 'TET_QUERY_GROUP_BY', /integer width/],
    [{ group_by: { axis: 'nope', column: 'country' }, mean: [] }, 'TET_QUERY_UNKNOWN_DIMENSION'],
    [{ group_by: 'station.country' }, 'TET_QUERY_GROUP_BY', /reduction/],
    [{ group_by: 'station.country', mean: ['station'], execution: { memory_budget_bytes: 4096 } }, 'TET_BUDGET_EXCEEDED', /groups/],
  ];
  for (const [extra, code, re] of cases) {
    it(`${JSON.stringify(extra)} → ${code}`, async () => {
      await expect(file.query({ dataset: 'temperature', ...extra })).rejects.toMatchObject({ code, ...(re ? { message: expect.stringMatching(re) } : {}) });
    });
  }
  it('a grouped median does not run sharded (a clear error)', async () => {
    await expect(file.queryPartial({ dataset: 'temperature', group_by: 'station.country', median: [] }, { shard: [0, 2] }))
      .rejects.toMatchObject({ code: 'TET_QUERY_UNSUPPORTED' });
  });
});
