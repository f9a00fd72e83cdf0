// lib/tables/normalize.ts: every SDK column form of spec tables_and_filters.md §4.5 becomes the
// physical batch the writer takes; errors name column and row. Expected batches are written out
// by hand (or computed by a plain reference in the test: Buffer.from for UTF-8, BigInt per row).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TetIoError } from '../../lib/errors';
import { fromPhysical, resolveColumnSchema, schemaFromSpec, toPhysical, validateName } from '../../lib/tables/normalize';
import type { ColumnInput, PhysicalBatch } from '../../lib/tables/types';
import { Utf8BatchBuilder, firstInvalidUtf8Row } from '../../lib/tables/utf8';

function writeArgument(fn: () => unknown, re: RegExp, code = 'TET_WRITE_ARGUMENT'): TetIoError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected a throw').toBeInstanceOf(TetIoError);
  expect((caught as TetIoError).code).toBe(code);
  expect((caught as Error).message).toMatch(re);
  return caught as TetIoError;
}

const i64 = (xs: (number | bigint)[]) => BigInt64Array.from(xs.map((x) => BigInt(x)));
const mask = (xs: number[]) => Uint8Array.from(xs);
/** The data array of a non-str batch. */
const dataOf = (name: string, col: ColumnInput) => (toPhysical(name, col) as { data: unknown }).data;

/** The reference str batch: Buffer.from per string, offsets by running sum. */
function refStr(values: (string | null)[]): { bytes: Uint8Array; offsets: Uint32Array } {
  const parts = values.map((v) => Buffer.from(v ?? '', 'utf8'));
  const offsets = new Uint32Array(values.length + 1);
  parts.forEach((p, i) => { offsets[i + 1] = offsets[i] + p.length; });
  return { bytes: new Uint8Array(Buffer.concat(parts)), offsets };
}

