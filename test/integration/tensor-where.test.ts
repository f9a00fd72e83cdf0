// `where` on tensor queries end to end (spec tables_and_filters.md §4.1, §4.4, §4.5): a dataset
// temperature[time, station] (f32, 6 x 5 chunks) with axis tables `time` (ts timestamp, qc bool)
// and `station` (station_id int, country str with nulls, elevation_m int, flag bool, score float
// with NaN and nulls, qc bool), and two datasets whose axes have only footer coords labels (the
// implicit axis table). Every expectation comes from a plain JS model in this file: the spec's
// predicate rules applied row by row to the columns as written, and the reductions computed from
// the raw array over the selected positions (never tetration output). Also: every op's empty
// value, where_plan block counts worked out by hand from the column layouts, every error by code,
// and a sharded run (queryPartial + mergePartials) equal to the unsharded one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePartials, open, runSharded, TetWriter, type TetFile } from '../../lib/index';
import { REDUCTION_KEYS } from '../../lib/query/document';
import { formatQueryResponse } from '../../lib/cli/format';
import { indexRuns } from '../../lib/plan/encode';

const work = mkdtempSync(join(tmpdir(), 'tet-where-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---- the data ----------------------------------------------------------------------------------

const T = 4200;  // time table: 3 blocks of <= 2048 rows (2048, 2048, 104)
const S = 2100;  // station table: 2 blocks (2048, 52)
const N = T * S;
// A permutation of 0..N-1 (7919 is prime and divides no factor of N): unique values, so arg_*
// have no ties; integers < 2^24 are exact in f32, and their sums exact in f64.
const temp = new Float32Array(N);
for (let i = 0; i < N; i++) temp[i] = ((i * 7919) % N) - 4_000_000;
const at = (t: number, s: number) => temp[t * S + s];

const T0 = Date.UTC(2020, 0, 1) * 1000;  // µs
// hourly with a jitter of (t % 7) ms: sorted, but no Sequence block (every block has a payload)
const tsUs = Array.from({ length: T }, (_, t) => BigInt(T0 + t * 3_600_000_000 + (t % 7) * 1000));
const tsText = (t: number) => new Date(Number(tsUs[t] / 1000n)).toISOString().replace('.000Z', 'Z');
const timeQc = Array.from({ length: T }, (_, t) => t % 5 !== 0);

const COUNTRIES = ['DE', 'FR', null, 'IT', 'ES', 'DE', 'DK'];
const stationId = Array.from({ length: S }, (_, s) => 1000 + s);
const country = Array.from({ length: S }, (_, s) => COUNTRIES[s % COUNTRIES.length]);
// block 0 (s < 2048) in [0, 2000), block 1 in [2000, 3000): zone maps settle `ge 2500` on block 0
const elevation = Array.from({ length: S }, (_, s) => (s < 2048 ? (s * 37) % 2000 : 2000 + ((s * 13) % 1000)));
const flag = Array.from({ length: S }, (_, s) => s % 3 === 0);
const score: (number | null)[] = Array.from({ length: S }, (_, s) => (s % 13 === 0 ? null : s % 11 === 0 ? NaN : ((s * 7) % 40) / 4 - 3));
const stationQc = Array.from({ length: S }, (_, s) => s % 2 === 0);

// grid[lat, lon]: coords labels only (numeric lat, string lon), f64
const LAT = [-30, -20, -10, 0, 10, 20, 30.5];
const LON = ['e000', 'e010', 'w010', 'w020', 'e020'];
const grid = Float64Array.from({ length: LAT.length * LON.length }, (_, i) => (i * 37) % 101 - 50.5);
// plain[9]: no dim_names, string labels keyed "0"
const PLAIN = ['a1', 'a2', 'b1', 'b2', 'b3', 'c1', 'ab', 'a', 'b'];
const plain = Float32Array.from({ length: 9 }, (_, i) => i * 1.5 - 2);

let file: TetFile;
beforeAll(async () => {
  const path = join(work, 'where.tet');
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'temperature', dtype: 'f32', shape: [T, S], chunkShape: [700, 420], data: temp });
  w.setMetadata('temperature', { dim_names: ['time', 'station'] });
  w.addTable({
    name: 'time', axis: { dataset: 'temperature', dim: 'time' },
    columns: { ts: { kind: 'timestamp', unit: 'us', tz: 'UTC', values: BigInt64Array.from(tsUs) }, qc: { kind: 'bool', values: timeQc } },
  });
  w.addTable({
    name: 'station', axis: { dataset: 'temperature', dim: 'station' },
    columns: {
      station_id: { kind: 'int', values: Int32Array.from(stationId) },
      country: { kind: 'str', values: country },
      elevation_m: { kind: 'int', values: Int32Array.from(elevation) },
      flag: { kind: 'bool', values: flag },
      score: { kind: 'float', values: score },
      qc: { kind: 'bool', values: stationQc },
    },
  });
  w.addDataset({ name: 'grid', dtype: 'f64', shape: [LAT.length, LON.length], chunkShape: [3, 2], data: grid });
  w.setMetadata('grid', { dim_names: ['lat', 'lon'], coords: { lat: { labels: LAT }, lon: { labels: LON } } });
  w.addDataset({ name: 'plain', dtype: 'f32', shape: [9], chunkShape: [4], data: plain });
  w.setMetadata('plain', { coords: { 0: { labels: PLAIN } } });
  w.addDataset({ name: 'bare', dtype: 'f32', shape: [4, 3], data: new Float32Array(12) });
  w.setMetadata('bare', { dim_names: ['x', 'y'] });
  await w.commit();
  file = await open(path);
}, 120_000);
afterAll(() => file?.close());

