// lib/convert/tabular.ts against independent writers: Parquet files written by DuckDB (several
// codecs, nulls, every mapped type, row groups larger than a batch) compared with what DuckDB
// itself reads back; Arrow IPC files and streams written by apache-arrow compared with the
// source arrays; CSV text written here (quoting, embedded newlines, BOM, CRLF) compared with the
// formulas that made it and, for the parse itself, with DuckDB's read_csv.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import * as A from 'apache-arrow';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectTabularFormat, readTabular, type ReadTabularOptions, type TabularSource } from '../../lib/convert/tabular';
import { TetConvertError } from '../../lib/errors';
import { fromPhysical } from '../../lib/tables/normalize';

const work = mkdtempSync(join(tmpdir(), 'tet-tabular-'));
let duck: DuckDBConnection;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const file = (name: string) => join(work, name);
async function rows(sql: string): Promise<unknown[][]> {
  return (await duck.runAndReadAll(sql)).getRows() as unknown[][];
}

/** Every batch of a source, each column as plain values (bigint / number / boolean / string, null). */
async function collect(src: TabularSource): Promise<{ columns: Record<string, unknown[]>; batchRows: number[] }> {
  const columns: Record<string, unknown[]> = Object.fromEntries(src.columnNames.filter((n) => n in src.schema).map((n) => [n, []]));
  const batchRows: number[] = [];
  for await (const batch of src.batches) {
    const counts = new Set(Object.values(batch).map((b) => b.rows));
    expect(counts.size).toBe(1);
    batchRows.push([...counts][0]);
    for (const [name, phys] of Object.entries(batch)) {
      const v = fromPhysical(phys, src.schema[name]);
      const out = columns[name];
      for (let i = 0; i < v.rows; i++) {
        if (v.valid && v.valid[i] === 0) { out.push(null); continue; }
        const x = (v.values as ArrayLike<unknown>)[i];
        out.push(v.kind === 'bool' ? x === 1 : x);
      }
    }
  }
  return { columns, batchRows };
}

/** Element-wise equality (NaN equals NaN, -0 is not 0) with the first differing row in the message: vitest's deep equality is slow on 10^5-element arrays. */
function expectSame(got: unknown[], want: unknown[], label: string): void {
  expect(got.length, `${label}: rows`).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) expect({ row: i, value: got[i] }, label).toEqual({ row: i, value: want[i] });
  }
}

function transpose(table: unknown[][], width: number): unknown[][] {
  return Array.from({ length: width }, (_, c) => table.map((r) => r[c]));
}

/** Batch sizes of row groups cut at `batchRows`. */
function expectedBatches(groupRows: number[], batchRows: number): number[] {
  return groupRows.flatMap((g) => {
    const out: number[] = [];
    for (let a = 0; a < g; a += batchRows) out.push(Math.min(batchRows, g - a));
    return out;
  });
}

async function convertErrorOf(p: Promise<unknown>): Promise<TetConvertError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(TetConvertError);
  return err as TetConvertError;
}

// ---------------------------------------------------------------------------------------------

const PARQUET_COLUMNS = `
  i * 1000003 - 50000000000 AS i64,
  CASE i % 5 WHEN 0 THEN 9223372036854775807 WHEN 1 THEN -9223372036854775808 ELSE i END AS big,
  CASE WHEN i % 7 = 0 THEN NULL ELSE ((i * 31) % 100000 - 50000)::INTEGER END AS i32,
  (i * 12345)::UBIGINT AS u64,
  (i % 256)::UTINYINT AS u8,
  (i % 300 - 150)::SMALLINT AS i16,
  CASE i % 11 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::DOUBLE WHEN 2 THEN 'inf'::DOUBLE WHEN 3 THEN '-inf'::DOUBLE ELSE i::DOUBLE / 7 END AS f,
  ((i % 1000) / 8)::FLOAT AS f32,
  CASE WHEN i % 13 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
  CASE WHEN i % 17 = 0 THEN NULL WHEN i % 17 = 1 THEN '' ELSE 'ü-' || i || '-東京' END AS s,
  (['DE', 'FR', 'IT', 'ES'])[i % 4 + 1] AS country,
  DATE '1900-01-01' + (i % 80000)::INTEGER AS d,
  TIMESTAMP '1960-01-01 00:00:00' + to_microseconds(i * 123456789) AS ts,
  CASE WHEN i % 19 = 0 THEN NULL ELSE TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_microseconds(i * 1000001) END AS tstz,
  make_timestamp_ns(1577836800000000000 + i * 1000000007) AS tsns,
  (TIMESTAMP '2020-01-01' + to_milliseconds(i * 7))::TIMESTAMP_MS AS tsms,
  TIME '00:00:00' + to_microseconds((i * 7919000) % 86400000000) AS t,
  ((i * 37) % 1000000)::DECIMAL(12, 3) / 8 AS dec`;

