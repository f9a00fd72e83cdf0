import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TetBudgetError, TetQueryError } from '../../lib/errors';
import { resolveSelection } from '../../lib/plan/selection';
import { resolveAxes } from '../../lib/plan/axes';
import { previewStoredBytes, touchedChunks, touchedChunksAlongAxis, touchedStoredBytes } from '../../lib/plan/chunks';
import { resolveBudget, UNKNOWN_HOST_BUDGET_BYTES } from '../../lib/plan/budget';
import { chooseIoMode, chooseStrategy, ioRegime } from '../../lib/plan/strategy';
import { resolveSpillPath } from '../../lib/plan/spill';
import { compileExecution, planAgainstTarget } from '../../lib/plan/compile';
import { validateQuery } from '../../lib/query';
import { plannedResponse } from '../../lib/response/build';
import type { DatasetInfo, DatasetMetadata, QueryTarget } from '../../lib/types';

// Footer metadata of conformance fixture meta_weather.tet (copied by hand).
const weather: DatasetMetadata = {
  dim_names: ['time', 'lat', 'lon'],
  coords: {
    time: { labels: Array.from({ length: 12 }, (_, i) => `2024-01-${String(i + 1).padStart(2, '0')}`) },
    lat: { labels: ['lat-50.0', 'lat-35.0', 'lat-20.0', 'lat-5.0', 'lat+10.0', 'lat+25.0'] },
  },
};

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as TetQueryError).code;
  }
  throw new Error('expected an error');
}

describe('selection', () => {
  it('defaults to the whole axis and clamps stop (cases.json c0319)', () => {
    const s = resolveSelection([{ start: 0, stop: 100, step: 2 }, { start: null, stop: null, step: 1 }], [37, 23]);
    expect(s.axes).toEqual([{ start: 0, stop: 37, step: 2, count: 19 }, { start: 0, stop: 23, step: 1, count: 23 }]);
    expect(s.shape).toEqual([19, 23]);
    expect(s.elementCount).toBe(437);
    expect(s.full).toBe(false);
    expect(s.unitStep).toBe(false);
    const full = resolveSelection(null, [4, 5]);
    expect(full.full).toBe(true);
    expect(full.elementCount).toBe(20);
    expect(resolveSelection([null, {}], [4, 5]).full).toBe(true);
  });
  it('errors: rank mismatch, empty after clamping, start >= stop', () => {
    expect(codeOf(() => resolveSelection([{ start: 0, stop: 4 }], [37, 23]))).toBe('TET_QUERY_RANK_MISMATCH');
    expect(codeOf(() => resolveSelection([{ start: 100, stop: 200 }, {}], [37, 23]))).toBe('TET_QUERY_EMPTY_SELECTION');
    expect(codeOf(() => resolveSelection([{ start: 40 }, {}], [37, 23]))).toBe('TET_QUERY_EMPTY_SELECTION');
    expect(codeOf(() => resolveSelection([{ start: 3, stop: 3 }, {}], [37, 23]))).toBe('TET_QUERY_SELECTION');
    expect(codeOf(() => resolveSelection([{ step: 0 }, {}], [37, 23]))).toBe('TET_QUERY_SELECTION');
  });
  it('labels are half-open (c0213: 2024-01-03 .. 2024-01-08 -> rows 2..6)', () => {
    const s = resolveSelection([{ start_label: '2024-01-03', stop_label: '2024-01-08' }, {}, {}], [12, 6, 8], weather);
    expect(s.axes[0]).toEqual({ start: 2, stop: 7, step: 1, count: 5 });
    const t = resolveSelection([{ stop_label: '2024-01-05' }, { start_label: 'lat-35.0', stop_label: 'lat+10.0' }, {}], [12, 6, 8], weather);
    expect(t.axes[0]).toEqual({ start: 0, stop: 4, step: 1, count: 4 });
    expect(t.axes[1]).toEqual({ start: 1, stop: 4, step: 1, count: 3 });
  });
  it('labels resolve through coords keyed by axis index (meta_coords_by_index)', () => {
    const meta: DatasetMetadata = { coords: { 0: { labels: ['p', 'q', 'r', 's', 't', 'u'] } } };
    const s = resolveSelection([{ start_label: 'q', stop_label: 't' }, {}], [6, 4], meta);
    expect(s.axes[0]).toEqual({ start: 1, stop: 4, step: 1, count: 3 });
  });
  it('label errors: unknown label, no coords, same start and stop label', () => {
    expect(codeOf(() => resolveSelection([{ start_label: '1999-12-31' }, {}, {}], [12, 6, 8], weather))).toBe('TET_QUERY_LABEL_NOT_FOUND');
    expect(codeOf(() => resolveSelection([{}, {}, { start_label: 'x' }], [12, 6, 8], weather))).toBe('TET_QUERY_LABEL_NOT_FOUND');
    expect(codeOf(() => resolveSelection([{ start_label: '2024-01-02', stop_label: '2024-01-02' }, {}, {}], [12, 6, 8], weather)))
      .toBe('TET_QUERY_SELECTION');
  });
});