// ---- the model ----------------------------------------------------------------------------------

type Lit = string | number | boolean | null;
type Pred = { axis?: string | number; column: string } & Record<string, unknown>;
type Kind = 'int' | 'float' | 'str' | 'bool' | 'ts';

/** A column's values as written, with its kind; null = null. */
const COLUMNS: Record<string, { axis: 'time' | 'station'; kind: Kind; values: (number | string | boolean | bigint | null)[] }> = {
  ts: { axis: 'time', kind: 'ts', values: tsUs },
  station_id: { axis: 'station', kind: 'int', values: stationId },
  country: { axis: 'station', kind: 'str', values: country },
  elevation_m: { axis: 'station', kind: 'int', values: elevation },
  flag: { axis: 'station', kind: 'bool', values: flag },
  score: { axis: 'station', kind: 'float', values: score },
};

/** A literal in the model's comparable form (timestamps as µs bigint, decimal strings as numbers). */
function litOf(kind: Kind, x: Lit): number | string | boolean | bigint {
  if (kind === 'ts') return BigInt(Date.parse((x as string).replace(/z$/, 'Z').replace(/-00:00$/, 'Z'))) * 1000n;
  if (kind === 'int' && typeof x === 'string') return Number(x);
  if (kind === 'float' && typeof x === 'string') return Number(x);  // "NaN", "Infinity"
  return x as number | string | boolean;
}

/** -1 / 0 / 1, or NaN when either side is NaN (every comparison then fails). */
function cmp(v: number | string | boolean | bigint, l: number | string | boolean | bigint): number {
  if (typeof v === 'boolean') return Number(v) - Number(l);
  if (typeof v === 'bigint') return v < (l as bigint) ? -1 : v > (l as bigint) ? 1 : 0;
  if (typeof v === 'string') return Buffer.compare(Buffer.from(v), Buffer.from(l as string));
  const d = v - (l as number);
  return Number.isNaN(d) ? NaN : Math.sign(d);
}

/** The spec's rules, row by row: nulls match only is_null true; ne / not_in match NaN. */
function matches(p: Pred, v: number | string | boolean | bigint | null, kind: Kind): boolean {
  const op = Object.keys(p).find((k) => k !== 'axis' && k !== 'column')!;
  const arg = p[op];
  if (op === 'is_null') return (v === null) === arg;
  if (v === null) return false;
  const isNan = typeof v === 'number' && Number.isNaN(v);
  const L = (x: unknown) => litOf(kind, x as Lit);
  switch (op) {
    case 'eq': return cmp(v, L(arg)) === 0;
    case 'ne': return !(cmp(v, L(arg)) === 0);
    case 'lt': return cmp(v, L(arg)) < 0;
    case 'le': return cmp(v, L(arg)) <= 0;
    case 'gt': return cmp(v, L(arg)) > 0;
    case 'ge': return cmp(v, L(arg)) >= 0;
    case 'in': return (arg as Lit[]).some((x) => cmp(v, L(x)) === 0);
    case 'not_in': return !(arg as Lit[]).some((x) => cmp(v, L(x)) === 0);
    case 'range': {
      const [lo, hi] = arg as [Lit, Lit];
      if (isNan) return false;
      return (lo === null || cmp(v, L(lo)) >= 0) && (hi === null || cmp(v, L(hi)) < 0);
    }
    case 'prefix': return (v as string).startsWith(arg as string);
    case 'is_nan': return isNan === arg;
  }
  throw new Error(`model: unknown op ${op}`);
}

/** Positions of an axis (by its table columns) where every predicate on it holds. */
function modelAxis(axis: 'time' | 'station', preds: Pred[]): number[] {
  const n = axis === 'time' ? T : S;
  const mine = preds.filter((p) => COLUMNS[p.column].axis === axis);
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (mine.every((p) => matches(p, COLUMNS[p.column].values[i], COLUMNS[p.column].kind))) out.push(i);
  return out;
}

// reductions over a list of values (f64, numpy's definitions)
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const minOf = (xs: number[]) => xs.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), -Infinity);
const mean = (xs: number[]) => sum(xs) / xs.length;
const variance = (xs: number[]) => { const m = mean(xs); return sum(xs.map((x) => (x - m) ** 2)) / xs.length; };
function quantile(xs: number[], q: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  return lo + 1 < s.length ? s[lo] + (h - lo) * (s[lo + 1] - s[lo]) : s[lo];
}
/** Values of the outer product of positions (row-major). */
function cells(ts: number[], ss: number[]): number[] {
  const out: number[] = [];
  for (const t of ts) for (const s of ss) out.push(at(t, s));
  return out;
}
const close = (got: number, want: number, rel = 1e-12) => expect(Math.abs(got - want)).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(want)));

async function exec(doc: object) {
  const r = await file.query(doc);
  expect(r.status).toBe('executed');
  return r.execution!;
}

// ---- predicates: every op on every kind --------------------------------------------------------

