// Part 1: the example queries of query_engine.md (the JSON examples and their TOML twins from "TOML
// examples"), adapted to the conformance fixtures that have the named axes (meta_weather.tet:
// temperature f32 [12, 6, 8] = time x lat x lon with labels; meta_table.tet: table f64 [4, 5]
// for covariance / correlation). Each example runs through the built CLI as a .json file, a
// .toml file and TOML on stdin: the results must be identical, and they must match numpy on the
// arrays read by the independent model (conformance/runner/tet.py).
// query-parse.test.ts covers the parse-level equivalence of the same pairs; this is execution.
// Part 2: the conformance cases for partial axes (incl. clipped edge tiles), strided selections,
// coordinate labels and dimension names, run through the SDK's file.query() against cases.json.
import { ROOT, SHARED } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetError, type TetFile } from '../../lib/index';

const BIN = join(ROOT, 'bin/tet.js');
const RUNNER = join(SHARED, 'conformance/runner');
const FIX = join(SHARED, 'conformance/fixtures');
const WEATHER = join(FIX, 'meta_weather.tet');
const TABLE = join(FIX, 'meta_table.tet');
const work = mkdtempSync(join(tmpdir(), 'tet-query-examples-'));
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache') };
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Example { id: string; file: string; json: object; toml: string }

// `spill` paths are filled in per form (each form writes its own file).
const EXAMPLES: Example[] = [
  { id: 'mean_scalar', file: WEATHER, json: { dataset: 'temperature', mean: [] }, toml: 'dataset = "temperature"\nmean = []\n' },
  { id: 'mean_axis0', file: WEATHER, json: { dataset: 'temperature', mean: 0 }, toml: 'dataset = "temperature"\nmean = 0\n' },
  { id: 'sum_axes01', file: WEATHER, json: { dataset: 'temperature', sum: [0, 1] }, toml: 'dataset = "temperature"\nsum = [0, 1]\n' },
  { id: 'quantile_axis0', file: WEATHER, json: { dataset: 'temperature', quantile: { q: 0.95, axis: 0 } },
    toml: 'dataset = "temperature"\n[quantile]\nq = 0.95\naxis = 0\n' },
  { id: 'quantile_scalar', file: WEATHER, json: { dataset: 'temperature', quantile: { q: 0.95 } },
    toml: 'dataset = "temperature"\nquantile = { q = 0.95 }\n' },
  { id: 'histogram_axis0', file: WEATHER, json: { dataset: 'temperature', histogram: { axis: 0, bins: 10 } },
    toml: 'dataset = "temperature"\n[histogram]\naxis = 0\nbins = 10\n' },
  { id: 'histogram_range', file: WEATHER, json: { dataset: 'temperature', histogram: { bins: 10, min: 270, max: 300 } },
    toml: 'dataset = "temperature"\nhistogram = { bins = 10, min = 270, max = 300 }\n' },
  { id: 'mean_axis0_budget40', file: WEATHER, json: { dataset: 'temperature', mean: 0, execution: { memory_budget_percent: 40 } },
    toml: 'dataset = "temperature"\nmean = 0\n[execution]\nmemory_budget_percent = 40\n' },
  { id: 'sum_sequential', file: WEATHER, json: { dataset: 'temperature', sum: [], execution: { fold_parallel: false } },
    toml: 'dataset = "temperature"\nsum = []\n[execution]\nfold_parallel = false\n' },
  { id: 'mean_strided', file: WEATHER,
    json: { dataset: 'temperature', mean: [], selection: [{ start: 0, stop: 100, step: 2 }, {}, { start: 1, stop: 8, step: 3 }] },
    toml: 'dataset = "temperature"\nmean = []\n[[selection]]\nstart = 0\nstop = 100\nstep = 2\n[[selection]]\n[[selection]]\nstart = 1\nstop = 8\nstep = 3\n' },
  { id: 'mean_time_labels', file: WEATHER,
    json: { dataset: 'temperature', mean: 'time', selection: [{ start_label: '2024-01-02', stop_label: '2024-01-09' }, {}, { start_label: 'lon045E', stop_label: 'lon270E', step: 2 }] },
    toml: 'dataset = "temperature"\nmean = "time"\n[[selection]]\nstart_label = "2024-01-02"\nstop_label = "2024-01-09"\n[[selection]]\n[[selection]]\nstart_label = "lon045E"\nstop_label = "lon270E"\nstep = 2\n' },
  { id: 'max_named_axes', file: WEATHER, json: { dataset: 'temperature', max: ['lat', 'lon'] },
    toml: 'dataset = "temperature"\nmax = ["lat", "lon"]\n' },
  { id: 'covariance', file: TABLE, json: { dataset: 'table', covariance: { axis: 0 } }, toml: 'dataset = "table"\n[covariance]\naxis = 0\n' },
  { id: 'correlation', file: TABLE, json: { dataset: 'table', correlation: 0 }, toml: 'dataset = "table"\ncorrelation = 0\n' },
  { id: 'spill', file: WEATHER, json: { dataset: 'temperature', spill: 'SPILL' }, toml: 'dataset = "temperature"\nspill = "SPILL"\n' },
];

