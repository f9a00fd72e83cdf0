// lib/tables/values.ts: the literal codecs of spec tables_and_filters.md §1 and §4.5. Expected
// values are hand-computed (and cross-checked against JS Date, an independent calendar) and
// fast-check round trips cover the whole value ranges.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TetQueryError } from '../../lib/errors';
import {
  DATE_MAX_DAYS, DATE_MIN_DAYS, I64_MAX, I64_MIN, floatToJson, formatDate, formatTime, formatTimestamp, intToJson,
  literalFromJson, parseBoolLiteral, parseDate, parseFloatLiteral, parseIntLiteral, parseStrLiteral, parseTime,
  parseTimestamp, valueToJson,
} from '../../lib/tables/values';
import type { TimeUnit } from '../../lib/tables/types';

/** Asserts `fn` throws a TET_QUERY_BAD_LITERAL TetQueryError whose message matches `re`. */
function badLiteral(fn: () => unknown, re?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected a throw').toBeInstanceOf(TetQueryError);
  expect((caught as TetQueryError).code).toBe('TET_QUERY_BAD_LITERAL');
  if (re) expect((caught as Error).message).toMatch(re);
}

const DAY_MS = 86_400_000;
/** The ISO date of JS Date (years ±275760 only): an independent proleptic Gregorian calendar. */
const jsDate = (days: number) => new Date(days * DAY_MS).toISOString().split('T')[0];