const STATION_PREDS: Pred[] = [
  // int
  { column: 'station_id', eq: 1500 }, { column: 'station_id', eq: '1500' }, { column: 'station_id', ne: 1000 },
  { column: 'station_id', lt: 1010 }, { column: 'station_id', le: 1010 }, { column: 'station_id', gt: 3090 },
  { column: 'station_id', ge: 3090 }, { column: 'station_id', in: [1003, 1000, 2999, 1003, 9999] },
  { column: 'station_id', not_in: [1000, 1001] }, { column: 'station_id', range: [1100, 1120] },
  { column: 'station_id', range: [null, 1003] }, { column: 'station_id', range: [3095, null] },
  { column: 'station_id', range: [1200, 1200] }, { column: 'station_id', eq: 1500.0 },
  { column: 'elevation_m', ge: 2500 }, { column: 'elevation_m', lt: 37 }, { column: 'elevation_m', is_null: false },
  { column: 'elevation_m', is_null: true }, { column: 'elevation_m', in: [] }, { column: 'elevation_m', not_in: [] },
  // str with nulls
  { column: 'country', eq: 'DE' }, { column: 'country', ne: 'DE' }, { column: 'country', lt: 'E' },
  { column: 'country', le: 'ES' }, { column: 'country', gt: 'FR' }, { column: 'country', ge: 'FR' },
  { column: 'country', in: ['DE', 'IT', 'XX'] }, { column: 'country', not_in: ['DE'] }, { column: 'country', range: ['DK', 'F'] },
  { column: 'country', range: [null, 'E'] }, { column: 'country', prefix: 'D' }, { column: 'country', prefix: '' },
  { column: 'country', is_null: true }, { column: 'country', is_null: false }, { column: 'country', range: ['Z', 'A'] },
  // bool
  { column: 'flag', eq: true }, { column: 'flag', ne: true }, { column: 'flag', lt: true }, { column: 'flag', ge: true },
  { column: 'flag', range: [false, true] }, { column: 'flag', in: [true] }, { column: 'flag', not_in: [true] },
  { column: 'flag', is_null: false },
  // float with NaN and nulls
  { column: 'score', eq: 0.5 }, { column: 'score', ne: 0.5 }, { column: 'score', lt: 0 }, { column: 'score', le: 0 },
  { column: 'score', gt: 6 }, { column: 'score', ge: 6.75 }, { column: 'score', in: [0.5, -3, 'NaN'] },
  { column: 'score', not_in: [0.5, -3] }, { column: 'score', range: [-1, 1] }, { column: 'score', range: [null, null] },
  { column: 'score', is_nan: true }, { column: 'score', is_nan: false }, { column: 'score', is_null: true },
  { column: 'score', eq: 'NaN' }, { column: 'score', ne: 'NaN' }, { column: 'score', lt: 'Infinity' }, { column: 'score', eq: 2 },
];

const TIME_PREDS: Pred[] = [
  { column: 'ts', ge: tsText(4000) }, { column: 'ts', lt: '2020-01-01T05:00:00Z' },
  { column: 'ts', eq: '2020-01-01T03:00:00.003Z' }, { column: 'ts', eq: '2020-01-01T03:00:00Z' },
  { column: 'ts', range: ['2020-03-01T00:00:00Z', '2020-03-02T00:00:00+01:00'] }, { column: 'ts', ne: '2020-01-01T00:00:00Z' },
  { column: 'ts', in: ['2020-01-01T01:00:00.001Z', '2020-01-01T02:00:00.002z', '2021-01-01T00:00:00Z'] },
  { column: 'ts', le: '2020-01-01T01:00:00.001-00:00' }, { column: 'ts', gt: '2020-06-23T00:00:00Z' },
];

describe('where: every predicate op on every column kind', () => {
  it('station predicates select exactly the model positions (values of the kept station axis)', async () => {
    for (const p of STATION_PREDS) {
      const want = modelAxis('station', [p]);
      const doc = { dataset: 'temperature', selection: [{ start: 0, stop: 1 }, null], where: [p], min: ['time'] };
      if (want.length === 0) {
        const e = await exec(doc);
        expect(e.operation_reduced_shape, JSON.stringify(p)).toEqual([0]);
        expect(e.where_plan!.station.selected).toBe(0);
        continue;
      }
      const e = await exec(doc);
      expect(e.where_plan!.station.selected, JSON.stringify(p)).toBe(want.length);
      expect(e.operation_reduced_shape, JSON.stringify(p)).toEqual([want.length]);
      expect(Array.from(e.operation_reduced_min as Float64Array), JSON.stringify(p)).toEqual(want.map((s) => at(0, s)));
    }
  }, 60_000);

  it('timestamp predicates (RFC 3339 offsets, z, -00:00, fractions) select the model positions', async () => {
    for (const p of TIME_PREDS) {
      const want = modelAxis('time', [p]);
      const e = await exec({ dataset: 'temperature', selection: [null, { start: 7, stop: 8 }], where: [p], max: ['station'] });
      expect(e.where_plan!.time.selected, JSON.stringify(p)).toBe(want.length);
      expect(e.operation_reduced_shape, JSON.stringify(p)).toEqual([want.length]);
      expect(Array.from(e.operation_reduced_max as Float64Array), JSON.stringify(p)).toEqual(want.map((t) => at(t, 7)));
    }
  }, 60_000);

  it('the model itself is not trivial: each kind has selections of every size class', () => {
    const sizes = STATION_PREDS.map((p) => modelAxis('station', [p]).length);
    expect(sizes).toContain(0);
    expect(sizes).toContain(S);
    expect(sizes.filter((n) => n > 0 && n < S).length).toBeGreaterThan(40);
  });
});

