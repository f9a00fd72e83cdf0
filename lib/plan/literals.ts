// Where literals and group-by parameters in a column's stored form (spec tables_and_filters.md
// §4.1, §4.2, §4.5): one module for table queries (lib/plan/table.ts) and tensor `where` on axis
// tables, so both read `"2020-01-01T00:00:00Z"`, `"9007199254740993"` or `true` the same way.
// Parsing is the value codecs' (lib/tables/values.ts, the writer's own parsers); this file adds
// which op takes which operand and the checks that need the column's kind. Pure, no addon.
//
// Stored forms, as native/cells/predicate.h's `Literal` takes them: `bool` columns a boolean;
// `int`, `date` (days), `timestamp` (ticks of the column's unit) and `time` (µs) an i64 as a
// bigint; `float` an f64; `str` a string.

import { TetQueryError } from '../errors';
import type { ColumnKind, TimeUnit, TimestampTz } from '../tables/types';
import { literalFromJson } from '../tables/values';

/** A literal as written in a query document (wire `WhereLiteral`). */
export type WhereLiteralWire = string | number | boolean;

/** What literal conversion needs of a column: its kind, and for timestamps unit and time zone. */
export interface LiteralColumn {
  name: string;
  kind: ColumnKind;
  unit?: TimeUnit;
  tz?: TimestampTz;
}

/** A literal in its column's stored form (native `Literal`: Bool, Int, Float, Str). */
export type StoredLiteral =
  | { type: 'bool'; value: boolean }
  | { type: 'int'; value: bigint }
  | { type: 'float'; value: number }
  | { type: 'str'; value: string };

/** The predicate ops of the wire, in native/cells/predicate.h's `WhereOp` order. */
export const WHERE_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'not_in', 'range', 'prefix', 'is_null', 'is_nan'] as const;
export type WhereOpName = (typeof WHERE_OPS)[number];

/** Values an `in` / `not_in` list may hold (spec §4.1). */
export const MAX_WHERE_SET = 65_536;

/** A predicate as the wire writes it (structurally the wire's `WherePredicate`). */
export type WherePredicateLike = { column: string; axis?: unknown } & { [K in WhereOpName]?: unknown };

/** A predicate with its operand in stored form; exactly the operand its op takes is set. */
export interface StoredPredicate {
  column: string;
  op: WhereOpName;
  /** eq ne lt le gt ge prefix. */
  value?: StoredLiteral;
  /** in / not_in, as written (order and duplicates are the evaluator's business). */
  set?: StoredLiteral[];
  /** range: null = unbounded on that side. */
  lo?: StoredLiteral | null;
  hi?: StoredLiteral | null;
  /** is_null / is_nan. */
  flag?: boolean;
}

function whereOpError(message: string): TetQueryError {
  return new TetQueryError('TET_QUERY_WHERE_OP', message);
}

/** How a column is named in messages: `column "temp_c" (float)`. */
function columnText(col: LiteralColumn): string {
  const kind = col.kind === 'timestamp' ? `timestamp ${col.unit ?? 'us'} ${col.tz ?? 'UTC'}` : col.kind;
  return `column ${JSON.stringify(col.name)} (${kind})`;
}

function storedOf(col: LiteralColumn, v: ReturnType<typeof literalFromJson>): StoredLiteral {
  switch (col.kind) {
    case 'bool': return { type: 'bool', value: v as boolean };
    case 'float': return { type: 'float', value: v as number };
    case 'str': return { type: 'str', value: v as string };
    default: return { type: 'int', value: v as bigint };
  }
}

/**
 * One literal for `col` in stored form: `int` takes a JSON integer (|v| < 2^53), an integral
 * number or a decimal string `-?[0-9]+` within i64; `float` a number or "NaN" / "Infinity" /
 * "-Infinity"; `date` "YYYY-MM-DD"; `timestamp` RFC 3339 (offset for UTC columns, none for
 * naive ones, exact in the unit); `time` "hh:mm:ss[.ffffff]"; `bool` true / false; `str` a
 * well-formed string. Anything else is TET_QUERY_BAD_LITERAL, with `where` (e.g. `where[0].eq`)
 * and the column in the message.
 */
