// Column normalisation (spec tables_and_filters.md §3, §4.5): every input form a table column may
// come in (typed arrays, plain arrays with nulls, bigints, strings for date / timestamp / time,
// `valid` masks) becomes one PhysicalBatch the native writer takes; `fromPhysical` is the way
// back to what users read. Bad input is a TetIoError TET_WRITE_ARGUMENT naming column and row;
// bad names TET_WRITE_BAD_NAME.

import { isAscii } from 'node:buffer';
import { TetError, TetIoError } from '../errors';
import type { ColumnInput, ColumnKind, ColumnSchema, ColumnValues, PhysicalBatch, ResolvedColumnSchema } from './types';
import { COLUMN_KINDS, TIME_UNITS } from './types';
import { StrValueProblem, Utf8BatchBuilder } from './utf8';
import { DATE_MAX_DAYS, DATE_MIN_DAYS, I64_MAX, I64_MIN, TIME_DAY_US, isWellFormedString, parseDate, parseFloatLiteral, parseIntLiteral, parseTime, parseTimestamp } from './values';

/** Longest table or column name, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const TWO_32 = 4294967296;

/** Options of toPhysical. */
export interface ToPhysicalOptions {
  /** Added to row numbers in error messages (the batch's first row within the table). */
  rowBase?: number;
}

// ---------------------------------------------------------------------------------------------
// Errors

function argumentError(message: string, cause?: unknown, detail?: Record<string, unknown>): TetIoError {
  return new TetIoError('TET_WRITE_ARGUMENT', message, { cause, detail });
}

/** A problem with one value; `rowError` adds column and row. */
class ValueProblem extends Error {}

function rowError(column: string, row: number, err: unknown): TetError {
  if (!(err instanceof ValueProblem || err instanceof StrValueProblem || err instanceof TetError)) throw err;
  return argumentError(`column '${column}' row ${row}: ${err.message}`, err, { column, row });
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (v === undefined) return 'undefined (nulls are null)';
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? (v.constructor?.name ?? 'an object') : String(v);
}

// ---------------------------------------------------------------------------------------------
// Names and schemas

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Checks a table or column name: a non-empty string of at most 1024 UTF-8 bytes. */
export function validateName(what: string, name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new TetIoError('TET_WRITE_BAD_NAME', `${what} name must be a non-empty string, found ${describeValue(name)}`);
  if (!isWellFormedString(name)) throw new TetIoError('TET_WRITE_BAD_NAME', `${what} name ${describeValue(name)} has a lone surrogate (no UTF-8 form)`);
  const bytes = utf8Length(name);
  if (bytes > MAX_NAME_BYTES) throw new TetIoError('TET_WRITE_BAD_NAME', `${what} name ${describeValue(name)} is ${bytes} UTF-8 bytes long; at most ${MAX_NAME_BYTES}`);
  return name;
}

const SCHEMA_KEYS = new Set(['kind', 'unit', 'tz', 'nullable', 'values', 'valid', 'name']);

/** A column's schema with defaults (timestamp unit 'us', tz 'UTC'; nullable true), validated. */
export function resolveColumnSchema(column: string, spec: ColumnSchema): ResolvedColumnSchema {
  if (spec === null || typeof spec !== 'object') throw argumentError(`column '${column}': expected an object with a kind, found ${describeValue(spec)}`);
  for (const key of Object.keys(spec)) {
    if (!SCHEMA_KEYS.has(key)) throw argumentError(`column '${column}': unknown key '${key}' (kind, unit, tz, nullable, values, valid)`);
  }
  const { kind, unit, tz, nullable } = spec;
  if (!COLUMN_KINDS.includes(kind)) throw argumentError(`column '${column}': kind must be one of ${COLUMN_KINDS.join(', ')}, found ${describeValue(kind)}`);
  if (nullable !== undefined && typeof nullable !== 'boolean') throw argumentError(`column '${column}': nullable must be a boolean, found ${describeValue(nullable)}`);
  if (kind !== 'timestamp') {
    if (unit !== undefined || tz !== undefined) throw argumentError(`column '${column}': unit and tz apply to timestamp columns only (kind ${kind})`);
    return { kind, nullable: nullable ?? true };
  }
  if (unit !== undefined && !TIME_UNITS.includes(unit)) throw argumentError(`column '${column}': unit must be one of ${TIME_UNITS.join(', ')}, found ${describeValue(unit)}`);
  if (tz !== undefined && tz !== 'UTC' && tz !== 'naive') throw argumentError(`column '${column}': tz must be 'UTC' or 'naive', found ${describeValue(tz)}`);
  return { kind, unit: unit ?? 'us', tz: tz ?? 'UTC', nullable: nullable ?? true };
}