// numpy expectations on the arrays of the independent model
const EXPECT = String.raw`
import sys, json
sys.path.insert(0, sys.argv[1])
import numpy as np
import tet
w = tet.read(sys.argv[2])['temperature'].astype(np.float64)
t = tet.read(sys.argv[3])['table'].astype(np.float64)
def hist_cells(a):
    out = []
    for col in a.reshape(a.shape[0], -1).T:
        f = col[np.isfinite(col)]
        out.extend(np.histogram(f, bins=10, range=(f.min(), f.max()))[0].tolist())
    return out
res = {
  'mean_scalar': {'operation_mean': w.mean()},
  'mean_axis0': {'operation_reduced_mean': w.mean(axis=0).ravel().tolist(), 'operation_reduced_shape': [6, 8]},
  'sum_axes01': {'operation_reduced_sum': w.sum(axis=(0, 1)).tolist(), 'operation_reduced_shape': [8]},
  'quantile_axis0': {'operation_reduced_quantile': np.quantile(w, 0.95, axis=0).ravel().tolist(), 'operation_reduced_shape': [6, 8]},
  'quantile_scalar': {'operation_quantile': float(np.quantile(w, 0.95)), 'operation_quantile_q': 0.95},
  'histogram_axis0': {'operation_reduced_histogram_counts': hist_cells(w), 'operation_reduced_shape': [6, 8]},
  'histogram_range': {'operation_histogram_counts': np.histogram(w, bins=10, range=(270, 300))[0].tolist(),
                      'operation_histogram_edges': np.linspace(270, 300, 11).tolist()},
  'mean_axis0_budget40': {'operation_reduced_mean': w.mean(axis=0).ravel().tolist(), 'operation_reduced_shape': [6, 8]},
  'sum_sequential': {'operation_sum': w.sum()},
  'mean_strided': {'operation_mean': w[0:100:2, :, 1:8:3].mean()},
  'mean_time_labels': {'operation_reduced_mean': w[1:8, :, 1:6:2].mean(axis=0).ravel().tolist(), 'operation_reduced_shape': [6, 3]},
  'max_named_axes': {'operation_reduced_max': w.max(axis=(1, 2)).tolist(), 'operation_reduced_shape': [12]},
  'covariance': {'operation_covariance': np.cov(t, rowvar=False, ddof=0).ravel().tolist(), 'operation_covariance_order': 5},
  'correlation': {'operation_correlation': np.corrcoef(t, rowvar=False).ravel().tolist(), 'operation_correlation_order': 5},
  'spill': {'spill_bytes': w.size * 4},
}
print(json.dumps(res))
`;