describe('int columns', () => {
  it('every integer typed array widens exactly to i64', () => {
    const expected = i64([-128, -1, 0, 1, 127]);
    for (const arr of [Int8Array.from([-128, -1, 0, 1, 127]), Int16Array.from([-128, -1, 0, 1, 127]), Int32Array.from([-128, -1, 0, 1, 127])]) {
      expect(toPhysical('c', { kind: 'int', values: arr })).toEqual({ kind: 'int', rows: 5, data: expected });
    }
    expect(toPhysical('c', { kind: 'int', values: Uint8Array.from([0, 255]) })).toEqual({ kind: 'int', rows: 2, data: i64([0, 255]) });
    expect(dataOf('c', { kind: 'int', values: Uint16Array.from([65535]) })).toEqual(i64([65535]));
    expect(dataOf('c', { kind: 'int', values: Uint32Array.from([4294967295, 2147483648]) })).toEqual(i64([4294967295, 2147483648]));
    expect(dataOf('c', { kind: 'int', values: Int32Array.from([-2147483648, 2147483647]) })).toEqual(i64([-2147483648, 2147483647]));
    const big = BigInt64Array.from([-(1n << 63n), (1n << 63n) - 1n]);
    const b = toPhysical('c', { kind: 'int', values: big });
    expect(b).toEqual({ kind: 'int', rows: 2, data: big });
    expect((b as { data: BigInt64Array }).data).not.toBe(big);  // never aliases the input
    expect(dataOf('c', { kind: 'int', values: BigUint64Array.from([(1n << 63n) - 1n]) })).toEqual(BigInt64Array.from([(1n << 63n) - 1n]));
  });

  it('random Int32 / number / bigint inputs equal the BigInt-per-row reference', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), (xs) => {
      expect((toPhysical('c', { kind: 'int', values: Int32Array.from(xs) }) as { data: BigInt64Array }).data).toEqual(i64(xs));
    }));
    fc.assert(fc.property(fc.array(fc.maxSafeInteger()), (xs) => {
      expect((toPhysical('c', { kind: 'int', values: xs }) as { data: BigInt64Array }).data).toEqual(i64(xs));
      expect((toPhysical('c', { kind: 'int', values: Float64Array.from(xs) }) as { data: BigInt64Array }).data).toEqual(i64(xs));
    }));
    fc.assert(fc.property(fc.array(fc.bigInt(-(1n << 63n), (1n << 63n) - 1n)), (xs) => {
      expect((toPhysical('c', { kind: 'int', values: xs }) as { data: BigInt64Array }).data).toEqual(BigInt64Array.from(xs));
    }));
  });

  it('plain arrays: numbers, bigints beyond 2^53, decimal strings, null entries', () => {
    const b = toPhysical('n', { kind: 'int', values: [1, null, 2n ** 60n, '-9223372036854775808', null] });
    expect(b).toEqual({ kind: 'int', rows: 5, data: i64([1, 0, 2n ** 60n, -(2n ** 63n), 0]), valid: mask([1, 0, 1, 1, 0]) });
  });

  it('a valid mask instead of nulls: masked rows are zero and not read; all-present masks are dropped', () => {
    const b = toPhysical('v', { kind: 'int', values: Int32Array.from([5, 99, 7]), valid: mask([1, 0, 1]) });
    expect(b).toEqual({ kind: 'int', rows: 3, data: i64([5, 0, 7]), valid: mask([1, 0, 1]) });
    expect(dataOf('v', { kind: 'int', values: Float64Array.from([1, NaN, 3]), valid: mask([1, 0, 1]) })).toEqual(i64([1, 0, 3]));
    expect(dataOf('v', { kind: 'int', values: [1, 'junk', 3], valid: mask([1, 0, 1]) })).toEqual(i64([1, 0, 3]));
    expect(toPhysical('v', { kind: 'int', values: [1, 2], valid: mask([1, 1]) })).toEqual({ kind: 'int', rows: 2, data: i64([1, 2]) });
  });

  it('errors name the column and the row', () => {
    const e = writeArgument(() => toPhysical('temp', { kind: 'int', values: [1, 2, NaN] }), /column 'temp' row 2: NaN in an integer column/);
    expect(e.detail).toMatchObject({ column: 'temp', row: 2 });
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1.5] }), /row 0: 1.5 is not an integer/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: Float64Array.from([0, 0.25]) }), /row 1: 0.25 is not an integer/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [2 ** 53] }), /row 0: .*give it as a bigint/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [0, 1n << 63n] }), /row 1: .*outside the i64 range/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: BigUint64Array.from([0n, 1n << 63n]) }), /row 1: .*beyond the i64 maximum/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, '1.5'] }), /row 1: expected an integer or a decimal string/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, undefined] }), /row 1: expected an integer or null, found undefined/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, true] }), /row 1: expected an integer/);
    expect(writeArgument(() => toPhysical('c', { kind: 'int', values: [1, 'x'] }, { rowBase: 1000 }), /row 1001/).detail).toMatchObject({ row: 1001 });
    writeArgument(() => toPhysical('c', { kind: 'int', values: [null, 1], valid: mask([1, 1]) }), /row 0: null entry .* valid mask/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, 2], valid: mask([1]) }), /valid has 1 entries for 2 rows/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, 2], valid: mask([1, 2]) }), /valid\[1\] is 2/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, 2], valid: [1, 1] as unknown as Uint8Array }), /valid must be a Uint8Array/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: 5 as unknown as number[] }), /values must be an array/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: [1, null, 3], nullable: false }), /column 'c' row 1: null in a column declared nullable: false/);
    writeArgument(() => toPhysical('c', { kind: 'int', values: Int8Array.from([1, 2]), valid: mask([1, 0]), nullable: false }), /row 1: null/);
  });
});

describe('float columns', () => {
  it('Float64Array copied, Float32Array and small ints widened exactly, JSON strings for non-finite values', () => {
    const f32 = Float32Array.from([0.1, -3.5, Infinity]);
    expect(toPhysical('f', { kind: 'float', values: f32 })).toEqual({ kind: 'float', rows: 3, data: Float64Array.from([Math.fround(0.1), -3.5, Infinity]) });
    const f64 = Float64Array.from([0.1, NaN]);
    const b = toPhysical('f', { kind: 'float', values: f64 }) as { data: Float64Array };
    expect(b.data).toEqual(f64);
    expect(b.data).not.toBe(f64);
    expect(dataOf('f', { kind: 'float', values: Int32Array.from([-7]) })).toEqual(Float64Array.from([-7]));
    expect(toPhysical('f', { kind: 'float', values: [1.5, null, 'NaN', '-Infinity', -0] })).toEqual(
      { kind: 'float', rows: 5, data: Float64Array.from([1.5, 0, NaN, -Infinity, -0]), valid: mask([1, 0, 1, 1, 1]) });
    expect(dataOf('f', { kind: 'float', values: Float64Array.from([1, NaN, 3]), valid: mask([1, 0, 1]) })).toEqual(Float64Array.from([1, 0, 3]));
  });
  it('errors', () => {
    writeArgument(() => toPhysical('f', { kind: 'float', values: [1, 'nan'] }), /column 'f' row 1: expected a number or "NaN"/);
    writeArgument(() => toPhysical('f', { kind: 'float', values: [1, 2n] }), /row 1/);
    writeArgument(() => toPhysical('f', { kind: 'float', values: BigInt64Array.from([1n]) }), /does not convert to f64 exactly/);
  });
});

