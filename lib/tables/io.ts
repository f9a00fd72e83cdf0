// Tables through the addon: the table catalog of an open file, column reads, and the writer's
// table appends (lib/writer.ts and lib/file.ts delegate here). Value forms: ./types.ts; the
// conversion between user values and physical batches: ./normalize.ts.
import { TetIoError, TetQueryError, toTetError } from '../errors';
import type { NativeBinding, NativeFileHandle, NativeTableColumn, NativeWriterHandle } from '../native';
import { fromPhysical, toPhysical } from './normalize';
import type { ColumnInput, ColumnKind, ColumnSchema, ColumnValues, PhysicalBatch, TimeUnit } from './types';

/** Wire codes of the column kinds (docs/format-tables.md). */
export const KIND_CODE: Record<ColumnKind, number> = { bool: 0, int: 1, float: 2, str: 3, date: 16, timestamp: 17, time: 18 };
const UNIT_CODE: Record<TimeUnit, number> = { s: 0, ms: 1, us: 2, ns: 3 };

/** One column of a stored table, as {@link TetFile.tables} lists it. */
export interface TableColumnInfo extends ColumnSchema {
  name: string;
  nullCount: number;
  /** Bytes of the column's block payloads (headers and metablocks not included). */
  payloadBytes: number;
  /** Blocks of 2,048 rows (the last may be shorter). */
  blocks: number;
  /** 64-byte cell headers the column stores at rest (its leaves plus a Directory cell; 1 for a run_directory column). */
  storedCells: number;
  /** Encodings its blocks use (only with `{ encodings: true }`: it validates every block). */
  encodings?: string[];
  metablocks: { kind: number; bytes: number }[];
}

/** A table stored in a `.tet` file. */
export interface TableInfo {
  name: string;
  /** The axis it is bound to (axis tables); absent for standalone tables. */
  axis?: { dataset: string; index: number };
  rows: number;
  columns: TableColumnInfo[];
}

/** The file's tables ([] when it has none). Throws TET_CELLS_INVALID for a malformed region. */
export function listTables(b: NativeBinding, file: NativeFileHandle, encodings = false): TableInfo[] {
  let raw: ReturnType<NativeBinding['fileTables']>;
  try {
    raw = b.fileTables(file, encodings);
  } catch (err) {
    throw toTetError(err);
  }
  return raw.map((t) => ({
    name: t.name,
    ...(t.dataset !== undefined ? { axis: { dataset: t.dataset, index: t.axis ?? 0 } } : {}),
    rows: t.rows,
    columns: t.columns.map(columnInfoOf),
  }));
}

function columnInfoOf(c: NativeTableColumn): TableColumnInfo {
  const out: TableColumnInfo = {
    name: c.name, kind: c.kind as ColumnKind, nullable: c.nullable, nullCount: c.nullCount,
    payloadBytes: c.payloadBytes, blocks: c.blocks, storedCells: c.storedCells, metablocks: c.metablocks,
  };
  if (c.unit !== undefined) out.unit = c.unit as TimeUnit;
  if (c.tz !== undefined) out.tz = c.tz as 'UTC' | 'naive';
  if (c.encodings) out.encodings = c.encodings;
  return out;
}

/** Row range of a column read: `start` (default 0) to `stop` (exclusive, default the end). */
export interface ReadColumnOptions {
  start?: number;
  stop?: number;
}