// ---- AND, selection ∩ where, ops of every tier -------------------------------------------------

describe('where: AND within and across axes, selection ∩ where, every tier against the model', () => {
  const where: Pred[] = [
    { column: 'country', in: ['DE', 'IT'] }, { column: 'elevation_m', lt: 1500 },
    { column: 'ts', range: ['2020-02-01T00:00:00Z', '2020-02-11T00:00:00Z'] },
  ];
  const ts = modelAxis('time', where);
  const ss = modelAxis('station', where);

  it('AND within an axis and across axes: scalar sum / mean / min / max / var / count', async () => {
    expect(ts.length).toBe(240);
    expect(ss.length).toBeGreaterThan(300);
    const xs = cells(ts, ss);
    const e = await exec({ dataset: 'temperature', where, sum: [] });
    expect(e.operation_sum).toBe(sum(xs));
    expect(e.operation_element_count).toBe(xs.length);
    expect(e.where_plan).toEqual({
      time: expect.objectContaining({ rows: T, selected: ts.length }),
      station: expect.objectContaining({ rows: S, selected: ss.length }),
    });
    close((await exec({ dataset: 'temperature', where, mean: [] })).operation_mean!, mean(xs));
    expect((await exec({ dataset: 'temperature', where, min: [] })).operation_min).toBe(minOf(xs));
    expect((await exec({ dataset: 'temperature', where, max: [] })).operation_max).toBe(maxOf(xs));
    close((await exec({ dataset: 'temperature', where, var: [] })).operation_var!, variance(xs), 1e-10);
    expect((await exec({ dataset: 'temperature', where, count: [] })).operation_element_count).toBe(xs.length);
  });

  it('reductions (one pass) over the where: sum / mean / min / max / var / count / arg_min as the model says', async () => {
    const xs = cells(ts, ss);
    const e = await exec({ dataset: 'temperature', where, reductions: ['sum', 'mean', 'min', 'max', 'var', 'count', 'arg_min'] });
    expect(e.operation).toBe('reductions');
    expect(e.operation_sum).toBe(sum(xs));
    close(e.operation_mean!, mean(xs));
    expect(e.operation_min).toBe(minOf(xs));
    expect(e.operation_max).toBe(maxOf(xs));
    close(e.operation_var!, variance(xs), 1e-10);
    expect(e.operation_element_count).toBe(xs.length);
    expect(e.operation_argmin_index).toBe(xs.indexOf(minOf(xs)));
    expect(e.where_plan?.time).toEqual(expect.objectContaining({ rows: T, selected: ts.length }));
  });

  it('arg_min / arg_max index the selected elements (row-major over the narrowed selection)', async () => {
    const xs = cells(ts, ss);
    const e = await exec({ dataset: 'temperature', where, arg_min: [] });
    expect(e.operation_argmin_index).toBe(xs.indexOf(minOf(xs)));
    const f = await exec({ dataset: 'temperature', where, arg_max: ['station'] });
    expect(f.operation_reduced_argmax).toEqual(ts.map((t) => { const row = ss.map((s) => at(t, s)); return row.indexOf(maxOf(row)); }));
  });

  it('median, quantile, histogram (tier C) over the selected elements', async () => {
    const small: Pred[] = [...where, { column: 'station_id', lt: 1200 }];
    const xs = cells(modelAxis('time', small), modelAxis('station', small));
    expect(xs.length).toBeGreaterThan(1000);
    expect((await exec({ dataset: 'temperature', where: small, median: [] })).operation_median).toBe(quantile(xs, 0.5));
    close((await exec({ dataset: 'temperature', where: small, quantile: { q: 0.9 } })).operation_quantile!, quantile(xs, 0.9));
    const lo = -4e6, hi = 4.82e6, bins = 7;
    const h = await exec({ dataset: 'temperature', where: small, histogram: { bins, min: lo, max: hi } });
    const want = new Array(bins).fill(0);
    for (const x of xs) if (x >= lo && x <= hi) want[Math.min(bins - 1, Math.floor(((x - lo) / (hi - lo)) * bins))]++;
    expect(h.operation_histogram_counts).toEqual(want);
    // partial median keeping time
    const ts2 = modelAxis('time', small), ss2 = modelAxis('station', small);
    const m = await exec({ dataset: 'temperature', where: small, median: ['station'] });
    expect(Array.from(m.operation_reduced_median as Float64Array)).toEqual(ts2.map((t) => quantile(ss2.map((s) => at(t, s)), 0.5)));
  });

  it('covariance over the time axis (observations) between the selected stations', async () => {
    const w: Pred[] = [{ column: 'station_id', in: [1003, 1500, 2777] }, { column: 'ts', lt: '2020-01-05T00:00:00Z' }];
    const tt = modelAxis('time', w), sv = modelAxis('station', w);
    const e = await exec({ dataset: 'temperature', where: w, covariance: { axis: 'time' } });
    expect(e.operation_covariance_order).toBe(3);
    const cols = sv.map((s) => tt.map((t) => at(t, s)));
    const ms = cols.map(mean);
    const want: number[] = [];
    // ddof 0 (docs/queries.md)
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) want.push(sum(tt.map((_t, k) => (cols[i][k] - ms[i]) * (cols[j][k] - ms[j]))) / tt.length);
    e.operation_covariance!.forEach((v, k) => close(v, want[k], 1e-9));
  });

  it('partial reductions keep a filtered axis at its new length (sum / mean over time, per station)', async () => {
    const e = await exec({ dataset: 'temperature', where, sum: ['time'] });
    expect(e.operation_reduced_shape).toEqual([ss.length]);
    expect(Array.from(e.operation_reduced_sum as Float64Array)).toEqual(ss.map((s) => sum(ts.map((t) => at(t, s)))));
    const m = await exec({ dataset: 'temperature', where, mean: ['station'] });
    expect(m.operation_reduced_shape).toEqual([ts.length]);
    (m.operation_reduced_mean as Float64Array).forEach((v, k) => close(v, mean(ss.map((s) => at(ts[k], s)))));
  });

  it('selection ∩ where: a box with step, an index list; where_plan.selected counts before selection', async () => {
    const sel = [{ indices: ts.filter((_t, k) => k % 3 === 0).concat([4199]) }, { start: 5, stop: 2000, step: 7 }];
    const tk = ts.filter((t) => (sel[0] as { indices: number[] }).indices.includes(t));
    const sk = ss.filter((s) => s >= 5 && s < 2000 && (s - 5) % 7 === 0);
    const e = await exec({ dataset: 'temperature', where, selection: sel, sum: ['station'] });
    expect(e.where_plan!.station.selected).toBe(ss.length);
    expect(e.where_plan!.time.selected).toBe(ts.length);
    expect(e.operation_reduced_shape).toEqual([tk.length]);
    expect(Array.from(e.operation_reduced_sum as Float64Array)).toEqual(tk.map((t) => sum(sk.map((s) => at(t, s)))));
    const plan = await file.query({ dataset: 'temperature', where, selection: sel, sum: [] }, { execute: false });
    expect(plan.read_plan!.logical_selection_shape).toEqual([tk.length, sk.length]);
    expect(plan.read_plan!.chunk_touch_policy).toBe('index_list');
    expect(plan.read_plan!.where_plan!.station.selected).toBe(ss.length);
  });

  it('a where keeping whole runs reaches the engine as a run list (and the same sums)', async () => {
    const w: Pred[] = [{ column: 'ts', range: ['2020-01-03T00:00:00Z', '2020-03-03T00:00:00Z'] }, { column: 'station_id', range: [1100, 1900] }];
    const tt = modelAxis('time', w), sv = modelAxis('station', w);
    expect(indexRuns(tt)).toEqual([tt[0], tt.length]);  // one run: plan wire kind 2
    const e = await exec({ dataset: 'temperature', where: w, sum: [] });
    expect(e.operation_sum).toBe(sum(cells(tt, sv)));
  });

  it('the preview of a where query is the narrowed selection, row-major', async () => {
    const w: Pred[] = [{ column: 'station_id', in: [1001, 1002, 2090] }, { column: 'ts', lt: '2020-01-01T02:00:00Z' }];
    const r = await file.query({ dataset: 'temperature', where: w }, { preview: 100 });
    expect(Array.from(r.execution!.f32_preview!)).toEqual(cells([0, 1], [1, 2, 1090]));
  });

  it('planQuery (synchronous) plans the same narrowed selection', async () => {
    const { planQuery } = await import('../../lib/index');
    const r = planQuery(file, { dataset: 'temperature', where, sum: [] });
    expect(r.read_plan!.logical_selection_shape).toEqual([ts.length, ss.length]);
    expect(r.read_plan!.where_plan!.time.selected).toBe(ts.length);
  });
});

