#!/usr/bin/env node
// `npm run bench:tensor-queries`: the tensor form of the filter / group-by questions (issue 12):
// temperature[time, station] (f32, hourly for a year x stations) with axis tables `time` (ts) and
// `station` (country, elevation_m), in tetration (`where` / `group_by` over the axis tables) and
// in the numpy code a user writes on a memmap of the same values (xarray-style: boolean masks,
// np.bincount over per-station sums, np.add.reduceat over month starts; f64 accumulation). Both
// read the same bytes from the page cache (a raw .f32 file for numpy, raw tiles in the .tet).
// Each query runs WARMUP_RUNS (3) times to warm up, then --reps times; the median is reported. Answers are
// asserted equal (1e-9 relative) before any time is written. numpy runs in one python process
// (its own timing, excluding interpreter start-up); tetration times are `f.query()` end to end.
// Results: bench/results/tensor-queries-latest.md.
//
// Options:
//   --time 8760       time steps (hours)
//   --stations 2048   stations
//   --reps 5          timed runs per query (after the warm-up runs)
//   --out FILE        markdown output
//   --keep            keep the temp directory
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, log, medianMs, opt, positiveInt, WARMUP_RUNS } from './lib/script.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const THREADS = 2;
const O = {
  time: positiveInt('--time', '8760'),
  stations: positiveInt('--stations', '2048'),
  reps: positiveInt('--reps', '5'),
  out: opt('--out', path.join(HERE, 'results', 'tensor-queries-latest.md')),
  keep: flag('--keep'),
};
const T = O.time, S = O.stations;
const COUNTRIES = Array.from({ length: 40 }, (_, i) => String.fromCharCode(65 + (i % 26)) + String.fromCharCode(65 + Math.floor(i / 26) * 7 + (i % 5)));
const T0_MS = Date.UTC(2020, 0, 1);
const X = 'DE';

// ---- the data (one generator for both sides) ------------------------------------------------------

function data() {
  const temp = new Float32Array(T * S);
  let h = 0x9e3779b9;
  for (let t = 0; t < T; t++) {
    const season = 10 - 12 * Math.cos((2 * Math.PI * t) / 8766);
    for (let s = 0; s < S; s++) {
      h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x297a2d39) >>> 0;
      temp[t * S + s] = season + (s % 23) * 0.25 + ((h >>> 8) / 2 ** 24 - 0.5) * 6;
    }
  }
  // ~1/40 of the stations per country, interleaved (a station's country is not its position)
  const country = Array.from({ length: S }, (_, s) => (s % 37 === 5 ? X : COUNTRIES[(s * 7) % COUNTRIES.length]));
  const elevation = Int32Array.from({ length: S }, (_, s) => (s * 131) % 3000);
  const ts = BigInt64Array.from({ length: T }, (_, t) => BigInt(T0_MS + t * 3_600_000) * 1000n);
  return { temp, country, elevation, ts };
}

const QUERIES = [
  { id: 'T1', what: `mean over time where station.country = '${X}' → [stations in ${X}]`,
    doc: { dataset: 'temperature', mean: ['time'], where: [{ column: 'country', eq: X }] }, field: 'operation_reduced_mean' },
  { id: 'T2', what: 'mean group by station.country → [countries]',
    doc: { dataset: 'temperature', mean: [], group_by: 'station.country' }, field: 'operation_grouped_mean' },
  { id: 'T3', what: 'monthly means (group_by time.ts bucket month) → [12, stations]',
    doc: { dataset: 'temperature', mean: ['time'], group_by: { column: 'ts', bucket: 'month' } }, field: 'operation_grouped_mean' },
  { id: 'T4', what: `monthly means where station.country = '${X}' → [12, stations in ${X}]`,
    doc: { dataset: 'temperature', mean: ['time'], where: [{ column: 'country', eq: X }], group_by: { column: 'ts', bucket: 'month' } },
    field: 'operation_grouped_mean' },
];

// The numpy side: each query as a function of the memmap; prints JSON {id: {ms, values}}.
const NUMPY = String.raw`
import json, sys, time
import numpy as np
T, S, reps, raw, meta, warm = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
m = json.load(open(meta))
a = np.memmap(raw, dtype='<f4', mode='r', shape=(T, S))
country = np.array(m['country'])
month = np.array(m['month'])
X = m['x']
def t1():
    idx = np.nonzero(country == X)[0]
    return a[:, idx].mean(axis=0, dtype=np.float64)
def t2():
    keys, codes = np.unique(country, return_inverse=True)
    col = a.sum(axis=0, dtype=np.float64)
    return np.bincount(codes, weights=col) / (np.bincount(codes) * T)
def monthly(b):
    starts = np.nonzero(np.r_[True, month[1:] != month[:-1]])[0]
    lens = np.diff(np.r_[starts, T])
    return np.add.reduceat(b, starts, axis=0, dtype=np.float64) / lens[:, None]
def t3():
    return monthly(a)
def t4():
    idx = np.nonzero(country == X)[0]
    return monthly(a[:, idx])
out = {}
for name, fn in (('T1', t1), ('T2', t2), ('T3', t3), ('T4', t4)):
    v = fn()
    for _ in range(warm - 1):
        fn()
    ms = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(); ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    out[name] = {'ms': ms[len(ms) // 2], 'values': np.asarray(v, dtype=np.float64).ravel().tolist()}
print(json.dumps(out))
`;


