// Tabular sources (CSV, Parquet, Arrow IPC) read as one table: a schema of column kinds and a
// stream of physical batches of at most `batchRows` rows (lib/tables/types.ts), bounded memory
// (one CSV batch, one Parquet row group, one Arrow record batch at a time). The writer takes the
// batches as they come; nothing here knows the .tet format.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseCsv } from 'csv-parse';
import type * as Arrow from 'apache-arrow';
import { TetError } from '../errors';
import { resolveColumnSchema, toPhysical } from '../tables/normalize';
import type { ColumnInput, ColumnSchema, PhysicalBatch, ResolvedColumnSchema, TimeUnit } from '../tables/types';
import { Utf8BatchBuilder } from '../tables/utf8';
import { I64_MAX, parseDate, parseTimestamp } from '../tables/values';
import { f16BitsToNumber } from './dtype';
import { convertError, describe } from './errors';
import { importEsm } from '../esm';

/** A tabular source format. */
export type TabularFormat = 'csv' | 'parquet' | 'arrow';

/** Default rows per batch (32 blocks of 2,048 rows). */
export const DEFAULT_BATCH_ROWS = 65_536;

export interface ReadTabularOptions {
  /** Overrides detection by magic bytes and extension. */
  format?: TabularFormat;
  /**
   * Explicit column kinds. CSV: these columns skip inference and their text must parse as the
   * kind. Parquet / Arrow: the kind must be the one the source type maps to; `nullable: false`
   * makes a null an error.
   */
  columns?: Record<string, ColumnSchema>;
  /** Rows per batch, at most (default 65,536). */
  batchRows?: number;
  /** Leave out columns of unsupported types (lists, structs, binary, ...) instead of failing. */
  skipUnsupported?: boolean;
  /** CSV field delimiter (default ',' and '\t' for `.tsv`). */
  delimiter?: string;
}

/** A column left out by `skipUnsupported`. */
export interface SkippedColumn {
  column: string;
  /** The source type, as the source names it. */
  type: string;
}

/** One tabular source, opened. */
export interface TabularSource {
  format: TabularFormat;
  /** The columns' kinds, defaults filled in. */
  schema: Record<string, ResolvedColumnSchema>;
  /** Column names in source order (a record orders integer-like keys first). */
  columnNames: string[];
  /** Row count when the source states it (Parquet metadata; CSV after its inference pass). */
  rows?: number;
  skipped: SkippedColumn[];
  /** The batches, each `{ column: PhysicalBatch }` with the same row count; iterating again re-reads. */
  batches: AsyncIterable<Record<string, PhysicalBatch>>;
}

// ---------------------------------------------------------------------------------------------
// Detection

const PARQUET_MAGIC = Buffer.from('PAR1', 'latin1');
const ARROW_FILE_MAGIC = Buffer.from('ARROW1', 'latin1');
const ARROW_STREAM_CONTINUATION = Buffer.from([0xff, 0xff, 0xff, 0xff]);
/** Extensions, case-insensitive. */
export const TABULAR_EXTENSIONS: Readonly<Record<string, TabularFormat>> = {
  '.csv': 'csv', '.tsv': 'csv', '.parquet': 'parquet', '.pq': 'parquet',
  '.arrow': 'arrow', '.arrows': 'arrow', '.feather': 'arrow', '.ipc': 'arrow',
};