describe('axes', () => {
  it('resolves indices, decimal strings and dimension names, sorted', () => {
    expect(resolveAxes(['lon', 'time'], 3, weather, '$.sum')).toEqual([0, 2]);
    expect(resolveAxes([2, '0'], 3, {}, '$.sum')).toEqual([0, 2]);
  });
  it('errors: out of range, unknown name, no dim_names, duplicates', () => {
    expect(codeOf(() => resolveAxes([5], 2, {}, '$.sum'))).toBe('TET_QUERY_AXIS_OUT_OF_RANGE');
    expect(codeOf(() => resolveAxes(['depth'], 3, weather, '$.mean'))).toBe('TET_QUERY_UNKNOWN_DIMENSION');
    expect(codeOf(() => resolveAxes(['time'], 2, {}, '$.mean'))).toBe('TET_QUERY_UNKNOWN_DIMENSION');
    expect(codeOf(() => resolveAxes([0, 'time'], 3, weather, '$.mean'))).toBe('TET_QUERY_DUPLICATE_AXIS');
  });
});

describe('chunk touching (strided rule)', () => {
  it('unit step touches every tile the range overlaps', () => {
    expect(touchedChunksAlongAxis({ start: 7, stop: 17, step: 1, count: 10 }, 37, 8).map((t) => [t.index, t.selected]))
      .toEqual([[0, 1], [1, 8], [2, 1]]);
  });
  it('a stride larger than the tile skips tiles it never lands in', () => {
    // positions 3, 13, 23, 33 over tiles of 8: tiles 0, 1, 2, 4 (tile 3 = 24..31 is skipped)
    expect(touchedChunksAlongAxis({ start: 3, stop: 37, step: 10, count: 4 }, 37, 8).map((t) => t.index)).toEqual([0, 1, 2, 4]);
    // positions 5, 30, 55, 80 over tiles of 10
    expect(touchedChunksAlongAxis({ start: 5, stop: 100, step: 25, count: 4 }, 100, 10).map((t) => t.index)).toEqual([0, 3, 5, 8]);
  });
  it('step 2 over [0,37) with tiles of 8 touches all 5 tiles with 4,4,4,4,3 positions', () => {
    expect(touchedChunksAlongAxis({ start: 0, stop: 37, step: 2, count: 19 }, 37, 8).map((t) => t.selected)).toEqual([4, 4, 4, 4, 3]);
  });
  it('stored bytes of touched tiles (raw: tile sizes; per-chunk sizes; preview tiles by row-major position)', () => {
    // [2,3] f32 in [2,2] tiles: tile (0,0) holds 4 values (16 B), tile (0,1) 2 values (8 B)
    const full = [{ start: 0, stop: 2, step: 1, count: 2 }, { start: 0, stop: 3, step: 1, count: 3 }];
    const perAxis = full.map((r, a) => touchedChunksAlongAxis(r, [2, 3][a], 2));
    expect(touchedStoredBytes(perAxis, [2, 3], [2, 2], 4)).toBe(24);
    expect(touchedStoredBytes(perAxis, [2, 3], [2, 2], 4, [100, 7])).toBe(107);
    // the preview's first k values, row-major: 0 -> (0,0); 1 -> (0,1); 2 -> (0,2) in tile (0,1)
    expect(previewStoredBytes(perAxis, [2, 3], [2, 2], 4, 0)).toBe(0);
    expect(previewStoredBytes(perAxis, [2, 3], [2, 2], 4, 2)).toBe(16);
    expect(previewStoredBytes(perAxis, [2, 3], [2, 2], 4, 3)).toBe(24);
    expect(previewStoredBytes(perAxis, [2, 3], [2, 2], 4, 3, [100, 7])).toBe(107);
    // rows of 9 over tiles [1,4]: the first 4 values lie in tile (0,0) only
    const rows = [{ start: 0, stop: 3, step: 1, count: 3 }, { start: 0, stop: 9, step: 1, count: 9 }];
    const pa = rows.map((r, a) => touchedChunksAlongAxis(r, [3, 9][a], [1, 4][a]));
    expect(previewStoredBytes(pa, [3, 9], [1, 4], 1, 4)).toBe(4);
    expect(previewStoredBytes(pa, [3, 9], [1, 4], 1, 10)).toBe(9 + 4);
  });
  it('lists touched chunks row-major with clipped edge tiles', () => {
    const r = touchedChunks([{ start: 0, stop: 2, step: 1, count: 2 }, { start: 0, stop: 3, step: 1, count: 3 }], [2, 3], [2, 2], 100);
    expect(r.total).toBe(2);
    expect(r.chunks).toEqual([
      { coords: [0, 0], chunk_index: [0, 0], origin: [0, 0], tile_shape: [2, 2], selected_elements: 4 },
      { coords: [0, 1], chunk_index: [0, 1], origin: [0, 2], tile_shape: [2, 1], selected_elements: 2 },
    ]);
    const capped = touchedChunks([{ start: 0, stop: 37, step: 1, count: 37 }, { start: 0, stop: 23, step: 1, count: 23 }], [37, 23], [8, 5], 3);
    expect(capped.total).toBe(25);
    expect(capped.chunks.map((c) => c.coords)).toEqual([[0, 0], [0, 1], [0, 2]]);
  });
});

