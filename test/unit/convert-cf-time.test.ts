// CF time -> timestamp ticks (lib/convert/cf_time.ts) against hand-computed instants: unit
// spellings, reference dates with time, fraction and zone, the µs / ns / rounded-µs choice,
// nulls, the i64 range and the calendars that are refused.
import { describe, expect, it } from 'vitest';
import { cfTimeOf, cfTimestamps, type CfTime } from '../../lib/convert/cf_time';

function time(units: string, calendar?: string): CfTime {
  const t = cfTimeOf(units, calendar);
  if (!t || 'refused' in t) throw new Error(`not a time: ${JSON.stringify(t)}`);
  return t;
}

const S = 1_000_000n; // µs per second
const JAN_2020 = 1_577_836_800n; // 2020-01-01T00:00:00Z in seconds

describe('CF time units', () => {
  it('reads unit words, dates, times, fractions and zones', () => {
    expect(cfTimestamps(time('hours since 2020-01-01 00:00:00'), [0, 1.5, -24], null).ticks)
      .toEqual(BigInt64Array.from([JAN_2020 * S, (JAN_2020 + 5400n) * S, (JAN_2020 - 86_400n) * S]));
    expect(cfTimestamps(time('Seconds since 2020-1-1T00:00:00 +01:00'), [0, 0.25], null).ticks)
      .toEqual(BigInt64Array.from([(JAN_2020 - 3600n) * S, (JAN_2020 - 3600n) * S + 250_000n]));
    expect(cfTimestamps(time('min since 2020-01-01 06:30 -6'), [30], null).ticks)
      .toEqual(BigInt64Array.from([(JAN_2020 + 6n * 3600n + 30n * 60n + 6n * 3600n + 1800n) * S]));
    expect(cfTimestamps(time('seconds since 1970-01-01 00:00:00.5Z'), [0], null).ticks).toEqual(BigInt64Array.from([500_000n]));
    expect(cfTimestamps(time('days since 1-1-1', 'proleptic_gregorian'), [0], null).ticks)
      .toEqual(BigInt64Array.from([-62_135_596_800n * S]));
    expect(cfTimestamps(time('d since 1970-01-01', 'gregorian'), [BigInt(-1)], null).ticks).toEqual(BigInt64Array.from([-86_400n * S]));
    // Negative instants through the double fast path (both 32-bit halves of each tick).
    expect(cfTimestamps(time('days since 1970-01-01'), [-1.5, -25_000_000], null).ticks)
      .toEqual(BigInt64Array.from([-129_600n * S, -25_000_000n * 86_400n * S]));
  });

  it('chooses µs when exact, ns when only ns is exact, else rounds to µs', () => {
    expect(cfTimestamps(time('hours since 2020-01-01'), [0.5, 2 ** -4], null)).toMatchObject({ unit: 'us', rounded: 0, ticks: BigInt64Array.from([(JAN_2020 + 1800n) * S, (JAN_2020 + 225n) * S]) });
    const ns = cfTimestamps(time('microseconds since 2020-01-01'), [0.5, 1.25], null);
    expect(ns.unit).toBe('ns');
    expect(ns.ticks).toEqual(BigInt64Array.from([JAN_2020 * 1_000_000_000n + 500n, JAN_2020 * 1_000_000_000n + 1250n]));
    // 0.1 s is not a whole number of ns as a double: µs, rounded (100000 µs).
    const r = cfTimestamps(time('seconds since 1970-01-01'), [0.1, 1], null);
    expect([r.unit, r.rounded, r.ticks[0], r.ticks[1]]).toEqual(['us', 1, 100_000n, S]);
    // Whole ns beyond the ns range (year 2400): µs, rounded half to even.
    const far = cfTimestamps(time('microseconds since 2400-01-01'), [0.5, 1.5], null);
    expect(far.unit).toBe('us');
    expect(far.ticks[1] - far.ticks[0]).toBe(2n);
  });

  it('nulls masked, non-finite and out-of-range values', () => {
    const t = cfTimestamps(time('days since 1970-01-01'), [1, NaN, 1e300, 2, Infinity], Uint8Array.from([1, 1, 1, 0, 1]));
    expect(Array.from(t.valid!)).toEqual([1, 0, 0, 0, 0]);
    expect(t.outOfRange).toBe(1);
    expect(t.ticks[0]).toBe(86_400n * S);
  });

  it('refuses calendars and units that are not instants, ignores other units', () => {
    expect(cfTimeOf('days since 2000-01-01', 'noleap')).toEqual({ refused: expect.stringMatching(/noleap/) });
    expect(cfTimeOf('days since 2000-01-01', '360_day')).toEqual({ refused: expect.stringMatching(/360_day/) });
    expect(cfTimeOf('months since 2000-01-01', undefined)).toEqual({ refused: expect.stringMatching(/months/) });
    expect(cfTimeOf('days since 1582-10-14', 'standard')).toEqual({ refused: expect.stringMatching(/Julian/) });
    expect(cfTimeOf('days since 1582-10-14', 'proleptic_gregorian')).not.toHaveProperty('refused');
    expect(cfTimeOf('days since 2000-13-01', undefined)).toEqual({ refused: expect.stringMatching(/out of range/) });
    expect(cfTimeOf('m', undefined)).toBeNull();
    expect(cfTimeOf(undefined, undefined)).toBeNull();
  });
});