// ---- the implicit axis table of footer coords labels -----------------------------------------

describe('where: the implicit axis table from coords labels', () => {
  it('numeric labels are a float column named after the dim; start_label selection ∩ where', async () => {
    const e = await exec({ dataset: 'grid', where: [{ column: 'lat', ge: -10 }, { column: 'lat', ne: 30.5 }], sum: ['lat'] });
    const lats = [2, 3, 4, 5];
    expect(e.where_plan).toEqual({ lat: { rows: 7, selected: 4, blocks: 1, blocks_zonemap_resolved: 0, blocks_index_pruned: 0, blocks_decoded: 1, payload_bytes_read: 0 } });
    expect(Array.from(e.operation_reduced_sum as Float64Array)).toEqual(LON.map((_l, j) => sum(lats.map((i) => grid[i * 5 + j]))));
    const f = await exec({ dataset: 'grid', selection: [{ start_label: 0 }, null], where: [{ axis: 'lat', column: 'lat', range: [-20, 25] }], count: [] });
    expect(f.operation_element_count).toBe(3 * 5);  // lat 0, 10, 20
  });

  it('string labels: prefix, in, binary order; no dim_names → column and where_plan key "0"', async () => {
    const e = await exec({ dataset: 'grid', where: [{ column: 'lon', prefix: 'w' }], max: ['lat'] });
    expect(Array.from(e.operation_reduced_max as Float64Array)).toEqual([2, 3].map((j) => Math.max(...LAT.map((_x, i) => grid[i * 5 + j]))));
    const p = await exec({ dataset: 'plain', where: [{ column: '0', lt: 'b' }, { column: '0', not_in: ['a2'] }], sum: [] });
    const keep = PLAIN.map((l, i) => [l, i] as const).filter(([l]) => l < 'b' && l !== 'a2').map(([, i]) => i);
    expect(p.operation_sum).toBe(sum(keep.map((i) => plain[i])));
    expect(Object.keys(p.where_plan!)).toEqual(['0']);
    expect(p.where_plan!['0'].selected).toBe(keep.length);
    const q = await exec({ dataset: 'plain', where: [{ axis: '0', column: '0', is_null: false }, { column: '0', range: ['ab', 'b2'] }], count: [] });
    expect(q.operation_element_count).toBe(PLAIN.filter((l) => l >= 'ab' && l < 'b2').length);
  });
});