/** A table's validated schema: its name and its columns in order. */
export interface TableSchema {
  name: string;
  columns: { name: string; schema: ResolvedColumnSchema }[];
}

/**
 * Validates a table's name and columns (a record by name, or an array of `{ name, kind, ... }`):
 * names non-empty, ≤ 1024 UTF-8 bytes, unique; kinds, units and tz known. At least one column.
 */
export function schemaFromSpec(table: string, columns: Record<string, ColumnSchema> | readonly (ColumnSchema & { name: string })[]): TableSchema {
  validateName('table', table);
  if (columns === null || typeof columns !== 'object') throw argumentError(`table '${table}': columns must be an object or an array, found ${describeValue(columns)}`);
  const entries: [unknown, ColumnSchema][] = Array.isArray(columns)
    ? columns.map((c) => [c?.name, c] as [unknown, ColumnSchema])
    : Object.entries(columns);
  if (entries.length === 0) throw argumentError(`table '${table}' has no columns`);
  const seen = new Set<string>();
  const out: TableSchema['columns'] = [];
  for (const [name, spec] of entries) {
    validateName(`table '${table}': column`, name);
    if (seen.has(name as string)) throw new TetIoError('TET_WRITE_BAD_NAME', `table '${table}': column name '${name}' appears twice`);
    seen.add(name as string);
    out.push({ name: name as string, schema: resolveColumnSchema(name as string, spec) });
  }
  return { name: table, columns: out };
}

// ---------------------------------------------------------------------------------------------
// Validity

/** Checks a `valid` mask (Uint8Array of 0/1, one per row). */
function checkValidMask(column: string, valid: unknown, rows: number): Uint8Array {
  if (!(valid instanceof Uint8Array)) throw argumentError(`column '${column}': valid must be a Uint8Array (1 = present), found ${describeValue(valid)}`);
  if (valid.length !== rows) throw argumentError(`column '${column}': valid has ${valid.length} entries for ${rows} rows`);
  for (let i = 0; i < rows; i++) {
    if (valid[i] > 1) throw argumentError(`column '${column}': valid[${i}] is ${valid[i]}; entries are 0 (null) or 1 (present)`, undefined, { column, row: i });
  }
  return valid;
}

/** The batch's mask: undefined when every row is present; a copy otherwise. */
function finalMask(valid: Uint8Array | undefined): Uint8Array | undefined {
  return valid === undefined || valid.indexOf(0) < 0 ? undefined : valid.slice();
}

function checkNullable(column: string, schema: ResolvedColumnSchema, valid: Uint8Array | undefined, rowBase: number): void {
  if (schema.nullable || valid === undefined) return;
  const row = valid.indexOf(0);
  if (row >= 0) throw argumentError(`column '${column}' row ${rowBase + row}: null in a column declared nullable: false`, undefined, { column, row: rowBase + row });
}

// ---------------------------------------------------------------------------------------------
// i64 kinds: int, date, timestamp, time

type IntTypedArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array;

function isIntTypedArray(v: unknown): v is IntTypedArray {
  return v instanceof Int8Array || v instanceof Uint8Array || v instanceof Uint8ClampedArray || v instanceof Int16Array ||
    v instanceof Uint16Array || v instanceof Int32Array || v instanceof Uint32Array;
}

/** Integer typed arrays of ≤ 32 bits widened to i64 through the (lo, hi) words: no BigInt per row. */
function widenToI64(src: IntTypedArray): BigInt64Array {
  const out = new BigInt64Array(src.length);
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < src.length; i++) out[i] = BigInt(src[i]);
    return out;
  }
  const words = new Int32Array(out.buffer);
  const signed = src instanceof Int8Array || src instanceof Int16Array || src instanceof Int32Array;
  for (let i = 0; i < src.length; i++) {
    const v = src[i];
    words[2 * i] = v;
    words[2 * i + 1] = signed ? v >> 31 : 0;
  }
  return out;
}

