#!/usr/bin/env node
// `npm run bench:table-queries`: the spec's table queries Q1a-Q4b (../shared/spec/
// tables_and_filters.md, appendix) on the `obs` table in tetration (`f.query({ table: ... })`)
// and in DuckDB (@duckdb/node-api, a database file), both fed by one generator
// (bench/lib/obs.mjs: the same formulas in JS and as DuckDB SQL macros; bench/tables.mjs checks
// that the two faces agree). Each engine runs with 2 threads; each query runs 3 times to warm up
// (lib/script.mjs WARMUP_RUNS), then 9 times in each engine, the two engines taking turns
// (lib/script.mjs interleavedMediansMs), and the median is reported. The answers of both engines are asserted equal
// (counts and integer sums exactly, means to 1e-9 relative, groups key by key, the looked-up
// row field by field) before any time is written.
// Results: bench/results/table-queries-latest.md.
//
// Options:
//   --rows 10000000   rows of the table
//   --reps 9          timed runs per query in each engine (after the warm-up runs)
//   --out FILE        markdown output (default bench/results/table-queries-latest.md)
//   --keep            keep the temp directory (its path is logged)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, interleavedMediansMs, log, opt, positiveInt, WARMUP_RUNS } from './lib/script.mjs';
import { DUCKDB_MACROS, OBS_SCHEMA, HOUR_US, TS0_US, batchBuffers, eventId, fillBatch, mixed, obsSelectSql, splitmix64Of, stationTable } from './lib/obs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const THREADS = 2;
const O = {
  rows: positiveInt('--rows', '10000000'),
  reps: positiveInt('--reps', '9'),
  out: opt('--out', path.join(HERE, 'results', 'table-queries-latest.md')),
  keep: flag('--keep'),
};
if (O.rows < 2 * 24 * 10_000) throw new Error('--rows must cover two days (480,000 rows) for Q1b');

/** The spec's DuckDB times (100 M rows, 2-core machine), shown for reference. */
const SPEC_DUCKDB_MS = { Q1a: 421, Q1b: 3.0, Q2a: 292, Q2b: 93, Q3a: 474, Q3b: 517, Q4a: 753, Q4b: 627 };

// ---- the queries --------------------------------------------------------------------------

const DAY_US = 24 * HOUR_US;
const dayStart = TS0_US + DAY_US;  // 2020-01-02T00:00Z: the second day
const iso = (us) => new Date(us / 1000).toISOString();
const sqlTs = (us) => `TIMESTAMP '${iso(us).replace('T', ' ').replace('Z', '')}'`;
const LOOKUP_ROW = Math.floor(O.rows * 0.7) + 123;
splitmix64Of(LOOKUP_ROW);
const LOOKUP_ID = eventId(mixed.hi, mixed.lo);
const NAME_STATION = 4321;
const NAME = stationTable().name[NAME_STATION];

/**
 * Each query: its tetration document, its SQL, and how to read one comparable answer from each
 * (numbers, or [key, value] lists for groups, or the looked-up row).
 */
