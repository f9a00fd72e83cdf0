// The query wire of tables_and_filters.md §4: table documents, where, group_by, columns — the
// structural checks validateQuery makes before any catalog is known (codes and paths).
import { describe, expect, it } from 'vitest';
import { validateQuery } from '../../lib/query/validate';
import { groupKeys, predicateOp, queryOperation, reductionColumn } from '../../lib/query/document';

function code(doc: unknown): string {
  try {
    validateQuery(doc);
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'ok';
}

describe('table documents', () => {
  it('accept the spec forms', () => {
    const ok = [
      { table: 'obs', sum: { column: 'pressure_pa' } },
      { table: 'obs', count: [] },
      { table: 'obs', count: {} },
      { table: 'obs', count: { column: 'temp_c' } },
      { table: 'obs', quantile: { column: 'temp_c', q: 0.9 } },
      { table: 'obs', histogram: { column: 'temp_c', bins: 10, min: 0, max: 1 } },
      { table: 'obs', null_count: { column: 'temp_c' } },
      { table: 'obs', mean: { column: 'temp_c' }, group_by: 'country' },
      { table: 'obs', mean: { column: 'temp_c' }, group_by: ['country', { column: 'ts', bucket: 'month' }] },
      { table: 'obs', columns: ['ts', 'temp_c'], limit: 10, offset: 5, order_by: [{ column: 'temp_c', desc: true }] },
      { table: 'obs', columns: ['ts'], where: [{ column: 'event_id', eq: 'E00' }] },
      { table: 'obs', count: [], where: [{ column: 'ts', range: ['2020-01-02T00:00:00Z', null] }, { column: 'qc_ok', eq: true }] },
    ];
    for (const d of ok) expect(code(d), JSON.stringify(d)).toBe('ok');
  });

  it('reject misuse with stable codes', () => {
    const bad: [unknown, string][] = [
      [{ sum: [] }, 'TET_QUERY_MISSING_KEY'],
      [{ dataset: 'a', table: 'b', sum: [] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs' }, 'TET_QUERY_MISSING_KEY'],
      [{ table: 'obs', sum: [] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x', axis: 0 } }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, columns: ['x'] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, selection: [null] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, spill: 'a.bin' }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', arg_min: { column: 'x' } }, 'TET_QUERY_UNSUPPORTED'],
      [{ table: 'obs', covariance: { axis: 0 } }, 'TET_QUERY_UNSUPPORTED'],
      [{ table: 'obs', sum: { column: 'x' }, limit: 3 }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', columns: ['x', 'x'] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', columns: [] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', columns: ['x'], limit: 1_000_001 }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', columns: ['x'], group_by: 'x' }, 'TET_QUERY_GROUP_BY'],
      [{ table: 'obs', histogram: { column: 'x', bins: 3 }, group_by: 'c' }, 'TET_QUERY_GROUP_BY'],
      [{ table: 'obs', sum: { column: 'x' }, group_by: ['a', 'b', 'c', 'd', 'e'] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, group_by: { column: 'ts', bucket: 'week' } }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, group_by: { column: 'x', width: 0 } }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', sum: { column: 'x' }, group_by: { column: 'x', width: 2, bucket: 'day' } }, 'TET_QUERY_GROUP_BY'],
      [{ table: 'obs', sum: { column: 'x' }, group_by: { axis: 0, column: 'x' } }, 'TET_QUERY_GROUP_BY'],
      [{ table: 'obs', count: [], where: [{ column: 'x' }] }, 'TET_QUERY_WHERE_OP'],
      [{ table: 'obs', count: [], where: [{ column: 'x', eq: 1, ne: 2 }] }, 'TET_QUERY_WHERE_OP'],
      [{ table: 'obs', count: [], where: [{ axis: 'time', column: 'x', eq: 1 }] }, 'TET_QUERY_WHERE_OP'],
      [{ table: 'obs', count: [], where: [{ column: 'x', like: 'a%' }] }, 'TET_QUERY_UNKNOWN_KEY'],
      [{ table: 'obs', count: [], where: [{ column: 'x', range: [1] }] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', count: [], where: [{ column: 'x', in: [[1]] }] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', count: [], where: [{ column: 'x', is_null: 1 }] }, 'TET_QUERY_INVALID'],
      [{ table: 'obs', count: [], where: [{ column: 'x', in: new Array(65537).fill(1) }] }, 'TET_QUERY_INVALID'],
    ];
    for (const [d, c] of bad) expect(code(d), JSON.stringify(d).slice(0, 120)).toBe(c);
  });
});

describe('dataset documents with where / group_by', () => {
  it('accept and reject', () => {
    expect(code({ dataset: 't', mean: [0], where: [{ axis: 'station', column: 'country', eq: 'DE' }] })).toBe('ok');
    expect(code({ dataset: 't', mean: [], group_by: 'station.country' })).toBe('ok');
    expect(code({ dataset: 't', mean: [], group_by: { axis: 0, column: 'ts', bucket: 'month' } })).toBe('ok');
    expect(code({ dataset: 't', mean: [], group_by: ['a', 'b'] })).toBe('TET_QUERY_GROUP_BY');
    expect(code({ dataset: 't', arg_max: [], group_by: 'a' })).toBe('TET_QUERY_GROUP_BY');
    expect(code({ dataset: 't', group_by: 'a' })).toBe('TET_QUERY_GROUP_BY');
    expect(code({ dataset: 't', mean: { column: 'x' } })).toBe('TET_QUERY_INVALID');
    expect(code({ dataset: 't', mean: [], columns: ['x'] })).toBe('TET_QUERY_INVALID');
    expect(code({ dataset: 't', mean: [], order_by: [{ column: 'x' }] })).toBe('TET_QUERY_INVALID');
  });
});

describe('document helpers', () => {
  it('normalise group keys, predicate ops and table reductions', () => {
    const t = validateQuery({ table: 'obs', quantile: { column: 'temp_c', q: 0.5 }, group_by: ['a.b', { column: 'ts', bucket: 'day' }] });
    expect(groupKeys(t)).toEqual([{ column: 'a.b' }, { column: 'ts', bucket: 'day' }]);
    expect(queryOperation(t)).toEqual({ name: 'quantile', axes: null, q: 0.5, column: 'temp_c' });
    expect(reductionColumn(t, 'quantile')).toBe('temp_c');
    const c = validateQuery({ table: 'obs', count: [] });
    expect(queryOperation(c)).toEqual({ name: 'count', axes: null });
    expect(reductionColumn(c, 'count')).toBeNull();
    const d = validateQuery({ dataset: 't', sum: [], group_by: 'station.country', where: [{ column: 'x', not_in: [] }] });
    expect(groupKeys(d)).toEqual([{ axis: 'station', column: 'country' }]);
    expect(predicateOp(d.where![0])).toBe('not_in');
  });
});
