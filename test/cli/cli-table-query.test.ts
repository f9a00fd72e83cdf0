// `tet query` on table documents (spec tables_and_filters.md §4.3-§4.4) through the built CLI:
// --format json / full / stats / table / quiet for a reduction, grouped results (keys beside
// values) and `columns` queries (rows as a table). Expectations are hand-computed from the six
// rows written here.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter } from '../../lib/index';

const BIN = join(ROOT, 'bin', 'tet.js');
const work = mkdtempSync(join(tmpdir(), 'tet-cli-table-'));
const file = join(work, 't.tet');
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache') };
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(async () => {
  const w = await TetWriter.create(file);
  w.addTable({
    name: 'obs',
    columns: {
      g: { kind: 'str', values: ['DE', 'FR', 'DE', null, 'FR', 'DE'] },
      x: { kind: 'float', values: [1, 2, 3, 4, null, 6] },
      n: { kind: 'int', values: [10, 20, 30, 40, 50, 60] },
    },
  });
  // a tensor with an axis table for group_by: temp[time 3, station 4] = 0..11
  w.addDataset({ name: 'temp', dtype: 'f32', shape: [3, 4], chunkShape: [2, 2], data: Float32Array.from({ length: 12 }, (_, i) => i) });
  w.setMetadata('temp', { dim_names: ['time', 'station'] });
  w.addTable({ name: 'st', axis: { dataset: 'temp', dim: 'station' }, columns: { c: { kind: 'str', values: ['a', 'b', 'a', 'c'] } } });
  await w.commit();
});

function tet(doc: object, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'query', JSON.stringify(doc), '-t', file, '-x', ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { rc: r.status, out: r.stdout, err: r.stderr };
}
const ready = existsSync(join(ROOT, 'dist', 'cli.cjs'));

const grouped = { table: 'obs', group_by: ['g'], sum: { column: 'x' } };
const composite = { table: 'obs', group_by: ['g', { column: 'n', width: 20 }], count: [] };
const rows = { table: 'obs', columns: ['g', 'x'], where: [{ column: 'n', gt: 15 }], order_by: [{ column: 'x', desc: true }] };

/** The cells of a drawn grid's body rows (cli-table3's │ separators), header first. */
function gridRows(text: string): string[][] {
  return text.split('\n').filter((l) => l.startsWith('│')).map((l) => l.split('│').slice(1, -1).map((c) => c.trim()));
}

