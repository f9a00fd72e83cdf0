// Value codecs of table columns (spec tables_and_filters.md §1, §4.5): the JSON / text forms of
// dates, timestamps, times, ints and floats, parsed strictly and printed canonically. Pure
// functions; a bad literal is a TetQueryError TET_QUERY_BAD_LITERAL (the writer wraps it as
// TET_WRITE_ARGUMENT with column and row, lib/tables/normalize.ts).
//
// Years: parsing takes the RFC 3339 four-digit years 0000-9999 and, so that every printed value
// reads back, ECMAScript's expanded form (a sign and at least six digits, `+012345-01-01`,
// `-000001-12-31`; `-000000` is refused). Printing uses four digits for 0000-9999 and the
// expanded form outside. The calendar is the proleptic Gregorian one; there are no leap seconds.

import { TetQueryError } from '../errors';
import type { ResolvedColumnSchema, TimeUnit } from './types';

/** Smallest and largest `date` value (days since 1970-01-01: the i32 range). */
export const DATE_MIN_DAYS = -2147483648;
export const DATE_MAX_DAYS = 2147483647;
/** Microseconds in a day: `time` values are 0 ≤ v < TIME_DAY_US. */
export const TIME_DAY_US = 86_400_000_000n;
export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;

/** Ticks per second of each timestamp unit. */
export const TICKS_PER_SECOND: Readonly<Record<TimeUnit, bigint>> = { s: 1n, ms: 1000n, us: 1_000_000n, ns: 1_000_000_000n };
const TICKS_PER_SECOND_NUMBER: Readonly<Record<TimeUnit, number>> = { s: 1, ms: 1000, us: 1_000_000, ns: 1_000_000_000 };
/** Fraction digits of each unit. */
export const UNIT_DIGITS: Readonly<Record<TimeUnit, number>> = { s: 0, ms: 3, us: 6, ns: 9 };

function badLiteral(message: string): TetQueryError {
  return new TetQueryError('TET_QUERY_BAD_LITERAL', message);
}

function show(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 80 ? `${x.slice(0, 80)}...` : x);
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'number') return Object.is(x, -0) ? '-0' : String(x);
  return x === null ? 'null' : typeof x === 'object' ? (Array.isArray(x) ? 'an array' : 'an object') : String(x);
}

