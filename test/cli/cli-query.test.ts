// Integration: `node bin/tet.js query …` through the built CLI and the native addon, with
// expectations from ../shared/conformance/cases.json (numpy model) and hand-computed values.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = join(ROOT, 'bin', 'tet.js');
const CONF = resolve(ROOT, '..', 'shared', 'conformance');
const FIX = join(CONF, 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'tet-cli-query-'));
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache'), TET_QUERY_HISTORY_MAX: '3' };
afterAll(() => rmSync(work, { recursive: true, force: true }));

function tet(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, env, encoding: 'utf8', timeout: 30_000 });
  return { rc: r.status, out: r.stdout, err: r.stderr };
}

// Only meaningful once the CLI bundle and the addon are built.
const ready = existsSync(join(ROOT, 'dist', 'cli.cjs')) && existsSync(CONF)
  && tet(['query', '{"dataset":"a","count":[]}', '-t', join(FIX, 'one_to_six_f32.tet'), '-x', '--format', 'json']).rc === 0;

interface Case { id: string; file: string; query: object; expected: unknown; compare?: Record<string, { mode: string; rtol?: number; atol?: number }>; tags?: string[] }
const cases: Case[] = existsSync(join(CONF, 'cases.json')) ? JSON.parse(readFileSync(join(CONF, 'cases.json'), 'utf8')) : [];

function close(a: unknown, e: unknown, spec: { mode: string; rtol?: number; atol?: number }): boolean {
  if (Array.isArray(e)) return Array.isArray(a) && a.length === e.length && e.every((x, i) => close(a[i], x, spec));
  if (typeof e === 'boolean') return a === e;
  if (typeof a !== 'number' || typeof e !== 'number') return false;
  if (spec.mode !== 'close') return a === e || Math.fround(a) === Math.fround(e);
  return Math.abs(a - e) <= (spec.atol ?? 0) + (spec.rtol ?? 0) * Math.max(Math.abs(a), Math.abs(e));
}

// One value case per tag (coverage of every op, dtype and metadata feature) + every bad query.
const picked: Case[] = [];
const seenTags = new Set<string>();
for (const c of cases) {
  if (typeof c.expected === 'object' && c.expected !== null) {
    const fresh = (c.tags ?? []).filter((t) => !seenTags.has(t));
    if (fresh.length && !(c.tags ?? []).includes('ambiguous') && !(c.tags ?? []).includes('big')) {
      fresh.forEach((t) => seenTags.add(t));
      picked.push(c);
    }
  } else if ((c.tags ?? []).some((t) => t === 'bad_query' || t === 'query_error' || t === 'no_result')) {
    picked.push(c);
  }
}

describe.skipIf(!ready)('tet query against conformance cases', () => {
  it.each(picked.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const r = tet(['query', JSON.stringify(c.query), '-t', join(CONF, c.file), '-x', '--format', 'json']);
    expect(r.err).not.toMatch(/\n\s+at /);
    if (c.expected === 'error') {
      expect(r.rc).toBe(1);
      expect(r.err).toMatch(/^error: /);
      return;
    }
    if (c.expected === 'no_result') {
      expect(r.rc).toBe(1);
      const resp = JSON.parse(r.out);
      expect(resp.status).toBe('unmatched');
      expect(resp.execution).toBeUndefined();
      return;
    }
    expect(r.rc, r.err).toBe(0);
    const ex = JSON.parse(r.out).execution;
    for (const [k, v] of Object.entries(c.expected as object)) {
      expect(close(ex[k], v, c.compare?.[k] ?? { mode: 'exact' }), `${k}: ${JSON.stringify(ex[k])} vs ${JSON.stringify(v)}`).toBe(true);
    }
  });
});

