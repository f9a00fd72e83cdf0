// CF time coordinates ("<unit> since <reference date>[ time][ zone]") -> `timestamp` UTC ticks,
// computed exactly: every value is split into its binary mantissa and exponent and scaled with
// bigint arithmetic, so the tick count is the exact instant or, where no unit holds it exactly,
// rounded once (half to even) to µs. Units and date forms follow cftime (the library
// netCDF4-python and xarray decode with); calendars other than the (proleptic) Gregorian one
// do not map to instants and are refused.
import type { TimeUnit } from '../tables/types';
import { daysFromCivil, I64_MAX, I64_MIN } from '../tables/values';

/** Nanoseconds per CF time unit word (cftime's spellings, case-insensitive). */
const NS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ...['microseconds', 'microsecond', 'microsec', 'microsecs', 'us', 'usec', 'usecs'].map((w) => [w, 1_000n] as const),
  ...['milliseconds', 'millisecond', 'millisec', 'millisecs', 'msec', 'msecs', 'ms'].map((w) => [w, 1_000_000n] as const),
  ...['seconds', 'second', 'secs', 'sec', 's'].map((w) => [w, 1_000_000_000n] as const),
  ...['minutes', 'minute', 'mins', 'min'].map((w) => [w, 60_000_000_000n] as const),
  ...['hours', 'hour', 'hrs', 'hr', 'h'].map((w) => [w, 3_600_000_000_000n] as const),
  ...['days', 'day', 'd'].map((w) => [w, 86_400_000_000_000n] as const),
]);

/** Calendars whose dates are proleptic Gregorian instants (`standard` / `gregorian` only from
 *  the 1582-10-15 reform on: earlier reference dates are Julian there). */
const GREGORIAN_CALENDARS = new Set(['standard', 'gregorian', 'proleptic_gregorian']);

/** A CF time axis: value v means referenceNs + v * nsPerUnit nanoseconds since the epoch (UTC). */
export interface CfTime {
  nsPerUnit: bigint;
  referenceNs: bigint;
}

