// convert() of tabular sources: a CSV and a Parquet file written by DuckDB become one standalone
// table each; every value read back equals what DuckDB reads from the same file (an independent
// reader), nulls included.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { convert, open } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-convert-tabular-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 5000;
const SELECT = `SELECT i::BIGINT AS id, CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 0.25)::DOUBLE END AS x,
  (i % 3 = 0) AS flag, CASE WHEN i % 17 = 0 THEN NULL ELSE 'name-' || (i % 97)::VARCHAR END AS name,
  (DATE '2020-01-01' + (i % 400)::INTEGER) AS day,
  (TIMESTAMPTZ '2021-06-01 00:00:00+00' + to_seconds(i * 37)) AS ts
  FROM range(${ROWS}) t(i)`;

async function duck(sql: string): Promise<unknown[][]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run("SET TimeZone = 'UTC'");
  return (await c.runAndReadAll(sql)).getRows() as unknown[][];
}

describe('convert from CSV and Parquet', () => {
  it.each(['parquet', 'csv'])('%s: one table, values equal to DuckDB reading the same file', async (fmt) => {
    const src = join(dir, `obs.${fmt}`);
    await duck(`COPY (${SELECT}) TO '${src}' (FORMAT ${fmt === 'csv' ? "csv, HEADER true" : 'parquet'})`);
    const out = join(dir, `${fmt}.tet`);
    const report = await convert(src, out);
    expect(report.kind).toBe(fmt);
    expect(report.tables?.[0]).toMatchObject({ name: 'obs', rows: ROWS });
    const ref = await duck(`SELECT id, x, flag, name, epoch_ms(day::TIMESTAMP) / 86400000, epoch_us(ts) FROM ${fmt === 'csv' ? `read_csv('${src}')` : `'${src}'`} ORDER BY id`);
    const f = await open(out);
    try {
      const t = f.table('obs');
      expect(t.columns.map((c) => [c.name, c.kind])).toEqual([
        ['id', 'int'], ['x', 'float'], ['flag', 'bool'], ['name', 'str'], ['day', 'date'], ['ts', 'timestamp'],
      ]);
      const [id, x, flag, name, day, ts] = await Promise.all(['id', 'x', 'flag', 'name', 'day', 'ts'].map((c) => f.readColumn('obs', c)));
      for (let i = 0; i < ROWS; i++) {
        const r = ref[i];
        expect((id.values as BigInt64Array)[i]).toBe(BigInt(r[0] as bigint | number));
        if (r[1] === null) expect(x.valid?.[i]).toBe(0);
        else expect((x.values as Float64Array)[i]).toBe(r[1]);
        expect((flag.values as Uint8Array)[i]).toBe(r[2] ? 1 : 0);
        if (r[3] === null) expect(name.valid?.[i]).toBe(0);
        else expect((name.values as string[])[i]).toBe(r[3]);
        expect((day.values as Int32Array)[i]).toBe(Number(r[4]));
        expect((ts.values as BigInt64Array)[i]).toBe(BigInt(r[5] as bigint | number));
      }
      expect(f.history.at(-1)).toMatchObject({ op: 'convert', source: src });
    } finally {
      f.close();
    }
  });

  it('names the table with --table and reports unknown content', async () => {
    const src = join(dir, 'small.csv');
    writeFileSync(src, 'a,b\n1,x\n2,\n');
    const out = join(dir, 'small.tet');
    const report = await convert(src, out, { table: 'mine' });
    expect(report.tables?.[0]).toMatchObject({ name: 'mine', rows: 2 });
    const f = await open(out);
    try {
      const b = await f.readColumn('mine', 'b');
      expect(b.values).toEqual(['x', '']);
      expect(Array.from(b.valid ?? [])).toEqual([1, 0]);
    } finally {
      f.close();
    }
  });
});