/** Stores a safe integer `v` at row `i` through the (lo, hi) words of `words` (`out`'s buffer). */
function storeSafeInt(out: BigInt64Array, words: Int32Array | null, i: number, v: number): void {
  if (words === null) { out[i] = BigInt(v); return; }
  const hi = Math.floor(v / TWO_32);
  words[2 * i] = v - hi * TWO_32;  // the low 32 bits, as Int32Array's ToInt32 wraps them
  words[2 * i + 1] = hi;
}

/** The row range rule of an i64 kind: bounds, and how text (JSON form) reads. */
interface I64Rule {
  what: string;
  min: bigint;
  max: bigint;
  parseText(s: string): bigint;
}

const INT_RULE: I64Rule = { what: 'an integer', min: I64_MIN, max: I64_MAX, parseText: parseIntLiteral };
const DATE_RULE: I64Rule = { what: 'a date (days or "YYYY-MM-DD")', min: BigInt(DATE_MIN_DAYS), max: BigInt(DATE_MAX_DAYS), parseText: (s) => BigInt(parseDate(s)) };
const TIME_RULE: I64Rule = { what: 'a time (µs since midnight or "hh:mm:ss[.ffffff]")', min: 0n, max: TIME_DAY_US - 1n, parseText: parseTime };

function i64Rule(schema: ResolvedColumnSchema): I64Rule {
  if (schema.kind === 'date') return DATE_RULE;
  if (schema.kind === 'time') return TIME_RULE;
  if (schema.kind === 'timestamp') {
    const { unit, tz } = schema;
    return { what: `a timestamp (${unit} ticks or RFC 3339 text)`, min: I64_MIN, max: I64_MAX, parseText: (s) => parseTimestamp(s, unit, tz) };
  }
  return INT_RULE;
}

/** Checks every present row of `data` lies within the rule's bounds (date and time are narrower than i64). */
function checkI64Bounds(data: BigInt64Array, valid: Uint8Array | undefined, rule: I64Rule, column: string, rowBase: number): void {
  if (rule.min === I64_MIN && rule.max === I64_MAX) return;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if ((v < rule.min || v > rule.max) && (valid === undefined || valid[i] === 1)) {
      throw rowError(column, rowBase + i, new ValueProblem(`${v} is outside the range of ${rule.what} (${rule.min}..${rule.max})`));
    }
  }
}

function safeIntOf(v: number): number {
  if (!Number.isInteger(v)) throw new ValueProblem(Number.isNaN(v) ? 'NaN in an integer column' : `${describeValue(v)} is not an integer`);
  if (!Number.isSafeInteger(v)) throw new ValueProblem(`${describeValue(v)} is beyond ±(2^53 - 1); give it as a bigint`);
  return v;
}

/** Integer-valued f32 / f64 arrays (safe integers only: beyond 2^53 a float may be a rounded result). */
function floatsToI64(src: Float32Array | Float64Array, valid: Uint8Array | undefined, column: string, rowBase: number): BigInt64Array {
  const out = new BigInt64Array(src.length);
  const words = LITTLE_ENDIAN ? new Int32Array(out.buffer) : null;
  let i = 0;
  try {
    for (; i < src.length; i++) if (valid === undefined || valid[i] === 1) storeSafeInt(out, words, i, safeIntOf(src[i]));
  } catch (err) {
    throw rowError(column, rowBase + i, err);
  }
  return out;
}

function u64ToI64(src: BigUint64Array, valid: Uint8Array | undefined, column: string, rowBase: number): BigInt64Array {
  for (let i = 0; i < src.length; i++) {
    if (src[i] > I64_MAX && (valid === undefined || valid[i] === 1)) throw rowError(column, rowBase + i, new ValueProblem(`${src[i]} is beyond the i64 maximum`));
  }
  return new BigInt64Array(src.buffer.slice(src.byteOffset, src.byteOffset + src.byteLength));
}