const QUERIES = [
  {
    id: 'Q1a', what: 'count where temp_c > 30',
    doc: { where: [{ column: 'temp_c', gt: 30 }], count: [] },
    sql: 'SELECT count(*) FROM obs WHERE temp_c > 30',
    tet: (e) => Number(e.operation_element_count), duck: (r) => Number(r[0][0]),
  },
  {
    id: 'Q1b', what: 'count where ts in one given day',
    doc: { where: [{ column: 'ts', range: [iso(dayStart), iso(dayStart + DAY_US)] }], count: [] },
    sql: `SELECT count(*) FROM obs WHERE ts >= ${sqlTs(dayStart)} AND ts < ${sqlTs(dayStart + DAY_US)}`,
    tet: (e) => Number(e.operation_element_count), duck: (r) => Number(r[0][0]),
  },
  {
    id: 'Q2a', what: "sum(pressure_pa) where country = 'AA'",
    doc: { where: [{ column: 'country', eq: 'AA' }], sum: { column: 'pressure_pa' } },
    sql: "SELECT sum(pressure_pa) FROM obs WHERE country = 'AA'",
    tet: (e) => BigInt(e.operation_sum), duck: (r) => BigInt(r[0][0]),
  },
  {
    id: 'Q2b', what: 'sum(pressure_pa) where pressure_pa < 98100',
    doc: { where: [{ column: 'pressure_pa', lt: 98100 }], sum: { column: 'pressure_pa' } },
    sql: 'SELECT sum(pressure_pa) FROM obs WHERE pressure_pa < 98100',
    tet: (e) => BigInt(e.operation_sum), duck: (r) => BigInt(r[0][0]),
  },
  {
    id: 'Q3a', what: 'mean(temp_c) group by country',
    doc: { group_by: ['country'], mean: { column: 'temp_c' } },
    sql: 'SELECT country, avg(temp_c) FROM obs GROUP BY country ORDER BY country',
    tet: (e) => e.group_keys.map((k, i) => [k, e.operation_grouped_mean[i]]), duck: (r) => r.map(([k, v]) => [k, v]),
    close: true,
  },
  {
    id: 'Q3b', what: 'mean(temp_c) group by station_id',
    doc: { group_by: ['station_id'], mean: { column: 'temp_c' } },
    sql: 'SELECT station_id, avg(temp_c) FROM obs GROUP BY station_id ORDER BY station_id',
    tet: (e) => e.group_keys.map((k, i) => [Number(k), e.operation_grouped_mean[i]]), duck: (r) => r.map(([k, v]) => [Number(k), v]),
    close: true,
  },
  {
    id: 'Q4a', what: 'row lookup event_id = one existing value (ts, station_id, temp_c)',
    doc: { where: [{ column: 'event_id', eq: LOOKUP_ID }], columns: ['ts', 'station_id', 'temp_c'] },
    sql: `SELECT epoch_us(ts), station_id, temp_c FROM obs WHERE event_id = '${LOOKUP_ID}'`,
    tet: (e) => e.rows.map((r) => [Date.parse(r.ts) * 1000, Number(r.station_id), r.temp_c]),
    duck: (r) => r.map(([t, s, c]) => [Number(t), Number(s), c]),
  },
  {
    id: 'Q4b', what: 'count where station_name = one value',
    doc: { where: [{ column: 'station_name', eq: NAME }], count: [] },
    sql: `SELECT count(*) FROM obs WHERE station_name = '${NAME}'`,
    tet: (e) => Number(e.operation_element_count), duck: (r) => Number(r[0][0]),
  },
];

/** Equal answers: exact, or (close) keys exact and values to 1e-9 relative. */
function same(a, b, close) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i], close));
  }
  if (close && typeof a === 'number' && typeof b === 'number') {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  }
  return a === b;
}

const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));

// ---- building both tables -----------------------------------------------------------------

async function buildTet(file, rows) {
  const { TetWriter } = await import(path.join(ROOT, 'dist', 'index.mjs'));
  const batch = 1 << 20;
  const stations = stationTable();
  const buffers = [batchBuffers(Math.min(batch, rows)), batchBuffers(Math.min(batch, rows))];
  const pending = [null, null];
  const w = await TetWriter.create(file);
  const table = w.addTable({ name: 'obs', schema: OBS_SCHEMA });
  for (let start = 0, k = 0; start < rows; start += batch, k++) {
    const slot = k & 1;
    if (pending[slot]) await pending[slot];
    pending[slot] = table.append(fillBatch(buffers[slot], stations, start, Math.min(batch, rows - start)));
  }
  await Promise.all(pending.filter(Boolean));
  await w.commit();
}