function sameValues(id, a, b) {
  if (a.length !== b.length) throw new Error(`${id}: tetration gives ${a.length} values, numpy ${b.length}`);
  for (let i = 0; i < a.length; i++) {
    if (!(Math.abs(a[i] - b[i]) <= 1e-9 * Math.max(1, Math.abs(b[i])))) throw new Error(`${id}[${i}]: tetration ${a[i]} ≠ numpy ${b[i]}`);
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tet-bench-tensor-'));
  log(`temp dir ${dir}; temperature[${T}, ${S}] f32, ${THREADS} threads, median of ${O.reps} after ${WARMUP_RUNS} warm-up runs`);
  try {
    const d = data();
    const tetFile = path.join(dir, 'temperature.tet');
    const raw = path.join(dir, 'temperature.f32');
    fs.writeFileSync(raw, Buffer.from(d.temp.buffer, d.temp.byteOffset, d.temp.byteLength));
    const month = Array.from(d.ts, (us) => new Date(Number(us / 1000n)).getUTCMonth());
    fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify({ country: d.country, month, x: X }));
    const { TetWriter, open } = await import(path.join(ROOT, 'dist', 'index.mjs'));
    const w = await TetWriter.create(tetFile);
    w.addDataset({ name: 'temperature', dtype: 'f32', shape: [T, S], chunkShape: [Math.min(T, 730), Math.min(S, 256)], data: d.temp });
    w.setMetadata('temperature', { dim_names: ['time', 'station'] });
    w.addTable({ name: 'time', axis: { dataset: 'temperature', dim: 'time' }, columns: { ts: { kind: 'timestamp', unit: 'us', tz: 'UTC', values: d.ts } } });
    w.addTable({ name: 'station', axis: { dataset: 'temperature', dim: 'station' },
      columns: { country: { kind: 'str', values: d.country }, elevation_m: { kind: 'int', values: d.elevation } } });
    await w.commit();
    log(`wrote ${tetFile} (${(fs.statSync(tetFile).size / 2 ** 20).toFixed(1)} MiB) and the raw copy for numpy`);

    // numpy (after a read of both files, so both start from the page cache)
    fs.readFileSync(raw);
    fs.readFileSync(tetFile);
    const py = spawnSync('/usr/bin/python3', ['-c', NUMPY, String(T), String(S), String(O.reps), raw, path.join(dir, 'meta.json'), String(WARMUP_RUNS)],
      { maxBuffer: 1 << 30, env: { ...process.env, OMP_NUM_THREADS: String(THREADS), OPENBLAS_NUM_THREADS: String(THREADS) } });
    if (py.status !== 0) throw new Error(`numpy failed: ${py.stderr}`);
    const np = JSON.parse(py.stdout.toString());
    const npVersion = spawnSync('/usr/bin/python3', ['-c', 'import numpy; print(numpy.__version__)']).stdout.toString().trim();

    const f = await open(tetFile);
    const run = async (q) => (await f.query({ ...q.doc, execution: { threads: THREADS } })).execution;
    const results = [];
    for (const q of QUERIES) {
      const ex = await run(q);
      const values = Array.from(ex[q.field], Number);
      sameValues(q.id, values, np[q.id].values);
      const shape = ex.operation_reduced_shape;
      log(`${q.id} answers agree: shape [${shape}]`);
      const tet = await medianMs(() => run(q), O.reps);
      results.push({ ...q, shape, tet, numpy: np[q.id].ms });
      log(`${q.id}: tetration ${tet.toFixed(2)} ms, numpy ${np[q.id].ms.toFixed(2)} ms`);
    }
    f.close();
    writeReport(results, npVersion);
  } finally {
    if (!O.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

function writeReport(results, npVersion) {
  const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
  const lines = [
    `# Tensor where / group_by: tetration vs numpy on a memmap — temperature[${T}, ${S}] f32`, '',
    `\`npm run bench:tensor-queries\` (bench/tensor-queries.mjs), ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores`
      + ` (load ${os.loadavg()[0].toFixed(1)} at the end), Node ${process.version}, numpy ${npVersion}.`,
    'The same values in both: a .tet (raw tiles, chunks [730, 256], axis tables `time` and `station`) and a raw .f32 file numpy maps.',
    `tetration ${THREADS} threads, \`f.query()\` end to end; numpy as a user writes it (masks, np.bincount of per-station sums,`
      + ' np.add.reduceat over month starts, f64 accumulation), timed inside python. Warm (' + WARMUP_RUNS + ' runs discarded, both), median of ' + O.reps + '; answers asserted equal to 1e-9.', '',
    '| # | query | shape | tetration ms | numpy ms | numpy / tetration |',
    '|---|---|---|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(`| ${r.id} | ${r.what} | [${r.shape.join(', ')}] | ${ms(r.tet)} | ${ms(r.numpy)} | ${(r.numpy / r.tet).toFixed(2)}× |`);
  }
  lines.push('');
  fs.mkdirSync(path.dirname(O.out), { recursive: true });
  fs.writeFileSync(O.out, lines.join('\n'));
  log(`wrote ${O.out}`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
