// lib/plan/literals.ts: where literals and group-by parameters in stored form (spec
// tables_and_filters.md §4.1, §4.2, §4.5). Expected stored values are hand-computed (days and
// ticks since the epoch worked out by hand and against JS Date.UTC, an independent calendar).
import { describe, expect, it } from 'vitest';
import { TetQueryError } from '../../lib/errors';
import { storedKeyTransform, storedLiteral, storedPredicate, type LiteralColumn } from '../../lib/plan/literals';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TetQueryError);
    return (err as TetQueryError).code;
  }
  throw new Error('expected a throw');
}

const col = (kind: LiteralColumn['kind'], extra: Partial<LiteralColumn> = {}): LiteralColumn => ({ name: 'c', kind, ...extra });

describe('storedLiteral', () => {
  it('int: integers, integral numbers and decimal strings beyond 2^53', () => {
    expect(storedLiteral(col('int'), 42, 'w')).toEqual({ type: 'int', value: 42n });
    expect(storedLiteral(col('int'), 3.0, 'w')).toEqual({ type: 'int', value: 3n });
    expect(storedLiteral(col('int'), '-0009007199254740993', 'w')).toEqual({ type: 'int', value: -9007199254740993n });
    expect(storedLiteral(col('int'), '9223372036854775807', 'w')).toEqual({ type: 'int', value: 9223372036854775807n });
    expect(code(() => storedLiteral(col('int'), 2.5, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(col('int'), 2 ** 53, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(col('int'), '9223372036854775808', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(col('int'), '+1', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(col('int'), true, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
  });

  it('float, bool, str', () => {
    expect(storedLiteral(col('float'), 1.5, 'w')).toEqual({ type: 'float', value: 1.5 });
    expect(storedLiteral(col('float'), 7, 'w')).toEqual({ type: 'float', value: 7 });
    expect(Number.isNaN((storedLiteral(col('float'), 'NaN', 'w') as { value: number }).value)).toBe(true);
    expect(storedLiteral(col('float'), '-Infinity', 'w')).toEqual({ type: 'float', value: -Infinity });
    expect(code(() => storedLiteral(col('float'), '1.5', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(storedLiteral(col('bool'), false, 'w')).toEqual({ type: 'bool', value: false });
    expect(code(() => storedLiteral(col('bool'), 1, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(storedLiteral(col('str'), 'DE', 'w')).toEqual({ type: 'str', value: 'DE' });
    expect(code(() => storedLiteral(col('str'), 5, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(col('str'), '\ud800', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
  });

  it('date, timestamp (units, offsets, naive), time', () => {
    // 2020-03-01: 18322 days (Date.UTC(2020, 2, 1) / 86400000)
    expect(storedLiteral(col('date'), '2020-03-01', 'w')).toEqual({ type: 'int', value: 18322n });
    expect(Date.UTC(2020, 2, 1) / 86_400_000).toBe(18322);
    expect(storedLiteral(col('date'), '1969-12-31', 'w')).toEqual({ type: 'int', value: -1n });
    expect(code(() => storedLiteral(col('date'), '2021-02-29', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    const us = col('timestamp', { unit: 'us', tz: 'UTC' });
    expect(storedLiteral(us, '2020-01-01T00:00:00Z', 'w')).toEqual({ type: 'int', value: 1577836800000000n });
    expect(storedLiteral(us, '2020-01-01T01:00:00+01:00', 'w')).toEqual({ type: 'int', value: 1577836800000000n });
    expect(storedLiteral(us, '2020-01-01t00:00:00.000001z', 'w')).toEqual({ type: 'int', value: 1577836800000001n });
    expect(code(() => storedLiteral(us, '2020-01-01 00:00:00Z', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(us, '2020-01-01T00:00:00', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(us, '2020-01-01T00:00:00.0000001Z', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(us, '2016-12-31T23:59:60Z', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(us, 1577836800000000, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    const naiveS = col('timestamp', { unit: 's', tz: 'naive' });
    expect(storedLiteral(naiveS, '1970-01-02T00:00:01', 'w')).toEqual({ type: 'int', value: 86401n });
    expect(code(() => storedLiteral(naiveS, '1970-01-02T00:00:01Z', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(code(() => storedLiteral(naiveS, '1970-01-02T00:00:01.5', 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(storedLiteral(col('time'), '01:00:00.25', 'w')).toEqual({ type: 'int', value: 3_600_250_000n });
  });

  it('names the place and the column in messages', () => {
    expect(() => storedLiteral({ name: 'ts', kind: 'date' }, 'x', 'where[3].eq')).toThrow(/where\[3\]\.eq: column "ts" \(date\)/);
  });
});

describe('storedPredicate', () => {
  it('each op takes its operand', () => {
    expect(storedPredicate(col('int'), { column: 'c', lt: '5' }, 'where[0]')).toEqual({ column: 'c', op: 'lt', value: { type: 'int', value: 5n } });
    expect(storedPredicate(col('int'), { column: 'c', in: [1, '2'] }, 'where[0]').set).toEqual([{ type: 'int', value: 1n }, { type: 'int', value: 2n }]);
    expect(storedPredicate(col('date'), { column: 'c', range: [null, '1970-01-03'] }, 'where[0]')).toEqual({
      column: 'c', op: 'range', lo: null, hi: { type: 'int', value: 2n },
    });
    expect(storedPredicate(col('str'), { column: 'c', prefix: 'ST-' }, 'w').value).toEqual({ type: 'str', value: 'ST-' });
    expect(storedPredicate(col('float'), { column: 'c', is_nan: false }, 'w')).toEqual({ column: 'c', op: 'is_nan', flag: false });
    expect(storedPredicate(col('str'), { column: 'c', is_null: true }, 'w')).toEqual({ column: 'c', op: 'is_null', flag: true });
  });

  it('misuse is a validation error with its code', () => {
    expect(code(() => storedPredicate(col('int'), { column: 'c', prefix: '1' }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c', is_nan: true }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c' }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c', eq: 1, ne: 2 }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c', range: [1] }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c', in: 3 }, 'w'))).toBe('TET_QUERY_WHERE_OP');
    expect(code(() => storedPredicate(col('int'), { column: 'c', in: new Array(65_537).fill(1) }, 'w'))).toBe('TET_QUERY_TOO_LARGE');
    expect(code(() => storedPredicate(col('int'), { column: 'c', in: [1, 'x'] }, 'w'))).toBe('TET_QUERY_BAD_LITERAL');
    expect(storedPredicate(col('int'), { column: 'c', in: new Array(65_536).fill(1) }, 'w').set).toHaveLength(65_536);
  });
});

describe('storedKeyTransform', () => {
  it('buckets and widths by kind', () => {
    expect(storedKeyTransform(col('timestamp'), { bucket: 'hour' }, 'g')).toEqual({ type: 'bucket', bucket: 'hour' });
    expect(storedKeyTransform(col('date'), { bucket: 'month' }, 'g')).toEqual({ type: 'bucket', bucket: 'month' });
    expect(storedKeyTransform(col('int'), { width: 10 }, 'g')).toEqual({ type: 'width_int', width: 10n });
    expect(storedKeyTransform(col('float'), { width: 0.5 }, 'g')).toEqual({ type: 'width_float', width: 0.5 });
    expect(storedKeyTransform(col('str'), {}, 'g')).toEqual({ type: 'none' });
  });

  it('misuse', () => {
    expect(code(() => storedKeyTransform(col('time'), { bucket: 'hour' }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('date'), { bucket: 'minute' }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('int'), { bucket: 'day' }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('str'), { width: 2 }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('int'), { width: 2.5 }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('int'), { width: 0 }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('float'), { width: -1 }, 'g'))).toBe('TET_QUERY_GROUP_BY');
    expect(code(() => storedKeyTransform(col('int'), { width: 2, bucket: 'day' }, 'g'))).toBe('TET_QUERY_GROUP_BY');
  });
});