async function buildDuck(file, rows) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(file, { threads: String(THREADS) });
  const conn = await instance.connect();
  for (const sql of DUCKDB_MACROS) await conn.run(sql);
  await conn.run(`CREATE TABLE obs AS ${obsSelectSql(rows)}`);
  await conn.run('CHECKPOINT');
  return { conn, instance };
}


// ---- main ---------------------------------------------------------------------------------

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tet-bench-tq-'));
  log(`temp dir ${dir}; ${O.rows.toLocaleString('en-US')} rows, ${THREADS} threads, median of ${O.reps} after ${WARMUP_RUNS} warm-up runs`);
  try {
    const tetFile = path.join(dir, 'obs.tet'), duckFile = path.join(dir, 'obs.duckdb');
    let t = performance.now();
    await buildTet(tetFile, O.rows);
    const tetIngest = (performance.now() - t) / 1000;
    log(`tetration ingest ${tetIngest.toFixed(1)} s, ${(fs.statSync(tetFile).size / O.rows).toFixed(2)} B/row`);
    t = performance.now();
    const duck = await buildDuck(duckFile, O.rows);
    const duckIngest = (performance.now() - t) / 1000;
    log(`DuckDB ingest ${duckIngest.toFixed(1)} s, ${(fs.statSync(duckFile).size / O.rows).toFixed(2)} B/row`);

    const { open } = await import(path.join(ROOT, 'dist', 'index.mjs'));
    const f = await open(tetFile);
    const tetRun = async (q) => (await f.query({ table: 'obs', ...q.doc, execution: { threads: THREADS } })).execution;
    const duckRun = async (q) => (await duck.conn.runAndReadAll(q.sql)).getRows();

    // answers first: any difference aborts before a time is written
    const answers = {};
    for (const q of QUERIES) {
      const ex = await tetRun(q);
      const a = q.tet(ex), b = q.duck(await duckRun(q));
      if (!same(a, b, q.close)) throw new Error(`${q.id}: tetration ${show(a).slice(0, 300)} ≠ DuckDB ${show(b).slice(0, 300)}`);
      const plan = ex.where_plan?.obs;
      answers[q.id] = { answer: Array.isArray(a) ? `${a.length} ${q.id.startsWith('Q3') ? 'groups' : 'rows'}` : String(a), plan };
      log(`${q.id} answers agree: ${answers[q.id].answer}`);
    }
    const results = [];
    for (const q of QUERIES) {
      const [tet, dk] = await interleavedMediansMs([() => tetRun(q), () => duckRun(q)], O.reps);
      results.push({ ...q, tet, duck: dk });
      log(`${q.id}: tetration ${tet.toFixed(2)} ms, DuckDB ${dk.toFixed(2)} ms`);
    }
    f.close();
    duck.conn.closeSync();
    duck.instance.closeSync();
    const duckVersion = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', '@duckdb', 'node-api', 'package.json'), 'utf8')).version;
    writeReport({ results, answers, tetIngest, duckIngest, tetBytes: fs.statSync(tetFile).size, duckBytes: fs.statSync(duckFile).size, duckVersion });
  } finally {
    if (!O.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

function writeReport(R) {
  const n = O.rows;
  const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
  const lines = [
    `# Table queries: tetration vs DuckDB — ${n.toLocaleString('en-US')} rows of \`obs\``, '',
    `\`npm run bench:table-queries\` (bench/table-queries.mjs), ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores`
      + ` (load ${os.loadavg()[0].toFixed(1)} at the end), Node ${process.version}, @duckdb/node-api ${R.duckVersion}.`,
    'One generator (bench/lib/obs.mjs) feeds both engines; every answer below was asserted equal in both before timing.',
    `Both engines ${THREADS} threads; warm (${WARMUP_RUNS} runs discarded), median of ${O.reps}, the engines taking turns run by run. tetration times are \`f.query()\` end to end`
      + ' (plan, native run, response); DuckDB times are `runAndReadAll` on a database file.', '',
    `Files: tetration ${(R.tetBytes / n).toFixed(2)} B/row (ingest ${R.tetIngest.toFixed(1)} s), DuckDB ${(R.duckBytes / n).toFixed(2)} B/row`
      + ` (\`CREATE TABLE AS\` + CHECKPOINT ${R.duckIngest.toFixed(1)} s).`, '',
    '| # | query | answer | tetration ms | DuckDB ms | DuckDB / tetration | where_plan: decoded / zone-map resolved / index-pruned of blocks | spec DuckDB ms (100 M rows) |',
    '|---|---|---|---:|---:|---:|---|---:|',
  ];
  for (const r of R.results) {
    const p = R.answers[r.id].plan;
    const plan = p ? `${p.blocks_decoded} / ${p.blocks_zonemap_resolved} / ${p.blocks_index_pruned} of ${p.blocks}` : '—';
    lines.push(`| ${r.id} | ${r.what} | ${R.answers[r.id].answer} | ${ms(r.tet)} | ${ms(r.duck)} | ${(r.duck / r.tet).toFixed(2)}× | ${plan} | ${SPEC_DUCKDB_MS[r.id]} |`);
  }
  // Issue 12's goals, judged on this run.
  const by = Object.fromEntries(R.results.map((r) => [r.id, r]));
  const planOf = (id) => R.answers[id].plan;
  const goals = [
    ...['Q1a', 'Q1b', 'Q2a', 'Q2b', 'Q3a', 'Q3b'].map((id) => {
      const ratio = by[id].duck / by[id].tet;
      return { what: `${id} ≥ 1.7 × faster than DuckDB`, got: `${ratio.toFixed(2)}×`, met: ratio >= 1.7 };
    }),
    { what: 'Q4a p50 ≤ 1 ms', got: `${ms(by.Q4a.tet)} ms`, met: by.Q4a.tet <= 1 },
    { what: 'Q4a decodes ≤ 2 blocks (the per-value index prunes the rest)',
      got: planOf('Q4a') ? `${planOf('Q4a').blocks_decoded} decoded, ${planOf('Q4a').blocks_index_pruned} pruned` : '—',
      met: !!planOf('Q4a') && planOf('Q4a').blocks_decoded <= 2 },
    { what: 'Q1b reads no payload of blocks outside the day (only the two edge blocks decoded)',
      got: planOf('Q1b') ? `${planOf('Q1b').blocks_decoded} decoded, ${planOf('Q1b').blocks_zonemap_resolved} settled by zone maps` : '—',
      met: !!planOf('Q1b') && planOf('Q1b').blocks_decoded <= 2 },
    { what: 'Q4b ≤ 100 ms', got: `${ms(by.Q4b.tet)} ms`, met: by.Q4b.tet <= 100 },
  ];
  lines.push('', '## Goals (issue 12)', '',
    'The event_id block index that Q4a uses: ≤ 5 B/row, measured by `npm run bench:tables` (bench/results/tables-latest.md).', '',
    '| goal | this run | met |', '|---|---|---|');
  for (const g of goals) lines.push(`| ${g.what} | ${g.got} | ${g.met ? '**met**' : 'not met'} |`);
  lines.push('', `${goals.filter((g) => g.met).length} of ${goals.length} met.`, '');
  fs.mkdirSync(path.dirname(O.out), { recursive: true });
  fs.writeFileSync(O.out, lines.join('\n'));
  // the same, for bench/run.mjs's report (bench/results/latest.md)
  const json = O.out.replace(/\.md$/, '.json');
  if (json !== O.out) {
    fs.writeFileSync(json, JSON.stringify({
      at: new Date().toISOString(), rows: n, threads: THREADS, reps: O.reps, node: process.version, duckdb: R.duckVersion,
      queries: R.results.map((r) => ({ id: r.id, what: r.what, tet_ms: r.tet, duckdb_ms: r.duck, plan: R.answers[r.id].plan ?? null })),
      goals,
    }, null, 2) + '\n');
  }
  log(`wrote ${O.out}`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