describe('budget precedence', () => {
  const host = 8 * 1024 ** 3;
  const none = { memory_budget_percent_bps: 0, memory_budget_bytes: 0 };
  it('query bytes > file bytes > query percent > file percent > 25%', () => {
    expect(resolveBudget({ memory_budget_bytes: 16 }, { memory_budget_percent_bps: 4000, memory_budget_bytes: 1048576 }, host))
      .toMatchObject({ bytes: 16, source: 'query_bytes' });
    expect(resolveBudget({ memory_budget_percent: 40 }, { memory_budget_percent_bps: 4000, memory_budget_bytes: 1048576 }, host))
      .toMatchObject({ bytes: 1048576, source: 'file_bytes' });
    expect(resolveBudget({ memory_budget_percent: 40 }, { memory_budget_percent_bps: 1000, memory_budget_bytes: 0 }, host))
      .toMatchObject({ bytes: Math.floor((host * 4000) / 10000), source: 'query_percent', percentBps: 4000 });
    expect(resolveBudget({ memory_budget_percent_bps: 1250 }, none, host)).toMatchObject({ bytes: host / 8, percentBps: 1250 });
    expect(resolveBudget(undefined, { memory_budget_percent_bps: 4000, memory_budget_bytes: 0 }, host))
      .toMatchObject({ bytes: Math.floor((host * 4000) / 10000), source: 'file_percent' });
    expect(resolveBudget(undefined, none, host)).toMatchObject({ bytes: host / 4, source: 'default_percent' });
  });
  it('256 MiB when host RAM is unknown', () => {
    expect(resolveBudget(undefined, none, 0)).toMatchObject({ bytes: UNKNOWN_HOST_BUDGET_BYTES, hostAvailableRamBytes: null });
    expect(UNKNOWN_HOST_BUDGET_BYTES).toBe(268435456);
  });
});