/** Plain arrays: numbers, bigints, text in the kind's JSON form, nulls. */
function plainToI64(values: ArrayLike<unknown>, given: Uint8Array | undefined, rule: I64Rule, column: string, rowBase: number): { data: BigInt64Array; valid?: Uint8Array } {
  const n = values.length;
  const data = new BigInt64Array(n);
  const words = LITTLE_ENDIAN ? new Int32Array(data.buffer) : null;
  let valid: Uint8Array | undefined;
  let i = 0;
  try {
    for (; i < n; i++) {
      const v = values[i];
      if (v === null) {
        valid = nullAt(valid, given, n, i);
        continue;
      }
      if (given !== undefined && given[i] === 0) continue;  // a row the mask marks null is not read
      if (typeof v === 'number') {
        storeSafeInt(data, words, i, safeIntOf(v));
        continue;
      }
      let b: bigint;
      if (typeof v === 'bigint') b = v;
      else if (typeof v === 'string') b = rule.parseText(v);
      else throw new ValueProblem(`expected ${rule.what} or null, found ${describeValue(v)}`);
      if (b < I64_MIN || b > I64_MAX) throw new ValueProblem(`${b} is outside the i64 range`);
      data[i] = b;
    }
  } catch (err) {
    throw rowError(column, rowBase + i, err);
  }
  return { data, valid: valid ?? given };
}

function toI64(column: string, schema: ResolvedColumnSchema, values: unknown, valid: Uint8Array | undefined, rowBase: number): { data: BigInt64Array; valid?: Uint8Array } {
  const rule = i64Rule(schema);
  let data: BigInt64Array;
  if (values instanceof BigInt64Array) data = values.slice();
  else if (values instanceof BigUint64Array) data = u64ToI64(values, valid, column, rowBase);
  else if (isIntTypedArray(values)) data = widenToI64(values);
  else if (values instanceof Float64Array || values instanceof Float32Array) data = floatsToI64(values, valid, column, rowBase);
  else if (isPlainArray(values)) {
    ({ data, valid } = plainToI64(values, valid, rule, column, rowBase));
  } else throw argumentError(`column '${column}' (${schema.kind}): expected a typed array or an array, found ${describeValue(values)}`);
  checkI64Bounds(data, valid, rule, column, rowBase);
  return { data, valid };
}

// ---------------------------------------------------------------------------------------------
// float, bool, str

function toF64(column: string, values: unknown, valid: Uint8Array | undefined, rowBase: number): { data: Float64Array; valid?: Uint8Array } {
  if (values instanceof Float64Array) return { data: values.slice(), valid };
  if (values instanceof Float32Array || isIntTypedArray(values)) return { data: new Float64Array(values), valid };  // exact widening
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    throw argumentError(`column '${column}' (float): a ${values.constructor.name} does not convert to f64 exactly; give a Float64Array`);
  }
  if (!isPlainArray(values)) throw argumentError(`column '${column}' (float): expected a Float64Array, Float32Array or an array, found ${describeValue(values)}`);
  const n = values.length;
  const data = new Float64Array(n);
  let mask: Uint8Array | undefined;
  let i = 0;
  try {
    for (; i < n; i++) {
      const v = values[i];
      if (v === null) mask = nullAt(mask, valid, n, i);
      else if (valid !== undefined && valid[i] === 0) continue;
      else if (typeof v === 'number') data[i] = v;
      else if (typeof v === 'string') data[i] = parseFloatLiteral(v);
      else throw new ValueProblem(`expected a number, "NaN", "Infinity", "-Infinity" or null, found ${describeValue(v)}`);
    }
  } catch (err) {
    throw rowError(column, rowBase + i, err);
  }
  return { data, valid: mask ?? valid };
}