const DATE_RE = /^([+-]?\d{1,6})-(\d{1,2})-(\d{1,2})(?:(?:T|\s+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?)?\s*(Z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?)?$/i;

/**
 * What `units` / `calendar` say: a CfTime, `null` when `units` is not "<unit> since <date>" (not
 * a time variable), or `{ refused }` naming why a time variable cannot become timestamps.
 */
export function cfTimeOf(units: unknown, calendar: unknown): CfTime | null | { refused: string } {
  if (typeof units !== 'string') return null;
  const m = /^\s*(\S+)\s+since\s+(.+?)\s*$/i.exec(units);
  if (!m) return null;
  const nsPerUnit = NS_PER_UNIT.get(m[1].toLowerCase());
  if (nsPerUnit === undefined) return { refused: `time unit '${m[1]}' has no fixed length` };
  const cal = typeof calendar === 'string' ? calendar.trim().toLowerCase() : 'standard';
  if (!GREGORIAN_CALENDARS.has(cal)) return { refused: `calendar '${cal}' is not the Gregorian one` };
  const d = DATE_RE.exec(m[2]);
  if (!d) return { refused: `reference date '${m[2]}' is not a date` };
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(d[i] ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) {
    return { refused: `reference date '${m[2]}' is out of range` };
  }
  if (cal !== 'proleptic_gregorian' && (year < 1582 || (year === 1582 && (month < 10 || (month === 10 && day < 15))))) {
    return { refused: `reference date '${m[2]}' precedes the Gregorian reform in the ${cal} calendar (Julian dates)` };
  }
  const frac = (d[7] ?? '').padEnd(9, '0');
  if (/[1-9]/.test(frac.slice(9))) return { refused: `reference date '${m[2]}' has digits beyond nanoseconds` };
  const seconds = BigInt(daysFromCivil(year, month, day)) * 86_400n + BigInt(hour * 3600 + minute * 60 + second);
  return { nsPerUnit, referenceNs: seconds * 1_000_000_000n + BigInt(frac.slice(0, 9)) - zoneOffsetNs(d[8]) };
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** The zone of a reference date ("+01:00", "-6", "+0530", "Z"), east of UTC positive. */
function zoneOffsetNs(zone: string | undefined): bigint {
  const z = zone ? /^([+-])(\d{1,2}):?(\d{2})?$/.exec(zone) : null;
  if (!z) return 0n;
  const minutes = Number(z[2]) * 60 + Number(z[3] ?? 0);
  return BigInt(z[1] === '-' ? -minutes : minutes) * 60_000_000_000n;
}

/** An exact rational num / den (den a positive power of two times a power of ten). */
interface Ratio { num: bigint; den: bigint }

/** Exact value * scale of a finite double (or an integer), as a ratio. */
function scaledExact(value: number | bigint, scale: bigint): Ratio {
  if (typeof value === 'bigint') return { num: value * scale, den: 1n };
  if (Number.isInteger(value)) return { num: BigInt(value) * scale, den: 1n };
  // value = mantissa * 2^exp with a 53-bit integer mantissa (exp < 0 here: not an integer).
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & 0xfffffffffffffn;
  if (biased !== 0) mantissa |= 1n << 52n;
  const exp = (biased === 0 ? 1 : biased) - 1075;
  const num = (bits >> 63n ? -mantissa : mantissa) * scale;
  return { num, den: 1n << BigInt(-exp) };
}

/** num / den rounded half to even. */
function roundHalfEven(num: bigint, den: bigint): bigint {
  let q = num / den;
  let r = num % den;
  if (r < 0n) { q -= 1n; r += den; }
  const twice = 2n * r;
  if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
  return q;
}

const NS_PER_TICK: Readonly<Record<'us' | 'ns', bigint>> = { us: 1_000n, ns: 1n };
const TWO_53 = 2 ** 53;
const TWO_32 = 2 ** 32;
/** Veltkamp's splitter for doubles (2^27 + 1). */
const SPLITTER = 134217729;

/**
 * The common case without bigints: every value a double whose product with the (integer) µs per
 * unit is exact - Dekker's two-product error is 0 - and whole, and every tick within ±2^53, so
 * plain double arithmetic is exact. Returns null when a value is not, and the caller computes
 * exactly.
 */
function wholeMicrosFast(time: CfTime, values: ArrayLike<number | bigint>, valid: Uint8Array | null):
  { ticks: BigInt64Array; valid: Uint8Array | null } | null {
  if (time.nsPerUnit % 1000n !== 0n || time.referenceNs % 1000n !== 0n) return null;
  const u = Number(time.nsPerUnit / 1000n);
  const ref = Number(time.referenceNs / 1000n);
  if (!Number.isSafeInteger(ref)) return null;
  const n = values.length;
  const ticks = new BigInt64Array(n);
  const words = new Int32Array(ticks.buffer); // little-endian halves of each tick (lib/native.ts: little-endian hosts only)
  const c = SPLITTER * u;
  const uHi = c - (c - u);
  const uLo = u - uHi;
  let out: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const x = values[i];
    if (typeof x !== 'number') return null;
    if ((valid && !valid[i]) || !Number.isFinite(x)) {
      out ??= valid ? valid.slice() : new Uint8Array(n).fill(1);
      out[i] = 0;
      continue;
    }
    const p = x * u;
    const cx = SPLITTER * x;
    const xHi = cx - (cx - x);
    const xLo = x - xHi;
    const err = ((xHi * uHi - p) + xHi * uLo + xLo * uHi) + xLo * uLo;
    const t = p + ref;
    if (err !== 0 || !Number.isInteger(p) || !(Math.abs(p) <= TWO_53) || !(Math.abs(t) <= TWO_53)) return null;
    const hi = Math.floor(t / TWO_32);
    words[2 * i] = t - hi * TWO_32;
    words[2 * i + 1] = hi;
  }
  return { ticks, valid: out };
}

/** Timestamp ticks of CF time values (null / masked rows stay null): µs when every value is a
 *  whole number of µs, else ns when every value is a whole number of ns that fits, else µs
 *  rounded; values beyond the i64 range of ticks and non-finite values become null. */
export function cfTimestamps(time: CfTime, values: ArrayLike<number | bigint>, valid: Uint8Array | null): {
  unit: TimeUnit; ticks: BigInt64Array; valid: Uint8Array | null; rounded: number; outOfRange: number;
} {
  const fast = wholeMicrosFast(time, values, valid);
  if (fast) return { unit: 'us', ...fast, rounded: 0, outOfRange: 0 };
  const n = values.length;
  const exact: (Ratio | null)[] = new Array(n);
  let wholeUs = true;
  let wholeNs = true;
  for (let i = 0; i < n; i++) {
    const x = values[i];
    if ((valid && !valid[i]) || (typeof x === 'number' && !Number.isFinite(x))) { exact[i] = null; continue; }
    const r = scaledExact(x, time.nsPerUnit);
    const ns: Ratio = { num: r.num + time.referenceNs * r.den, den: r.den };
    exact[i] = ns;
    if (ns.num % ns.den !== 0n) { wholeNs = false; wholeUs = false; } else if ((ns.num / ns.den) % 1000n !== 0n) wholeUs = false;
  }
  const fitsNs = wholeNs && !wholeUs && exact.every((r) => r === null || (r.num / r.den >= I64_MIN && r.num / r.den <= I64_MAX));
  const unit: 'us' | 'ns' = wholeUs || !fitsNs ? 'us' : 'ns';
  const per = NS_PER_TICK[unit];
  const ticks = new BigInt64Array(n);
  const out = new Uint8Array(n);
  let nulls = 0;
  let outOfRange = 0;
  let rounded = 0;
  for (let i = 0; i < n; i++) {
    const r = exact[i];
    if (r === null) { nulls++; continue; }
    const t = roundHalfEven(r.num, r.den * per);
    if (t < I64_MIN || t > I64_MAX) { nulls++; outOfRange++; continue; }
    if (t * r.den * per !== r.num) rounded++;
    ticks[i] = t;
    out[i] = 1;
  }
  return { unit, ticks, valid: nulls ? out : null, rounded, outOfRange };
}