describe('strategy and I/O mode', () => {
  it('picks the memory strategy', () => {
    expect(chooseStrategy('sum', false, 1e12, 10)).toBe('streaming_fold');
    expect(chooseStrategy('median', false, 1000, 1000)).toBe('in_memory_materialize');
    expect(chooseStrategy('quantile', false, 1001, 1000)).toBe('temp_spill_materialize');
    expect(chooseStrategy('covariance', false, 1001, 1000)).toBe('temp_spill_materialize');
    expect(chooseStrategy(null, true, 1e12, 10)).toBe('mmap_spill');
    expect(chooseStrategy(null, false, 10, 10)).toBe('capped_in_memory');
    expect(() => chooseStrategy(null, false, 11, 10)).toThrow(TetBudgetError);
  });
  it('io regime at 85% of available RAM', () => {
    expect(ioRegime(85, 100)).toBe('in_core');
    expect(ioRegime(86, 100)).toBe('out_of_core');
    expect(ioRegime(1, null)).toBe('unknown');
  });
  it('io mode', () => {
    const base = { strategy: 'streaming_fold' as const, regime: 'in_core' as const, fullDenseRaw: true, chunkCount: 4 };
    expect(chooseIoMode(base)).toBe('parallel_chunks');
    expect(chooseIoMode({ ...base, chunkCount: 1 })).toBe('sequential_chunks');
    expect(chooseIoMode({ ...base, foldParallel: false })).toBe('sequential_chunks');
    expect(chooseIoMode({ ...base, regime: 'out_of_core' })).toBe('linear_scan');
    expect(chooseIoMode({ ...base, regime: 'out_of_core', foldParallel: true })).toBe('parallel_chunks');
    expect(chooseIoMode({ ...base, regime: 'out_of_core', fullDenseRaw: false })).toBe('parallel_chunks');
  });
});

describe('spill allowlist', () => {
  const root = mkdtempSync(join(tmpdir(), 'tet-spill-test-'));
  const home = join(root, 'home');
  const data = join(home, 'data');
  mkdirSync(data, { recursive: true });
  const outside = join(root, 'outside');
  mkdirSync(outside);
  symlinkSync(outside, join(data, 'link'));
  const tet = join(data, 'x.tet');
  const env = { XDG_CACHE_HOME: join(root, 'cache') } as NodeJS.ProcessEnv;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('relative paths resolve beside the .tet file', () => {
    expect(resolveSpillPath('slice.bin', tet, [], env)).toBe(join(data, 'slice.bin'));
    expect(resolveSpillPath('sub/dir/slice.bin', tet, [], env)).toBe(join(data, 'sub', 'dir', 'slice.bin'));
  });
  it('rejects .. escapes and symlinks out of the tree', () => {
    expect(codeOf(() => resolveSpillPath('../escape.bin', tet, [], env))).toBe('TET_QUERY_SPILL_NOT_ALLOWED');
    expect(codeOf(() => resolveSpillPath('link/escape.bin', tet, [], env))).toBe('TET_QUERY_SPILL_NOT_ALLOWED');
    expect(codeOf(() => resolveSpillPath(join(outside, 'a.bin'), tet, [], env))).toBe('TET_QUERY_SPILL_NOT_ALLOWED');
  });
  it('accepts the platform cache root and --spill-allow roots', () => {
    expect(resolveSpillPath(join(root, 'cache', 'tetration', 'job.bin'), tet, [], env)).toBe(join(root, 'cache', 'tetration', 'job.bin'));
    expect(resolveSpillPath('link/ok.bin', tet, [outside], env)).toBe(join(outside, 'ok.bin'));
  });
});

