// Table queries through the SDK (spec tables_and_filters.md §4.3-§4.5): where + reductions,
// group_by (single, composite, buckets, widths), columns / order_by / limit / offset, checked
// against DuckDB running the same SQL over the same JS arrays (appended row by row), and by hand
// where numpy's rules differ from SQL (NaN), plus the validation errors by code.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TetWriter, open, type TetFile } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-tq-'));
const N = 9_000;  // 5 blocks, the last partial
const COUNTRIES = ['DE', 'FR', 'IT', 'ES', 'AT'];
const T0 = Date.UTC(2019, 11, 20) * 1000;  // µs

const id = new BigInt64Array(N);
const g: (number | null)[] = [];
const x: (number | null)[] = [];
const nanx = new Float64Array(N);
const s: (string | null)[] = [];
const ts = new BigInt64Array(N);
const b = new Uint8Array(N);
const d: (number | null)[] = [];
for (let i = 0; i < N; i++) {
  id[i] = BigInt(i) * 3n - 2n ** 40n;
  g.push(i % 13 === 0 ? null : i % 7);
  x.push(i % 17 === 0 ? null : i % 101 === 0 ? -0 : Math.round(Math.sin(i / 30) * 1000) / 10);
  nanx[i] = i % 500 === 3 ? NaN : i / 4;
  s.push(i % 11 === 0 ? null : COUNTRIES[(i * i) % 5]);
  ts[i] = BigInt(T0) + BigInt(i) * 37n * 60_000_000n;  // every 37 minutes from 2019-12-20
  b[i] = (i * 7) % 3 === 0 ? 0 : 1;
  d.push(i % 19 === 0 ? null : -800 + i * 3);  // 1967-10-24 onwards, every 3 days
}
const dateText = (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10);

let f: TetFile;
let conn: DuckDBConnection;