function toBool(column: string, values: unknown, valid: Uint8Array | undefined, rowBase: number): { data: Uint8Array; valid?: Uint8Array } {
  if (values instanceof Uint8Array) {
    for (let i = 0; i < values.length; i++) {
      if (values[i] > 1 && (valid === undefined || valid[i] === 1)) throw rowError(column, rowBase + i, new ValueProblem(`${values[i]} in a bool Uint8Array (0 or 1)`));
    }
    return { data: values.slice(), valid };
  }
  if (!isPlainArray(values)) throw argumentError(`column '${column}' (bool): expected a Uint8Array of 0/1 or an array of booleans, found ${describeValue(values)}`);
  const n = values.length;
  const data = new Uint8Array(n);
  let mask: Uint8Array | undefined;
  let i = 0;
  try {
    for (; i < n; i++) {
      const v = values[i];
      if (v === null) mask = nullAt(mask, valid, n, i);
      else if (valid !== undefined && valid[i] === 0) continue;
      else if (v === true || v === 1) data[i] = 1;
      else if (v !== false && v !== 0) throw new ValueProblem(`expected true, false (or 1, 0) or null, found ${describeValue(v)}`);
    }
  } catch (err) {
    throw rowError(column, rowBase + i, err);
  }
  return { data, valid: mask ?? valid };
}

function toStr(column: string, values: unknown, valid: Uint8Array | undefined, rowBase: number): PhysicalBatch & { kind: 'str' } {
  if (!isPlainArray(values)) throw argumentError(`column '${column}' (str): expected an array of strings, found ${describeValue(values)}`);
  const n = values.length;
  const builder = new Utf8BatchBuilder(n, estimateStringBytes(values));
  let mask: Uint8Array | undefined;
  let i = 0;
  try {
    for (; i < n; i++) {
      const v = values[i];
      if (v === null) {
        mask = nullAt(mask, valid, n, i);
        builder.appendEmpty();
      } else if (valid !== undefined && valid[i] === 0) builder.appendEmpty();
      else if (typeof v === 'string') builder.appendString(v);
      else throw new ValueProblem(`expected a string or null, found ${describeValue(v)}`);
    }
  } catch (err) {
    throw rowError(column, rowBase + i, err);
  }
  let out;
  try {
    out = builder.finish();
  } catch (err) {
    throw argumentError(`column '${column}': ${(err as Error).message}`, err);
  }
  return { kind: 'str', rows: n, bytes: out.bytes, offsets: out.offsets, valid: mask ?? valid };
}

/** A first guess at the UTF-8 size from a sample of rows (the builder grows if it is short). */
function estimateStringBytes(values: ArrayLike<unknown>): number {
  const n = values.length;
  const step = Math.max(1, Math.floor(n / 64));
  let chars = 0;
  let seen = 0;
  for (let i = 0; i < n; i += step, seen++) {
    const v = values[i];
    if (typeof v === 'string') chars += v.length;
  }
  return seen === 0 ? 64 : Math.ceil((chars / seen) * n * 1.1) + 64;
}

function isPlainArray(v: unknown): v is ArrayLike<unknown> {
  return Array.isArray(v);
}

/** Records a null entry at row `i` in `mask` (made on the first); with a `valid` mask given it is an error. */
function nullAt(mask: Uint8Array | undefined, given: Uint8Array | undefined, n: number, i: number): Uint8Array {
  if (given !== undefined) throw new ValueProblem('null entry in a column that also has a valid mask; give nulls one way, not both');
  mask ??= new Uint8Array(n).fill(1);
  mask[i] = 0;
  return mask;
}

// ---------------------------------------------------------------------------------------------
// Zero the null rows (the contract: null rows hold the kind's zero)