let expected: Record<string, Record<string, unknown>> = {};
let weatherBytes: Buffer;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build:ts` first');
  expected = JSON.parse(execFileSync('python3', ['-c', EXPECT, RUNNER, WEATHER, TABLE], { encoding: 'utf8' }));
  const b64 = execFileSync('python3', ['-c',
    `import sys, base64; sys.path.insert(0, ${JSON.stringify(RUNNER)}); import tet; print(base64.b64encode(tet.read(${JSON.stringify(WEATHER)})['temperature'].astype('<f4').tobytes()).decode())`,
  ], { encoding: 'utf8' });
  weatherBytes = Buffer.from(b64.trim(), 'base64');
});

function tet(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, env, encoding: 'utf8', timeout: 30_000 });
  return { rc: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

// Fields that depend on the moment (timing, free RAM) and not on the query.
// read_by_pread: a dataset's first scan of 16 units or more measures its way of reading as it runs
// (it flipped under load in a CI run).
const VOLATILE = ['seconds', 'host_available_ram_bytes', 'memory_budget_bytes', 'read_by_pread'];
function stable(resp: Record<string, unknown>): Record<string, unknown> {
  const ex = { ...(resp.execution as Record<string, unknown>) };
  for (const k of VOLATILE) delete ex[k];
  for (const k of ['spill_path', 'spill_f32_path']) if (typeof ex[k] === 'string') ex[k] = '<spill>';
  const query = { ...(resp.query as Record<string, unknown>) };
  if (typeof query.spill === 'string') query.spill = '<spill>';
  return { status: resp.status, query, catalog: resp.catalog, read_plan: resp.read_plan, execution: ex };
}

function close(a: unknown, e: unknown, rtol: number): boolean {
  if (Array.isArray(e)) return Array.isArray(a) && a.length === e.length && e.every((x, i) => close(a[i], x, rtol));
  if (typeof e !== 'number' || typeof a !== 'number') return a === e;
  return Math.abs(a - e) <= 1e-12 + rtol * Math.max(Math.abs(a), Math.abs(e));
}

describe('query_engine.md examples: JSON and TOML give identical results through the CLI', () => {
  it.each(EXAMPLES.map((x) => [x.id, x] as const))('%s', (id, x) => {
    const dir = join(work, id);
    const forms: { name: string; args: string[]; input?: string }[] = [];
    const spill = (form: string) => join(dir, `${form}.bin`);
    const sub = (s: string, form: string) => s.replaceAll('SPILL', spill(form));
    execFileSync('mkdir', ['-p', dir]);
    const jsonPath = join(dir, 'q.json');
    const tomlPath = join(dir, 'q.toml');
    writeFileSync(jsonPath, sub(JSON.stringify(x.json, null, 2), 'json'));
    writeFileSync(tomlPath, sub(x.toml, 'toml'));
    const common = ['-t', x.file, '-x', '--format', 'json', '--preview', '5', '--spill-allow', dir, '--no-history'];
    forms.push({ name: 'json', args: ['query', jsonPath, ...common] });
    forms.push({ name: 'toml', args: ['query', tomlPath, ...common] });
    forms.push({ name: 'stdin', args: ['query', ...common], input: sub(x.toml, 'stdin') });

    const results = forms.map((f) => {
      const r = tet(f.args, f.input);
      expect([f.name, r.rc, r.signal, r.err]).toEqual([f.name, 0, null, '']);
      return JSON.parse(r.out) as Record<string, unknown>;
    });
    const [json, ...others] = results.map(stable);
    for (const o of others) expect(o).toEqual(json);
    expect(json.status).toBe('executed');

    // and the shared result is numpy's
    const ex = json.execution as Record<string, unknown>;
    const want = expected[id];
    expect(Object.keys(want).length).toBeGreaterThan(0);
    for (const [k, v] of Object.entries(want)) {
      expect(close(ex[k], v, 1e-12), `${id}.${k}: ${JSON.stringify(ex[k])} vs numpy ${JSON.stringify(v)}`).toBe(true);
    }
    if (id === 'spill') {
      expect(ex.memory_strategy).toBe('mmap_spill');
      for (const form of ['json', 'toml', 'stdin']) expect(readFileSync(spill(form)).equals(weatherBytes), form).toBe(true);
    }
    if (id === 'mean_axis0_budget40') expect(ex.memory_budget_source).toBe('query_percent');
    if (id === 'sum_sequential') expect(ex.fold_parallel).toBe(false);
  }, 60_000);
});

interface Case {
  id: string; file: string; query: Record<string, unknown>; expected: unknown; tags: string[];
  compare?: Record<string, { mode: string; rtol?: number; atol?: number; repr?: string | null }>;
}
const CASES = JSON.parse(readFileSync(join(SHARED, 'conformance/cases.json'), 'utf8')) as Case[];
const strided = (c: Case) => ((c.query.selection as ({ step?: number } | null)[] | undefined) ?? []).some((s) => s !== null && (s.step ?? 1) !== 1);
const FEATURES = ['partial', 'label_slice', 'named_axis'];
const picked = CASES.filter((c) => !c.tags.includes('big') && !c.tags.includes('ambiguous')
  && (c.tags.some((t) => FEATURES.includes(t)) || (strided(c) && typeof c.expected === 'object')));

function matches(a: unknown, e: unknown, cmp: { mode: string; rtol?: number; atol?: number; repr?: string | null }): boolean {
  if (Array.isArray(e)) {
    const arr = a !== null && typeof a === 'object' && 'length' in (a as object) ? Array.from(a as ArrayLike<unknown>) : null;
    return arr !== null && arr.length === e.length && e.every((x, i) => matches(arr[i], x, cmp));
  }
  if (typeof e === 'boolean') return a === e;
  if (typeof e !== 'number') return false;
  if (typeof a === 'bigint') return Number.isInteger(e) && Number(a) === e;
  if (typeof a !== 'number') return false;
  if (Number.isNaN(e)) return Number.isNaN(a);
  if (cmp.mode === 'close') return Math.abs(a - e) <= (cmp.atol ?? 0) + (cmp.rtol ?? 0) * Math.abs(e);
  if (cmp.repr === 'f32') return Math.fround(a) === Math.fround(e);
  return a === e;
}

describe('conformance: partial axes, clipped edges, strided selections, labels and names through file.query()', () => {
  const files = new Map<string, TetFile>();
  afterAll(() => files.forEach((f) => f.close()));

  it('cases.json covers each feature (and the edge-tile fixture with partial axes)', () => {
    const has = (pred: (c: Case) => boolean) => picked.filter(pred).length;
    expect(has((c) => c.tags.includes('partial'))).toBeGreaterThanOrEqual(20);
    expect(has((c) => c.tags.includes('partial') && c.file.includes('f32_r2_edges'))).toBeGreaterThanOrEqual(3);
    expect(has((c) => c.tags.includes('partial') && strided(c))).toBeGreaterThanOrEqual(5);
    expect(has((c) => c.tags.includes('label_slice'))).toBeGreaterThanOrEqual(5);
    expect(has((c) => c.tags.includes('named_axis'))).toBeGreaterThanOrEqual(5);
    expect(has(strided)).toBeGreaterThanOrEqual(20);
  });

  it.each(picked.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    let file = files.get(c.file);
    if (!file) {
      file = await open(join(join(SHARED, 'conformance'), c.file));
      files.set(c.file, file);
    }
    if (c.expected === 'error') {
      const err = await file.query(c.query as never).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TetError);
      expect((err as TetError).code).toMatch(/^TET_(QUERY|PLAN)_/);
      return;
    }
    const r = await file.query(c.query as never);
    const ex = r.execution as unknown as Record<string, unknown>;
    expect(ex).toBeDefined();
    for (const [k, v] of Object.entries(c.expected as Record<string, unknown>)) {
      const cmp = c.compare?.[k] ?? { mode: 'exact' };
      if (!matches(ex[k], v, cmp)) {
        const got = ex[k] !== null && typeof ex[k] === 'object' ? Array.from(ex[k] as ArrayLike<unknown>) : ex[k];
        throw new Error(`${c.id} ${JSON.stringify(c.query)}: ${k} = ${String(got).slice(0, 300)}, expected ${JSON.stringify(v).slice(0, 300)} (${JSON.stringify(cmp)})`);
      }
    }
  });
});