/** The format of `src`: by magic bytes (`PAR1`, `ARROW1`, the stream continuation marker), else by extension. */
export function detectTabularFormat(src: string): TabularFormat {
  const head = Buffer.alloc(8);
  let n = 0;
  let fd: number | undefined;
  try {
    fd = fs.openSync(src, 'r');
    n = fs.readSync(fd, head, 0, 8, 0);
  } catch (err) {
    throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: ${describe(err)}`, err);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  const starts = (magic: Buffer) => n >= magic.length && head.subarray(0, magic.length).equals(magic);
  if (starts(PARQUET_MAGIC)) return 'parquet';
  if (starts(ARROW_FILE_MAGIC) || starts(ARROW_STREAM_CONTINUATION)) return 'arrow';
  const byExt = TABULAR_EXTENSIONS[path.extname(src).toLowerCase()];
  if (byExt) return byExt;
  throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
    `${src}: not Parquet (PAR1) or Arrow IPC (ARROW1, 0xFFFFFFFF) by content, and the extension is not one of ${Object.keys(TABULAR_EXTENSIONS).join(' ')}; pass format`);
}

/** Opens a CSV, Parquet or Arrow IPC file as a table. */
export async function readTabular(src: string, options: ReadTabularOptions = {}): Promise<TabularSource> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  if (!Number.isSafeInteger(batchRows) || batchRows < 1) throw convertError('TET_CONVERT_BAD_OPTION', `batchRows must be a positive integer, found ${batchRows}`);
  if (options.format !== undefined && !['csv', 'parquet', 'arrow'].includes(options.format)) {
    throw convertError('TET_CONVERT_BAD_OPTION', `format must be csv, parquet or arrow, found ${JSON.stringify(options.format)}`);
  }
  const explicit = resolveExplicit(options.columns);
  const format = options.format ?? detectTabularFormat(src);
  const opened = format === 'csv' ? await openCsv(src, explicit, batchRows, options.delimiter)
    : format === 'parquet' ? await openParquet(src, explicit, batchRows, options.skipUnsupported === true)
      : await openArrow(src, explicit, batchRows, options.skipUnsupported === true);
  const schema: Record<string, ResolvedColumnSchema> = {};
  for (const c of opened.columns) schema[c.name] = c.schema;
  return { format, schema, columnNames: opened.columns.map((c) => c.name), rows: opened.rows, skipped: opened.skipped, batches: opened.batches };
}

interface OpenedSource {
  columns: { name: string; schema: ResolvedColumnSchema }[];
  rows?: number;
  skipped: SkippedColumn[];
  batches: AsyncIterable<Record<string, PhysicalBatch>>;
}

function resolveExplicit(columns: Record<string, ColumnSchema> | undefined): Map<string, ResolvedColumnSchema> {
  const out = new Map<string, ResolvedColumnSchema>();
  if (columns === undefined) return out;
  if (columns === null || typeof columns !== 'object') throw convertError('TET_CONVERT_BAD_OPTION', 'columns must be an object of column schemas');
  for (const [name, spec] of Object.entries(columns)) {
    try {
      out.set(name, resolveColumnSchema(name, spec));
    } catch (err) {
      throw convertError('TET_CONVERT_BAD_OPTION', `columns: ${describe(err)}`, err);
    }
  }
  return out;
}

function checkExplicitNames(src: string, explicit: Map<string, ResolvedColumnSchema>, names: string[]): void {
  const have = new Set(names);
  for (const name of explicit.keys()) {
    if (!have.has(name)) throw convertError('TET_CONVERT_BAD_OPTION', `${src}: columns names '${name}', which the source does not have (${names.join(', ')})`);
  }
}

/** A conversion error of one column's values, as TET_CONVERT_READ naming file, column and row. */
function readError(src: string, column: string, err: unknown, row?: number): TetError {
  const where = row === undefined ? `column '${column}'` : `column '${column}' row ${row}`;
  const message = describe(err);
  return convertError('TET_CONVERT_READ', `${src}: ${message.startsWith(`column '${column}'`) ? message : `${where}: ${message}`}`, err,
    { path: src, column, ...(row === undefined ? {} : { row }) });
}

/** toPhysical with errors as TET_CONVERT_READ. */
function physical(src: string, name: string, col: ColumnInput, rowBase: number): PhysicalBatch {
  try {
    return toPhysical(name, col, { rowBase });
  } catch (err) {
    throw readError(src, name, err);
  }
}

// ---------------------------------------------------------------------------------------------
// CSV: header row, empty field = null, a first pass infers the kinds the explicit columns leave open

const CSV_INT = /^[+-]?[0-9]+$/;
const CSV_FLOAT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const CSV_NONFINITE = /^[+-]?(?:nan|inf|infinity)$/i;
const CSV_BOOL = /^(?:true|false)$/i;
const CSV_OFFSET = /(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$/;
// What other tools write in CSV (DuckDB, pandas, PostgreSQL): a space for `T`, an offset as
// `+HH` or `+HHMM`. Rewritten to RFC 3339 before parsing; anything else is left as it is.
const CSV_SPACED_TIMESTAMP = /^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)([+-][0-9]{2})(?::?([0-9]{2}))?$/;
const CSV_SPACED_NAIVE = /^([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)([Zz]?)$/;

/** A CSV timestamp in RFC 3339 form (see CSV_SPACED_TIMESTAMP). */
export function csvTimestampText(text: string): string {
  let m = CSV_SPACED_TIMESTAMP.exec(text);
  if (m) return `${m[1]}T${m[2]}${m[3]}:${m[4] ?? '00'}`;
  m = CSV_SPACED_NAIVE.exec(text);
  if (m) return `${m[1]}T${m[2]}${m[3]}`;
  return text;
}
const TEXT_I64_MIN = -(1n << 63n);

function csvIntValue(text: string): bigint | number | undefined {
  if (!CSV_INT.test(text)) return undefined;
  if (text.length <= 15) return Number(text);  // at most 15 digits: below 2^53, exact as a number
  const v = BigInt(text);
  return v < TEXT_I64_MIN || v > I64_MAX ? undefined : v;
}

function csvFloatValue(text: string): number | undefined {
  if (CSV_FLOAT.test(text)) return Number(text);
  if (CSV_NONFINITE.test(text)) {
    const body = text.replace(/^[+-]/, '').toLowerCase();
    return body === 'nan' ? NaN : text.startsWith('-') ? -Infinity : Infinity;
  }
  return undefined;
}

/** What one column's values allow so far (each flag drops at the first value that contradicts it). */
class CsvKindInference {
  bool = true;
  int = true;
  float = true;
  date = true;
  utc = true;
  naive = true;
  /** A timestamp with more than 6 significant fraction digits was seen: the unit is ns. */
  needsNs = false;
  /** Timestamps in whole µs (floored), to check an ns column still holds them all. */
  minUs: bigint | undefined;
  maxUs: bigint | undefined;
  values = 0;

  observe(text: string): void {
    this.values++;
    if (this.bool && !CSV_BOOL.test(text)) this.bool = false;
    if (this.int && csvIntValue(text) === undefined) this.int = false;
    if (!this.int && this.float && csvFloatValue(text) === undefined) this.float = false;
    if (this.date) {
      try { parseDate(text); } catch { this.date = false; }
    }
    if (this.utc || this.naive) this.observeTimestamp(text);
  }

  private observeTimestamp(raw: string): void {
    const text = csvTimestampText(raw);
    const hasOffset = CSV_OFFSET.test(text) && text.length > 19;
    if (hasOffset) this.naive = false;
    else this.utc = false;
    if (!this.utc && !this.naive) return;
    const tz = hasOffset ? 'UTC' : 'naive';
    let us: bigint;
    try {
      us = parseTimestamp(text, 'us', tz);
    } catch {
      try {
        us = parseTimestamp(text, 'ns', tz) / 1000n;  // only the sub-µs digits failed
        this.needsNs = true;
      } catch {
        this.utc = this.naive = false;
        return;
      }
    }
    if (this.minUs === undefined || us < this.minUs) this.minUs = us;
    if (this.maxUs === undefined || us > this.maxUs) this.maxUs = us;
  }

  /** The kind the values allow, most specific first; `str` for a column of nulls only. */
  result(): ResolvedColumnSchema {
    if (this.values === 0) return { kind: 'str', nullable: true };
    if (this.bool) return { kind: 'bool', nullable: true };
    if (this.int) return { kind: 'int', nullable: true };
    if (this.float) return { kind: 'float', nullable: true };
    if (this.date) return { kind: 'date', nullable: true };
    if (this.utc || this.naive) {
      const fitsNs = this.minUs! >= -9_223_372_036_854_775n && this.maxUs! <= 9_223_372_036_854_775n;
      if (!this.needsNs || fitsNs) return { kind: 'timestamp', unit: this.needsNs ? 'ns' : 'us', tz: this.utc ? 'UTC' : 'naive', nullable: true };
    }
    return { kind: 'str', nullable: true };
  }
}

/** The records of a CSV file, the header first; the reader is closed when iteration stops. */
async function* csvRecords(src: string, delimiter: string): AsyncGenerator<string[]> {
  // No `cast` hook: it builds a context object per field, 3x the parse time. So an empty field,
  // quoted or not, is null ('' cannot be told from a missing value).
  const parser = parseCsv({ bom: true, delimiter, skip_empty_lines: true, relax_column_count: false });
  const input = fs.createReadStream(src);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    for await (const record of parser) yield record as string[];
  } catch (err) {
    if (err instanceof TetError) throw err;
    const code = (err as { code?: string }).code;
    throw convertError(code === 'ENOENT' || code === 'EACCES' ? 'TET_CONVERT_OPEN' : 'TET_CONVERT_SOURCE_INVALID', `${src}: ${describe(err)}`, err);
  } finally {
    input.destroy();
    parser.destroy();
  }
}

function csvHeader(src: string, header: string[] | undefined): string[] {
  if (header === undefined) throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: the CSV file is empty (a header row is needed)`);
  const names = header.map((h, i) => (h === '' ? `column${i}` : h));
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: the header names column '${n}' twice`);
    seen.add(n);
  }
  return names;
}

async function openCsv(src: string, explicit: Map<string, ResolvedColumnSchema>, batchRows: number, delimiterOption?: string): Promise<OpenedSource> {
  const delimiter = delimiterOption ?? (path.extname(src).toLowerCase() === '.tsv' ? '\t' : ',');
  const records = csvRecords(src, delimiter);
  const names = csvHeader(src, (await records.next()).value ?? undefined);
  checkExplicitNames(src, explicit, names);
  const inferred = names.map((n) => (explicit.has(n) ? undefined : new CsvKindInference()));
  let rows = 0;
  if (inferred.some((x) => x !== undefined)) {
    for await (const rec of records) {
      for (let c = 0; c < names.length; c++) {
        const v = rec[c];
        if (v !== '' && inferred[c] !== undefined) inferred[c]!.observe(v);
      }
      rows++;
    }
  } else {
    await records.return(undefined);
  }
  const columns = names.map((name, c) => ({ name, schema: explicit.get(name) ?? inferred[c]!.result() }));
  const batches = {
    [Symbol.asyncIterator]: () => csvBatches(src, delimiter, columns, batchRows),
  };
  return { columns, rows: inferred.some((x) => x !== undefined) ? rows : undefined, skipped: [], batches };
}

async function* csvBatches(src: string, delimiter: string, columns: OpenedSource['columns'], batchRows: number): AsyncGenerator<Record<string, PhysicalBatch>> {
  const records = csvRecords(src, delimiter);
  await records.next();  // the header
  const texts = columns.map(() => new Array<string | null>(batchRows));
  let n = 0;
  let rowBase = 0;
  const flush = () => {
    const out: Record<string, PhysicalBatch> = {};
    columns.forEach((c, i) => {
      texts[i].length = n;
      out[c.name] = csvColumnBatch(src, c.name, c.schema, texts[i], rowBase);
    });
    rowBase += n;
    n = 0;
    return out;
  };
  for await (const rec of records) {
    for (let c = 0; c < columns.length; c++) texts[c][n] = rec[c] === '' ? null : rec[c];
    if (++n === batchRows) yield flush();
  }
  if (n > 0) yield flush();
}

/** One column of CSV text as a batch: CSV spellings for bool, int and float; the JSON forms for the rest. */
function csvColumnBatch(src: string, name: string, schema: ResolvedColumnSchema, texts: (string | null)[], rowBase: number): PhysicalBatch {
  const n = texts.length;
  if (schema.kind === 'str') return physical(src, name, { ...schema, values: texts }, rowBase);
  let values: unknown[] = texts;
  if (schema.kind === 'timestamp') values = texts.map((t) => (t === null ? null : csvTimestampText(t)));
  if (schema.kind === 'bool' || schema.kind === 'int' || schema.kind === 'float') {
    values = new Array(n);
    for (let i = 0; i < n; i++) {
      const t = texts[i];
      if (t === null) { values[i] = null; continue; }
      const v = schema.kind === 'bool' ? (CSV_BOOL.test(t) ? t.length === 4 : undefined)
        : schema.kind === 'int' ? csvIntValue(t) : csvFloatValue(t);
      if (v === undefined) throw readError(src, name, new Error(`${JSON.stringify(t.slice(0, 40))} is not ${schema.kind === 'int' ? 'an integer within i64' : `a ${schema.kind}`}`), rowBase + i);
      values[i] = v;
    }
  }
  return physical(src, name, { ...schema, values }, rowBase);
}

// ---------------------------------------------------------------------------------------------
// Parquet (hyparquet, one row group at a time)

type Hyparquet = typeof import('hyparquet');
let hyparquetLoaded: Promise<[Hyparquet, Record<string, unknown>]> | undefined;
function loadHyparquet() {
  hyparquetLoaded ??= Promise.all([importEsm<Hyparquet>('hyparquet'), importEsm<typeof import('hyparquet-compressors')>('hyparquet-compressors').then((m) => m.compressors as Record<string, unknown>)]);
  return hyparquetLoaded;
}

/** hyparquet's parsers, set to hand over the stored values: ticks and days as numbers, strings as bytes. */
const RAW_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
  stringFromBytes: (b: Uint8Array) => b,
  jsonFromBytes: (b: Uint8Array) => b,
};

/** How one source column becomes physical batches. */
interface ColumnReader {
  name: string;
  schema: ResolvedColumnSchema;
}

interface ParquetColumn extends ColumnReader {
  /** Values of the range → batch (values: hyparquet's decoded array, nulls as null/undefined). */
  convert(values: ArrayLike<unknown>, rowBase: number): PhysicalBatch;
}

const PARQUET_UNITS: Record<string, TimeUnit> = { MILLIS: 'ms', MICROS: 'us', NANOS: 'ns' };

/** A plain array with null for hyparquet's null / undefined entries (typed arrays pass through). */
function withNulls(values: ArrayLike<unknown>): ArrayLike<unknown> {
  if (!Array.isArray(values)) return values;
  for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = null;
  return values;
}

/** The kind of a flat Parquet column, or the reason it has none. */
function parquetKind(el: any): { schema: ResolvedColumnSchema; unsigned64?: boolean; timeScale?: number } | { unsupported: string } {
  const type: string = el.type;
  const ct: string | undefined = el.converted_type;
  const lt = el.logical_type as { type: string; [k: string]: any } | undefined;
  const nullable = el.repetition_type !== 'REQUIRED';
  const describeType = () => [type, lt?.type ?? ct].filter(Boolean).join('/');
  if (lt?.type === 'DECIMAL' || ct === 'DECIMAL') return { schema: { kind: 'float', nullable } };
  if (lt?.type === 'TIMESTAMP') {
    const unit = PARQUET_UNITS[lt.unit];
    return { schema: { kind: 'timestamp', unit, tz: lt.isAdjustedToUTC ? 'UTC' : 'naive', nullable } };
  }
  if (ct === 'TIMESTAMP_MILLIS' || ct === 'TIMESTAMP_MICROS') {  // legacy annotation: UTC-adjusted
    return { schema: { kind: 'timestamp', unit: ct === 'TIMESTAMP_MILLIS' ? 'ms' : 'us', tz: 'UTC', nullable } };
  }
  if (type === 'INT96' && !ct) return { schema: { kind: 'timestamp', unit: 'ns', tz: 'UTC', nullable } };  // Impala / Spark instants
  if (lt?.type === 'TIME' || ct === 'TIME_MILLIS' || ct === 'TIME_MICROS') {
    const unit = lt?.type === 'TIME' ? lt.unit : ct === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS';
    return { schema: { kind: 'time', nullable }, timeScale: unit === 'MILLIS' ? 1000 : unit === 'NANOS' ? -1000 : 1 };
  }
  if (lt?.type === 'DATE' || ct === 'DATE') return { schema: { kind: 'date', nullable } };
  if (lt?.type === 'FLOAT16') return { schema: { kind: 'float', nullable } };
  switch (type) {
    case 'BOOLEAN': return { schema: { kind: 'bool', nullable } };
    case 'INT32': case 'INT64': {
      if (lt !== undefined && lt.type !== 'INTEGER') return { unsupported: describeType() };
      const unsigned = (lt?.type === 'INTEGER' && !lt.isSigned) || (ct?.startsWith('UINT_') ?? false);
      const bits = lt?.type === 'INTEGER' ? lt.bitWidth : ct === 'UINT_64' || ct === 'INT_64' || (!ct && type === 'INT64') ? 64 : 32;
      return { schema: { kind: 'int', nullable }, unsigned64: unsigned && bits === 64 };
    }
    case 'FLOAT': case 'DOUBLE': return { schema: { kind: 'float', nullable } };
    case 'BYTE_ARRAY':
      if (lt?.type === 'STRING' || lt?.type === 'ENUM' || lt?.type === 'JSON' || ct === 'UTF8' || ct === 'ENUM' || ct === 'JSON') return { schema: { kind: 'str', nullable } };
      return { unsupported: `${describeType()} (binary)` };
    default: return { unsupported: describeType() };
  }
}

function parquetColumn(src: string, name: string, el: any, children: number, explicit: ResolvedColumnSchema | undefined): ParquetColumn | { unsupported: string } {
  if (children > 0 || el.repetition_type === 'REPEATED') return { unsupported: el.converted_type ?? el.logical_type?.type ?? 'group' };
  const mapped = parquetKind(el);
  if ('unsupported' in mapped) return mapped;
  const schema = checkExplicitKind(src, name, mapped.schema, explicit, () => `${el.type}${el.logical_type ? `/${el.logical_type.type}` : ''}`);
  const base = { name, schema };
  switch (schema.kind) {
    case 'str': return { ...base, convert: (values, rowBase) => bytesColumnBatch(src, name, schema, values, rowBase) };
    case 'time': {
      const scale = mapped.timeScale!;
      return { ...base, convert: (values, rowBase) => physical(src, name, { ...schema, values: scaleTimes(values, scale) }, rowBase) };
    }
    case 'int':
      if (mapped.unsigned64) return { ...base, convert: (values, rowBase) => physical(src, name, { ...schema, values: checkUnsigned64(src, name, values, rowBase) }, rowBase) };
      return { ...base, convert: (values, rowBase) => physical(src, name, { ...schema, values: withNulls(values) }, rowBase) };
    default:
      return { ...base, convert: (values, rowBase) => physical(src, name, { ...schema, values: withNulls(values) }, rowBase) };
  }
}

/** A u64 column holds values ≤ i64 max only (and no negative reinterpretation slips through). */
function checkUnsigned64(src: string, name: string, values: ArrayLike<unknown>, rowBase: number): ArrayLike<unknown> {
  const out = withNulls(values);
  for (let i = 0; i < out.length; i++) {
    const v = out[i];
    if (typeof v === 'bigint' && (v < 0n || v > I64_MAX)) throw readError(src, name, new Error(`u64 value ${BigInt.asUintN(64, v)} is beyond the i64 maximum`), rowBase + i);
  }
  return out;
}

/** Times to µs: scale > 0 multiplies, < 0 floor-divides (ns), nulls kept. */
function scaleTimes(values: ArrayLike<unknown>, scale: number): (number | null)[] {
  const out = new Array<number | null>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) out[i] = null;
    else {
      const n = Number(v);
      out[i] = scale > 0 ? n * scale : Math.floor(n / -scale);
    }
  }
  return out;
}

/** Byte-string rows (Parquet BYTE_ARRAY values; null entries) as a str batch, UTF-8 validated. */
function bytesColumnBatch(src: string, name: string, schema: ResolvedColumnSchema, values: ArrayLike<unknown>, rowBase: number): PhysicalBatch {
  const n = values.length;
  const builder = new Utf8BatchBuilder(n, n * 16);
  let valid: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v instanceof Uint8Array) builder.appendBytes(v);
    else if (v === null || v === undefined) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
      builder.appendEmpty();
    } else if (typeof v === 'string') builder.appendString(v);
    else throw readError(src, name, new Error(`unexpected string value ${typeof v}`), rowBase + i);
  }
  return strBatch(src, name, schema, builder, valid, rowBase);
}

/** The str batch of a builder filled from source bytes: UTF-8 checked (unless `validated`), nulls allowed by the schema. */
function strBatch(src: string, name: string, schema: ResolvedColumnSchema, builder: Utf8BatchBuilder, valid: Uint8Array | undefined, rowBase: number, validated = false): PhysicalBatch {
  if (valid !== undefined && !schema.nullable) {
    const row = valid.indexOf(0);
    if (row >= 0) throw readError(src, name, new Error('null in a column declared nullable: false'), rowBase + row);
  }
  let out;
  try {
    out = builder.finish(!validated);
  } catch (err) {
    throw readError(src, name, err, (err as { row?: number }).row === undefined ? undefined : rowBase + (err as { row: number }).row);
  }
  return valid === undefined ? { kind: 'str', rows: builder.rows, ...out } : { kind: 'str', rows: builder.rows, ...out, valid };
}

/** The source's kind, or the explicit one when it agrees (its nullable wins). */
function checkExplicitKind(src: string, name: string, mapped: ResolvedColumnSchema, explicit: ResolvedColumnSchema | undefined, sourceType: () => string): ResolvedColumnSchema {
  if (explicit === undefined) return mapped;
  const same = explicit.kind === mapped.kind &&
    (explicit.kind !== 'timestamp' || mapped.kind !== 'timestamp' || (explicit.unit === mapped.unit && explicit.tz === mapped.tz));
  if (!same) {
    const show = (s: ResolvedColumnSchema) => (s.kind === 'timestamp' ? `timestamp(${s.unit}, ${s.tz})` : s.kind);
    throw convertError('TET_CONVERT_BAD_OPTION', `${src}: column '${name}' is ${sourceType()}, which reads as ${show(mapped)}, not ${show(explicit)}`);
  }
  return { ...mapped, nullable: explicit.nullable };
}

async function openParquet(src: string, explicit: Map<string, ResolvedColumnSchema>, batchRows: number, skipUnsupported: boolean): Promise<OpenedSource> {
  const [hyparquet, compressors] = await loadHyparquet();
  if (!fs.existsSync(src)) throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: no such file`);
  let metadata: Awaited<ReturnType<Hyparquet['parquetMetadataAsync']>>;
  try {
    metadata = await hyparquet.parquetMetadataAsync(await hyparquet.asyncBufferFromFile(src));
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: not a readable Parquet file: ${describe(err)}`, err);
  }
  const tree = hyparquet.parquetSchema(metadata);
  const names = tree.children.map((c) => c.element.name);
  checkExplicitNames(src, explicit, names);
  const columns: ParquetColumn[] = [];
  const skipped: SkippedColumn[] = [];
  for (const child of tree.children) {
    const name = child.element.name;
    const col = parquetColumn(src, name, child.element, child.children.length, explicit.get(name));
    if ('unsupported' in col) {
      if (!skipUnsupported) throw unsupportedType(src, name, col.unsupported);
      skipped.push({ column: name, type: col.unsupported });
    } else columns.push(col);
  }
  const groups = metadata.row_groups.map((g) => Number(g.num_rows));
  const batches = {
    async* [Symbol.asyncIterator]() {
      const file = await hyparquet.asyncBufferFromFile(src);
      const scan = await hyparquet.parquetScan({ file, metadata, compressors: compressors as any, parsers: RAW_PARSERS as any, columns: columns.map((c) => c.name) });
      let groupStart = 0;
      for (const groupRows of groups) {
        const data = new Map<string, ArrayLike<unknown>>();
        for (const c of columns) {
          try {
            data.set(c.name, await scan.readColumn({ column: c.name, rowStart: groupStart, rowEnd: groupStart + groupRows }));
          } catch (err) {
            throw readError(src, c.name, err);
          }
          if (data.get(c.name)!.length !== groupRows) throw readError(src, c.name, new Error(`row group holds ${data.get(c.name)!.length} values for ${groupRows} rows`));
        }
        for (let a = 0; a < groupRows; a += batchRows) {
          const b = Math.min(groupRows, a + batchRows);
          const out: Record<string, PhysicalBatch> = {};
          for (const c of columns) out[c.name] = c.convert(sliceValues(data.get(c.name)!, a, b), groupStart + a);
          yield out;
        }
        groupStart += groupRows;
      }
    },
  };
  return { columns, rows: Number(metadata.num_rows), skipped, batches };
}

function sliceValues(values: ArrayLike<unknown>, a: number, b: number): ArrayLike<unknown> {
  if (a === 0 && b === values.length) return values;
  return ArrayBuffer.isView(values) ? (values as unknown as Int32Array).subarray(a, b) : (values as unknown[]).slice(a, b);
}

function unsupportedType(src: string, column: string, type: string): TetError {
  return convertError('TET_CONVERT_UNSUPPORTED_TYPE', `${src}: column '${column}' has type ${type}, which a table column cannot hold (pass skipUnsupported to leave it out)`,
    undefined, { path: src, column });
}

// ---------------------------------------------------------------------------------------------
// Arrow IPC (file and stream formats, one record batch at a time)

type ArrowModule = typeof import('apache-arrow');
let arrowLoaded: Promise<ArrowModule> | undefined;
function loadArrow(): Promise<ArrowModule> {
  arrowLoaded ??= importEsm<ArrowModule>('apache-arrow');
  return arrowLoaded;
}

interface ArrowColumn extends ColumnReader {
  index: number;
  /** Rows [a, b) of the column's data in one record batch. */
  convert(data: Arrow.Data, a: number, b: number, rowBase: number): PhysicalBatch;
}

const ARROW_UNITS: TimeUnit[] = ['s', 'ms', 'us', 'ns'];
const US_PER_ARROW_TIME_UNIT = [1_000_000, 1000, 1, -1000];  // SECOND, MILLI, MICRO; NANO divides

/** The validity of rows [a, b) from the data's bitmap, or undefined when it has no nulls. */
function arrowValidity(data: Arrow.Data, a: number, b: number): Uint8Array | undefined {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || bitmap === undefined || bitmap.length === 0) return undefined;
  const out = new Uint8Array(b - a);
  const off = data.offset;
  for (let i = a; i < b; i++) out[i - a] = (bitmap[(off + i) >> 3] >> ((off + i) & 7)) & 1;
  return out;
}

function arrowValues(data: Arrow.Data, a: number, b: number): any {
  return (data.values as unknown as Int32Array).subarray(data.offset + a, data.offset + b);
}

/** Flattened dictionary strings (bytes + offsets), UTF-8 checked once per dictionary. */
interface FlatDictionary { bytes: Uint8Array; offsets: Float64Array; length: number }
const flatDictionaries = new WeakMap<object, FlatDictionary>();

function flattenDictionary(src: string, name: string, dictionary: Arrow.Vector): FlatDictionary {
  const cached = flatDictionaries.get(dictionary);
  if (cached) return cached;
  const length = dictionary.length;
  const builder = new Utf8BatchBuilder(length, 64);
  for (const chunk of dictionary.data) {
    const offs = chunk.valueOffsets as Int32Array | BigInt64Array;
    const bytes = chunk.values as Uint8Array;
    for (let i = 0; i < chunk.length; i++) {
      const j = chunk.offset + i;
      builder.appendBytes(bytes, Number(offs[j]), Number(offs[j + 1]));
    }
  }
  let flat;
  try {
    flat = builder.finish(true);
  } catch (err) {
    throw readError(src, name, new Error(`dictionary entry ${(err as { row?: number }).row} is not valid UTF-8`));
  }
  const out = { bytes: flat.bytes, offsets: Float64Array.from(flat.offsets), length };
  flatDictionaries.set(dictionary, out);
  return out;
}

function arrowStrings(src: string, name: string, schema: ResolvedColumnSchema, data: Arrow.Data, a: number, b: number, rowBase: number): PhysicalBatch {
  const valid = arrowValidity(data, a, b);
  const offs = data.valueOffsets as Int32Array | BigInt64Array;
  const bytes = data.values as Uint8Array;
  const n = b - a;
  const base = data.offset + a;
  const builder = new Utf8BatchBuilder(n, Number(offs[base + n]) - Number(offs[base]));
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) builder.appendEmpty();
    else builder.appendBytes(bytes, Number(offs[base + i]), Number(offs[base + i + 1]));
  }
  return strBatch(src, name, schema, builder, valid, rowBase);
}

function arrowDictionaryStrings(src: string, name: string, schema: ResolvedColumnSchema, data: Arrow.Data, a: number, b: number, rowBase: number): PhysicalBatch {
  const dict = flattenDictionary(src, name, data.dictionary as Arrow.Vector);
  const valid = arrowValidity(data, a, b);
  const codes = arrowValues(data, a, b) as ArrayLike<number | bigint>;
  const n = b - a;
  const builder = new Utf8BatchBuilder(n, n * 8);
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) { builder.appendEmpty(); continue; }
    const code = Number(codes[i]);
    if (!(code >= 0 && code < dict.length)) throw readError(src, name, new Error(`dictionary code ${code} is outside the ${dict.length}-entry dictionary`), rowBase + i);
    builder.appendBytes(dict.bytes, dict.offsets[code], dict.offsets[code + 1]);
  }
  return strBatch(src, name, schema, builder, valid, rowBase, true);  // the dictionary was checked once
}

function arrowBools(data: Arrow.Data, a: number, b: number): Uint8Array {
  const bits = data.values as Uint8Array;
  const out = new Uint8Array(b - a);
  const off = data.offset;
  for (let i = a; i < b; i++) out[i - a] = (bits[(off + i) >> 3] >> ((off + i) & 7)) & 1;
  return out;
}

/** Arrow Date64 (ms) to days, floored (the format asks for whole days; a remainder is dropped). */
function msToDays(values: BigInt64Array): BigInt64Array {
  const out = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const q = v / 86_400_000n;
    out[i] = v % 86_400_000n < 0n ? q - 1n : q;
  }
  return out;
}

function arrowTimes(values: ArrayLike<number | bigint>, scale: number): BigInt64Array {
  const out = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = BigInt(values[i]);
    out[i] = scale > 0 ? v * BigInt(scale) : (v >= 0n ? v / 1000n : (v - 999n) / 1000n);
  }
  return out;
}

function arrowColumn(A: ArrowModule, src: string, field: Arrow.Field, index: number, explicit: ResolvedColumnSchema | undefined): ArrowColumn | { unsupported: string } {
  const t = field.type as Arrow.DataType;
  const nullable = field.nullable;
  const name = field.name;
  let mapped: ResolvedColumnSchema;
  let convert: (data: Arrow.Data, a: number, b: number, rowBase: number, schema: ResolvedColumnSchema) => PhysicalBatch;
  const typed = (pre: (v: any) => unknown = (v) => v) =>
    (data: Arrow.Data, a: number, b: number, rowBase: number, schema: ResolvedColumnSchema) =>
      physical(src, name, { ...schema, values: pre(arrowValues(data, a, b)) as ArrayLike<unknown>, valid: arrowValidity(data, a, b) }, rowBase);
  const DT = A.DataType;
  if (DT.isInt(t)) {
    mapped = { kind: 'int', nullable };
    convert = typed();
  } else if (DT.isFloat(t)) {
    mapped = { kind: 'float', nullable };
    convert = t.precision === A.Precision.HALF ? typed((v: Uint16Array) => Float64Array.from(v, f16BitsToNumber)) : typed();
  } else if (DT.isBool(t)) {
    mapped = { kind: 'bool', nullable };
    convert = (data, a, b, rowBase, schema) => physical(src, name, { ...schema, values: arrowBools(data, a, b), valid: arrowValidity(data, a, b) }, rowBase);
  } else if (DT.isUtf8(t) || DT.isLargeUtf8(t)) {
    mapped = { kind: 'str', nullable };
    convert = (data, a, b, rowBase, schema) => arrowStrings(src, name, schema, data, a, b, rowBase);
  } else if (DT.isDictionary(t) && (DT.isUtf8(t.dictionary) || DT.isLargeUtf8(t.dictionary))) {
    mapped = { kind: 'str', nullable };
    convert = (data, a, b, rowBase, schema) => arrowDictionaryStrings(src, name, schema, data, a, b, rowBase);
  } else if (DT.isDate(t)) {
    mapped = { kind: 'date', nullable };
    convert = t.unit === A.DateUnit.DAY ? typed() : typed(msToDays);  // Date64: BigInt64Array of ms (apache-arrow ≥ 15)
  } else if (DT.isTimestamp(t)) {
    // an Arrow timestamp with any time zone stores UTC instants; without one, wall-clock values
    mapped = { kind: 'timestamp', unit: ARROW_UNITS[t.unit], tz: t.timezone ? 'UTC' : 'naive', nullable };
    convert = typed();
  } else if (DT.isTime(t)) {
    mapped = { kind: 'time', nullable };
    const scale = US_PER_ARROW_TIME_UNIT[t.unit];
    convert = typed((v: ArrayLike<number | bigint>) => arrowTimes(v, scale));
  } else {
    return { unsupported: String(t) };
  }
  const schema = checkExplicitKind(src, name, mapped, explicit, () => String(t));
  return { name, schema, index, convert: (data, a, b, rowBase) => convert(data, a, b, rowBase, schema) };
}

async function openArrowReader(A: ArrowModule, src: string) {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(src, 'r');
  } catch (err) {
    throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: ${describe(err)}`, err);
  }
  try {
    const reader = await A.RecordBatchReader.from(handle);
    await reader.open();
    return { reader, handle };
  } catch (err) {
    await handle.close();
    throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: not a readable Arrow IPC file or stream: ${describe(err)}`, err);
  }
}

async function openArrow(src: string, explicit: Map<string, ResolvedColumnSchema>, batchRows: number, skipUnsupported: boolean): Promise<OpenedSource> {
  const A = await loadArrow();
  const { reader, handle } = await openArrowReader(A, src);
  let fields: Arrow.Field[];
  try {
    if (reader.schema === undefined || reader.schema === null) throw new Error('no schema message');
    fields = reader.schema.fields;
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: not a readable Arrow IPC file or stream: ${describe(err)}`, err);
  } finally {
    await handle.close();
  }
  const names = fields.map((f) => f.name);
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw convertError('TET_CONVERT_SOURCE_INVALID', `${src}: the schema names column '${n}' twice`);
    seen.add(n);
  }
  checkExplicitNames(src, explicit, names);
  const columns: ArrowColumn[] = [];
  const skipped: SkippedColumn[] = [];
  fields.forEach((f, i) => {
    const col = arrowColumn(A, src, f, i, explicit.get(f.name));
    if ('unsupported' in col) {
      if (!skipUnsupported) throw unsupportedType(src, f.name, col.unsupported);
      skipped.push({ column: f.name, type: col.unsupported });
    } else columns.push(col);
  });
  const batches = {
    async* [Symbol.asyncIterator]() {
      const { reader: r, handle: h } = await openArrowReader(A, src);
      let rowBase = 0;
      try {
        for await (const batch of r) {
          const children = batch.data.children;
          for (let a = 0; a < batch.numRows; a += batchRows) {
            const b = Math.min(batch.numRows, a + batchRows);
            const out: Record<string, PhysicalBatch> = {};
            for (const c of columns) out[c.name] = c.convert(children[c.index], a, b, rowBase + a);
            yield out;
          }
          rowBase += batch.numRows;
        }
      } catch (err) {
        if (err instanceof TetError) throw err;
        throw convertError('TET_CONVERT_READ', `${src}: reading a record batch failed: ${describe(err)}`, err);
      } finally {
        await h.close();
      }
    },
  };
  return { columns, skipped, batches };
}