describe('date', () => {
  it('hand-computed day counts', () => {
    expect(parseDate('1970-01-01')).toBe(0);
    expect(parseDate('1970-01-02')).toBe(1);
    expect(parseDate('1969-12-31')).toBe(-1);
    expect(parseDate('2000-02-29')).toBe(11016);
    expect(parseDate('2000-03-01')).toBe(11017);
    expect(parseDate('2020-01-01')).toBe(18262);
    // 0001-01-01 is 719162 days before 1970 (Python date.toordinal); year 0 is a leap year
    expect(parseDate('0001-01-01')).toBe(-719162);
    expect(parseDate('0000-01-01')).toBe(-719528);
    expect(parseDate('9999-12-31')).toBe(2932896);
  });

  it('invalid calendar dates and malformed text are errors', () => {
    badLiteral(() => parseDate('2021-02-29'), /28 days/);
    badLiteral(() => parseDate('2100-02-29'), /28 days/);
    badLiteral(() => parseDate('2000-02-30'), /29 days/);
    badLiteral(() => parseDate('2021-04-31'), /30 days/);
    badLiteral(() => parseDate('2021-13-01'), /month 13/);
    badLiteral(() => parseDate('2021-00-10'), /month 0/);
    badLiteral(() => parseDate('2021-01-00'));
    for (const t of ['2021-1-01', '21-01-01', '2021-01-01 ', ' 2021-01-01', '2021/01/01', '2021-01-01T00:00:00Z', '', '+2021-01-01', '-000000-01-01']) {
      badLiteral(() => parseDate(t));
    }
    badLiteral(() => parseDate(18262 as unknown as string), /expected a date/);
    badLiteral(() => parseDate(null as unknown as string));
  });

  it('expanded years outside 0000-9999: printed with a sign and 6+ digits, read back, range-checked', () => {
    expect(formatDate(DATE_MAX_DAYS)).toBe('+5881580-07-11');
    expect(formatDate(DATE_MIN_DAYS)).toBe('-5877641-06-23');
    expect(formatDate(-719529)).toBe('-000001-12-31');
    expect(formatDate(2932897)).toBe('+010000-01-01');
    expect(parseDate('+5881580-07-11')).toBe(DATE_MAX_DAYS);
    expect(parseDate('-5877641-06-23')).toBe(DATE_MIN_DAYS);
    badLiteral(() => parseDate('+5881580-07-12'), /outside the date range/);
    badLiteral(() => parseDate('-5877641-06-22'), /outside the date range/);
  });

  it('formatDate agrees with JS Date over its range; parse∘format = id on every i32 day', () => {
    fc.assert(fc.property(fc.integer({ min: -100_000_000, max: 100_000_000 }), (d) => {
      expect(formatDate(d)).toBe(jsDate(d));
    }), { numRuns: 2000 });
    fc.assert(fc.property(fc.integer({ min: DATE_MIN_DAYS, max: DATE_MAX_DAYS }), (d) => {
      expect(parseDate(formatDate(d))).toBe(d);
    }), { numRuns: 2000 });
  });

  it('format∘parse = id on canonical YYYY-MM-DD', () => {
    const canonical = fc.record({ y: fc.integer({ min: 0, max: 9999 }), m: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 31 }) })
      .map(({ y, m, d }) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`)
      .filter((t) => jsDate(Date.parse(`${t}T00:00:00Z`) / DAY_MS) === t);  // a real calendar date
    fc.assert(fc.property(canonical, (t) => {
      expect(formatDate(parseDate(t))).toBe(t);
      expect(parseDate(t)).toBe(Date.parse(`${t}T00:00:00Z`) / DAY_MS);
    }), { numRuns: 2000 });
  });
});

describe('timestamp', () => {
  const T2020 = 1_577_836_800n;  // 2020-01-01T00:00:00Z in seconds

  it('hand-computed instants, offsets converted to UTC', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z', 'us', 'UTC')).toBe(0n);
    expect(parseTimestamp('2020-01-01T00:00:00Z', 's', 'UTC')).toBe(T2020);
    expect(parseTimestamp('2020-01-01T00:00:00+01:00', 'us', 'UTC')).toBe((T2020 - 3600n) * 1_000_000n);
    expect(parseTimestamp('2020-06-30T23:30:00-02:30', 's', 'UTC')).toBe(parseTimestamp('2020-07-01T02:00:00Z', 's', 'UTC'));
    expect(parseTimestamp('2020-01-01T00:00:00-00:00', 's', 'UTC')).toBe(T2020);
    expect(parseTimestamp('2020-01-01t00:00:00z', 's', 'UTC')).toBe(T2020);
    expect(parseTimestamp('1970-01-01T00:00:01.5Z', 'ms', 'UTC')).toBe(1500n);
    expect(parseTimestamp('1969-12-31T23:59:59.999999Z', 'us', 'UTC')).toBe(-1n);
    expect(parseTimestamp('1970-01-01T00:00:00.123456789Z', 'ns', 'UTC')).toBe(123456789n);
    expect(parseTimestamp('1970-01-01T00:00:00.000001000Z', 'us', 'UTC')).toBe(1n);  // trailing zeros are exact
    expect(parseTimestamp('2020-01-01T00:00:00', 's', 'naive')).toBe(T2020);
    expect(parseTimestamp('2020-01-01T12:00:00.25', 'ms', 'naive')).toBe((T2020 + 43200n) * 1000n + 250n);
    // defaults: unit us, tz UTC
    expect(parseTimestamp('1970-01-01T00:00:00.000002Z')).toBe(2n);
  });

  it('exactness, leap seconds, offsets vs tz, the T separator, malformed text', () => {
    badLiteral(() => parseTimestamp('1970-01-01T00:00:00.0000015Z', 'us', 'UTC'), /not exactly representable in microseconds/);
    expect(parseTimestamp('1970-01-01T00:00:00.0000015Z', 'ns', 'UTC')).toBe(1500n);
    badLiteral(() => parseTimestamp('1970-01-01T00:00:00.5Z', 's', 'UTC'), /not exactly representable/);
    badLiteral(() => parseTimestamp('1970-01-01T00:00:00.0001Z', 'ms', 'UTC'), /not exactly representable/);
    badLiteral(() => parseTimestamp('2016-12-31T23:59:60Z', 's', 'UTC'), /leap second/);
    badLiteral(() => parseTimestamp('2020-01-01T00:00:00', 's', 'UTC'), /no offset/);
    badLiteral(() => parseTimestamp('2020-01-01T00:00:00Z', 's', 'naive'), /has an offset/);
    badLiteral(() => parseTimestamp('2020-01-01T00:00:00+01:00', 's', 'naive'), /has an offset/);
    badLiteral(() => parseTimestamp('2020-01-01 00:00:00Z', 's', 'UTC'), /not a space/);
    badLiteral(() => parseTimestamp('1970-01-01T00:00:00.1234567890Z', 'ns', 'UTC'), /at most 9/);
    for (const t of ['2020-01-01T00:00Z', '2020-01-01T24:00:00Z', '2020-01-01T00:60:00Z', '2020-01-01T00:00:00.Z',
      '2020-01-01T00:00:00+0100', '2020-01-01T00:00:00+24:00', '2020-01-01T00:00:00+01:60', '2020-01-01TZ', '2020-01-01',
      '2020-01-01T00:00:00ZZ', '2020-02-30T00:00:00Z', '2020-01-01T1:00:00Z', '']) {
      badLiteral(() => parseTimestamp(t, 'us', 'UTC'));
    }
  });

  it('the i64 range of each unit: the extreme instants print and read back; one past is an error', () => {
    expect(formatTimestamp(I64_MIN, 'ns', true)).toBe('1677-09-21T00:12:43.145224192Z');
    expect(formatTimestamp(I64_MAX, 'ns', true)).toBe('2262-04-11T23:47:16.854775807Z');
    expect(parseTimestamp('2262-04-11T23:47:16.854775807Z', 'ns', 'UTC')).toBe(I64_MAX);
    badLiteral(() => parseTimestamp('2262-04-11T23:47:16.854775808Z', 'ns', 'UTC'), /outside the i64 range/);
    expect(formatTimestamp(I64_MAX, 's', true)).toBe('+292277026596-12-04T15:30:07Z');
    expect(parseTimestamp('+292277026596-12-04T15:30:07Z', 's', 'UTC')).toBe(I64_MAX);
    badLiteral(() => parseTimestamp('+292277026596-12-04T15:30:08Z', 's', 'UTC'), /outside the i64 range/);
    for (const unit of ['s', 'ms', 'us', 'ns'] as TimeUnit[]) {
      for (const v of [I64_MIN, I64_MAX, 0n, -1n, 1n]) {
        expect(parseTimestamp(formatTimestamp(v, unit, false), unit, 'naive')).toBe(v);
      }
    }
  });

  it('printing: Z for UTC, none for naive, fraction digits only as needed', () => {
    expect(formatTimestamp(0n, 'ns', false)).toBe('1970-01-01T00:00:00');
    expect(formatTimestamp(0n, 'us', true)).toBe('1970-01-01T00:00:00Z');
    expect(formatTimestamp(1_000_000_000n, 'ns', true)).toBe('1970-01-01T00:00:01Z');
    expect(formatTimestamp(1500n, 'ms', true)).toBe('1970-01-01T00:00:01.5Z');
    expect(formatTimestamp(1_500_000n, 'us', true)).toBe('1970-01-01T00:00:01.5Z');
    expect(formatTimestamp(1_000_010n, 'us', true)).toBe('1970-01-01T00:00:01.00001Z');
    expect(formatTimestamp(-1n, 'us', true)).toBe('1969-12-31T23:59:59.999999Z');
    expect(formatTimestamp(-1n, 's', false)).toBe('1969-12-31T23:59:59');
    expect(formatTimestamp(T2020 * 1000n + 120n, 'ms', true)).toBe('2020-01-01T00:00:00.12Z');
  });

  it('formatTimestamp in ms agrees with JS Date; parse∘format = id on every i64 of every unit', () => {
    const msRange = fc.bigInt(-8_640_000_000_000_000n, 8_640_000_000_000_000n);
    fc.assert(fc.property(msRange, (v) => {
      const iso = new Date(Number(v)).toISOString();  // ...THH:MM:SS.mmmZ
      const expected = iso.replace(/\.(\d{3})Z$/, (_, f: string) => (f === '000' ? 'Z' : `.${f.replace(/0+$/, '')}Z`));
      expect(formatTimestamp(v, 'ms', true)).toBe(expected);
    }), { numRuns: 2000 });
    fc.assert(fc.property(fc.bigInt(I64_MIN, I64_MAX), fc.constantFrom<TimeUnit>('s', 'ms', 'us', 'ns'), fc.boolean(), (v, unit, utc) => {
      expect(parseTimestamp(formatTimestamp(v, unit, utc), unit, utc ? 'UTC' : 'naive')).toBe(v);
    }), { numRuns: 3000 });
  });

  it('format∘parse = id on canonical RFC 3339 text (UTC Z, trimmed fractions)', () => {
    const canonical = fc.record({
      day: fc.integer({ min: parseDate('1677-09-22'), max: parseDate('2262-04-10') }),  // the ns range
      h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), s: fc.integer({ min: 0, max: 59 }),
      frac: fc.stringMatching(/^([0-9]{0,8}[1-9])?$/), utc: fc.boolean(),
    }).map(({ day, h, mi, s, frac, utc }) => {
      const p = (v: number) => String(v).padStart(2, '0');
      return `${formatDate(day)}T${p(h)}:${p(mi)}:${p(s)}${frac ? `.${frac}` : ''}${utc ? 'Z' : ''}`;
    });
    fc.assert(fc.property(canonical, (t) => {
      const utc = t.endsWith('Z');
      expect(formatTimestamp(parseTimestamp(t, 'ns', utc ? 'UTC' : 'naive'), 'ns', utc)).toBe(t);
    }), { numRuns: 2000 });
  });

  it('random text never crashes: a value or TET_QUERY_BAD_LITERAL', () => {
    const text = fc.oneof(fc.string(), fc.stringMatching(/^[0-9+\-:.TZtz ]{0,32}$/));
    fc.assert(fc.property(text, (t) => {
      for (const fn of [() => parseTimestamp(t, 'us', 'UTC'), () => parseTimestamp(t, 'ns', 'naive'), () => parseDate(t), () => parseTime(t)]) {
        try {
          fn();
        } catch (err) {
          expect(err).toBeInstanceOf(TetQueryError);
          expect((err as TetQueryError).code).toBe('TET_QUERY_BAD_LITERAL');
        }
      }
    }), { numRuns: 3000 });
  });
});

describe('time', () => {
  it('hand-computed microseconds since midnight, printing trimmed', () => {
    expect(parseTime('00:00:00')).toBe(0n);
    expect(parseTime('23:59:59.999999')).toBe(86_399_999_999n);
    expect(parseTime('12:34:56.5')).toBe(45_296_500_000n);
    expect(parseTime('12:00:00.123000000')).toBe(43_200_123_000n);
    expect(formatTime(45_296_500_000n)).toBe('12:34:56.5');
    expect(formatTime(0n)).toBe('00:00:00');
    expect(formatTime(86_399_999_999n)).toBe('23:59:59.999999');
    expect(formatTime(1n)).toBe('00:00:00.000001');
  });

  it('errors: out of range fields, leap second, inexact fraction, missing seconds, offsets', () => {
    badLiteral(() => parseTime('24:00:00'));
    badLiteral(() => parseTime('12:00:60'), /leap second/);
    badLiteral(() => parseTime('12:00:00.0000001'), /not exactly representable/);
    for (const t of ['12:00', '12:00:00Z', '12:00:00+01:00', '1:00:00', '12:00:00.', 'T12:00:00', '']) badLiteral(() => parseTime(t));
    badLiteral(() => formatTime(86_400_000_000n));
    badLiteral(() => formatTime(-1n));
  });

  it('parse∘format = id over the day', () => {
    fc.assert(fc.property(fc.bigInt(0n, 86_399_999_999n), (v) => {
      expect(parseTime(formatTime(v))).toBe(v);
    }), { numRuns: 2000 });
  });
});

describe('int, float, bool, str literals', () => {
  it('int: JSON integers within ±(2^53-1), integral numbers, decimal strings within i64', () => {
    expect(parseIntLiteral(5)).toBe(5n);
    expect(parseIntLiteral(JSON.parse('3.0'))).toBe(3n);
    expect(parseIntLiteral(JSON.parse('1e3'))).toBe(1000n);
    expect(parseIntLiteral(-0)).toBe(0n);
    expect(parseIntLiteral(-(2 ** 53 - 1))).toBe(-9007199254740991n);
    expect(parseIntLiteral('9223372036854775807')).toBe(I64_MAX);
    expect(parseIntLiteral('-9223372036854775808')).toBe(I64_MIN);
    expect(parseIntLiteral('007')).toBe(7n);
    expect(parseIntLiteral(12n)).toBe(12n);
    badLiteral(() => parseIntLiteral(JSON.parse('9007199254740993')), /decimal string/);  // parses to 2^53
    badLiteral(() => parseIntLiteral(2 ** 60), /beyond ±2\^53/);
    badLiteral(() => parseIntLiteral('9223372036854775808'), /i64/);
    badLiteral(() => parseIntLiteral('-9223372036854775809'), /i64/);
    badLiteral(() => parseIntLiteral(1n << 63n), /i64/);
    for (const x of [1.5, NaN, Infinity, '+7', '1.0', '1e3', '', ' 1', '0x10', true, null, [1]]) badLiteral(() => parseIntLiteral(x));
    fc.assert(fc.property(fc.bigInt(I64_MIN, I64_MAX), (v) => {
      expect(parseIntLiteral(v.toString())).toBe(v);
      expect(parseIntLiteral(intToJson(v))).toBe(v);
    }));
  });

  it('float: numbers and the three non-finite strings', () => {
    expect(parseFloatLiteral(1.5)).toBe(1.5);
    expect(parseFloatLiteral('NaN')).toBeNaN();
    expect(parseFloatLiteral('Infinity')).toBe(Infinity);
    expect(parseFloatLiteral('-Infinity')).toBe(-Infinity);
    for (const x of ['nan', 'inf', '1.5', '', null, true, 1n]) badLiteral(() => parseFloatLiteral(x));
    expect([NaN, Infinity, -Infinity, 2.5].map(floatToJson)).toEqual(['NaN', 'Infinity', '-Infinity', 2.5]);
  });

  it('bool and str', () => {
    expect(parseBoolLiteral(true)).toBe(true);
    badLiteral(() => parseBoolLiteral(1));
    badLiteral(() => parseBoolLiteral('true'));
    expect(parseStrLiteral('ünï')).toBe('ünï');
    badLiteral(() => parseStrLiteral('a\ud800b'), /lone surrogate/);
    badLiteral(() => parseStrLiteral(5));
  });

  it('literalFromJson / valueToJson per column kind', () => {
    const ts = { kind: 'timestamp', unit: 'ms', tz: 'UTC', nullable: true } as const;
    expect(literalFromJson(ts, '2020-01-01T00:00:00.5+00:30')).toBe(1_577_835_000_500n);
    expect(valueToJson(ts, 1_577_835_000_500n)).toBe('2019-12-31T23:30:00.5Z');
    const naive = { kind: 'timestamp', unit: 's', tz: 'naive', nullable: true } as const;
    expect(valueToJson(naive, 0n)).toBe('1970-01-01T00:00:00');
    badLiteral(() => literalFromJson(naive, '1970-01-01T00:00:00Z'));
    expect(literalFromJson({ kind: 'date', nullable: true }, '2000-03-01')).toBe(11017n);
    expect(valueToJson({ kind: 'date', nullable: true }, 11017n)).toBe('2000-03-01');
    expect(literalFromJson({ kind: 'time', nullable: true }, '00:00:01')).toBe(1_000_000n);
    expect(valueToJson({ kind: 'time', nullable: true }, 1_000_000n)).toBe('00:00:01');
    expect(valueToJson({ kind: 'int', nullable: true }, 1n << 60n)).toBe('1152921504606846976');
    expect(valueToJson({ kind: 'int', nullable: true }, -5n)).toBe(-5);
    expect(valueToJson({ kind: 'float', nullable: true }, NaN)).toBe('NaN');
    expect(valueToJson({ kind: 'bool', nullable: true }, true)).toBe(true);
    expect(literalFromJson({ kind: 'str', nullable: true }, 'DE')).toBe('DE');
  });
});