beforeAll(async () => {
  const path = join(dir, 't.tet');
  const w = await TetWriter.create(path);
  w.addTable({
    name: 'obs',
    columns: {
      id: { kind: 'int', values: id },
      g: { kind: 'int', values: g },
      x: { kind: 'float', values: x },
      nanx: { kind: 'float', values: nanx },
      s: { kind: 'str', values: s },
      ts: { kind: 'timestamp', unit: 'us', tz: 'UTC', values: ts },
      b: { kind: 'bool', values: b },
      d: { kind: 'date', values: d.map((v) => (v === null ? null : dateText(v))) },
    },
  });
  await w.commit();
  f = await open(path);
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  await conn.run('CREATE TABLE obs (id BIGINT, g BIGINT, x DOUBLE, s VARCHAR, ts TIMESTAMPTZ, b BOOLEAN, d DATE)');
  const values: string[] = [];
  for (let i = 0; i < N; i++) {
    const q = (v: string | null) => (v === null ? 'NULL' : `'${v}'`);
    values.push(`(${id[i]}, ${g[i] ?? 'NULL'}, ${x[i] === null ? 'NULL' : Object.is(x[i], -0) ? '-0.0' : x[i]}, ${q(s[i])}, `
      + `make_timestamp(${ts[i]})::TIMESTAMPTZ, ${b[i] ? 'true' : 'false'}, ${d[i] === null ? 'NULL' : `DATE '${dateText(d[i]!)}'`})`);
  }
  for (let k = 0; k < N; k += 1000) await conn.run(`INSERT INTO obs VALUES ${values.slice(k, k + 1000).join(',')}`);
});
afterAll(() => {
  f?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function duck(sql: string): Promise<unknown[][]> {
  return (await conn.runAndReadAll(sql)).getRows() as unknown[][];
}
async function q(doc: object) {
  return (await f.query({ table: 'obs', ...doc })).execution! as unknown as Record<string, unknown>;
}
// Numbers to compare: bigints and DuckDB's HUGEINT objects as numbers, -0 as 0 (SQL does not tell them apart).
const num = (v: unknown) => {
  const n = typeof v === 'bigint' ? Number(v) : typeof v === 'object' && v !== null ? Number(String(v)) : v;
  return Object.is(n, -0) ? 0 : n;
};

describe('table reductions against DuckDB', () => {
  const WHERES: [object[], string][] = [
    [[], 'true'],
    [[{ column: 'g', lt: 3 }], 'g < 3'],
    [[{ column: 's', eq: 'FR' }, { column: 'b', eq: true }], "s = 'FR' AND b"],
    [[{ column: 'ts', range: ['2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z'] }], "ts >= TIMESTAMPTZ '2020-01-01 00:00:00+00' AND ts < TIMESTAMPTZ '2020-01-02 00:00:00+00'"],
    [[{ column: 'x', gt: 1e9 }], 'x > 1e9'],
  ];
  it.each(WHERES)('where %j', async (where, sql) => {
    const ops: [string, string, string][] = [
      ['count', 'x', 'count(x)'], ['sum', 'x', 'sum(x)'], ['mean', 'x', 'avg(x)'], ['min', 'x', 'min(x)'], ['max', 'x', 'max(x)'],
      ['var', 'x', 'var_pop(x)'], ['std', 'x', 'stddev_pop(x)'], ['median', 'x', 'median(x)'],
      ['sum', 'id', 'sum(id)'], ['min', 'id', 'min(id)'], ['max', 'g', 'max(g)'], ['mean', 'g', 'avg(g)'],
      ['sum', 'b', 'sum(b::INT)'], ['mean', 'b', 'avg(b::INT)'], ['null_count', 's', 'count(*) - count(s)'],
      ['min', 's', 'min(s)'], ['max', 's', 'max(s)'], ['min', 'ts', "strftime(min(ts), '%Y-%m-%dT%H:%M:%SZ')"],
      ['max', 'd', "strftime(max(d), '%Y-%m-%d')"],
    ];
    const [[rows]] = await duck(`SELECT count(*) FROM obs WHERE ${sql}`);
    expect((await q({ where, count: [] })).operation_element_count).toBe(Number(rows));
    for (const [op, col, expr] of ops) {
      const [[want]] = await duck(`SELECT ${expr} FROM obs WHERE ${sql}`);
      const e = await q({ where, [op]: { column: col } });
      const got = Object.entries(e).find(([k]) => k.startsWith('operation_') && k !== 'operation_column')![1];
      if (want === null) {
        // SQL's empty aggregate; the spec's empty values (§4.5)
        const empty: Record<string, unknown> = { sum: 0, count: 0, null_count: 0 };
        if (op in empty) expect(num(got)).toBe(empty[op]);
        else if (['str', 'ts', 'd', 's'].includes(col) || col === 's') expect(got).toBeNull();
        else expect(got).toBeNaN();
      } else if (typeof want === 'bigint' || (typeof want === 'object' && want !== null)) {
        // BIGINT / HUGEINT: exact (our JSON form is a number below 2^53, a decimal string beyond)
        expect(BigInt(got as number | string), `${op}(${col}) where ${sql}`).toBe(BigInt(String(want)));
      } else if (typeof want === 'number' && !Number.isInteger(want)) {
        expect(got as number).toBeCloseTo(want, 8);
      } else {
        expect(num(got), `${op}(${col}) where ${sql}`).toEqual(num(want));
      }
    }
  });

  it('median / quantile / histogram follow numpy', async () => {
    const xs = x.filter((v): v is number => v !== null).sort((p, r) => p - r);
    const quant = (qq: number) => {
      const pos = qq * (xs.length - 1);
      const lo = Math.floor(pos);
      return xs[lo] + (xs[Math.min(lo + 1, xs.length - 1)] - xs[lo]) * (pos - lo);
    };
    expect((await q({ quantile: { column: 'x', q: 0.9 } })).operation_quantile).toBeCloseTo(quant(0.9), 10);
    const [[qc]] = await duck('SELECT quantile_cont(x, 0.25) FROM obs');
    expect((await q({ quantile: { column: 'x', q: 0.25 } })).operation_quantile).toBeCloseTo(qc as number, 10);
    const h = await q({ histogram: { column: 'g', bins: 7, min: 0, max: 7 } });
    const want = Array.from({ length: 7 }, (_, k) => g.filter((v) => v === k).length);
    expect(h.operation_histogram_counts).toEqual(want);
  });

  it('NaN propagates as in numpy; nan_* skip it (by hand)', async () => {
    expect((await q({ sum: { column: 'nanx' } })).operation_sum).toBeNaN();
    expect((await q({ max: { column: 'nanx' } })).operation_max).toBeNaN();
    expect((await q({ median: { column: 'nanx' } })).operation_median).toBeNaN();
    const clean = Array.from(nanx).filter((v) => !Number.isNaN(v));
    expect((await q({ nan_mean: { column: 'nanx' } })).operation_nan_mean).toBeCloseTo(clean.reduce((p, v) => p + v, 0) / clean.length, 9);
    expect((await q({ nan_count: { column: 'nanx' } })).operation_nan_count).toBe(N - clean.length);
    expect((await q({ any_nan: { column: 'nanx' } })).operation_any_nan).toBe(true);
    expect((await q({ all_finite: { column: 'x' } })).operation_all_finite).toBe(true);
    // empty selection: §4.5 values
    const none = [{ column: 'g', gt: 100 }];
    expect((await q({ where: none, product: { column: 'x' } })).operation_product).toBe(1);
    expect((await q({ where: none, mean: { column: 'x' } })).operation_mean).toBeNaN();
    expect((await q({ where: none, any_nan: { column: 'nanx' } })).operation_any_nan).toBe(false);
    expect((await q({ where: none, all_finite: { column: 'nanx' } })).operation_all_finite).toBe(true);
    expect((await q({ where: none, min: { column: 's' } })).operation_min).toBeNull();
  });
});

describe('group_by against DuckDB', () => {
  it('single int key with nulls last', async () => {
    const e = await q({ group_by: 'g', mean: { column: 'x' } });
    const ref = await duck('SELECT g, count(*), avg(x) FROM obs GROUP BY g ORDER BY g NULLS LAST');
    expect(e.group_keys).toEqual(ref.map((r) => (r[0] === null ? null : Number(r[0]))));
    expect(e.group_counts).toEqual(ref.map((r) => Number(r[1])));
    (e.operation_grouped_mean as number[]).forEach((v, k) => expect(v).toBeCloseTo(ref[k][2] as number, 9));
  });

  it('composite str × bool keys, sum and count of rows', async () => {
    const e = await q({ where: [{ column: 'g', ne: 0 }], group_by: ['s', 'b'], sum: { column: 'id' } });
    const ref = await duck('SELECT s, b, count(*), sum(id) FROM obs WHERE g <> 0 GROUP BY s, b ORDER BY s NULLS LAST, b');
    expect(e.group_keys).toEqual(ref.map((r) => [r[0], r[1]]));
    expect(e.group_counts).toEqual(ref.map((r) => Number(r[2])));
    expect((e.operation_grouped_sum as unknown[]).map(num)).toEqual(ref.map((r) => num(r[3])));
    const c = await q({ group_by: ['s'], count: [] });
    expect(c.group_counts).toEqual(c.operation_grouped_count);
  });

  it('month buckets of a timestamp, year buckets of a pre-1970 date, float widths', async () => {
    const m = await q({ group_by: { column: 'ts', bucket: 'month' }, max: { column: 'x' } });
    const refM = await duck("SELECT strftime(date_trunc('month', ts), '%Y-%m-%dT%H:%M:%SZ'), count(*), max(x) FROM obs GROUP BY 1 ORDER BY 1");
    expect(m.group_keys).toEqual(refM.map((r) => r[0]));
    expect(m.group_counts).toEqual(refM.map((r) => Number(r[1])));
    const y = await q({ group_by: { column: 'd', bucket: 'year' }, count: { column: 'x' } });
    const refY = await duck("SELECT strftime(date_trunc('year', d), '%Y-%m-%d'), count(x) FROM obs GROUP BY 1 ORDER BY 1 NULLS LAST");
    expect(y.group_keys).toEqual(refY.map((r) => r[0]));
    expect(y.operation_grouped_count).toEqual(refY.map((r) => Number(r[1])));
    const w = await q({ group_by: { column: 'x', width: 2.5 }, count: [] });
    const refW = await duck('SELECT floor(x / 2.5) * 2.5 + 0.0 AS k, count(*) FROM obs GROUP BY k ORDER BY k NULLS LAST');
    expect(w.group_keys).toEqual(refW.map((r) => (r[0] === null ? null : (r[0] as number) + 0)));
    expect(w.group_counts).toEqual(refW.map((r) => Number(r[1])));
  });
});

describe('columns / order_by / limit / offset', () => {
  it('storage order, offset, default limit', async () => {
    const e = await q({ where: [{ column: 's', eq: 'DE' }], columns: ['id', 'ts', 's'], offset: 3, limit: 4 });
    const ref = await duck("SELECT id, strftime(ts, '%Y-%m-%dT%H:%M:%SZ'), s FROM obs WHERE s = 'DE' ORDER BY rowid LIMIT 4 OFFSET 3");
    expect((e.rows as Record<string, unknown>[]).map((r) => [num(r.id), r.ts, r.s])).toEqual(ref.map((r) => [num(r[0]), r[1], r[2]]));
    expect(((await q({ columns: ['g'] })).rows as unknown[]).length).toBe(1000);
    expect(((await q({ columns: ['g'], limit: 0 })).rows as unknown[]).length).toBe(0);
    expect(((await q({ columns: ['g'], offset: N + 5 })).rows as unknown[]).length).toBe(0);
  });

  it('order_by desc with ties by storage order and nulls last', async () => {
    const e = await q({ columns: ['g', 'x', 'id'], order_by: [{ column: 'g', desc: true }, { column: 'x' }], limit: 50, offset: 10 });
    const ref = await duck('SELECT g, x, id FROM obs ORDER BY g DESC NULLS LAST, x ASC NULLS LAST, rowid LIMIT 50 OFFSET 10');
    expect((e.rows as Record<string, unknown>[]).map((r) => [r.g, r.x, num(r.id)])).toEqual(ref.map((r) => [num(r[0]), r[1], num(r[2])]));
    const tail = await q({ columns: ['g', 'id'], order_by: [{ column: 'g' }], offset: N - 5 });
    expect((tail.rows as Record<string, unknown>[]).every((r) => r.g === null)).toBe(true);
  });

  it('NaN is the largest number in order_by (by hand)', async () => {
    const e = await q({ columns: ['nanx'], order_by: [{ column: 'nanx', desc: true }], limit: 3 });
    expect((e.rows as { nanx: number }[]).map((r) => r.nanx)).toEqual([NaN, NaN, NaN]);
  });
});

describe('validation errors', () => {
  const cases: [object, string][] = [
    [{ table: 'nope', count: [] }, 'TET_QUERY_UNKNOWN_TABLE'],
    [{ sum: { column: 'nope' } }, 'TET_QUERY_UNKNOWN_COLUMN'],
    [{ sum: { column: 's' } }, 'TET_QUERY_COLUMN_KIND'],
    [{ mean: { column: 'ts' } }, 'TET_QUERY_COLUMN_KIND'],
    [{ where: [{ column: 'g', prefix: '1' }], count: [] }, 'TET_QUERY_WHERE_OP'],
    [{ where: [{ column: 'g', is_nan: true }], count: [] }, 'TET_QUERY_WHERE_OP'],
    [{ where: [{ column: 'ts', eq: '2020-01-01 00:00:00Z' }], count: [] }, 'TET_QUERY_BAD_LITERAL'],
    [{ where: [{ column: 'g', eq: 2 ** 53 + 2 }], count: [] }, 'TET_QUERY_BAD_LITERAL'],
    [{ group_by: { column: 'd', bucket: 'hour' }, count: [] }, 'TET_QUERY_GROUP_BY'],
    [{ group_by: { column: 'g', width: 1.5 }, count: [] }, 'TET_QUERY_GROUP_BY'],
    [{ group_by: { column: 's', width: 2 }, count: [] }, 'TET_QUERY_GROUP_BY'],
    [{ columns: ['g'], limit: 1_000_001 }, 'TET_QUERY_INVALID'],
    [{ columns: ['nope'] }, 'TET_QUERY_UNKNOWN_COLUMN'],
  ];
  it.each(cases)('%j -> %s', async (doc, code) => {
    await expect(f.query({ table: 'obs', ...doc })).rejects.toMatchObject({ code });
  });
});
