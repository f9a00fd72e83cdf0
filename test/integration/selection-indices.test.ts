// Index-list selections (`selection: [{"indices": [...]}, ...]`, plan wire v2) end to end: every
// op of lib/ops.generated.ts, scalar and partial, over multi-chunk files with clipped edge
// tiles (f64 zstd, f32, f16, i64, and an f32 with NaN/inf), index lists mixed with boxes and
// steps, through every strategy (streaming fold parallel and sequential, in-memory and
// temp-spill materialize, mmap spill export, capped preview / read()). Expected values are numpy
// fancy indexing (np.ix_) computed by /usr/bin/python3: floats within rel 1e-12 (plus an
// absolute slack of 1e-12 x the data scale for cancelling results), counts, indices, booleans,
// min/max and histogram counts exact. Also: validation errors (schema, semantics, planning,
// read()) with TET_QUERY_SELECTION naming the axis and the position.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, planQuery, TetQueryError, TetWriter, validateQuery, type TetFile } from '../../lib/index';
import { OP_CODE, PARTIAL_FIELD, SCALAR_FIELD } from '../../lib/ops.generated';
import { encodePlan } from '../../lib/plan/encode';
import { binding } from '../../lib/binding';

const work = mkdtempSync(join(tmpdir(), 'tet-sel-indices-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type AxisSel = null | { indices: number[] } | { start?: number; stop?: number; step?: number };
interface DsSpec { name: string; dtype: 'f64' | 'f32' | 'f16' | 'i64'; shape: number[]; chunk: number[]; codec?: 'raw' | 'zstd' }

const DATASETS: DsSpec[] = [
  { name: 'a64', dtype: 'f64', shape: [13, 11, 6], chunk: [4, 3, 4], codec: 'zstd' },  // edges 1, 2, 2
  { name: 'a32', dtype: 'f32', shape: [17, 9], chunk: [5, 4] },                          // edges 2, 1
  { name: 'h16', dtype: 'f16', shape: [14, 10], chunk: [4, 3], codec: 'zstd' },          // edges 2, 1
  { name: 'i64', dtype: 'i64', shape: [12, 7, 5], chunk: [5, 2, 3] },                     // edges 2, 1, 2
  { name: 'nf', dtype: 'f32', shape: [11, 8], chunk: [3, 3] },                            // NaN / inf
];

// Deterministic permutation (unique values: arg_min/arg_max have no ties).
function perm(n: number, seed: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

function values(d: DsSpec): number[] {
  const n = d.shape.reduce((a, b) => a * b, 1);
  const p = perm(n, n * 7 + d.name.length);
  switch (d.name) {
    case 'a64': return p.map((v) => v * 0.25 - 100.125);
    case 'a32': return p.map((v) => v * 0.5 - 37.75);
    case 'h16': return p.map((v) => v - 70 + 0.375);  // exact in f16
    case 'i64': return p.map((v) => v * 3 - 611);
    default: return p.map((v, i) => (i % 13 === 5 ? NaN : i % 17 === 3 ? (i % 2 ? Infinity : -Infinity) : v * 0.125 - 5));
  }
}

const uniq = (xs: number[], n: number) => [...new Set(xs.filter((i) => i < n))].sort((a, b) => a - b);

// Selections per rank: index lists (crossing chunk boundaries, in clipped edge tiles, single
// entries, a full cover) mixed with boxes, steps and defaults.
function selections(d: DsSpec): AxisSel[][] {
  const [s0, s1] = d.shape;
  if (d.shape.length === 3) {
    const s2 = d.shape[2];
    return [
      [{ indices: [0, 3, 4, 5, 8, s0 - 1] }, { start: 1, stop: 100, step: 3 }, { indices: [1, 2, s2 - 1] }],
      [null, { indices: uniq([2, 3, 4, 9, s1 - 1], s1) }, { start: 2 }],
      [{ start: 1, stop: s0, step: 4 }, { indices: [s1 - 2] }, { indices: Array.from({ length: s2 }, (_, i) => i) }],
    ];
  }
  return [
    [{ indices: uniq([0, 1, 2, 6, 7, 11, s0 - 2, s0 - 1], s0) }, { start: 1, stop: 100, step: 2 }],
    [{ start: 2, stop: s0 - 1 }, { indices: uniq([0, 3, 4, 5, s1 - 1], s1) }],
    [{ indices: uniq([1, 4, 9, 10, 13], s0) }, { indices: uniq([2, 3, 6, s1 - 1], s1) }],
  ];
}

const OPS = Object.keys(OP_CODE).filter((o) => o !== 'none');
const VALUE_OPS = ['sum', 'mean', 'min', 'max', 'count', 'var', 'std', 'product', 'norm_l1', 'norm_l2',
  'arg_min', 'arg_max', 'null_count', 'median', 'quantile', 'histogram'];
const NAN_OPS = ['count', 'all_finite', 'any_nan', 'any_inf', 'nan_count', 'inf_count', 'nan_mean', 'nan_std'];
const FLOAT_ALWAYS_FINITE_OPS = ['all_finite', 'any_nan', 'any_inf', 'nan_count', 'inf_count', 'nan_mean', 'nan_std'];

interface Case {
  id: string;
  ds: string;
  selection: AxisSel[];
  op: string;
  axes: number[] | null;  // null = scalar
  obs?: number;
  params: Record<string, unknown>;
  budget?: number;        // forces temp_spill_materialize for tier C
  foldParallel?: boolean; // false: sequential chunks
}

function axesVariants(ndim: number): (number[] | null)[] {
  return ndim === 3 ? [null, [0], [2], [0, 2], [1]] : [null, [0], [1]];
}

function buildCases(): Case[] {
  const cases: Case[] = [];
  for (const d of DATASETS) {
    const ops = d.name === 'nf' ? NAN_OPS : d.dtype === 'f64' || d.dtype === 'f32' ? [...VALUE_OPS, ...FLOAT_ALWAYS_FINITE_OPS] : VALUE_OPS;
    const sels = selections(d);
    sels.forEach((selection, si) => {
      for (const op of ops) {
        for (const axes of axesVariants(d.shape.length)) {
          const params: Record<string, unknown> = {};
          if (op === 'quantile') params.q = 0.3;
          if (op === 'histogram') params.bins = 7;
          if (op === 'null_count') params.fill = values(d)[5];  // a value that is present
          const base: Case = { id: `${d.name}/s${si}/${op}/${axes ? axes.join('.') : 'all'}`, ds: d.name, selection, op, axes, params };
          cases.push(base);
          if (op === 'median' && si === 0) cases.push({ ...base, id: base.id + '/spill', budget: 64 });
          if ((op === 'sum' || op === 'arg_max') && si === 1) cases.push({ ...base, id: base.id + '/seq', foldParallel: false });
        }
      }
      if (d.shape.length === 2 && d.name !== 'nf') {
        for (const op of ['covariance', 'correlation']) {
          for (const obs of [0, 1]) {
            const base: Case = { id: `${d.name}/s${si}/${op}/obs${obs}`, ds: d.name, selection, op, axes: null, obs, params: {} };
            cases.push(base);
            if (si === 0) cases.push({ ...base, id: base.id + '/spill', budget: 64 });
          }
        }
      }
      // caller range on a scalar histogram
      cases.push({ id: `${d.name}/s${si}/histogram-range`, ds: d.name, selection, op: 'histogram', axes: null,
        params: { bins: 5, min: -20.5, max: 30.25 } });
    });
  }
  return cases;
}

function queryOf(c: Case): Record<string, unknown> {
  const q: Record<string, unknown> = { dataset: c.ds, selection: c.selection };
  const axes = c.axes ?? [];
  if (c.op === 'covariance' || c.op === 'correlation') q[c.op] = { axis: c.obs };
  else if (c.op === 'quantile' || c.op === 'histogram' || c.op === 'null_count') q[c.op] = { ...c.params, axes };
  else q[c.op] = axes;
  const ex: Record<string, unknown> = {};
  if (c.budget !== undefined) ex.memory_budget_bytes = c.budget;
  if (c.foldParallel !== undefined) ex.fold_parallel = c.foldParallel;
  if (Object.keys(ex).length) q.execution = ex;
  return q;
}

// numpy reference: fancy indexing with np.ix_, then the op on (out_len, fiber) rows.
const MODEL = String.raw`
import sys, json, base64, math
import numpy as np
req = json.loads(sys.stdin.read())
data = {}
for name, d in req['data'].items():
    a = np.frombuffer(base64.b64decode(d['b64']), dtype='<f8').reshape(d['shape'])
    data[name] = (a.astype(np.int64) if d['dtype'] == 'i64' else a, d['dtype'])
def index(a, sel):
    ix = []
    for ax, s in enumerate(sel):
        n = a.shape[ax]
        if s is None: ix.append(np.arange(n))
        elif 'indices' in s: ix.append(np.array(s['indices'], dtype=np.int64))
        else: ix.append(np.arange(n)[slice(s.get('start'), s.get('stop'), s.get('step'))])
    return a[np.ix_(*ix)]
def rows(v, axes):
    if axes is None: return v.reshape(1, -1), []
    keep = [a for a in range(v.ndim) if a not in axes]
    m = np.transpose(v, keep + list(axes))
    shape = [v.shape[a] for a in keep]
    return m.reshape(int(np.prod(shape)) if shape else 1, -1), shape
out = {}
for c in req['cases']:
    a, dt = data[c['ds']]
    v = index(a, c['selection'])
    op = c['op']
    r = {'shape': list(v.shape)}
    if op in ('covariance', 'correlation'):
        x = v.astype(np.float64)
        obs = x if c['obs'] == 0 else x.T
        cen = obs - obs.mean(axis=0)
        cov = cen.T @ cen / obs.shape[0]
        if op == 'correlation':
            d = np.sqrt(np.diag(cov)); cov = cov / np.outer(d, d)
        r['values'] = [float(t) for t in cov.ravel()]
        r['order'] = int(cov.shape[0]); r['scale'] = float(np.max(np.abs(cov)))
        out[c['id']] = r
        continue
    rw, kept = rows(v, c['axes'])
    x = rw.astype(np.float64)
    r['kept'] = kept
    fin = x[np.isfinite(x)]
    r['scale'] = float(np.max(np.abs(fin))) if fin.size else 1.0
    if op == 'sum': vals = [float(sum(int(t) for t in row)) for row in rw] if dt == 'i64' else [math.fsum(row) for row in x]
    elif op == 'mean': vals = [float(sum(int(t) for t in row)) / x.shape[1] for row in rw] if dt == 'i64' else [math.fsum(row) / x.shape[1] for row in x]
    elif op == 'min': vals = rw.min(axis=1).tolist()
    elif op == 'max': vals = rw.max(axis=1).tolist()
    elif op == 'count': vals = [x.shape[1]] * x.shape[0]
    elif op == 'var': vals = x.var(axis=1).tolist(); r['scale'] = r['scale'] ** 2
    elif op == 'std': vals = x.std(axis=1).tolist()
    elif op == 'product': vals = np.prod(x, axis=1).tolist(); r['scale'] = 0.0
    elif op == 'norm_l1': vals = np.abs(x).sum(axis=1).tolist()
    elif op == 'norm_l2': vals = np.sqrt((x * x).sum(axis=1)).tolist()
    elif op == 'all_finite': vals = np.all(np.isfinite(x), axis=1).tolist()
    elif op == 'any_nan': vals = np.any(np.isnan(x), axis=1).tolist()
    elif op == 'any_inf': vals = np.any(np.isinf(x), axis=1).tolist()
    elif op == 'nan_count': vals = np.isnan(x).sum(axis=1).tolist()
    elif op == 'inf_count': vals = np.isinf(x).sum(axis=1).tolist()
    elif op == 'null_count': vals = (x == c['params']['fill']).sum(axis=1).tolist()
    elif op == 'arg_min': vals = np.argmin(rw, axis=1).tolist()
    elif op == 'arg_max': vals = np.argmax(rw, axis=1).tolist()
    elif op == 'nan_mean': vals = np.nanmean(x, axis=1).tolist()
    elif op == 'nan_std': vals = np.nanstd(x, axis=1).tolist()
    elif op == 'median': vals = np.quantile(x, 0.5, axis=1, method='linear').tolist()
    elif op == 'quantile': vals = np.quantile(x, c['params']['q'], axis=1, method='linear').tolist()
    elif op == 'histogram':
        bins = c['params']['bins']; vals = []; edges = None
        for row in x:
            lo, hi = (c['params']['min'], c['params']['max']) if 'min' in c['params'] else (float(row.min()), float(row.max()))
            cnt, _ = np.histogram(row, bins=bins, range=(lo, hi))
            vals.extend(int(t) for t in cnt); edges = np.linspace(lo, hi, bins + 1).tolist()
        r['edges'] = edges
    r['values'] = [None if isinstance(t, float) and math.isnan(t) else t for t in vals]
    r['nan'] = [isinstance(t, float) and math.isnan(t) for t in vals]
    out[c['id']] = r
print(json.dumps(out).replace('-Infinity', '-1e999').replace('Infinity', '1e999').replace('NaN', 'null'))
`;

const EXACT = new Set(['min', 'max', 'count', 'all_finite', 'any_nan', 'any_inf', 'nan_count', 'inf_count',
  'null_count', 'arg_min', 'arg_max', 'histogram']);

let file: TetFile;
let cases: Case[];
let model: Record<string, { shape: number[]; kept?: number[]; values: (number | boolean | null)[]; nan?: boolean[];
  scale: number; edges?: number[]; order?: number }>;

beforeAll(async () => {
  const path = join(work, 'idx.tet');
  const w = await TetWriter.create(path);
  for (const d of DATASETS) {
    const v = values(d);
    const data = d.dtype === 'f64' ? Float64Array.from(v) : d.dtype === 'i64' ? BigInt64Array.from(v.map(BigInt)) : Float32Array.from(v);
    w.addDataset({ name: d.name, dtype: d.dtype, shape: d.shape, chunkShape: d.chunk, codec: d.codec ?? 'raw', data });
  }
  await w.commit();
  file = await open(path);
  const data: Record<string, unknown> = {};
  for (const d of DATASETS) {
    const r = await file.read(d.name);
    const f = Float64Array.from(Array.from(r.data as ArrayLike<number | bigint>, Number));
    data[d.name] = { shape: d.shape, dtype: d.dtype, b64: Buffer.from(f.buffer).toString('base64') };
  }
  cases = buildCases();
  const py = spawnSync('/usr/bin/python3', ['-c', MODEL], { input: JSON.stringify({ data, cases }), maxBuffer: 1 << 28 });
  if (py.status !== 0) throw new Error(`numpy model failed: ${py.stderr.toString()}`);
  model = JSON.parse(py.stdout.toString());
}, 120_000);
afterAll(() => file?.close());

function flat(v: unknown): (number | boolean)[] {
  if (v === undefined) throw new Error('missing field');
  if (typeof v === 'number' || typeof v === 'boolean') return [v];
  if (typeof v === 'bigint') return [Number(v)];
  return Array.from(v as ArrayLike<number | bigint | boolean>, (t) => (typeof t === 'bigint' ? Number(t) : t));
}

function close(actual: number, expected: number, scale: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= 1e-12 * Math.abs(expected) + 1e-12 * scale;
}

function resultField(c: Case, ex: Record<string, unknown>): unknown {
  if (c.op === 'covariance') return ex.operation_covariance;
  if (c.op === 'correlation') return ex.operation_correlation;
  if (c.op === 'histogram' && !c.axes) return ex.operation_histogram_counts;
  const table = (c.axes ? PARTIAL_FIELD : SCALAR_FIELD) as Record<string, string>;
  return ex[table[c.op]];
}

describe('index-list selections equal numpy fancy indexing (np.ix_) for every op', () => {
  it('covers every op of ops.generated.ts, scalar and partial, and each strategy', () => {
    const covered = new Set(cases.map((c) => c.op));
    for (const op of OPS) expect(covered.has(op), op).toBe(true);
    expect(cases.some((c) => c.budget !== undefined)).toBe(true);
    expect(cases.length).toBeGreaterThan(800);
  });

  it('every case', async () => {
    const failures: string[] = [];
    const strategies = new Set<string>();
    let compared = 0;
    for (const c of cases) {
      const m = model[c.id];
      const r = await file.query(queryOf(c), { preview: 3 });
      const ex = r.execution as unknown as Record<string, unknown>;
      strategies.add(String(ex.memory_strategy));
      const got = flat(resultField(c, ex));
      const exp = m.values.map((v, i) => (m.nan?.[i] ? NaN : v)) as (number | boolean)[];
      if (got.length !== exp.length) { failures.push(`${c.id}: ${got.length} values, numpy ${exp.length}`); continue; }
      for (let i = 0; i < exp.length; i++) {
        const a = got[i], e = exp[i];
        compared++;
        const ok = typeof e === 'boolean' || EXACT.has(c.op) ? a === e || (Number.isNaN(a) && Number.isNaN(e as number))
          : close(a as number, e as number, m.scale);
        if (!ok) { failures.push(`${c.id}[${i}]: engine ${a}, numpy ${e}`); break; }
      }
      if (c.axes && c.op !== 'histogram') {
        if (JSON.stringify(ex.operation_reduced_shape) !== JSON.stringify(m.kept)) failures.push(`${c.id}: shape ${JSON.stringify(ex.operation_reduced_shape)} vs ${JSON.stringify(m.kept)}`);
      }
      if (c.op === 'histogram' && !c.axes) {
        const edges = ex.operation_histogram_edges as number[];
        if (!edges.every((e, i) => close(e, m.edges![i], Math.abs(m.edges![0]) + Math.abs(m.edges![m.edges!.length - 1])))) failures.push(`${c.id}: edges`);
      }
      if (c.budget !== undefined && ex.memory_strategy !== 'temp_spill_materialize') failures.push(`${c.id}: strategy ${ex.memory_strategy}`);
      if (c.foldParallel === false && ex.io_mode !== 'sequential_chunks') failures.push(`${c.id}: io_mode ${ex.io_mode}`);
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(compared).toBeGreaterThan(10_000);
    console.log(`index-list cases: ${cases.length} queries, ${compared} values compared with numpy`);
    expect([...strategies].sort()).toEqual(['in_memory_materialize', 'streaming_fold', 'temp_spill_materialize']);
  }, 300_000);
});

// numpy reference for whole selections: read(), the capped preview and the mmap spill export.
const SLICE = String.raw`
import sys, json, base64
import numpy as np
req = json.loads(sys.stdin.read())
out = {}
for c in req:
    a = np.frombuffer(base64.b64decode(c['b64']), dtype='<f8').reshape(c['shape'])
    ix = []
    for ax, s in enumerate(c['selection']):
        n = a.shape[ax]
        if s is None: ix.append(np.arange(n))
        elif 'indices' in s: ix.append(np.array(s['indices'], dtype=np.int64))
        else: ix.append(np.arange(n)[slice(s.get('start'), s.get('stop'), s.get('step'))])
    v = a[np.ix_(*ix)]
    out[c['id']] = {'shape': list(v.shape), 'values': [None if x != x else x for x in v.ravel().tolist()]}
print(json.dumps(out).replace('-Infinity', '-1e999').replace('Infinity', '1e999').replace('NaN', 'null'))
`;

describe('index-list selections: read(), preview and spill export', () => {
  it('read(), the query preview and the spill file hold the np.ix_ selection, row-major', async () => {
    const req: unknown[] = [];
    const want: { id: string; d: DsSpec; selection: AxisSel[] }[] = [];
    for (const d of DATASETS) {
      const whole = Float64Array.from(values(d).map((v) => (d.dtype === 'f32' || d.dtype === 'f16' ? Math.fround(v) : v)));
      const b64 = Buffer.from(whole.buffer).toString('base64');
      selections(d).forEach((selection, si) => {
        const id = `${d.name}/${si}`;
        req.push({ id, shape: d.shape, b64, selection });
        want.push({ id, d, selection });
      });
    }
    const py = spawnSync('/usr/bin/python3', ['-c', SLICE], { input: JSON.stringify(req), maxBuffer: 1 << 28 });
    expect(py.status, py.stderr.toString()).toBe(0);
    const exp = JSON.parse(py.stdout.toString()) as Record<string, { shape: number[]; values: (number | null)[] }>;
    for (const { id, d, selection } of want) {
      const e = exp[id];
      const expVals = e.values.map((v) => (v === null ? NaN : v));
      const r = await file.read(d.name, selection);
      expect(r.shape, id).toEqual(e.shape);
      expect(Array.from(r.data as ArrayLike<number | bigint>, Number), id).toEqual(expVals);
      const n = expVals.length;
      const q = await file.query({ dataset: d.name, selection }, { preview: n });
      const pv = (q.execution as unknown as Record<string, unknown>)[`${d.dtype}_preview`] as ArrayLike<number | bigint>;
      expect(Array.from(pv, Number), id).toEqual(expVals);
      const spill = join(work, `${d.name}-${id.replace('/', '_')}.bin`);
      const s = await file.query({ dataset: d.name, selection, spill }, { spillAllow: [work], preview: 2 });
      expect(s.execution?.memory_strategy, id).toBe('mmap_spill');
      const bytes = readFileSync(spill);
      const got = d.dtype === 'f64' ? new Float64Array(bytes.buffer, bytes.byteOffset, n)
        : d.dtype === 'i64' ? new BigInt64Array(bytes.buffer, bytes.byteOffset, n)
          : d.dtype === 'f32' ? new Float32Array(bytes.buffer, bytes.byteOffset, n) : null;
      if (got) expect(Array.from(got as ArrayLike<number | bigint>, Number), id).toEqual(expVals);
      else expect(bytes.length, id).toBe(2 * n);  // f16 stays 2-byte halfs
    }
  });

  it('read_plan lists the touched chunks of an index-list axis', () => {
    const r = planQuery(file, { dataset: 'a32', selection: [{ indices: [0, 1, 6, 16] }, { start: 1, stop: 3 }], sum: [] });
    const rp = r.read_plan!;
    expect(rp.chunk_touch_policy).toBe('index_list');
    expect(rp.selection[0]).toEqual({ start: 0, stop: 17, step: 1, count: 4, index_list: true });
    expect(rp.logical_selection_shape).toEqual([4, 2]);
    expect(rp.chunks_per_axis).toEqual([3, 1]);  // chunks 0 (0, 1), 1 (6), 3 (16)
    expect(rp.chunks.map((c) => c.selected_elements)).toEqual([4, 2, 2]);
  });

  it('the native core decodes the TS encoder\'s SHARD / DEVICE sections and index lists', async () => {
    const ds = file.dataset('a32');
    const plan = (extra: object) => encodePlan({ datasetId: ds.id, start: [0, 0], step: [1, 1], count: [3, 2],
      indices: [[0, 5, 16], [2, 8]], op: 'sum', reduceAxes: [0, 1], strategy: 'streaming_fold',
      ioMode: 'parallel_chunks', previewMax: 6, ...extra });
    const b = binding();
    const ok = await b.execute(file.native, plan({ shard: { begin: 1, end: 3, of: 4 }, device: { kind: 'gpu', ordinal: 1 } }), null);
    const whole = Float32Array.from(values(DATASETS[1]));
    const want = [0, 5, 16].flatMap((i) => [2, 8].map((j) => whole[i * 9 + j]));
    expect(Array.from(ok.preview as Float32Array)).toEqual(want);
    await expect(b.execute(file.native, plan({ shard: { begin: 3, end: 3, of: 4 } }), null))
      .rejects.toMatchObject({ code: 'TET_PLAN_INVALID' });
    await expect(b.execute(file.native, plan({ indices: [[0, 5, 17], null] }), null))
      .rejects.toMatchObject({ code: 'TET_PLAN_INVALID', message: expect.stringMatching(/index 17 at position 2/) });
    await expect(b.execute(file.native, plan({ indices: [[5, 5, 6], null] }), null))
      .rejects.toMatchObject({ code: 'TET_PLAN_INVALID', message: expect.stringMatching(/strictly ascending/) });
  });

  it('a box-only plan encodes a box SELECT section (v2 header)', () => {
    const b = encodePlan({ datasetId: 0, start: [0], step: [1], count: [3], op: 'sum', reduceAxes: [0],
      strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax: 0 });
    const v = new DataView(b.buffer);
    expect(v.getUint32(0, true)).toBe(0x4e4c5054);
    expect(v.getUint32(4, true)).toBe(2);
    expect(v.getUint32(16, true)).toBe(1);  // SELECT
    expect(v.getUint32(24, true)).toBe(0);  // box
  });
});

describe('index-list validation errors', () => {
  const bad = (selection: unknown, re: RegExp) => {
    let err: unknown;
    try {
      validateQuery({ dataset: 'a32', sum: [], selection });
    } catch (e) {
      err = e;
    }
    expect(err, JSON.stringify(selection)).toBeInstanceOf(TetQueryError);
    expect((err as TetQueryError).code).toBe('TET_QUERY_SELECTION');
    expect((err as Error).message).toMatch(re);
  };
  it('schema and semantic checks name the axis and the position', () => {
    bad([null, { indices: [] }], /\$\.selection\[1\]\.indices.*axis 1/);
    bad([{ indices: [1, 2, 'x'] }, null], /\$\.selection\[0\]\.indices\[2\].*integer/);
    bad([{ indices: [1, 2.5] }, null], /\$\.selection\[0\]\.indices\[1\]/);
    bad([{ indices: [-1] }, null], /\$\.selection\[0\]\.indices\[0\]/);
    bad([{ indices: [3, 3] }, null], /\$\.selection\[0\]\.indices\[1\]: expected indices sorted strictly ascending \(unique\) on axis 0, found 3 after 3/);
    bad([null, { indices: [0, 5, 2] }], /\$\.selection\[1\]\.indices\[2\].*axis 1.*found 2 after 5/);
    bad([{ indices: [1], start: 0 }, null], /either "indices" or .*"start"/);
    bad([{ indices: [1], start_label: 'a' }, null], /"start_label"/);
    bad([{ indices: 3 }, null], /\$\.selection\[0\]\.indices/);
  });
  it('more than 2^24 entries is refused', () => {
    const big = new Array((1 << 24) + 1);
    for (let i = 0; i < big.length; i++) big[i] = i;
    bad([{ indices: big }, null], /16777216|2\^24/);
  });
  it('planning checks each index against the axis extent (query, plan and read())', async () => {
    const q = { dataset: 'a32', sum: [], selection: [{ indices: [0, 16, 17] }, null] };
    expect(() => planQuery(file, q)).toThrow(/\$\.selection\[0\]\.indices\[2\]: expected an index in \[0, 17\) \(axis 0 has length 17\), found 17/);
    await expect(file.query(q)).rejects.toMatchObject({ code: 'TET_QUERY_SELECTION' });
    await expect(file.read('a32', [null, { indices: [9] }])).rejects.toMatchObject({ code: 'TET_QUERY_SELECTION', message: expect.stringMatching(/selection\[1\]\.indices\[0\]/) });
    await expect(file.read('a32', [null, { indices: [2, 1] }])).rejects.toMatchObject({ code: 'TET_QUERY_SELECTION' });
    await expect(file.read('a32', [{ indices: [] }, null])).rejects.toMatchObject({ code: 'TET_QUERY_SELECTION' });
    expect((await file.read('a32', [{ indices: [16] }, { indices: [0, 8] }])).shape).toEqual([1, 2]);
  });
  it('labels still work next to an index list', () => {
    expect(() => planQuery(file, { dataset: 'a32', sum: [], selection: [{ indices: [1] }, { start_label: 'x' }] }))
      .toThrow(/start_label/);
  });
});