/** What DuckDB reads back, in the physical forms: days, epoch ticks, µs of day, doubles. */
const PARQUET_EXPECTED = `i64, big, i32::BIGINT, u64::BIGINT, u8::BIGINT, i16::BIGINT, f, f32::DOUBLE, b, s, country,
  d - DATE '1970-01-01', epoch_us(ts), epoch_us(tstz), epoch_ns(tsns), epoch_ms(tsms), epoch_us(t), dec::DOUBLE`;
const PARQUET_NAMES = ['i64', 'big', 'i32', 'u64', 'u8', 'i16', 'f', 'f32', 'b', 's', 'country', 'd', 'ts', 'tstz', 'tsns', 'tsms', 't', 'dec'];

async function writeParquet(name: string, n: number, options: string): Promise<string> {
  const p = file(name);
  await duck.run(`COPY (SELECT ${PARQUET_COLUMNS} FROM range(${n}) r(i)) TO '${p}' (FORMAT parquet, ${options})`);
  return p;
}

async function parquetGroups(p: string): Promise<number[]> {
  return (await rows(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${p}') ORDER BY 1`)).map((r) => Number(r[1]));
}

describe('Parquet (written by DuckDB)', () => {
  it('maps every type to its kind, with nullability from the schema', async () => {
    const p = await writeParquet('kinds.parquet', 10, 'COMPRESSION zstd');
    const src = await readTabular(p);
    expect(src.format).toBe('parquet');
    expect(src.rows).toBe(10);
    expect(src.columnNames).toEqual(PARQUET_NAMES);
    const kinds = Object.fromEntries(Object.entries(src.schema).map(([k, s]) => [k, s.kind === 'timestamp' ? `timestamp(${s.unit},${s.tz})` : s.kind]));
    expect(kinds).toEqual({
      i64: 'int', big: 'int', i32: 'int', u64: 'int', u8: 'int', i16: 'int', f: 'float', f32: 'float', b: 'bool', s: 'str', country: 'str',
      d: 'date', ts: 'timestamp(us,naive)', tstz: 'timestamp(us,UTC)', tsns: 'timestamp(ns,naive)', tsms: 'timestamp(ms,naive)', t: 'time', dec: 'float',
    });
    expect(src.schema.i64.nullable).toBe(true);  // DuckDB writes OPTIONAL columns
  });

  it('100,000 rows in row groups larger than a batch: values equal DuckDB, batches never cross a group', async () => {
    const n = 100_000;
    const p = await writeParquet('big.parquet', n, 'COMPRESSION zstd, ROW_GROUP_SIZE 40960');
    const groups = await parquetGroups(p);
    expect(groups.length).toBeGreaterThan(1);
    const batchRows = 16_384;
    expect(Math.min(...groups.slice(0, -1))).toBeGreaterThan(batchRows);
    const src = await readTabular(p, { batchRows });
    const got = await collect(src);
    expect(got.batchRows).toEqual(expectedBatches(groups, batchRows));
    const expected = transpose(await rows(`SELECT ${PARQUET_EXPECTED} FROM read_parquet('${p}')`), PARQUET_NAMES.length);
    PARQUET_NAMES.forEach((name, c) => {
      const want = name === 'd' ? expected[c].map((v) => (v === null ? null : Number(v))) : expected[c];
      expectSame(got.columns[name], want, name);
    });
  });

  for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd', 'brotli', 'lz4']) {
    it(`codec ${codec}`, async () => {
      const p = await writeParquet(`codec-${codec}.parquet`, 2000, `COMPRESSION ${codec}`);
      const got = await collect(await readTabular(p));
      const expected = transpose(await rows(`SELECT ${PARQUET_EXPECTED} FROM read_parquet('${p}')`), PARQUET_NAMES.length);
      for (const name of ['i64', 'i32', 'f', 's', 'country', 'tstz', 'b']) expect(got.columns[name], name).toEqual(expected[PARQUET_NAMES.indexOf(name)]);
    });
  }

  it('explicit kinds must agree with the source; an explicit nullable: false makes a null an error', async () => {
    // (DuckDB writes every column OPTIONAL, NOT NULL ones too, so REQUIRED → nullable: false is not exercised here)
    const p = file('required.parquet');
    await duck.run(`COPY (SELECT i AS a, CASE WHEN i = 3 THEN NULL ELSE 'x' || i END AS s FROM range(5) r(i)) TO '${p}' (FORMAT parquet)`);
    const src = await readTabular(p, { columns: { a: { kind: 'int', nullable: false } } });
    expect(src.schema).toEqual({ a: { kind: 'int', nullable: false }, s: { kind: 'str', nullable: true } });
    expect((await collect(src)).columns).toEqual({ a: [0n, 1n, 2n, 3n, 4n], s: ['x0', 'x1', 'x2', null, 'x4'] });
    const nn = await convertErrorOf(collect(await readTabular(p, { columns: { s: { kind: 'str', nullable: false } } })));
    expect(nn.message).toMatch(/column 's' row 3: null in a column declared nullable: false/);
    const e = await convertErrorOf(readTabular(p, { columns: { a: { kind: 'float' } } }));
    expect(e.code).toBe('TET_CONVERT_BAD_OPTION');
    expect(e.message).toMatch(/column 'a' is INT64.*reads as int, not float/);
    expect((await convertErrorOf(readTabular(p, { columns: { zz: { kind: 'int' } } }))).message).toMatch(/does not have/);
  });

  it('u64 beyond i64 is an error naming column and row', async () => {
    const p = file('u64.parquet');
    await duck.run(`COPY (SELECT CASE WHEN i = 3 THEN 18446744073709551615::UBIGINT ELSE i::UBIGINT END AS u FROM range(5) r(i)) TO '${p}' (FORMAT parquet)`);
    const src = await readTabular(p);
    const e = await convertErrorOf(collect(src));
    expect(e.code).toBe('TET_CONVERT_READ');
    expect(e.message).toMatch(/column 'u' row 3: .*18446744073709551615/);
  });

  it('lists, structs and blobs: TET_CONVERT_UNSUPPORTED_TYPE, or left out with skipUnsupported', async () => {
    const p = file('nested.parquet');
    await duck.run(`COPY (SELECT i AS id, [i, i] AS lst, {'a': i} AS st, 'x'::BLOB AS bl FROM range(3) r(i)) TO '${p}' (FORMAT parquet)`);
    const e = await convertErrorOf(readTabular(p));
    expect(e.code).toBe('TET_CONVERT_UNSUPPORTED_TYPE');
    expect(e.message).toMatch(/column 'lst'/);
    const src = await readTabular(p, { skipUnsupported: true });
    expect(src.columnNames.filter((n) => n in src.schema)).toEqual(['id']);
    expect(src.skipped.map((s) => s.column)).toEqual(['lst', 'st', 'bl']);
    expect((await collect(src)).columns).toEqual({ id: [0n, 1n, 2n] });
  });
});

// ---------------------------------------------------------------------------------------------

describe('Arrow IPC (written by apache-arrow)', () => {
  const n = 5000;
  const idx = Array.from({ length: n }, (_, i) => i);
  const nullEvery = <T>(k: number, f: (i: number) => T) => idx.map((i) => (i % k === 0 ? null : f(i)));
  const src = {
    i8: idx.map((i) => (i % 256) - 128),
    i16: nullEvery(5, (i) => i - 2500),
    i32: idx.map((i) => i * 100_003 - 2 ** 30),
    i64: idx.map((i) => BigInt(i) * 1_000_000_000_007n - (1n << 62n)),
    u8: idx.map((i) => i % 256),
    u32: idx.map((i) => (i * 2654435761) % 2 ** 32),
    u64: idx.map((i) => BigInt(i) * 3_000_000_000_000n),
    f16: idx.map((i) => [1.5, -2, 0.25, 65504, 0][i % 5]),
    f32: nullEvery(3, (i) => Math.fround(i / 3)),
    f64: idx.map((i) => [NaN, Infinity, -Infinity, -0, i / 7][i % 5]),
    bool: nullEvery(4, (i) => i % 3 === 0),
    utf8: nullEvery(6, (i) => `s${i}-ü${'x'.repeat(i % 9)}`),
    large: idx.map((i) => `L${i}`),
    dict: nullEvery(7, (i) => ['DE', 'FR', '東京'][i % 3]),
    date32: idx.map((i) => i * 37 - 90000),
    date64: idx.map((i) => (i * 37 - 90000) * 86_400_000),
    ts_s: idx.map((i) => BigInt(i) * 86_399n - 10_000_000n),
    ts_ms_paris: nullEvery(9, (i) => 1_577_836_800_000n + BigInt(i) * 1001n),
    ts_us: idx.map((i) => BigInt(i) * 123_456_789n),
    ts_ns_utc: idx.map((i) => 1_577_836_800_000_000_000n + BigInt(i) * 1_000_000_007n),
    t32_s: idx.map((i) => (i * 17) % 86400),
    t32_ms: idx.map((i) => (i * 17_001) % 86_400_000),
    t64_us: idx.map((i) => (BigInt(i) * 17_000_001n) % 86_400_000_000n),
    t64_ns: idx.map((i) => (BigInt(i) * 17_000_000_999n) % 86_400_000_000_000n),
  };
  const types: Record<keyof typeof src, A.DataType> = {
    i8: new A.Int8(), i16: new A.Int16(), i32: new A.Int32(), i64: new A.Int64(), u8: new A.Uint8(), u32: new A.Uint32(), u64: new A.Uint64(),
    f16: new A.Float16(), f32: new A.Float32(), f64: new A.Float64(), bool: new A.Bool(), utf8: new A.Utf8(), large: new A.LargeUtf8(),
    dict: new A.Dictionary(new A.Utf8(), new A.Int32()), date32: new A.DateDay(), date64: new A.DateMillisecond(),
    ts_s: new A.TimestampSecond(), ts_ms_paris: new A.TimestampMillisecond('Europe/Paris'), ts_us: new A.TimestampMicrosecond(),
    ts_ns_utc: new A.TimestampNanosecond('UTC'), t32_s: new A.TimeSecond(), t32_ms: new A.TimeMillisecond(),
    t64_us: new A.TimeMicrosecond(), t64_ns: new A.TimeNanosecond(),
  };
  /** The expected values in physical form, from the source arrays alone. */
  const expected: Record<string, unknown[]> = {
    i8: src.i8.map(BigInt), i16: src.i16.map((v) => (v === null ? null : BigInt(v))), i32: src.i32.map(BigInt), i64: src.i64,
    u8: src.u8.map(BigInt), u32: src.u32.map(BigInt), u64: src.u64, f16: src.f16, f32: src.f32, f64: src.f64, bool: src.bool,
    utf8: src.utf8, large: src.large, dict: src.dict, date32: src.date32, date64: src.date32,
    ts_s: src.ts_s, ts_ms_paris: src.ts_ms_paris, ts_us: src.ts_us, ts_ns_utc: src.ts_ns_utc,
    t32_s: src.t32_s.map((v) => BigInt(v) * 1_000_000n), t32_ms: src.t32_ms.map((v) => BigInt(v) * 1000n),
    t64_us: src.t64_us, t64_ns: src.t64_ns.map((v) => v / 1000n),
  };

  /** Columns whose builders take other units (timestamps, times, dates as ms or Date): made from raw buffers. */
  const RAW: Partial<Record<keyof typeof src, (len: number) => any>> = {
    i64: (m) => new BigInt64Array(m), u64: (m) => new BigUint64Array(m), date32: (m) => new Int32Array(m), date64: (m) => new BigInt64Array(m),
    ts_s: (m) => new BigInt64Array(m), ts_ms_paris: (m) => new BigInt64Array(m), ts_us: (m) => new BigInt64Array(m), ts_ns_utc: (m) => new BigInt64Array(m),
    t32_s: (m) => new Int32Array(m), t32_ms: (m) => new Int32Array(m), t64_us: (m) => new BigInt64Array(m), t64_ns: (m) => new BigInt64Array(m),
  };

  function rawVector(k: keyof typeof src, values: unknown[]): A.Vector {
    const data = RAW[k]!(values.length);
    const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
    let nullCount = 0;
    values.forEach((v, i) => {
      if (v === null) { nullCount++; return; }
      nullBitmap[i >> 3] |= 1 << (i & 7);
      data[i] = k === 'date64' ? BigInt(v as number) : v;
    });
    return A.makeVector(A.makeData({ type: types[k] as any, length: values.length, nullCount, nullBitmap: nullCount ? nullBitmap : undefined, data }));
  }

  /** The table in record batches of 1,500 rows (the last 500), sliced from one table (one dictionary). */
  function table(): A.Table {
    const cols: Record<string, A.Vector> = {};
    for (const k of Object.keys(src) as (keyof typeof src)[]) cols[k] = RAW[k] ? rawVector(k, src[k] as unknown[]) : A.vectorFromArray(src[k] as unknown[], types[k]);
    const whole = new A.Table(cols);
    const parts: A.Table[] = [];
    for (let a = 0; a < n; a += 1500) parts.push(whole.slice(a, a + 1500));
    return parts.reduce((x, y) => x.concat(y));
  }

  for (const format of ['file', 'stream'] as const) {
    it(`${format} format: every supported type, nulls, record batches cut at batchRows`, async () => {
      const p = file(`all.${format === 'file' ? 'arrow' : 'arrows'}`);
      writeFileSync(p, A.tableToIPC(table(), format));
      const got = await readTabular(p, { batchRows: 1000 });
      expect(got.format).toBe('arrow');
      const kinds = Object.fromEntries(Object.entries(got.schema).map(([k, s]) => [k, s.kind === 'timestamp' ? `timestamp(${s.unit},${s.tz})` : s.kind]));
      expect(kinds).toEqual({
        i8: 'int', i16: 'int', i32: 'int', i64: 'int', u8: 'int', u32: 'int', u64: 'int', f16: 'float', f32: 'float', f64: 'float',
        bool: 'bool', utf8: 'str', large: 'str', dict: 'str', date32: 'date', date64: 'date',
        ts_s: 'timestamp(s,naive)', ts_ms_paris: 'timestamp(ms,UTC)', ts_us: 'timestamp(us,naive)', ts_ns_utc: 'timestamp(ns,UTC)',
        t32_s: 'time', t32_ms: 'time', t64_us: 'time', t64_ns: 'time',
      });
      const { columns, batchRows } = await collect(got);
      expect(batchRows).toEqual([1000, 500, 1000, 500, 1000, 500, 500]);  // 1500, 1500, 1500, 500 per record batch
      for (const [k, want] of Object.entries(expected)) expect(columns[k], k).toEqual(want);
    });
  }

  it('u64 beyond i64 is an error with the row; lists, structs, binary are unsupported or skipped', async () => {
    const p = file('u64.arrow');
    writeFileSync(p, A.tableToIPC(new A.Table({ u: A.vectorFromArray([1n, 2n, 1n << 63n], new A.Uint64()) })));
    const e = await convertErrorOf(collect(await readTabular(p)));
    expect(e.code).toBe('TET_CONVERT_READ');
    expect(e.message).toMatch(/column 'u' row 2/);
    const q = file('nested.arrow');
    const lists = A.vectorFromArray([[1], [2, 3]], new A.List(new A.Field('item', new A.Int32())));
    const structs = A.vectorFromArray([{ a: 1 }, { a: 2 }], new A.Struct([new A.Field('a', new A.Int32())]));
    const binary = A.vectorFromArray([Uint8Array.of(1), Uint8Array.of(2)], new A.Binary());
    writeFileSync(q, A.tableToIPC(new A.Table({ id: A.vectorFromArray([7, 8], new A.Int32()), lists, structs, binary })));
    const u = await convertErrorOf(readTabular(q));
    expect(u.code).toBe('TET_CONVERT_UNSUPPORTED_TYPE');
    expect(u.message).toMatch(/column 'lists' has type List/);
    const s = await readTabular(q, { skipUnsupported: true });
    expect(s.skipped.map((x) => x.column)).toEqual(['lists', 'structs', 'binary']);
    expect((await collect(s)).columns).toEqual({ id: [7n, 8n] });
  });
});

// ---------------------------------------------------------------------------------------------

/** A CSV field, quoted when it must be (and sometimes when it need not be). */
function csvField(v: string | null, i: number): string {
  if (v === null) return '';
  return /[",\r\n]/.test(v) || i % 5 === 0 ? `"${v.replace(/"/g, '""')}"` : v;
}

describe('CSV', () => {
  it('inference of every kind, quoting, embedded newlines, BOM, CRLF; values equal the formulas', async () => {
    const n = 3000;
    const cols = {
      b: (i: number) => (i % 10 === 0 ? null : i % 3 === 0 ? 'true' : 'FALSE'),
      n: (i: number) => (i % 10 === 1 ? null : String(i * 7919 - 1e7)),
      big: (i: number) => (i === 5 ? '9223372036854775807' : i === 6 ? '-9223372036854775808' : i === 7 ? '9999999999999999' : i === 8 ? '-000000000000000000012' : `+${i}`),
      f: (i: number) => ['1.5', 'NaN', '-inf', '1e-3', String(i / 8), '.25', 'Infinity'][i % 7],
      d: (i: number) => (i % 9 === 0 ? null : `${1900 + (i % 200)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`),
      tz: (i: number) => `2020-01-01T00:00:${String(i % 60).padStart(2, '0')}${i % 2 ? '.5' : ''}${['Z', '+01:00', 'z', '-00:00'][i % 4]}`,
      naive: (i: number) => `1999-12-31T23:59:${String(i % 60).padStart(2, '0')}.${String(i).padStart(6, '0')}`,
      ns: (i: number) => `2020-01-01T00:00:00.${String(i).padStart(9, '0')}Z`,
      s: (i: number) => (i % 8 === 0 ? 'line1\nline2, "quoted"' : i % 8 === 1 ? 'Zürich 東京' : `plain${i}`),
      mixed: (i: number) => (i === 2999 ? 'x' : String(i)),
      empty: () => null,
    };
    const names = Object.keys(cols) as (keyof typeof cols)[];
    const text = '\ufeff' + [names.join(','), ...Array.from({ length: n }, (_, i) => names.map((k) => csvField(cols[k](i), i)).join(','))].join('\r\n') + '\r\n';
    const p = file('kinds.csv');
    writeFileSync(p, text);
    const src = await readTabular(p);
    expect(src.format).toBe('csv');
    expect(src.rows).toBe(n);
    expect(src.columnNames).toEqual(names);
    const kinds = Object.fromEntries(Object.entries(src.schema).map(([k, s]) => [k, s.kind === 'timestamp' ? `timestamp(${s.unit},${s.tz})` : s.kind]));
    expect(kinds).toEqual({ b: 'bool', n: 'int', big: 'int', f: 'float', d: 'date', tz: 'timestamp(us,UTC)', naive: 'timestamp(us,naive)', ns: 'timestamp(ns,UTC)', s: 'str', mixed: 'str', empty: 'str' });
    const { columns } = await collect(src);
    const idx = Array.from({ length: n }, (_, i) => i);
    const DAY = 86_400_000;
    expect(columns.b).toEqual(idx.map((i) => (cols.b(i) === null ? null : i % 3 === 0)));
    expect(columns.n).toEqual(idx.map((i) => (i % 10 === 1 ? null : BigInt(i * 7919 - 1e7))));
    expect(columns.big).toEqual(idx.map((i) => (i === 5 ? (1n << 63n) - 1n : i === 6 ? -(1n << 63n) : i === 7 ? 9999999999999999n : i === 8 ? -12n : BigInt(i))));
    expect(columns.f).toEqual(idx.map((i) => [1.5, NaN, -Infinity, 0.001, i / 8, 0.25, Infinity][i % 7]));
    expect(columns.d).toEqual(idx.map((i) => (cols.d(i) === null ? null : Date.parse(`${cols.d(i)}T00:00:00Z`) / DAY)));
    // offsets Z, +01:00, z, -00:00 → UTC µs (Date.parse as the reference for the second)
    expect(columns.tz).toEqual(idx.map((i) => BigInt(Date.parse(`2020-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`)) * 1000n
      + (i % 2 ? 500_000n : 0n) - (i % 4 === 1 ? 3_600_000_000n : 0n)));
    expect(columns.naive).toEqual(idx.map((i) => BigInt(Date.parse(`1999-12-31T23:59:${String(i % 60).padStart(2, '0')}Z`)) * 1000n + BigInt(i)));
    expect(columns.ns).toEqual(idx.map((i) => 1_577_836_800_000_000_000n + BigInt(i)));
    expect(columns.s).toEqual(idx.map(cols.s));
    expect(columns.mixed).toEqual(idx.map(cols.mixed));
    expect(columns.empty).toEqual(idx.map(() => null));
    // DuckDB parses the same file to the same strings
    const duckS = (await rows(`SELECT s, mixed FROM read_csv('${p}', header = true, all_varchar = true)`));
    expect(duckS.map((r) => r[0])).toEqual(columns.s);
    expect(duckS.map((r) => r[1])).toEqual(columns.mixed);
  });

  it('150,000 rows: the default batch of 65,536, values across batch boundaries', async () => {
    const n = 150_000;
    const p = file('big.csv');
    writeFileSync(p, ['id,name', ...Array.from({ length: n }, (_, i) => `${i},"n,${i % 1000}"`)].join('\n'));
    const { columns, batchRows } = await collect(await readTabular(p));
    expect(batchRows).toEqual([65_536, 65_536, 18_928]);
    expectSame(columns.id, Array.from({ length: n }, (_, i) => BigInt(i)), 'id');
    expectSame(columns.name, Array.from({ length: n }, (_, i) => `n,${i % 1000}`), 'name');
  });

  it('explicit columns skip inference and must parse; an empty field, quoted or not, is null', async () => {
    const p = file('explicit.csv');
    writeFileSync(p, 'a,b,c,t,i\n1,"",x,12:00:00.5,""\n2,,"",00:00:01,5\n');
    const src = await readTabular(p, { columns: { a: { kind: 'float' }, t: { kind: 'time' }, c: { kind: 'str' } }, batchRows: 1 });
    expect(src.schema.a).toEqual({ kind: 'float', nullable: true });
    const got = await collect(src);
    expect(got.batchRows).toEqual([1, 1]);
    expect(got.columns).toEqual({ a: [1, 2], b: [null, null], c: ['x', null], t: [43_200_500_000n, 1_000_000n], i: [null, 5n] });
    const q = file('explicit-bad.csv');
    writeFileSync(q, 'a,d\n1,2020-01-01\n2,2021-02-29\n');
    const e = await convertErrorOf(collect(await readTabular(q, { columns: { d: { kind: 'date' } } })));
    expect(e.code).toBe('TET_CONVERT_READ');
    expect(e.message).toMatch(/column 'd' row 1: .*28 days/);
    const r = await convertErrorOf(collect(await readTabular(q, { columns: { a: { kind: 'bool' } } })));
    expect(r.message).toMatch(/column 'a' row 0: "1" is not a bool/);
    const nn = await convertErrorOf(collect(await readTabular(p, { columns: { b: { kind: 'int', nullable: false } } })));
    expect(nn.message).toMatch(/column 'b' row 0: null in a column declared nullable: false/);
    expect((await convertErrorOf(readTabular(p, { columns: { a: { kind: 'decimal' as 'int' } } }))).code).toBe('TET_CONVERT_BAD_OPTION');
  });

  it('malformed files: ragged rows, duplicate header names, an empty file; tsv by extension', async () => {
    const ragged = file('ragged.csv');
    writeFileSync(ragged, 'a,b\n1,2\n3\n');
    expect((await convertErrorOf(readTabular(ragged))).code).toBe('TET_CONVERT_SOURCE_INVALID');
    const dup = file('dup.csv');
    writeFileSync(dup, 'a,a\n1,2\n');
    expect((await convertErrorOf(readTabular(dup))).message).toMatch(/names column 'a' twice/);
    const empty = file('empty.csv');
    writeFileSync(empty, '');
    expect((await convertErrorOf(readTabular(empty))).message).toMatch(/empty/);
    const tsv = file('x.tsv');
    writeFileSync(tsv, 'a\tb\n1\thello, world\n');
    expect((await collect(await readTabular(tsv))).columns).toEqual({ a: [1n], b: ['hello, world'] });
    const headerOnly = file('header.csv');
    writeFileSync(headerOnly, 'a,b\n');
    const h = await readTabular(headerOnly);
    expect(h.rows).toBe(0);
    expect((await collect(h)).batchRows).toEqual([]);
  });
});

describe('format detection', () => {
  it('magic bytes first, then the extension; format overrides', async () => {
    const pq = await writeParquet('no-ext.bin', 3, 'COMPRESSION snappy');
    expect(detectTabularFormat(pq)).toBe('parquet');
    const arrowFile = file('a.dat');
    const arrowStream = file('b.dat');
    const t = new A.Table({ x: A.vectorFromArray([1, 2], new A.Int32()) });
    writeFileSync(arrowFile, A.tableToIPC(t, 'file'));
    writeFileSync(arrowStream, A.tableToIPC(t, 'stream'));
    expect(detectTabularFormat(arrowFile)).toBe('arrow');
    expect(detectTabularFormat(arrowStream)).toBe('arrow');
    expect((await collect(await readTabular(arrowStream))).columns).toEqual({ x: [1n, 2n] });
    const csv = file('c.CSV');
    writeFileSync(csv, 'x\n1\n');
    expect(detectTabularFormat(csv)).toBe('csv');
    const txt = file('c.txt');
    writeFileSync(txt, 'x\n1\n');
    expect(() => detectTabularFormat(txt)).toThrow(/pass format/);
    const opts: ReadTabularOptions = { format: 'csv' };
    expect((await collect(await readTabular(txt, opts))).columns).toEqual({ x: [1n] });
    expect((await convertErrorOf(readTabular(file('missing.csv')))).code).toBe('TET_CONVERT_OPEN');
    expect((await convertErrorOf(readTabular(txt, { format: 'parquet' }))).code).toBe('TET_CONVERT_SOURCE_INVALID');
    expect((await convertErrorOf(readTabular(txt, { format: 'arrow' }))).code).toBe('TET_CONVERT_SOURCE_INVALID');
  });
});