// ---------------------------------------------------------------------------------------------
// Calendar (Howard Hinnant's days_from_civil / civil_from_days, exact in f64 for |days| < 2^52)

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a valid proleptic Gregorian date. */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The date `days` after 1970-01-01. */
export function civilFromDays(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

// ---------------------------------------------------------------------------------------------
// Scanning helpers: fixed-width digit fields read by char code (no regex, no allocation)

/** The value of `n` decimal digits at `pos`, or -1 when one of them is not a digit. */
function digitsAt(text: string, pos: number, n: number): number {
  if (pos + n > text.length) return -1;
  let v = 0;
  for (let i = pos; i < pos + n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** The number of decimal digits starting at `pos`. */
function digitRun(text: string, pos: number): number {
  let i = pos;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  return i - pos;
}

interface DatePart { y: number; m: number; d: number; end: number }

/** `YYYY-MM-DD` (or an expanded year) at the start of `text`; `what` names the literal for messages. */
function scanDate(text: string, what: string): DatePart {
  let pos = 0;
  let y: number;
  const sign = text.charCodeAt(0);
  if (sign === 43 /* + */ || sign === 45 /* - */) {
    const n = digitRun(text, 1);
    if (n < 6 || n > 12) throw badLiteral(`expected ${what}, found ${show(text)} (an expanded year is a sign and 6 to 12 digits)`);
    y = Number(text.slice(1, 1 + n));
    if (sign === 45) {
      if (y === 0) throw badLiteral(`expected ${what}, found ${show(text)} (year -000000 is written +000000)`);
      y = -y;
    }
    pos = 1 + n;
  } else {
    y = digitsAt(text, 0, 4);
    pos = 4;
  }
  const m = text.charCodeAt(pos) === 45 ? digitsAt(text, pos + 1, 2) : -1;
  const d = m >= 0 && text.charCodeAt(pos + 3) === 45 ? digitsAt(text, pos + 4, 2) : -1;
  if (y < 0 && sign !== 45 || m < 0 || d < 0) throw badLiteral(`expected ${what}, found ${show(text)}`);
  if (m < 1 || m > 12) throw badLiteral(`expected ${what}, found ${show(text)} (month ${m} is not 01-12)`);
  if (d < 1 || d > daysInMonth(y, m)) {
    throw badLiteral(`expected ${what}, found ${show(text)} (${y}-${String(m).padStart(2, '0')} has ${daysInMonth(y, m)} days)`);
  }
  return { y, m, d, end: pos + 6 };
}

/** Time of day; the fraction digits are `text[fracStart, fracStart + fracDigits)`. */
interface TimePart { seconds: number; fracStart: number; fracDigits: number; end: number }

/** `hh:mm:ss[.f…]` at `pos` (0 to 9 fraction digits). */
function scanTimeOfDay(text: string, pos: number, what: string): TimePart {
  const h = digitsAt(text, pos, 2);
  const mi = text.charCodeAt(pos + 2) === 58 ? digitsAt(text, pos + 3, 2) : -1;
  const s = mi >= 0 && text.charCodeAt(pos + 5) === 58 ? digitsAt(text, pos + 6, 2) : -1;
  if (h < 0 || mi < 0 || s < 0) throw badLiteral(`expected ${what}, found ${show(text)}`);
  if (h > 23 || mi > 59) throw badLiteral(`expected ${what}, found ${show(text)} (hour 00-23, minute 00-59)`);
  if (s === 60) throw badLiteral(`expected ${what}, found ${show(text)} (leap seconds are not supported)`);
  if (s > 59) throw badLiteral(`expected ${what}, found ${show(text)} (second 00-59)`);
  let end = pos + 8;
  let fracDigits = 0;
  if (text.charCodeAt(end) === 46 /* . */) {
    fracDigits = digitRun(text, end + 1);
    if (fracDigits === 0) throw badLiteral(`expected ${what}, found ${show(text)} (no digits after '.')`);
    if (fracDigits > 9) throw badLiteral(`expected ${what}, found ${show(text)} (at most 9 fraction digits)`);
    end += 1 + fracDigits;
  }
  return { seconds: h * 3600 + mi * 60 + s, fracStart: pos + 9, fracDigits, end };
}

/** The fraction as ticks (< 10^9) of a unit with `digits` fraction digits; extra digits must be zeros. */
function fractionTicks(t: TimePart, digits: number, text: string, unitName: string): number {
  let ticks = 0;
  for (let i = 0; i < t.fracDigits; i++) {
    const c = text.charCodeAt(t.fracStart + i) - 48;
    if (i < digits) ticks = ticks * 10 + c;
    else if (c !== 0) throw badLiteral(`${show(text)} is not exactly representable in ${unitName} (${t.fracDigits} fraction digits, the unit has ${digits})`);
  }
  for (let i = t.fracDigits; i < digits; i++) ticks *= 10;
  return ticks;
}

// ---------------------------------------------------------------------------------------------
// Printing helpers

function pad2(v: number): string {
  return v < 10 ? `0${v}` : String(v);
}

function yearText(y: number): string {
  if (y >= 0 && y <= 9999) return String(y).padStart(4, '0');
  return (y < 0 ? '-' : '+') + String(Math.abs(y)).padStart(6, '0');
}

function civilText(days: number): string {
  const { y, m, d } = civilFromDays(days);
  return `${yearText(y)}-${pad2(m)}-${pad2(d)}`;
}

/** `.fff…` for `ticks` of a unit with `digits` fraction digits, trailing zeros trimmed; '' for 0. */
function fractionText(ticks: bigint, digits: number): string {
  if (ticks === 0n) return '';
  return `.${ticks.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

function timeOfDayText(secondsOfDay: number): string {
  const h = Math.floor(secondsOfDay / 3600);
  const m = Math.floor((secondsOfDay % 3600) / 60);
  return `${pad2(h)}:${pad2(m)}:${pad2(secondsOfDay % 60)}`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

// ---------------------------------------------------------------------------------------------
// date

/** Days since 1970-01-01 of `"YYYY-MM-DD"` (proleptic Gregorian; invalid dates are errors). */
export function parseDate(text: unknown): number {
  if (typeof text !== 'string') throw badLiteral(`expected a date "YYYY-MM-DD", found ${show(text)}`);
  const what = 'a date "YYYY-MM-DD"';
  const { y, m, d, end } = scanDate(text, what);
  if (end !== text.length) throw badLiteral(`expected ${what}, found ${show(text)}`);
  const days = daysFromCivil(y, m, d);
  if (days < DATE_MIN_DAYS || days > DATE_MAX_DAYS) throw badLiteral(`date ${show(text)} is outside the date range (i32 days)`);
  return days;
}

/** `"YYYY-MM-DD"` of a day count (expanded years outside 0000-9999). */
export function formatDate(days: number): string {
  if (!Number.isInteger(days)) throw badLiteral(`expected a whole number of days, found ${show(days)}`);
  return civilText(days);
}

// ---------------------------------------------------------------------------------------------
// timestamp

/**
 * Ticks of `unit` since 1970-01-01T00:00:00Z of an RFC 3339 date-time: `T` (or `t`) between date
 * and time, seconds required, 1 to 9 fraction digits that must be exact in the unit, offset `Z`,
 * `z` or `±hh:mm` (`-00:00` is UTC; the result is the UTC instant). UTC columns require an
 * offset, naive ones forbid it. Leap seconds (`:60`) are errors.
 */
export function parseTimestamp(text: unknown, unit: TimeUnit = 'us', tz: 'UTC' | 'naive' = 'UTC'): bigint {
  const what = tz === 'UTC' ? 'an RFC 3339 timestamp with an offset (Z or ±hh:mm)' : 'an RFC 3339 timestamp without an offset';
  if (typeof text !== 'string') throw badLiteral(`expected ${what}, found ${show(text)}`);
  const date = scanDate(text, what);
  const sep = text.charCodeAt(date.end);
  if (sep === 32) throw badLiteral(`expected ${what}, found ${show(text)} (RFC 3339 needs 'T' between date and time, not a space)`);
  if (sep !== 84 && sep !== 116) throw badLiteral(`expected ${what}, found ${show(text)}`);
  const time = scanTimeOfDay(text, date.end + 1, what);
  let offsetSeconds = 0;
  let hasOffset = true;
  const o = text.charCodeAt(time.end);
  let end = time.end;
  if (o === 90 || o === 122) {
    end += 1;
  } else if (o === 43 || o === 45) {
    const oh = digitsAt(text, end + 1, 2);
    const om = text.charCodeAt(end + 3) === 58 ? digitsAt(text, end + 4, 2) : -1;
    if (oh < 0 || om < 0 || oh > 23 || om > 59) throw badLiteral(`expected ${what}, found ${show(text)} (offset ±hh:mm)`);
    offsetSeconds = (o === 45 ? -1 : 1) * (oh * 3600 + om * 60);
    end += 6;
  } else {
    hasOffset = false;
  }
  if (end !== text.length) throw badLiteral(`expected ${what}, found ${show(text)}`);
  if (tz === 'UTC' && !hasOffset) throw badLiteral(`${show(text)} has no offset; a UTC timestamp column needs one (Z or ±hh:mm)`);
  if (tz === 'naive' && hasOffset) throw badLiteral(`${show(text)} has an offset; a naive timestamp column takes none`);
  const ticks = fractionTicks(time, UNIT_DIGITS[unit], text, unitName(unit));
  const days = daysFromCivil(date.y, date.m, date.d);
  const perSecond = TICKS_PER_SECOND_NUMBER[unit];
  // Number arithmetic while the result stays below 2^53 (it is exact there); BigInt beyond
  // (seconds of far years pass 2^53; days stay exact for 12-digit years)
  if (Math.abs(days) < 1e8 && Math.abs(days * 86400 * perSecond) < 9e15) {
    return BigInt((days * 86400 + time.seconds - offsetSeconds) * perSecond + ticks);
  }
  const seconds = BigInt(days) * 86400n + BigInt(time.seconds - offsetSeconds);
  const v = seconds * TICKS_PER_SECOND[unit] + BigInt(ticks);
  if (v < I64_MIN || v > I64_MAX) throw badLiteral(`timestamp ${show(text)} is outside the i64 range of unit ${unit}`);
  return v;
}

function unitName(unit: TimeUnit): string {
  return { s: 'seconds', ms: 'milliseconds', us: 'microseconds', ns: 'nanoseconds' }[unit];
}

/**
 * RFC 3339 text of `v` ticks of `unit`: `Z` when `utc`, no offset otherwise; fraction digits only
 * as the value needs (trailing zeros trimmed, at most the unit's).
 */
export function formatTimestamp(v: bigint, unit: TimeUnit = 'us', utc = true): string {
  const perSecond = TICKS_PER_SECOND[unit];
  const seconds = floorDiv(v, perSecond);
  const ticks = v - seconds * perSecond;
  const days = floorDiv(seconds, 86400n);
  const secondsOfDay = Number(seconds - days * 86400n);
  return `${civilText(Number(days))}T${timeOfDayText(secondsOfDay)}${fractionText(ticks, UNIT_DIGITS[unit])}${utc ? 'Z' : ''}`;
}

// ---------------------------------------------------------------------------------------------
// time

/** Microseconds since midnight of `"hh:mm:ss[.ffffff]"` (up to 9 digits if exact in µs). */
export function parseTime(text: unknown): bigint {
  const what = 'a time "hh:mm:ss[.ffffff]"';
  if (typeof text !== 'string') throw badLiteral(`expected ${what}, found ${show(text)}`);
  const t = scanTimeOfDay(text, 0, what);
  if (t.end !== text.length) throw badLiteral(`expected ${what}, found ${show(text)}`);
  return BigInt(t.seconds * 1_000_000 + fractionTicks(t, 6, text, 'microseconds'));
}

/** `"hh:mm:ss[.ffffff]"` of microseconds since midnight (fraction trimmed). */
export function formatTime(us: bigint): string {
  if (typeof us !== 'bigint' || us < 0n || us >= TIME_DAY_US) throw badLiteral(`expected microseconds since midnight (0 ≤ v < 86400e6), found ${show(us)}`);
  const seconds = us / 1_000_000n;
  return `${timeOfDayText(Number(seconds))}${fractionText(us - seconds * 1_000_000n, 6)}`;
}

// ---------------------------------------------------------------------------------------------
// int, float, bool, str

const DECIMAL_INT = /^-?[0-9]+$/;

/**
 * An `int` literal: a JSON number with an integral value and |v| < 2^53 (2^53 itself is refused:
 * it is also what JSON.parse makes of 2^53 + 1), a decimal string `-?[0-9]+` (leading zeros
 * allowed, no `+`, no fraction) within i64, or a bigint within i64.
 */
export function parseIntLiteral(x: unknown): bigint {
  if (typeof x === 'number') {
    if (!Number.isInteger(x)) throw badLiteral(`expected an integer, found ${show(x)}`);
    if (!Number.isSafeInteger(x)) throw badLiteral(`integer ${show(x)} is beyond ±2^53 and may have lost digits; write it as a decimal string`);
    return BigInt(x);
  }
  if (typeof x === 'string') {
    if (!DECIMAL_INT.test(x)) throw badLiteral(`expected an integer or a decimal string -?[0-9]+, found ${show(x)}`);
    const v = BigInt(x);
    if (v < I64_MIN || v > I64_MAX) throw badLiteral(`integer ${show(x)} is outside the i64 range`);
    return v;
  }
  if (typeof x === 'bigint') {
    if (x < I64_MIN || x > I64_MAX) throw badLiteral(`integer ${show(x)} is outside the i64 range`);
    return x;
  }
  throw badLiteral(`expected an integer, found ${show(x)}`);
}

/** A `float` literal: a JSON number, or `"NaN"`, `"Infinity"`, `"-Infinity"`. */
export function parseFloatLiteral(x: unknown): number {
  if (typeof x === 'number') return x;
  if (x === 'NaN') return NaN;
  if (x === 'Infinity') return Infinity;
  if (x === '-Infinity') return -Infinity;
  throw badLiteral(`expected a number or "NaN", "Infinity", "-Infinity", found ${show(x)}`);
}

/** A `bool` literal: `true` or `false`. */
export function parseBoolLiteral(x: unknown): boolean {
  if (typeof x === 'boolean') return x;
  throw badLiteral(`expected true or false, found ${show(x)}`);
}

/** True when `s` has no lone surrogate (so it has a UTF-8 form). */
export function isWellFormedString(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A `str` literal: a string with a UTF-8 form (no lone surrogates). */
export function parseStrLiteral(x: unknown): string {
  if (typeof x !== 'string') throw badLiteral(`expected a string, found ${show(x)}`);
  if (!isWellFormedString(x)) throw badLiteral(`string ${show(x)} has a lone surrogate and no UTF-8 form`);
  return x;
}

// ---------------------------------------------------------------------------------------------
// One literal of a column, both directions

/** A value in its physical form: bool, i64 (int, date days, timestamp ticks, time µs), f64, str. */
export type PhysicalScalar = boolean | bigint | number | string;
/** A value in its JSON form (spec §1). */
export type JsonScalar = boolean | number | string;

/** The physical value of a JSON literal for a column (query `where` values, spec §4.5). */
export function literalFromJson(schema: ResolvedColumnSchema, x: unknown): PhysicalScalar {
  switch (schema.kind) {
    case 'bool': return parseBoolLiteral(x);
    case 'int': return parseIntLiteral(x);
    case 'float': return parseFloatLiteral(x);
    case 'str': return parseStrLiteral(x);
    case 'date': return BigInt(parseDate(x));
    case 'timestamp': return parseTimestamp(x, schema.unit, schema.tz);
    case 'time': return parseTime(x);
  }
}

/** A float in JSON form: non-finite values as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`. */
export function floatToJson(v: number): number | string {
  return Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

/** An i64 in JSON form: a number within ±(2^53 - 1), else a decimal string. */
export function intToJson(v: bigint): number | string {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v.toString();
}

/** The JSON form of a physical value of a column (query output rows, min/max results). */
export function valueToJson(schema: ResolvedColumnSchema, v: PhysicalScalar): JsonScalar {
  if (schema.kind === 'timestamp') return formatTimestamp(BigInt(v as bigint), schema.unit, schema.tz === 'UTC');
  switch (schema.kind) {
    case 'bool': return Boolean(v);
    case 'int': return intToJson(BigInt(v as bigint));
    case 'float': return floatToJson(Number(v));
    case 'str': return String(v);
    case 'date': return formatDate(Number(v));
    case 'time': return formatTime(BigInt(v as bigint));
  }
}