describe.skipIf(!ready)('tet query on tables', () => {
  it('json and full: the execution section with keys, counts and grouped values', () => {
    for (const fmt of ['json', 'full']) {
      const r = tet(grouped, '--format', fmt);
      expect(r.rc, r.err).toBe(0);
      if (fmt === 'json') expect(r.out.trim().split('\n')).toHaveLength(1);
      const ex = JSON.parse(r.out).execution;
      // DE: rows 0, 2, 5 → 1 + 3 + 6; FR: rows 1, 4 (x null) → 2; null: row 3 → 4
      expect(ex.group_keys).toEqual(['DE', 'FR', null]);
      expect(ex.group_counts).toEqual([3, 2, 1]);
      expect(ex.operation_grouped_sum).toEqual([10, 2, 4]);
    }
    const r = tet(rows, '--format', 'json');
    // n > 15 drops row 0; by x descending, nulls last: 6 (DE), 4 (null), 3 (DE), 2 (FR), null (FR)
    expect(JSON.parse(r.out).execution.rows).toEqual([
      { g: 'DE', x: 6 }, { g: null, x: 4 }, { g: 'DE', x: 3 }, { g: 'FR', x: 2 }, { g: 'FR', x: null },
    ]);
  });

  it('stats: one line of JSON with the where plan and no rows dropped', () => {
    const r = tet(rows, '--format', 'stats');
    expect(r.rc, r.err).toBe(0);
    const ex = JSON.parse(r.out).execution;
    expect(ex.where_plan.obs).toMatchObject({ rows: 6, selected: 5 });
    expect(ex.rows).toHaveLength(5);
  });

  it('table: keys beside values for grouped results', () => {
    const r = tet(grouped, '--format', 'table');
    expect(r.rc, r.err).toBe(0);
    const g = gridRows(r.out);
    const at = g.findIndex((row) => row[0] === 'g' && row[1] === 'rows');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(g.slice(at)).toEqual([['g', 'rows', 'sum'], ['DE', '3', '10'], ['FR', '2', '2'], ['null', '1', '4']]);
    // composite keys: one column per key part; n width 20: 10→0, 20,30→20, 40,50→40, 60→60
    const c = gridRows(tet(composite, '--format', 'table').out);
    const k = c.findIndex((row) => row[0] === 'g' && row[1] === 'n (width 20)');
    expect(c.slice(k)).toEqual([
      ['g', 'n (width 20)', 'rows', 'count'],
      ['DE', '0', '1', '1'], ['DE', '20', '1', '1'], ['DE', '60', '1', '1'],
      ['FR', '20', '1', '1'], ['FR', '40', '1', '1'], ['null', '40', '1', '1'],
    ]);
  });

  it('table: rows of a columns query as a table', () => {
    const g = gridRows(tet(rows, '--format', 'table').out);
    const at = g.findIndex((row) => row.length === 2 && row[0] === 'g' && row[1] === 'x');
    expect(g.slice(at)).toEqual([['g', 'x'], ['DE', '6'], ['null', '4'], ['DE', '3'], ['FR', '2'], ['FR', 'null']]);
    expect(g).toContainEqual(['where_plan.selected', '5']);
  });

  it('quiet: one line for reductions, groups and rows', () => {
    expect(tet({ table: 'obs', sum: { column: 'n' } }, '-q').out.trim()).toBe('table=obs status=ok rows=6 selected=6 op=sum sum=210');
    expect(tet(grouped, '--format', 'quiet').out.trim())
      .toBe('table=obs status=ok rows=6 selected=6 op=sum groups=3 keys=[DE,FR,null] sum=[10,2,4]');
    expect(tet(composite, '-q').out.trim()).toBe(
      'table=obs status=ok rows=6 selected=6 op=count groups=6 keys=[(DE,0),(DE,20),(DE,60),(FR,20),(FR,40),(null,40)] count=[1,1,1,1,1,1]');
    expect(tet(rows, '-q').out.trim()).toBe('table=obs status=ok rows=6 selected=5 returned=5 columns=[g,x]');
  });

  it('--shard on a table query: one error line naming the table, exit 1, no partial written', async () => {
    const out = join(work, 'p0.bin');
    const r = tet(grouped, '--shard', '0/2', '--partial-out', out);
    expect(r.rc).toBe(1);
    expect(r.err).toBe('error: a table query (table "obs") does not run sharded: run it whole (one scan of the table ' +
      'answers it); --shard / queryPartial split dataset queries, with or without where and group_by\n');
    expect(existsSync(out)).toBe(false);
    // the SDK: the same refusal as a typed error
    const f = await open(file);
    try {
      await expect(f.queryPartial(grouped, { shard: [0, 2] })).rejects.toMatchObject({ code: 'TET_QUERY_UNSUPPORTED' });
    } finally {
      f.close();
    }
  });

  // group_by on a tensor: stations a = {0, 2}, b = {1}, c = {3} of temp = [[0 1 2 3], [4 5 6 7], [8 9 10 11]]
  it('tensor group_by: json, table (key, positions, values) and quiet', () => {
    const scalar = { dataset: 'temp', group_by: 'station.c', sum: [] };
    const ex = JSON.parse(tet(scalar, '--format', 'json').out).execution;
    expect(ex.group_keys).toEqual(['a', 'b', 'c']);
    expect(ex.group_counts).toEqual([2, 1, 1]);
    expect(ex.operation_grouped_sum).toEqual([30, 15, 21]);
    expect(ex.operation_reduced_shape).toEqual([3]);
    const g = gridRows(tet(scalar, '--format', 'table').out);
    const at = g.findIndex((row) => row[0] === 'station.c');
    expect(g.slice(at)).toEqual([['station.c', 'positions', 'sum'], ['a', '2', '30'], ['b', '1', '15'], ['c', '1', '21']]);
    const kept = { dataset: 'temp', group_by: 'station.c', mean: ['station'] };
    const k = gridRows(tet(kept, '--format', 'table').out);
    const at2 = k.findIndex((row) => row[0] === 'station.c');
    expect(k.slice(at2)).toEqual([['station.c', 'positions', 'mean [3]'], ['a', '2', '[1,5,9]'], ['b', '1', '[1,5,9]'], ['c', '1', '[3,7,11]']]);
    expect(tet(scalar, '-q').out.trim()).toBe('dataset=temp status=ok elements=12 op=sum groups=3 keys=[a,b,c] axes=[0,1] values=[30,15,21] reduced_shape=3');
  });

  it('qhist lists table and group_by queries by their table or dataset, and re-runs them', () => {
    const h = (...a: string[]) => spawnSync(process.execPath, [BIN, ...a], { env, encoding: 'utf8', timeout: 30_000 });
    tet({ table: 'obs', count: [] }, '-q');
    tet({ dataset: 'temp', group_by: 'station.c', max: [] }, '-q');
    const byTable = JSON.parse(h('qhist', 'list', '--table', 'obs', '--json').stdout);
    expect(byTable.entries.length).toBeGreaterThan(0);
    expect(byTable.entries.every((e: { table?: string; dataset: unknown }) => e.table === 'obs' && e.dataset === null)).toBe(true);
    expect(JSON.parse(h('qhist', 'list', '--dataset', 'obs', '--json').stdout).matched).toBe(byTable.matched);
    const temp = JSON.parse(h('qhist', 'list', '--dataset', 'temp', '-n', '1', '--json').stdout);
    expect(temp.entries[0].query).toEqual({ dataset: 'temp', group_by: 'station.c', max: [] });
    const rerun = h('qhist', 'run', String(temp.entries[0].n), '-q');
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(rerun.stdout.trim()).toBe('dataset=temp status=ok elements=12 op=max groups=3 keys=[a,b,c] axes=[0,1] values=[10,9,11] reduced_shape=3');
  });
});