// ---- empty results --------------------------------------------------------------------------------

describe('where: empty results (spec §4.5)', () => {
  const none: Pred[] = [{ column: 'country', eq: 'XX' }];
  const EMPTY: Record<string, unknown> = {
    sum: 0, mean: NaN, min: NaN, max: NaN, count: 0, var: NaN, std: NaN, product: 1, norm_l1: 0, norm_l2: 0,
    all_finite: true, any_nan: false, any_inf: false, arg_min: null, arg_max: null, nan_count: 0, inf_count: 0,
    null_count: 0, nan_mean: NaN, nan_std: NaN, median: NaN, quantile: NaN,
  };
  const FIELD: Record<string, string> = { count: 'operation_element_count', arg_min: 'operation_argmin_index', arg_max: 'operation_argmax_index' };
  const REDUCED: Record<string, string> = { count: 'operation_reduced_count', arg_min: 'operation_reduced_argmin', arg_max: 'operation_reduced_argmax' };
  const docOf = (op: string, axes: unknown) => (op === 'quantile' ? { q: 0.3, ...(axes ? { axis: axes } : {}) }
    : op === 'null_count' ? { fill: 0, ...(axes ? { axis: axes } : {}) } : axes ?? []);

  it('every scalar reduction gives its empty value; nothing is read', async () => {
    for (const op of REDUCTION_KEYS.filter((k) => k in EMPTY)) {
      const e = await exec({ dataset: 'temperature', where: none, [op]: docOf(op, null) });
      const got = (e as unknown as Record<string, unknown>)[FIELD[op] ?? `operation_${op}`];
      expect(got, op).toEqual(EMPTY[op]);
      expect(e.chunks_read, op).toBe(0);
      expect(e.where_plan!.station.selected).toBe(0);
    }
  });

  it('reductions: every op its empty value from one query; nothing is read', async () => {
    const ops = ['sum', 'mean', 'min', 'count', 'var', 'product', 'all_finite', 'arg_min', 'nan_mean'];
    const e = await exec({ dataset: 'temperature', where: none, reductions: ops });
    for (const op of ops) expect((e as unknown as Record<string, unknown>)[FIELD[op] ?? `operation_${op}`], op).toEqual(EMPTY[op]);
    expect(e.operations).toEqual(ops);
    expect(e.chunks_read).toBe(0);
  });

  it('a reduced empty axis gives every kept cell the empty value; a kept empty axis gives shape [0]', async () => {
    for (const op of REDUCTION_KEYS.filter((k) => k in EMPTY)) {
      const e = await exec({ dataset: 'temperature', where: none, selection: [{ start: 0, stop: 3 }, null], [op]: docOf(op, 'station') });
      expect(e.operation_reduced_shape, op).toEqual([3]);
      const got = (e as unknown as Record<string, unknown>)[REDUCED[op] ?? `operation_reduced_${op}`] as ArrayLike<unknown>;
      expect(Array.from(got), op).toEqual([EMPTY[op], EMPTY[op], EMPTY[op]]);
      const k = await exec({ dataset: 'temperature', where: none, [op]: docOf(op, 'time') });
      expect(k.operation_reduced_shape, op).toEqual([0]);
      expect(Array.from((k as unknown as Record<string, unknown>)[REDUCED[op] ?? `operation_reduced_${op}`] as ArrayLike<unknown>), op).toEqual([]);
    }
  });

  it('histogram over nothing: zero counts (numpy edges [0, 1] without a range); covariance: NaN', async () => {
    const h = await exec({ dataset: 'temperature', where: none, histogram: { bins: 4 } });
    expect(h.operation_histogram_counts).toEqual([0, 0, 0, 0]);
    expect(h.operation_histogram_edges).toEqual([0, 0.25, 0.5, 0.75, 1]);
    const r = await exec({ dataset: 'temperature', where: none, histogram: { bins: 2, min: -1, max: 3 } });
    expect(r.operation_histogram_edges).toEqual([-1, 1, 3]);
    const c = await exec({ dataset: 'temperature', where: [{ column: 'ts', lt: '2000-01-01T00:00:00Z' }, { column: 'station_id', in: [1000, 1001] }], covariance: { axis: 'time' } });
    expect(c.operation_covariance_order).toBe(2);
    expect(c.operation_covariance).toEqual([NaN, NaN, NaN, NaN]);
  });

  it('an empty where is no error, but an empty selection still is; spilling nothing is an error', async () => {
    await expect(file.query({ dataset: 'temperature', selection: [{ start: 5, stop: 5 }, null], sum: [] }))
      .rejects.toMatchObject({ code: 'TET_QUERY_SELECTION' });
    await expect(file.query({ dataset: 'temperature', where: none, spill: join(work, 'x.f32') }, { spillAllow: [work] }))
      .rejects.toMatchObject({ code: 'TET_QUERY_EMPTY_SELECTION' });
    const r = await file.query({ dataset: 'temperature', where: none });
    expect(r.execution!.preview_length).toBe(0);
  });
});