describe('bool columns', () => {
  it('Uint8Array 0/1 and boolean arrays with nulls', () => {
    expect(toPhysical('b', { kind: 'bool', values: mask([0, 1, 1]) })).toEqual({ kind: 'bool', rows: 3, data: mask([0, 1, 1]) });
    expect(toPhysical('b', { kind: 'bool', values: [true, null, false, 1, 0] })).toEqual(
      { kind: 'bool', rows: 5, data: mask([1, 0, 0, 1, 0]), valid: mask([1, 0, 1, 1, 1]) });
    expect(toPhysical('b', { kind: 'bool', values: mask([1, 7]), valid: mask([1, 0]) })).toEqual({ kind: 'bool', rows: 2, data: mask([1, 0]), valid: mask([1, 0]) });
  });
  it('errors', () => {
    writeArgument(() => toPhysical('b', { kind: 'bool', values: mask([0, 2]) }), /column 'b' row 1: 2 in a bool Uint8Array/);
    writeArgument(() => toPhysical('b', { kind: 'bool', values: [true, 'true'] }), /row 1: expected true, false/);
  });
});

describe('str columns', () => {
  it('UTF-8 in one buffer with rows + 1 offsets; nulls are empty rows', () => {
    const values = ['DE', 'Zürich', null, '', '東京', '😀x'];
    const ref = refStr(values);
    expect(toPhysical('s', { kind: 'str', values })).toEqual({ kind: 'str', rows: 6, bytes: ref.bytes, offsets: ref.offsets, valid: mask([1, 1, 0, 1, 1, 1]) });
    const masked = toPhysical('s', { kind: 'str', values: ['a', 'hidden', 'c'], valid: mask([1, 0, 1]) });
    expect(masked).toEqual({ kind: 'str', rows: 3, ...refStr(['a', null, 'c']), valid: mask([1, 0, 1]) });
  });

  it('random strings (any code points) equal the Buffer.from reference, also past the first size guess', () => {
    const str = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ maxLength: 3 }), fc.constant(null));
    fc.assert(fc.property(fc.array(str, { maxLength: 200 }), (values) => {
      const b = toPhysical('s', { kind: 'str', values }) as PhysicalBatch & { kind: 'str' };
      const ref = refStr(values);
      expect(b.bytes).toEqual(ref.bytes);
      expect(b.offsets).toEqual(ref.offsets);
    }), { numRuns: 500 });
    // the guess samples a few rows: one short row then long ones forces growth
    const values = ['a', ...Array.from({ length: 500 }, (_, i) => 'ü'.repeat(i % 50))];
    const b = toPhysical('s', { kind: 'str', values }) as PhysicalBatch & { kind: 'str' };
    expect(b.bytes).toEqual(refStr(values).bytes);
  });

  it('lone surrogates and non-strings are errors with column and row', () => {
    writeArgument(() => toPhysical('name', { kind: 'str', values: ['ok', 'b\udc00'] }), /column 'name' row 1: string has a lone surrogate/);
    writeArgument(() => toPhysical('name', { kind: 'str', values: ['ok', 5] }), /row 1: expected a string or null, found 5/);
    writeArgument(() => toPhysical('name', { kind: 'str', values: Uint8Array.from([1]) }), /expected an array of strings/);
  });
});