describe.skipIf(!ready)('tet query CLI behaviour (one_to_six_f32.tet: [[1,2,3],[4,5,6]])', () => {
  const file = join(FIX, 'one_to_six_f32.tet');

  it('hand-computed aggregates', () => {
    const run = (q: object) => JSON.parse(tet(['query', JSON.stringify(q), '-t', file, '-x', '--format', 'json']).out).execution;
    expect(run({ dataset: 'a', sum: [] }).operation_sum).toBe(21);
    expect(run({ dataset: 'a', mean: 0 })).toMatchObject({ operation_reduced_mean: [2.5, 3.5, 4.5], operation_reduced_shape: [3] });
    expect(run({ dataset: 'a', sum: 1 }).operation_reduced_sum).toEqual([6, 15]);
    expect(run({ dataset: 'a', median: [] })).toMatchObject({ operation_median: 3.5, memory_strategy: 'in_memory_materialize' });
    expect(run({ dataset: 'a', arg_max: [] }).operation_argmax_index).toBe(5);
    expect(run({ dataset: 'a', quantile: { q: 0.25 } })).toMatchObject({ operation_quantile: 2.25, operation_quantile_q: 0.25 });
    expect(run({ dataset: 'a', max: [], selection: [{ start: 0, stop: 1 }, { step: 2 }] }).operation_max).toBe(3);
    expect(run({ dataset: 'a', median: [], execution: { memory_budget_bytes: 16 } }).memory_strategy).toBe('temp_spill_materialize');
  });

  it('preview defaults: 64 for json, none for stats; explicit 0 skips it', () => {
    const json = JSON.parse(tet(['query', '{"dataset":"a","sum":[]}', '-t', file, '-x', '--format', 'json']).out);
    expect(json.execution.f32_preview).toEqual([1, 2, 3, 4, 5, 6]);
    const stats = JSON.parse(tet(['query', '{"dataset":"a","sum":[]}', '-t', file, '-x', '--format', 'stats']).out);
    expect(stats.execution.f32_preview).toBeUndefined();
    expect(stats.read_plan.chunks).toBeUndefined();
    const zero = JSON.parse(tet(['query', '{"dataset":"a","sum":[]}', '-t', file, '-x', '--format', 'json', '--preview', '0']).out);
    expect(zero.execution.f32_preview).toEqual([]);
    expect(zero.execution.operation_sum).toBe(21);
    const two = JSON.parse(tet(['query', '{"dataset":"a"}', '-t', file, '-x', '--format', 'json', '--preview-f32', '2']).out);
    expect(two.execution).toMatchObject({ f32_preview: [1, 2], memory_strategy: 'capped_in_memory' });
  });

  it('plan only without -x; validation only without -t', () => {
    const plan = JSON.parse(tet(['query', '{"dataset":"a","sum":[]}', '-t', file]).out);
    expect(plan.status).toBe('planned');
    expect(plan.execution).toBeUndefined();
    expect(plan.read_plan.chunk_count).toBe(2);
    const v = tet(['query', '{"dataset":"a","sum":[]}', '--format', 'json']);
    expect(v.rc).toBe(0);
    expect(JSON.parse(v.out)).toEqual({ status: 'validated', accepted: true, dataset: 'a', tet_file: null, selection_axes: 0,
      query: { dataset: 'a', sum: [] } });
  });

  it('TOML file, stdin, quiet and table formats', () => {
    const q = join(work, 'q.toml');
    writeFileSync(q, 'dataset = "a"\nsum = [0]\n');
    const quiet = tet(['query', q, '-t', file, '-x', '-q']);
    // issue 14: the reference's quiet keys
    expect(quiet.out.trim()).toBe('dataset=a status=ok elements=6 op=sum axes=[0] values=[5,7,9] reduced_shape=3');
    const stdin = tet(['query', '-t', file, '-x', '--format', 'quiet'], 'dataset = "a"\nmean = []\n');
    expect(stdin.out.trim()).toBe('dataset=a status=ok elements=6 op=mean mean=3.5');
    const table = tet(['query', '{"dataset":"a","max":[]}', '-t', file, '-x', '--format', 'table']);
    expect(table.rc).toBe(0);
    expect(table.out).toContain('operation_max');
  });

  it('reductions (extension): several results from one query in every format', () => {
    const q = join(work, 'r.toml');
    writeFileSync(q, 'dataset = "a"\nreductions = ["min", "max", "mean", "arg_max"]\n');
    const quiet = tet(['query', q, '-t', file, '-x', '-q']);
    expect(quiet.rc).toBe(0);
    expect(quiet.out.trim()).toBe('dataset=a status=ok elements=6 op=reductions min=1 max=6 mean=3.5 argmax_index=5');
    const json = JSON.parse(tet(['query', q, '-t', file, '-x', '--format', 'json']).out);
    expect(json.execution.operations).toEqual(['min', 'max', 'mean', 'arg_max']);
    expect([json.execution.operation_min, json.execution.operation_max, json.execution.operation_mean]).toEqual([1, 6, 3.5]);
    const table = tet(['query', q, '-t', file, '-x', '--format', 'table']);
    expect(table.out).toMatch(/operation_min[\s\S]*operation_max[\s\S]*operation_mean/);
    const bad = tet(['query', '{"dataset":"a","reductions":["median"]}', '-t', file, '-x']);
    expect(bad.rc).toBe(1);
    expect(bad.err).toMatch(/^error: query \$\.reductions\[0\]: expected a streaming reduction/);
  });

  it('errors: stderr "error: …", exit 1, never a stack trace; usage errors exit 2', () => {
    const bad = tet(['query', '{"dataset":"a","sum":[],"frobnicate":1}', '-t', file, '-x']);
    expect(bad.rc).toBe(1);
    expect(bad.err).toMatch(/^error: query \$: unknown key "frobnicate"/);
    expect(bad.out).toBe('');
    const missing = tet(['query', '{"dataset":"a","sum":[]}', '-t', join(work, 'nope.tet'), '-x']);
    expect(missing.rc).toBe(1);
    expect(missing.err).toMatch(/^error: /);
    expect(missing.err).not.toMatch(/\n\s+at /);
    const budget = tet(['query', '{"dataset":"a"}', '-t', join(FIX, 'file_exec_tiny_budget.tet'), '-x']);
    expect(budget.rc).toBe(1);
    expect(budget.err).toMatch(/^error: the selection needs \d+ bytes but the memory budget is 64 bytes/);
    expect(tet(['query', '{"dataset":"a","sum":[]}', '-x']).rc).toBe(2);
    expect(tet(['query', '{"dataset":"a","sum":[]}', '-t', file, '--preview', '-3']).rc).toBe(2);
    expect(tet(['query', '{"dataset":"a","sum":[]}', '-t', file, '--format', 'xml']).rc).toBe(2);
  });

  it('spill writes dtype-native bytes under the allowlist and refuses elsewhere', () => {
    const out = join(work, 'slice.bin');
    const ok = tet(['query', JSON.stringify({ dataset: 'a', spill: out }), '-t', file, '-x', '--format', 'json', '--spill-allow', work]);
    expect(ok.rc, ok.err).toBe(0);
    const ex = JSON.parse(ok.out).execution;
    expect(ex.memory_strategy).toBe('mmap_spill');
    expect(ex.spill_bytes).toBe(24);
    expect(statSync(out).size).toBe(24);
    const bytes = readFileSync(out);
    expect(Array.from({ length: 6 }, (_, i) => bytes.readFloatLE(4 * i))).toEqual([1, 2, 3, 4, 5, 6]);
    const refused = tet(['query', JSON.stringify({ dataset: 'a', spill: join(work, 'x.bin') }), '-t', file, '-x']);
    expect(refused.rc).toBe(1);
    expect(refused.err).toMatch(/^error: query \$\.spill: expected a path under/);
  });

  it('qhist records queries, rotates at TET_QUERY_HISTORY_MAX and re-runs entry N (1 = newest)', () => {
    for (const op of ['sum', 'mean', 'max', 'min']) tet(['query', `{"dataset":"a","${op}":[]}`, '-t', file, '-x', '-q']);
    // issue 14: newest first; entry rows are the numbered lines
    const list = tet(['qhist', 'list']).out.trim().split('\n').filter((l) => /^\d+\t/.test(l));
    expect(list).toHaveLength(3);
    expect(list[0]).toContain('"min":[]');
    expect(list[2]).toContain('"mean":[]');
    const rerun = tet(['qhist', 'run', '3', '-q']);
    expect(rerun.out.trim()).toBe('dataset=a status=ok elements=6 op=mean mean=3.5');
    expect(tet(['qhist', 'run', '9']).rc).toBe(2);
  });
});