export function rowRange(table: TableInfo, opts: ReadColumnOptions = {}): { start: number; count: number } {
  const start = opts.start ?? 0;
  const stop = opts.stop ?? table.rows;
  for (const [k, v] of [['start', start], ['stop', stop]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new TetQueryError('TET_QUERY_SELECTION', `${k} must be a non-negative integer, got ${v}`);
  }
  if (start > stop || stop > table.rows) {
    throw new TetQueryError('TET_QUERY_SELECTION', `rows [${start}, ${stop}) lie outside table ${JSON.stringify(table.name)} (${table.rows} rows)`);
  }
  return { start, count: stop - start };
}

export function findTable(tables: readonly TableInfo[], name: string): TableInfo {
  const t = tables.find((x) => x.name === name);
  if (!t) {
    const known = tables.map((x) => x.name);
    throw new TetQueryError('TET_QUERY_UNKNOWN_TABLE', `no table named ${JSON.stringify(name)}` +
      (known.length ? ` (tables: ${known.join(', ')})` : ' (the file has no tables)'));
  }
  return t;
}

export function findColumn(table: TableInfo, name: string): TableColumnInfo {
  const c = table.columns.find((x) => x.name === name);
  if (!c) {
    throw new TetQueryError('TET_QUERY_UNKNOWN_COLUMN', `table ${JSON.stringify(table.name)} has no column ${JSON.stringify(name)}` +
      ` (columns: ${table.columns.map((x) => x.name).join(', ')})`);
  }
  return c;
}

/** Reads rows of one column (off the JS thread) into user values. */
export async function readColumn(b: NativeBinding, file: NativeFileHandle, table: TableInfo, column: string,
  opts: ReadColumnOptions = {}): Promise<ColumnValues> {
  const col = findColumn(table, column);
  const { start, count } = rowRange(table, opts);
  // Caller-owned outputs: native decodes straight into the arrays the user gets.
  const values = col.kind === 'str' ? null : outputArray(col.kind, count);
  const valid = new Uint8Array(count);
  let raw: Awaited<ReturnType<NativeBinding['fileReadColumn']>>;
  try {
    raw = await b.fileReadColumn(file, table.name, column, start, count, values, valid);
  } catch (err) {
    throw toTetError(err);
  }
  if (raw.kind === 'str') {
    const batch: PhysicalBatch = { kind: 'str', rows: raw.rows, bytes: raw.bytes, offsets: raw.offsets, ...(raw.anyNull ? { valid } : {}) };
    return fromPhysical(batch, col);
  }
  return { kind: col.kind, rows: count, values: values!, ...(raw.anyNull ? { valid } : {}) };
}

/** The typed array a column of this kind reads into (see ColumnValues.values). */
function outputArray(kind: ColumnKind, rows: number): Uint8Array | Int32Array | Float64Array | BigInt64Array {
  switch (kind) {
    case 'bool': return new Uint8Array(rows);
    case 'date': return new Int32Array(rows);
    case 'float': return new Float64Array(rows);
    default: return new BigInt64Array(rows);
  }
}

/** Declares a table natively; returns its native id. */
export function declareTable(b: NativeBinding, w: NativeWriterHandle, name: string, dataset: string, axis: number,
  schema: Record<string, ColumnSchema>): number {
  const columns = Object.entries(schema).map(([cname, s]) => ({
    name: cname, kind: KIND_CODE[s.kind], unit: UNIT_CODE[s.unit ?? 'us'], utc: (s.tz ?? 'UTC') === 'UTC',
    nullable: s.nullable ?? true,
  }));
  try {
    return b.writerAddTable(w, name, dataset, axis, columns);
  } catch (err) {
    throw toTetError(err);
  }
}

/**
 * One batch of a streaming append: a value array per column (any form {@link ColumnInput}
 * takes), and optionally `valid: { column: Uint8Array }` masks (1 = present). When the table
 * has a column named `valid`, that key is the column and nulls go in the arrays instead.
 */
export type TableBatch = Record<string, unknown>;

/** Physical batches of one append, in schema order, with their common row count. */
export function batchOf(tableName: string, schema: Record<string, ColumnSchema>, batch: TableBatch, rowBase = 0): { rows: number; columns: PhysicalBatch[] } {
  const names = Object.keys(schema);
  const masks = !('valid' in schema) && batch.valid !== undefined ? (batch.valid as Record<string, Uint8Array>) : {};
  for (const k of Object.keys(batch)) {
    if (k === 'valid' && !('valid' in schema)) continue;
    if (!(k in schema)) throw new TetIoError('TET_WRITE_ARGUMENT', `table ${JSON.stringify(tableName)} has no column ${JSON.stringify(k)}`);
  }
  for (const k of Object.keys(masks)) {
    if (!(k in schema)) throw new TetIoError('TET_WRITE_ARGUMENT', `valid.${k}: table ${JSON.stringify(tableName)} has no column ${JSON.stringify(k)}`);
  }
  const columns = names.map((n) => {
    if (!(n in batch)) throw new TetIoError('TET_WRITE_ARGUMENT', `table ${JSON.stringify(tableName)}: the batch lacks column ${JSON.stringify(n)}`);
    const input = { ...schema[n], values: batch[n], ...(masks[n] ? { valid: masks[n] } : {}) } as ColumnInput;
    return toPhysical(n, input, { rowBase });
  });
  const rows = columns[0]?.rows ?? 0;
  columns.forEach((c, i) => {
    if (c.rows !== rows) {
      throw new TetIoError('TET_WRITE_ARGUMENT', `table ${JSON.stringify(tableName)}: column ${JSON.stringify(names[i])} has ${c.rows} rows, ${JSON.stringify(names[0])} has ${rows}`);
    }
  });
  return { rows, columns };
}

/** The native form of one append. */
export function nativeColumns(columns: PhysicalBatch[]): { data: ArrayBufferView; offsets?: Uint32Array; valid?: Uint8Array }[] {
  return columns.map((c) => {
    const valid = c.valid ? { valid: c.valid } : {};
    return c.kind === 'str' ? { data: c.bytes, offsets: c.offsets, ...valid } : { data: c.data, ...valid };
  });
}