// ---- where_plan counts by hand -----------------------------------------------------------------------

describe('where_plan: block counts worked out from the column layouts', () => {
  it('a ts range inside blocks 0-1: block 2 settled by its zone map, 0 and 1 decoded, payload read for them only', async () => {
    // rows [1000, 3000): block 0 (rows 0..2047) straddles lo, block 1 (2048..4095) straddles hi,
    // block 2 (4096..4199) lies past hi: its zone map proves `lt hi` false.
    const e = await exec({ dataset: 'temperature', where: [{ column: 'ts', range: [tsText(1000), tsText(3000)] }], count: [] });
    const p = e.where_plan!.time;
    expect(p).toMatchObject({ rows: T, selected: 2000, blocks: 3, blocks_zonemap_resolved: 1, blocks_index_pruned: 0, blocks_decoded: 2 });
    expect(p.payload_bytes_read).toBeGreaterThan(0);
    // the whole table range: every block's zone map says all true, nothing is read
    const all = await exec({ dataset: 'temperature', where: [{ column: 'ts', ge: tsText(0) }], count: [] });
    expect(all.where_plan!.time).toEqual({ rows: T, selected: T, blocks: 3, blocks_zonemap_resolved: 3, blocks_index_pruned: 0, blocks_decoded: 0, payload_bytes_read: 0 });
  });

  it('elevation_m >= 2500: block 0 (max 1999) settled by its zone map, block 1 decoded', async () => {
    const e = await exec({ dataset: 'temperature', where: [{ column: 'elevation_m', ge: 2500 }], count: [] });
    expect(e.where_plan!.station).toMatchObject({ rows: S, blocks: 2, blocks_zonemap_resolved: 1, blocks_index_pruned: 0, blocks_decoded: 1 });
    expect(e.where_plan!.station.selected).toBe(elevation.filter((v) => v >= 2500).length);
    // AND across two columns on one axis: one where_plan entry for the axis; both settle block 0
    const f = await exec({ dataset: 'temperature', where: [{ column: 'elevation_m', ge: 2500 }, { column: 'station_id', lt: 2000 }], count: [] });
    expect(f.where_plan!.station).toMatchObject({ selected: 0, blocks: 2, blocks_zonemap_resolved: 2, blocks_decoded: 0, payload_bytes_read: 0 });
    expect(f.operation_element_count).toBe(0);
  });
});

// ---- errors ------------------------------------------------------------------------------------------