function zeroNullRows(batch: PhysicalBatch): void {
  const valid = batch.valid;
  if (valid === undefined || batch.kind === 'str') return;
  const data = batch.data;
  if (data instanceof BigInt64Array) {
    for (let i = 0; i < valid.length; i++) if (valid[i] === 0) data[i] = 0n;
  } else {
    for (let i = 0; i < valid.length; i++) if (valid[i] === 0) data[i] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// The two directions

/**
 * The physical batch of one column: values converted to the kind's physical form (never aliasing
 * the input), nulls as a `valid` mask (absent when every row is present), null rows zero.
 */
export function toPhysical(name: string, col: ColumnInput, options: ToPhysicalOptions = {}): PhysicalBatch {
  const schema = resolveColumnSchema(name, col);
  const rowBase = options.rowBase ?? 0;
  const values = col.values as unknown;
  if (values === null || typeof values !== 'object' || typeof (values as ArrayLike<unknown>).length !== 'number') {
    throw argumentError(`column '${name}': values must be an array or a typed array, found ${describeValue(values)}`);
  }
  const rows = (values as ArrayLike<unknown>).length;
  const given = col.valid === undefined ? undefined : checkValidMask(name, col.valid, rows);
  let batch: PhysicalBatch;
  switch (schema.kind) {
    case 'bool': { const r = toBool(name, values, given, rowBase); batch = { kind: 'bool', rows, data: r.data, valid: r.valid }; break; }
    case 'float': { const r = toF64(name, values, given, rowBase); batch = { kind: 'float', rows, data: r.data, valid: r.valid }; break; }
    case 'str': batch = toStr(name, values, given, rowBase); break;
    default: { const r = toI64(name, schema, values, given, rowBase); batch = { kind: schema.kind, rows, data: r.data, valid: r.valid }; }
  }
  checkNullable(name, schema, batch.valid, rowBase);
  batch.valid = finalMask(batch.valid);
  if (batch.valid === undefined) delete batch.valid;
  else zeroNullRows(batch);
  return batch;
}

// Lenient: a crafted file's invalid UTF-8 reads as U+FFFD (writers only store valid UTF-8). Made at
// first use: a TextDecoder at module load cost every `require('tetration')` ~0.06 ms.
let decoder: InstanceType<typeof TextDecoder> | undefined;

function badBatch(message: string): TetError {
  return new TetError('TET_INTERNAL', `physical batch: ${message}`);
}

/** The strings of a str batch: one latin1 decode and slices when it is ASCII, else one TextDecoder call per row. */
export function decodeStrings(bytes: Uint8Array, offsets: Uint32Array, rows: number): string[] {
  const out = new Array<string>(rows);
  if (isAscii(bytes)) {
    const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    for (let i = 0; i < rows; i++) out[i] = all.slice(offsets[i], offsets[i + 1]);
  } else {
    decoder ??= new TextDecoder('utf-8', { fatal: false });
    for (let i = 0; i < rows; i++) out[i] = decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  }
  return out;
}

/** i64 days to i32 through the (lo, hi) words: in range exactly when hi is lo's sign. */
function narrowDays(data: BigInt64Array): Int32Array {
  const rows = data.length;
  const days = new Int32Array(rows);
  const words = LITTLE_ENDIAN ? new Int32Array(data.buffer, data.byteOffset, rows * 2) : null;
  for (let i = 0; i < rows; i++) {
    const lo = words === null ? Number(BigInt.asIntN(32, data[i])) : words[2 * i];
    const hi = words === null ? Number(data[i] >> 32n) : words[2 * i + 1];
    if (hi !== lo >> 31) throw new TetError('TET_CELLS_INVALID', `a stored date ${data[i]} at row ${i} is outside the i32 day range`);
    days[i] = lo;
  }
  return days;
}

/** What users read from a physical batch: date days as Int32Array, strings decoded (null rows ''). */
export function fromPhysical(batch: PhysicalBatch, schema: ColumnSchema): ColumnValues {
  const kind: ColumnKind = schema.kind;
  if (batch.kind !== kind) throw badBatch(`kind ${batch.kind} for a ${kind} column`);
  const rows = batch.rows;
  if (batch.valid !== undefined && batch.valid.length !== rows) throw badBatch(`valid has ${batch.valid.length} entries for ${rows} rows`);
  const valid = batch.valid !== undefined && batch.valid.indexOf(0) >= 0 ? batch.valid.slice() : undefined;
  let values: ColumnValues['values'];
  if (batch.kind === 'str') {
    const { bytes, offsets } = batch;
    if (offsets.length !== rows + 1) throw badBatch(`${offsets.length} offsets for ${rows} rows`);
    for (let i = 0; i < rows; i++) if (offsets[i] > offsets[i + 1]) throw badBatch(`offsets decrease at row ${i}`);
    if (offsets[rows] > bytes.length) throw badBatch(`offsets run past the ${bytes.length} bytes`);
    values = decodeStrings(bytes, offsets, rows);
  } else {
    if (batch.data.length !== rows) throw badBatch(`${batch.data.length} values for ${rows} rows`);
    if (batch.kind === 'date') {
      values = narrowDays(batch.data);
    } else {
      values = batch.data.slice();
    }
  }
  return valid === undefined ? { kind, rows, values } : { kind, rows, values, valid };
}