export function storedLiteral(col: LiteralColumn, x: unknown, where: string): StoredLiteral {
  const schema = col.kind === 'timestamp'
    ? { kind: 'timestamp' as const, unit: col.unit ?? 'us', tz: col.tz ?? 'UTC', nullable: true }
    : { kind: col.kind, nullable: true };
  try {
    return storedOf(col, literalFromJson(schema, x));
  } catch (err) {
    if (err instanceof TetQueryError) {
      throw new TetQueryError(err.code, `${where}: ${columnText(col)}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/** The op key of a predicate; exactly one must be present (TET_QUERY_WHERE_OP otherwise). */
export function predicateOp(p: WherePredicateLike, where: string): WhereOpName {
  const ops = WHERE_OPS.filter((k) => p[k] !== undefined);
  if (ops.length !== 1) {
    throw whereOpError(`${where}: a predicate has exactly one op (${WHERE_OPS.join(', ')}); found ${ops.length === 0 ? 'none' : ops.join(', ')}`);
  }
  return ops[0];
}

/**
 * A predicate on `col` with its operand in stored form. TET_QUERY_WHERE_OP for an op the
 * column's kind does not take (`prefix` on a non-`str` column, `is_nan` on a non-`float` one)
 * or a malformed operand (`in` not a list, `range` not two entries, `is_null` not a boolean);
 * TET_QUERY_TOO_LARGE for more than 65,536 `in` / `not_in` values; TET_QUERY_BAD_LITERAL for a
 * literal that does not fit the column. `where` names the predicate in messages (`where[2]`).
 */
export function storedPredicate(col: LiteralColumn, p: WherePredicateLike, where: string): StoredPredicate {
  const op = predicateOp(p, where);
  const operand = p[op];
  const at = `${where}.${op}`;
  const out: StoredPredicate = { column: col.name, op };
  switch (op) {
    case 'eq': case 'ne': case 'lt': case 'le': case 'gt': case 'ge':
      out.value = storedLiteral(col, operand, at);
      break;
    case 'in': case 'not_in': {
      if (!Array.isArray(operand)) throw whereOpError(`${at}: expected a list of values, found ${typeof operand}`);
      if (operand.length > MAX_WHERE_SET) {
        throw new TetQueryError('TET_QUERY_TOO_LARGE', `${at}: ${operand.length} values; at most ${MAX_WHERE_SET} are allowed`);
      }
      out.set = operand.map((x, i) => storedLiteral(col, x, `${at}[${i}]`));
      break;
    }
    case 'range': {
      if (!Array.isArray(operand) || operand.length !== 2) throw whereOpError(`${at}: expected [lo, hi] (either may be null)`);
      out.lo = operand[0] === null ? null : storedLiteral(col, operand[0], `${at}[0]`);
      out.hi = operand[1] === null ? null : storedLiteral(col, operand[1], `${at}[1]`);
      break;
    }
    case 'prefix':
      if (col.kind !== 'str') throw whereOpError(`${at}: prefix applies to str columns; ${columnText(col)} is not one`);
      out.value = storedLiteral(col, operand, at);
      break;
    case 'is_nan':
    case 'is_null':
      if (op === 'is_nan' && col.kind !== 'float') throw whereOpError(`${at}: is_nan applies to float columns; ${columnText(col)} is not one`);
      if (typeof operand !== 'boolean') throw whereOpError(`${at}: expected true or false`);
      out.flag = operand;
      break;
  }
  return out;
}

/** Calendar buckets of `group_by` (UTC calendar; naive timestamps as if UTC). */
export const TIME_BUCKETS = ['year', 'month', 'day', 'hour', 'minute'] as const;
export type TimeBucketName = (typeof TIME_BUCKETS)[number];

/** A group-by key transform in stored form: none, a calendar bucket, or a width. */
export type StoredKeyTransform =
  | { type: 'none' }
  | { type: 'bucket'; bucket: TimeBucketName }
  | { type: 'width_int'; width: bigint }
  | { type: 'width_float'; width: number };

/**
 * A group-by spec's `bucket` / `width` checked against `col` (spec §4.2, §4.5): `bucket` on
 * `date` (year, month, day) and `timestamp` columns; `width` > 0 on `int` (an integer: exact i64
 * floor division) and `float` (finite; f64 floor(v / w) * w). Both at once, or either on another
 * kind, or a bad width, is TET_QUERY_GROUP_BY.
 */
export function storedKeyTransform(col: LiteralColumn, spec: { bucket?: unknown; width?: unknown }, where: string): StoredKeyTransform {
  const { bucket, width } = spec;
  if (bucket !== undefined && width !== undefined) throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}: give bucket or width, not both`);
  if (bucket !== undefined) {
    if (typeof bucket !== 'string' || !(TIME_BUCKETS as readonly string[]).includes(bucket)) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.bucket: expected one of ${TIME_BUCKETS.join(', ')}`);
    }
    const b = bucket as TimeBucketName;
    if (col.kind !== 'date' && col.kind !== 'timestamp') {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.bucket: buckets apply to date and timestamp columns; ${columnText(col)} is not one`);
    }
    if (col.kind === 'date' && (b === 'hour' || b === 'minute')) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.bucket: a ${b} bucket does not apply to ${columnText(col)} (year, month or day)`);
    }
    return { type: 'bucket', bucket: b };
  }
  if (width !== undefined) {
    if (col.kind !== 'int' && col.kind !== 'float') {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.width: width applies to int and float columns; ${columnText(col)} is not one`);
    }
    if (typeof width !== 'number' || !Number.isFinite(width) || !(width > 0)) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.width: expected a finite number > 0, found ${String(width)}`);
    }
    if (col.kind === 'int') {
      if (!Number.isSafeInteger(width)) {
        throw new TetQueryError('TET_QUERY_GROUP_BY', `${where}.width: ${columnText(col)} takes an integer width below 2^53, found ${width}`);
      }
      return { type: 'width_int', width: BigInt(width) };
    }
    return { type: 'width_float', width };
  }
  return { type: 'none' };
}