describe('date, timestamp and time columns', () => {
  it('date: Int32Array days, strings, nulls; i64 days in the batch', () => {
    expect(toPhysical('d', { kind: 'date', values: Int32Array.from([0, 11017, -1]) })).toEqual({ kind: 'date', rows: 3, data: i64([0, 11017, -1]) });
    expect(toPhysical('d', { kind: 'date', values: ['1970-01-02', null, '2000-03-01'] })).toEqual(
      { kind: 'date', rows: 3, data: i64([1, 0, 11017]), valid: mask([1, 0, 1]) });
    writeArgument(() => toPhysical('d', { kind: 'date', values: ['2021-02-28', '2021-02-29'] }), /column 'd' row 1: .*28 days/);
    writeArgument(() => toPhysical('d', { kind: 'date', values: Uint32Array.from([0, 2 ** 31]) }), /row 1: 2147483648 is outside the range of a date/);
    writeArgument(() => toPhysical('d', { kind: 'date', values: BigInt64Array.from([1n << 40n]) }), /row 0: .*outside the range of a date/);
  });

  it('timestamp: BigInt64Array ticks, RFC 3339 strings in the unit and tz of the column', () => {
    const ts = BigInt64Array.from([1_577_836_800_000_000n]);
    expect(toPhysical('t', { kind: 'timestamp', values: ts })).toEqual({ kind: 'timestamp', rows: 1, data: ts });
    expect(toPhysical('t', { kind: 'timestamp', unit: 'ms', values: ['2020-01-01T00:00:00.5+01:00', null] })).toEqual(
      { kind: 'timestamp', rows: 2, data: i64([1_577_833_200_500n, 0]), valid: mask([1, 0]) });
    expect(dataOf('t', { kind: 'timestamp', unit: 's', tz: 'naive', values: ['1970-01-01T00:01:00'] })).toEqual(i64([60]));
    writeArgument(() => toPhysical('t', { kind: 'timestamp', unit: 's', tz: 'naive', values: ['1970-01-01T00:01:00Z'] }), /column 't' row 0: .*has an offset/);
    writeArgument(() => toPhysical('t', { kind: 'timestamp', values: ['1970-01-01T00:00:00.0000005Z'] }), /row 0: .*not exactly representable/);
    writeArgument(() => toPhysical('t', { kind: 'timestamp', values: ['1970-01-01 00:00:00Z'] }), /row 0: .*not a space/);
  });

  it('time: strings or BigInt64Array µs within the day', () => {
    expect(toPhysical('h', { kind: 'time', values: ['12:34:56.5', null] })).toEqual({ kind: 'time', rows: 2, data: i64([45_296_500_000n, 0]), valid: mask([1, 0]) });
    expect(dataOf('h', { kind: 'time', values: BigInt64Array.from([0n, 86_399_999_999n]) })).toEqual(BigInt64Array.from([0n, 86_399_999_999n]));
    writeArgument(() => toPhysical('h', { kind: 'time', values: BigInt64Array.from([0n, 86_400_000_000n]) }), /column 'h' row 1: .*outside the range of a time/);
    writeArgument(() => toPhysical('h', { kind: 'time', values: ['25:00:00'] }), /row 0/);
  });
});

describe('schemas and names', () => {
  it('defaults filled in; unknown kinds, units, tz, keys and misplaced options are errors', () => {
    expect(resolveColumnSchema('t', { kind: 'timestamp' })).toEqual({ kind: 'timestamp', unit: 'us', tz: 'UTC', nullable: true });
    expect(resolveColumnSchema('i', { kind: 'int', nullable: false })).toEqual({ kind: 'int', nullable: false });
    writeArgument(() => resolveColumnSchema('x', { kind: 'decimal' as 'int' }), /kind must be one of bool, int/);
    writeArgument(() => resolveColumnSchema('x', { kind: 'timestamp', unit: 'min' as 's' }), /unit must be one of s, ms, us, ns/);
    writeArgument(() => resolveColumnSchema('x', { kind: 'timestamp', tz: 'Europe/Paris' as 'UTC' }), /tz must be 'UTC' or 'naive'/);
    writeArgument(() => resolveColumnSchema('x', { kind: 'int', unit: 's' }), /unit and tz apply to timestamp columns only/);
    writeArgument(() => resolveColumnSchema('x', { kind: 'int', nulable: true } as unknown as ColumnInput), /unknown key 'nulable'/);
    writeArgument(() => resolveColumnSchema('x', { kind: 'int', nullable: 1 as unknown as boolean }), /nullable must be a boolean/);
  });

  it('table and column names: non-empty, ≤ 1024 UTF-8 bytes, well-formed, unique', () => {
    const s = schemaFromSpec('obs', { ts: { kind: 'timestamp', unit: 'ms' }, '1': { kind: 'int' } });
    expect(s.name).toBe('obs');
    expect(s.columns.map((c) => c.name).sort()).toEqual(['1', 'ts']);
    const arr = schemaFromSpec('obs', [{ name: 'b', kind: 'bool' }, { name: 'a', kind: 'str' }]);
    expect(arr.columns).toEqual([{ name: 'b', schema: { kind: 'bool', nullable: true } }, { name: 'a', schema: { kind: 'str', nullable: true } }]);
    expect(validateName('column', 'é'.repeat(512))).toHaveLength(512);  // 1024 bytes
    writeArgument(() => validateName('column', 'é'.repeat(512) + 'x'), /1025 UTF-8 bytes long; at most 1024/, 'TET_WRITE_BAD_NAME');
    writeArgument(() => schemaFromSpec('', { a: { kind: 'int' } }), /table name must be a non-empty string/, 'TET_WRITE_BAD_NAME');
    writeArgument(() => schemaFromSpec('t', { '': { kind: 'int' } }), /column name must be a non-empty string/, 'TET_WRITE_BAD_NAME');
    writeArgument(() => schemaFromSpec('t', [{ name: 'a', kind: 'int' }, { name: 'a', kind: 'str' }]), /column name 'a' appears twice/, 'TET_WRITE_BAD_NAME');
    writeArgument(() => schemaFromSpec('t\ud800', { a: { kind: 'int' } }), /lone surrogate/, 'TET_WRITE_BAD_NAME');
    writeArgument(() => schemaFromSpec('t', {}), /has no columns/);
    writeArgument(() => schemaFromSpec('t', { a: { kind: 'int', unit: 'ms' } }), /column 'a': unit and tz/);
  });
});