describe('where: every error with its code', () => {
  const bad = (where: unknown, code: string, re?: RegExp, dataset = 'temperature') =>
    expect(file.query({ dataset, where, sum: [] })).rejects.toMatchObject({ code, ...(re ? { message: expect.stringMatching(re) } : {}) });

  it('axis resolution', async () => {
    await bad([{ column: 'qc', eq: true }], 'TET_QUERY_WHERE_AXIS', /"qc" is in 2 axis tables.*time.*station.*name the axis/);
    await bad([{ axis: 'lon', column: 'x', eq: 1 }], 'TET_QUERY_UNKNOWN_COLUMN', /"x"/, 'grid');
    await bad([{ axis: 'y', column: 'y', eq: 1 }], 'TET_QUERY_WHERE_AXIS', /axis "y" of dataset "bare" has no axis table and no coordinate labels/, 'bare');
    await bad([{ column: 'nope', eq: 1 }], 'TET_QUERY_UNKNOWN_COLUMN', /"nope".*axis "time" \(table "time": ts, qc\).*axis "station"/);
    await bad([{ axis: 'time', column: 'country', eq: 'DE' }], 'TET_QUERY_UNKNOWN_COLUMN', /that axis's table/);
    await bad([{ axis: 'depth', column: 'ts', eq: 1 }], 'TET_QUERY_UNKNOWN_DIMENSION');
    await bad([{ axis: 2, column: 'ts', eq: 1 }], 'TET_QUERY_AXIS_OUT_OF_RANGE');
    // the axis named resolves the ambiguity, by name, index or decimal string
    for (const axis of ['station', 1, '1']) {
      const e = await exec({ dataset: 'temperature', where: [{ axis, column: 'qc', eq: true }], count: [] });
      expect(e.operation_element_count).toBe(T * (S / 2));
    }
  });

  it('ops and literals against the column kind', async () => {
    await bad([{ column: 'station_id', prefix: '1' }], 'TET_QUERY_WHERE_OP', /prefix/);
    await bad([{ column: 'elevation_m', is_nan: true }], 'TET_QUERY_WHERE_OP', /is_nan/);
    await bad([{ column: 'lat', prefix: '1' }], 'TET_QUERY_WHERE_OP', undefined, 'grid');
    await bad([{ column: 'station_id', eq: 2.5 }], 'TET_QUERY_BAD_LITERAL', /\$\.where\[0\]\.eq/);
    await bad([{ column: 'station_id', eq: 2 ** 60 }], 'TET_QUERY_BAD_LITERAL', /decimal string/);
    await bad([{ column: 'station_id', in: [1, 'x'] }], 'TET_QUERY_BAD_LITERAL', /\$\.where\[0\]\.in\[1\]/);
    await bad([{ column: 'country', eq: 3 }], 'TET_QUERY_BAD_LITERAL');
    await bad([{ column: 'flag', eq: 1 }], 'TET_QUERY_BAD_LITERAL');
    await bad([{ column: 'score', eq: 'x' }], 'TET_QUERY_BAD_LITERAL');
    await bad([{ column: 'ts', eq: '2020-01-01T00:00:00' }], 'TET_QUERY_BAD_LITERAL', /offset/);
    await bad([{ column: 'ts', eq: '2020-01-01 00:00:00Z' }], 'TET_QUERY_BAD_LITERAL', /space/);
    await bad([{ column: 'ts', eq: '2020-01-01T00:00:00.0000001Z' }], 'TET_QUERY_BAD_LITERAL');
    await bad([{ column: 'ts', range: [null, '2020-01-01T00:00:60Z'] }], 'TET_QUERY_BAD_LITERAL', /range\[1\]/);
    await bad([{ column: 'lat', eq: 'x' }], 'TET_QUERY_BAD_LITERAL', undefined, 'grid');
    // a decimal string beyond 2^53 is a valid int literal (selects nothing here)
    const e = await exec({ dataset: 'temperature', where: [{ column: 'station_id', eq: '9007199254740993' }], count: [] });
    expect(e.operation_element_count).toBe(0);
  });
});

// ---- sharded ------------------------------------------------------------------------------------------

describe('where: --shard / merge', () => {
  it('queryPartial + mergePartials equals the unsharded response (streaming, tier C, empty)', async () => {
    const where: Pred[] = [{ column: 'country', eq: 'FR' }, { column: 'ts', lt: '2020-02-01T00:00:00Z' }];
    for (const doc of [
      { dataset: 'temperature', where, sum: ['time'] },
      { dataset: 'temperature', where, mean: [] },
      { dataset: 'temperature', where: [...where, { column: 'station_id', lt: 1100 }], median: ['station'] },
      { dataset: 'temperature', where: [{ column: 'country', eq: 'XX' }], max: [] },
      // index lists travel in the partial's plan section too (without a where)
      { dataset: 'temperature', selection: [{ indices: [3, 700, 701, 702, 4199] }, { start: 2, stop: 2000, step: 9 }], var: ['time'] },
    ]) {
      const whole = await file.query(doc);
      const n = 3;
      const merged = await runSharded(n, (i, round) => file.queryPartial(doc, { shard: [i, n], ...(round ? { round } : {}) }));
      const pick = (r: typeof whole) => {
        const e = r.execution! as unknown as Record<string, unknown>;
        return Object.fromEntries(Object.entries(e).filter(([k]) => k.startsWith('operation') || k === 'where_plan'));
      };
      expect(pick(merged), JSON.stringify(doc)).toEqual(pick(whole));
      expect(merged.read_plan!.logical_selection_shape).toEqual(whole.read_plan!.logical_selection_shape);
    }
  }, 60_000);

  it('an empty-where partial set must be complete and from one query', async () => {
    const doc = { dataset: 'temperature', where: [{ column: 'country', eq: 'XX' }], sum: [] };
    const a = await file.queryPartial(doc, { shard: [0, 2] });
    const b = await file.queryPartial(doc, { shard: [1, 2] });
    await expect(mergePartials([a])).rejects.toMatchObject({ code: 'TET_SHARD_MISSING' });
    await expect(mergePartials([a, a])).rejects.toMatchObject({ code: 'TET_SHARD_DUPLICATE' });
    const other = await file.queryPartial({ dataset: doc.dataset, where: doc.where, mean: [] }, { shard: [1, 2] });
    await expect(mergePartials([a, other])).rejects.toMatchObject({ code: 'TET_SHARD_MISMATCH' });
    expect((await mergePartials([b, a])).execution!.operation_sum).toBe(0);
  });
});

// ---- CLI views --------------------------------------------------------------------------------------

describe('where: tet query --format', () => {
  it('full / json carry where_plan; table and stats show it once, compactly', async () => {
    const r = await file.query({ dataset: 'temperature', where: [{ column: 'elevation_m', ge: 2500 }], count: [] });
    const json = JSON.parse(formatQueryResponse(r, 'json'));
    expect(json.execution.where_plan.station).toMatchObject({ rows: S, blocks: 2, blocks_zonemap_resolved: 1, blocks_decoded: 1 });
    expect(JSON.parse(formatQueryResponse(r, 'full')).read_plan.where_plan.station.blocks).toBe(2);
    const stats = JSON.parse(formatQueryResponse(r, 'stats'));
    expect(stats.execution.where_plan.station.selected).toBe(elevation.filter((v) => v >= 2500).length);
    expect(stats.read_plan.where_plan).toBeUndefined();
    const sel = elevation.filter((v) => v >= 2500).length;
    expect(formatQueryResponse(r, 'table')).toMatch(new RegExp(`station.*${sel} of ${S} selected; 2 blocks: 1 zone map, 0 index, 1 decoded`));
    const planned = await file.query({ dataset: 'temperature', where: [{ column: 'elevation_m', ge: 2500 }], count: [] }, { execute: false });
    expect(JSON.parse(formatQueryResponse(planned, 'plan')).read_plan.where_plan.station.selected).toBe(sel);
  });
});
