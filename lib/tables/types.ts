// The contract between table producers (SDK one-shot columns, streaming appends, tabular source
// readers) and the native table writer / reader (spec tables_and_filters.md §1, §3, §4.5).

/** The logical kind of a table column (spec §1). */
export type ColumnKind = 'bool' | 'int' | 'float' | 'str' | 'date' | 'timestamp' | 'time';

/** The tick of a `timestamp` column: seconds, milli-, micro- or nanoseconds since the epoch. */
export type TimeUnit = 's' | 'ms' | 'us' | 'ns';

/** `UTC`: instants, written and printed with an offset; `naive`: wall-clock values without one. */
export type TimestampTz = 'UTC' | 'naive';

/** Every column kind, in spec order. */
export const COLUMN_KINDS: readonly ColumnKind[] = ['bool', 'int', 'float', 'str', 'date', 'timestamp', 'time'];
/** Every timestamp unit, coarsest first. */
export const TIME_UNITS: readonly TimeUnit[] = ['s', 'ms', 'us', 'ns'];

/** What a column is: its kind and, for timestamps, unit and time zone handling. */
export interface ColumnSchema {
  kind: ColumnKind;
  /** `timestamp` only; default `'us'`. */
  unit?: TimeUnit;
  /** `timestamp` only; default `'UTC'`. */
  tz?: TimestampTz;
  /** Whether the column may hold nulls; default true. */
  nullable?: boolean;
}

/** A ColumnSchema with its defaults filled in (what `schemaFromSpec` returns). */
export type ResolvedColumnSchema =
  | { kind: Exclude<ColumnKind, 'timestamp'>; nullable: boolean }
  | { kind: 'timestamp'; unit: TimeUnit; tz: TimestampTz; nullable: boolean };

/** Typed arrays a column's values may come in. */
export type ColumnTypedArray =
  | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array
  | BigInt64Array | BigUint64Array | Float32Array | Float64Array;

/**
 * A column given to the writer (spec §4.5 "SDK one-shot columns"): `values` as a typed array or a
 * plain array (`null` entries are nulls; `(bigint | null)[]` for ints beyond 2^53; strings for
 * `date`, `timestamp`, `time`), or a `valid` mask (1 = present) instead of `null` entries.
 */
export interface ColumnInput extends ColumnSchema {
  values: ColumnTypedArray | ArrayLike<unknown>;
  valid?: Uint8Array;
}

/**
 * What the native writer takes per column: physical values plus an optional validity mask
 * (1 = present; absent when every row is present). Null rows hold the kind's zero (0, 0n, 0.0,
 * no bytes, false). `date` is i64 days here; `time` i64 µs since midnight; `timestamp` i64 ticks
 * of the column's unit. A batch never aliases the caller's arrays.
 */
export type PhysicalBatch =
  | { kind: 'bool'; rows: number; data: Uint8Array; valid?: Uint8Array }
  | { kind: 'int' | 'date' | 'timestamp' | 'time'; rows: number; data: BigInt64Array; valid?: Uint8Array }
  | { kind: 'float'; rows: number; data: Float64Array; valid?: Uint8Array }
  | { kind: 'str'; rows: number; bytes: Uint8Array; offsets: Uint32Array /* rows + 1 */; valid?: Uint8Array };

/** What reading a column returns to users. */
export interface ColumnValues {
  kind: ColumnKind;
  rows: number;
  /** bool: 0/1; int, timestamp, time: BigInt64Array; date: Int32Array of days; float; str (null rows ''). */
  values: Uint8Array | BigInt64Array | Int32Array | Float64Array | string[];
  /** Present when the range has a null. */
  valid?: Uint8Array;
}