describe('fromPhysical', () => {
  it('what users read: date as Int32Array days, strings decoded, valid only when a null is present', () => {
    expect(fromPhysical({ kind: 'date', rows: 2, data: i64([11017, -1]) }, { kind: 'date' })).toEqual({ kind: 'date', rows: 2, values: Int32Array.from([11017, -1]) });
    expect(fromPhysical({ kind: 'int', rows: 2, data: i64([5, 0]), valid: mask([1, 0]) }, { kind: 'int' })).toEqual(
      { kind: 'int', rows: 2, values: i64([5, 0]), valid: mask([1, 0]) });
    expect(fromPhysical({ kind: 'float', rows: 1, data: Float64Array.from([2.5]), valid: mask([1]) }, { kind: 'float' })).toEqual(
      { kind: 'float', rows: 1, values: Float64Array.from([2.5]) });
    const values = ['DE', '', 'Zürich', '😀'];
    expect(fromPhysical({ kind: 'str', rows: 4, ...refStr(values) }, { kind: 'str' })).toEqual({ kind: 'str', rows: 4, values });
    expect(fromPhysical({ kind: 'str', rows: 3, ...refStr(['ab', 'c', 'def']) }, { kind: 'str' }).values).toEqual(['ab', 'c', 'def']);
  });

  it('toPhysical then fromPhysical gives the input back (random columns of every kind)', () => {
    fc.assert(fc.property(fc.array(fc.option(fc.string({ unit: 'grapheme', maxLength: 8 }), { nil: null })), (values) => {
      const back = fromPhysical(toPhysical('s', { kind: 'str', values }), { kind: 'str' });
      expect(back.values).toEqual(values.map((v) => v ?? ''));
      expect(back.valid).toEqual(values.includes(null) ? Uint8Array.from(values.map((v) => (v === null ? 0 : 1))) : undefined);
    }), { numRuns: 300 });
    fc.assert(fc.property(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), (days) => {
      expect(fromPhysical(toPhysical('d', { kind: 'date', values: Int32Array.from(days) }), { kind: 'date' }).values).toEqual(Int32Array.from(days));
    }));
  });

  it('malformed batches are refused', () => {
    expect(() => fromPhysical({ kind: 'int', rows: 1, data: i64([1]) }, { kind: 'float' })).toThrow(/kind int for a float column/);
    expect(() => fromPhysical({ kind: 'date', rows: 1, data: i64([2 ** 31]) }, { kind: 'date' })).toThrow(/outside the i32 day range/);
    expect(() => fromPhysical({ kind: 'str', rows: 1, bytes: new Uint8Array(1), offsets: Uint32Array.from([0, 2]) }, { kind: 'str' })).toThrow(/run past/);
    expect(() => fromPhysical({ kind: 'str', rows: 1, bytes: new Uint8Array(1), offsets: Uint32Array.from([0]) }, { kind: 'str' })).toThrow(/offsets for 1 rows/);
  });
});

describe('Utf8BatchBuilder and UTF-8 validation of raw bytes', () => {
  it('raw bytes rows are validated per row, even when the concatenation is valid', () => {
    const b = new Utf8BatchBuilder(3);
    b.appendBytes(Buffer.from('ok'));
    b.appendBytes(Uint8Array.from([0xc3]));        // lead byte alone
    b.appendBytes(Uint8Array.from([0xbc, 0x61]));  // continuation first: 'ü' only when joined
    expect(() => b.finish(true)).toThrow(/not valid UTF-8/);
    const { bytes, offsets } = b.finish();
    expect(firstInvalidUtf8Row(bytes, offsets)).toBe(1);
    expect(firstInvalidUtf8Row(Uint8Array.from([0x61, 0xff]), Uint32Array.from([0, 1, 2]))).toBe(1);
    expect(firstInvalidUtf8Row(Buffer.from('aüb'), Uint32Array.from([0, 1, 3, 4]))).toBe(-1);
  });
});
