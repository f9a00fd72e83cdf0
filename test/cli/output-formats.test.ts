// `tet query --format full|json|stats|plan|quiet|table` (and -q) through the built CLI, on a scalar
// and a partial query over one_to_six_f32.tet ([[1,2,3],[4,5,6]], tiles [2,2] -> grid [1,2]),
// with hand-computed content, plus a non-finite result (nan_inf_f32.tet, expectation from numpy
// on the independent model's array).
import { ROOT, SHARED } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = join(ROOT, 'bin/tet.js');
const FIX = join(SHARED, 'conformance/fixtures');
const SIX = join(FIX, 'one_to_six_f32.tet');
const work = mkdtempSync(join(tmpdir(), 'tet-formats-'));
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache') };
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build:ts` first');
});

function tet(query: object, file: string, ...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, 'query', JSON.stringify(query), '-t', file, '--no-history', ...args],
    { env, encoding: 'utf8', timeout: 30_000 });
  expect([r.status, r.signal, r.stderr]).toEqual([0, null, '']);
  expect(r.stdout.endsWith('\n')).toBe(true);
  return r.stdout;
}

const SCALAR = { dataset: 'a', mean: [] };                                        // (1+..+6)/6
const PARTIAL = { dataset: 'a', sum: 0, selection: [{}, { step: 2 }] };            // columns 0,2: [1+4, 3+6]

// rows of a cli-table3 table: `│ key │ value │` -> [key, value]
function tableRows(text: string): [string, string][] {
  return text.split('\n').filter((l) => l.startsWith('│')).map((l) => {
    const cells = l.split('│').slice(1, -1).map((c) => c.trim());
    return [cells[0], cells[1]] as [string, string];
  });
}

describe('full and json', () => {
  it('full is pretty JSON of the whole response; json is the same object on one line', () => {
    for (const q of [SCALAR, PARTIAL]) {
      const full = tet(q, SIX, '-x', '--format', 'full');
      const json = tet(q, SIX, '-x', '--format', 'json');
      expect(full.split('\n').length).toBeGreaterThan(20);
      expect(full).toMatch(/^\{\n  "status": "executed",\n  "accepted": true,\n  "dataset": "a",\n/);
      expect(json.trimEnd()).not.toContain('\n');
      const a = JSON.parse(full);
      const b = JSON.parse(json);
      for (const r of [a, b]) for (const k of ['seconds', 'host_available_ram_bytes', 'memory_budget_bytes']) delete r.execution[k];
      expect(b).toEqual(a);
      expect(Object.keys(a)).toEqual(['status', 'accepted', 'dataset', 'tet_file', 'selection_axes', 'query', 'catalog', 'read_plan', 'execution']);
      expect(a.query).toEqual(q);
      expect(a.catalog).toMatchObject({ dataset: 'a', dtype: 'f32', shape: [2, 3], chunk_shape: [2, 2], grid: [1, 2], chunk_count: 2 });
      // default preview 64 for full/json: the selection's first values
      expect(a.execution.f32_preview).toEqual(q === SCALAR ? [1, 2, 3, 4, 5, 6] : [1, 3, 4, 6]);
      // the chunk list is in the full response
      expect(a.read_plan.chunks.map((c: { coords: number[] }) => c.coords)).toEqual([[0, 0], [0, 1]]);
    }
    const s = JSON.parse(tet(SCALAR, SIX, '-x', '--format', 'json')).execution;
    expect([s.operation, s.operation_mean, s.memory_strategy]).toEqual(['mean', 3.5, 'streaming_fold']);
    const p = JSON.parse(tet(PARTIAL, SIX, '-x', '--format', 'json'));
    expect(p.execution).toMatchObject({ operation: 'sum', operation_reduced_sum: [5, 9], operation_reduced_shape: [2], operation_reduced_axes: [0] });
    expect(p.read_plan).toMatchObject({ logical_selection_shape: [2, 2], logical_element_count: 4, logical_selection_bytes: 16 });
    expect(p.read_plan.selection).toEqual([{ start: 0, stop: 2, step: 1, count: 2 }, { start: 0, stop: 3, step: 2, count: 2 }]);
  });
});

describe('stats and plan', () => {
  it('stats: execution without previews, read_plan without the chunk list', () => {
    const s = JSON.parse(tet(SCALAR, SIX, '-x', '--format', 'stats'));
    expect(Object.keys(s)).toEqual(['status', 'accepted', 'dataset', 'tet_file', 'selection_axes', 'query', 'catalog', 'read_plan', 'execution']);
    expect(s.execution).toMatchObject({ operation: 'mean', operation_mean: 3.5, memory_strategy: 'streaming_fold', io_regime: 'in_core' });
    expect(Object.keys(s.execution).filter((k) => k.endsWith('_preview'))).toEqual([]);
    expect(s.read_plan.chunks).toBeUndefined();
    expect(s.read_plan.chunk_count).toBe(2);
    expect(typeof s.execution.seconds).toBe('number');
    expect(typeof s.execution.fold_parallel).toBe('boolean');
    const p = JSON.parse(tet(PARTIAL, SIX, '-x', '--format', 'stats', '--preview', '4'));
    expect(p.execution).toMatchObject({ operation_reduced_sum: [5, 9], operation_reduced_shape: [2] });
    expect(Object.keys(p.execution).filter((k) => k.endsWith('_preview'))).toEqual([]);
  });

  it('plan: the read plan summary and no execution, also with -x', () => {
    for (const q of [SCALAR, PARTIAL]) {
      for (const x of [[], ['-x']]) {
        const text = tet(q, SIX, ...x, '--format', 'plan');
        // issue 14: pretty-printed
        expect(text).toMatch(/^\{\n  "status": /);
        const p = JSON.parse(text);
        expect(Object.keys(p)).toEqual(['status', 'accepted', 'dataset', 'tet_file', 'selection_axes', 'query', 'catalog', 'read_plan']);
        expect(p.status).toBe(x.length ? 'executed' : 'planned');
        expect(p.read_plan.chunks).toBeUndefined();
        expect(p.read_plan).toMatchObject({ dataset: 'a', dtype: 'f32', chunk_count: 2, chunks_per_axis: [1, 2],
          logical_element_count: q === SCALAR ? 6 : 4 });
      }
    }
  });
});

describe('quiet and table', () => {
  it('quiet (and -q) is one line with the operation result', () => {
    // issue 14: the reference's keys (dataset=a status=ok elements=N; axes / values / reduced_shape)
    expect(tet(SCALAR, SIX, '-x', '--format', 'quiet')).toBe('dataset=a status=ok elements=6 op=mean mean=3.5\n');
    expect(tet(SCALAR, SIX, '-x', '-q')).toBe('dataset=a status=ok elements=6 op=mean mean=3.5\n');
    expect(tet(PARTIAL, SIX, '-x', '-q')).toBe('dataset=a status=ok elements=4 op=sum axes=[0] values=[5,9] reduced_shape=2\n');
    // without -x: the plan's size, logical_shape in the reference's 2×3 form
    expect(tet(PARTIAL, SIX, '-q')).toBe('dataset=a status=ok logical_shape=2×2 elements=4 chunks=2\n');
  });

  it('table: query, read plan, execution and result tables with the values', () => {
    const s = tableRows(tet(SCALAR, SIX, '-x', '--format', 'table'));
    const get = (rows: [string, string][], k: string) => rows.filter((r) => r[0] === k).map((r) => r[1]);
    expect(get(s, 'status')).toEqual(['executed']);
    expect(get(s, 'dataset')).toEqual(['a']);
    expect(get(s, 'dtype')).toEqual(['f32']);
    expect(get(s, 'shape')).toEqual(['[2,3]']);
    expect(get(s, 'chunk_shape')).toEqual(['[2,2]']);
    expect(get(s, 'selection')).toEqual(['0:2:1, 0:3:1']);
    expect(get(s, 'logical_element_count')).toEqual(['6']);
    expect(get(s, 'memory_strategy')).toEqual(['streaming_fold']);
    expect(get(s, 'chunks_read')).toEqual(['2']);
    expect(get(s, 'stored_bytes_read')).toEqual(['24']);
    expect(get(s, 'operation_mean')).toEqual(['3.5']);
    expect(s.map((r) => r[0])).toEqual(expect.arrayContaining(['query', 'read_plan', 'execution', 'result']));

    const p = tableRows(tet(PARTIAL, SIX, '-x', '--format', 'table'));
    expect(get(p, 'selection')).toEqual(['0:2:1, 0:3:2']);
    expect(get(p, 'logical_selection_shape')).toEqual(['[2,2]']);
    expect(get(p, 'operation_reduced_sum')).toEqual(['[5,9]']);
    expect(get(p, 'operation_reduced_shape')).toEqual(['[2]']);
    // no execution / result tables without -x
    const planned = tableRows(tet(PARTIAL, SIX, '--format', 'table'));
    expect(get(planned, 'status')).toEqual(['planned']);
    expect(planned.map((r) => r[0])).not.toContain('execution');
    expect(planned.map((r) => r[0])).not.toContain('result');
  });
});

describe('values JSON cannot hold', () => {
  it('NaN results are "NaN" in json/stats/full, NaN in quiet and table', () => {
    const file = join(FIX, 'nan_inf_f32.tet');
    const py = execFileSync('python3', ['-c', `import sys, json; sys.path.insert(0, '${SHARED}/conformance/runner'); import tet, numpy as np
a = tet.read(${JSON.stringify(file)})['obs'].astype(np.float64)
print(json.dumps({'max': repr(float(np.max(a))), 'nan_count': int(np.isnan(a).sum())}))`], { encoding: 'utf8' });
    const want = JSON.parse(py) as { max: string; nan_count: number };
    expect(want.max).toBe('nan');
    const q = { dataset: 'obs', max: [] };
    for (const f of ['json', 'stats', 'full']) {
      const text = tet(q, file, '-x', '--format', f);
      expect(text).toMatch(/"operation_max": ?"NaN"/);
      expect(JSON.parse(text).execution.operation_max).toBe('NaN');
    }
    expect(tet(q, file, '-x', '-q')).toMatch(/^dataset=obs status=ok elements=\d+ op=max max=NaN\n$/);
    expect(tableRows(tet(q, file, '-x', '--format', 'table')).find((r) => r[0] === 'operation_max')).toEqual(['operation_max', 'NaN']);
    const n = JSON.parse(tet({ dataset: 'obs', nan_count: [] }, file, '-x', '--format', 'json')).execution;
    expect(Object.entries(n).find(([k]) => k.startsWith('operation_') && k !== 'operation')?.[1]).toBe(want.nan_count);
  });
});