describe('planning against a catalog', () => {
  const ds: DatasetInfo = {
    name: 'temperature', id: 0, dtype: 'f32', shape: [37, 23], chunkShape: [8, 5], grid: [5, 5], chunkCount: 25,
    codecs: { raw: 25, zstd: 0 }, logicalBytes: 37 * 23 * 4, storedBytes: 37 * 23 * 4,
  };
  const table: DatasetInfo = { ...ds, name: 'table', id: 1, dtype: 'f64', shape: [4, 5], chunkShape: [4, 5], grid: [1, 1], chunkCount: 1 };
  const target: QueryTarget = {
    path: '/data/f.tet', datasets: [ds, table],
    metadata: { datasets: { table: { dim_names: ['row', 'column'], attrs: { _FillValue: -999 } } } },
    fileExecution: { memory_budget_percent_bps: 0, memory_budget_bytes: 0 }, native: null,
  };
  const plan = (q: object) => planAgainstTarget(target, validateQuery(q));

  it('unknown dataset -> unmatched, no read plan', () => {
    const p = plan({ dataset: 'nope', sum: [] });
    expect(p.dataset).toBeNull();
    expect(p.readPlan).toBeNull();
    expect(p.catalog.dataset_resolution).toBe('unmatched');
    expect(p.catalog.available_datasets).toEqual(['temperature', 'table']);
    expect(plannedResponse(p)).toEqual({ status: 'unmatched', accepted: true, dataset: 'nope', tet_file: '/data/f.tet',
      selection_axes: 0, query: p.doc, catalog: p.catalog });
    expect(p.catalog.matched).toBe(false);
  });
  it('lists the file\'s tables (a native call) only for a group_by, which may name a table column', () => {
    let listed = 0;
    const counting: QueryTarget = { ...target, get tables() { listed++; return []; } };
    const p = planAgainstTarget(counting, validateQuery({ dataset: 'temperature', mean: [], selection: [{ stop: 9 }, {}] }));
    expect(p.readPlan!.logical_selection_shape).toEqual([9, 23]);
    expect(listed).toBe(0);
    // (this catalog has no tables and no labels: the group_by's column is looked up there, and not found)
    expect(codeOf(() => planAgainstTarget(counting, validateQuery({ dataset: 'temperature', sum: [], group_by: 'dim_1' }))))
      .toBe('TET_QUERY_UNKNOWN_COLUMN');
    expect(listed).toBe(1);
  });
  it('read plan geometry', () => {
    const rp = plan({ dataset: 'temperature', mean: [], selection: [{ start: 3, stop: 37, step: 10 }, { stop: 6 }] }).readPlan!;
    expect(rp.chunk_touch_policy).toBe('strided_half_open');
    expect(rp.logical_selection_shape).toEqual([4, 6]);
    expect(rp.chunks_per_axis).toEqual([4, 2]);
    expect(rp.chunk_count).toBe(8);
    expect(rp.logical_selection_bytes).toBe(96);
    const dense = plannedResponse(plan({ dataset: 'temperature', mean: [] }));
    expect(dense.status).toBe('planned');
    expect(dense.read_plan!.chunk_touch_policy).toBe('dense_half_open_unit_step');
    expect(dense.read_plan!.chunk_count).toBe(25);
    expect(dense.catalog!.dataset_f32_bytes).toBe(3404);
  });
  it('operation checks against the dataset', () => {
    expect(codeOf(() => plan({ dataset: 'temperature', sum: 5 }))).toBe('TET_QUERY_AXIS_OUT_OF_RANGE');
    expect(codeOf(() => plan({ dataset: 'temperature', mean: 'time' }))).toBe('TET_QUERY_UNKNOWN_DIMENSION');
    expect(codeOf(() => plan({ dataset: 'temperature', null_count: [] }))).toBe('TET_QUERY_NO_FILL_VALUE');
    expect(plan({ dataset: 'table', null_count: [] }).operation).toMatchObject({ fill: -999, scalar: true, axes: [0, 1] });
    expect(plan({ dataset: 'table', covariance: { axis: 'row' } }).operation).toMatchObject({ obsAxis: 0, axes: [] });
    expect(plan({ dataset: 'table', correlation: 'column' }).operation).toMatchObject({ obsAxis: 1 });
  });
  it('compiles the native plan', () => {
    const planned = plan({ dataset: 'temperature', sum: [1], selection: [{ start: 3, stop: 37, step: 10 }, {}] });
    const c = compileExecution(planned, target, { preview: 64, hostAvailableRamBytes: 1 << 30 });
    expect(c.plan).toMatchObject({ datasetId: 0, start: [3, 0], step: [10, 1], count: [4, 23], op: 'sum', reduceAxes: [1],
      strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax: 64 });
    expect(c.fields.memory_budget_bytes).toBe(2 ** 28);
    expect(c.fields.io_regime).toBe('in_core');
    const med = compileExecution(plan({ dataset: 'temperature', median: [], execution: { memory_budget_bytes: 16 } }), target,
      { preview: 0, hostAvailableRamBytes: 1 << 30 });
    expect(med.plan.strategy).toBe('temp_spill_materialize');
    expect(med.plan.q).toBe(0.5);
    expect(med.plan.reduceAxes).toEqual([0, 1]);
    expect(() => compileExecution(plan({ dataset: 'temperature', execution: { memory_budget_bytes: 16 } }), target,
      { preview: 0, hostAvailableRamBytes: 1 << 30 })).toThrow(TetBudgetError);
  });
  it('device routing: the token is checked here, the decision (native) maps to the response fields and the plan', () => {
    const p = plan({ dataset: 'temperature', sum: [] });
    const asked: unknown[] = [];
    // A stand-in for the native router (tet/device.h, tested by native/tests/device_test.cpp and
    // test/integration/device-*.test.ts): one GPU, every reason by token.
    const routeDevice = (q: { token: string; op: number; dtype: number; scalar: boolean; logicalBytes: number; chunks: number; outElements: number }) => {
      asked.push(q);
      if (q.token === 'cuda') return { requested: q.token, used: 'cuda:0', pipeline: true, multi: false, gpu: true, ordinal: 0 };
      if (q.token === 'cuda:multi') return { requested: q.token, used: 'cuda:multi', pipeline: true, multi: true, gpu: true, ordinal: 0xffffffff };
      return { requested: q.token, used: 'cpu', reason: q.token === 'cpu' ? undefined : 'gpu_feature_disabled', pipeline: false, multi: false, gpu: false, ordinal: 0 };
    };
    const run = (device: string) => compileExecution(p, target, { preview: 0, hostAvailableRamBytes: 1 << 30, device, routeDevice });
    expect(run('cpu').fields).toMatchObject({ device_requested: 'cpu', device_used: 'cpu' });
    expect(run('cpu').fields.device_fallback_reason).toBeUndefined();
    expect(run('cpu').plan.device).toBeUndefined();
    expect(run('cuda:1').fields).toMatchObject({ device_requested: 'cuda:1', device_used: 'cpu', device_fallback_reason: 'gpu_feature_disabled',
      device_gpu_pipeline: false, device_gpu_multi: false });
    expect(run('cuda:1').plan.device).toBeUndefined();
    expect(run('cuda').fields).toMatchObject({ device_used: 'cuda:0', device_gpu_pipeline: true, device_gpu_multi: false });
    expect(run('cuda').fields.device_fallback_reason).toBeUndefined();
    expect(run('cuda').plan.device).toEqual({ kind: 'gpu', ordinal: 0 });
    expect(run('cuda:multi').plan.device).toEqual({ kind: 'gpu', ordinal: 0xffffffff });
    // what native is asked: op / dtype wire codes (sum 1, f32 1), scalar, output size
    expect(asked.at(-1)).toMatchObject({ token: 'cuda:multi', op: 1, dtype: 1, scalar: true, outElements: 1, logicalBytes: 37 * 23 * 4 });
    const partial = compileExecution(plan({ dataset: 'temperature', mean: [1] }), target,
      { preview: 0, hostAvailableRamBytes: 1 << 30, device: 'cuda', routeDevice });
    expect(partial.fields.device_used).toBe('cuda:0');
    expect(asked.at(-1)).toMatchObject({ op: 2, scalar: false });
    expect((asked.at(-1) as { outElements: number }).outElements).toBe(37);  // [37, 23], axis 1 reduced
    for (const bad of ['bogus', 'cuda:', 'CUDA', 'cuda:12345', 'cpu ']) expect(codeOf(() => run(bad))).toBe('TET_QUERY_INVALID');
  });
});
