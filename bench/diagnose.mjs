#!/usr/bin/env node
// Engine diagnosis (not part of `npm run bench`): in one process, each case's best and median
// of N warm queries with the engine's own stats (threads, I/O mode, strategy), next to the warm
// probe of the same bytes. `--threads 1` pins the engine to one thread (compare with
// PROBE_THREADS=1). `--kernels` also builds and runs kernels_micro.cpp (the engine's fold
// kernels alone, single thread).
//   node bench/diagnose.mjs [--size 256M] [--only REGEX] [--threads N] [--kernels]
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureProbe } from './lib/build.mjs';
import { cases, geometry, parseSize } from './lib/datasets.mjs';
import { rawPayloadSpan } from './lib/tetfile.mjs';
import { dataDir, ensureData } from './generate.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : d; };
const bytes = parseSize(opt('--size', '256M'));
const only = new RegExp(opt('--only', '.'));
const threads = Number(opt('--threads', '0'));
const reps = Number(opt('--reps', '7'));

const probe = ensureProbe();
await ensureData(bytes, { probe });
const dir = dataDir(bytes);
const geo = geometry(bytes);
const { open } = createRequire(import.meta.url)(path.join(ROOT, 'dist', 'index.cjs'));

const probeRate = {};
for (const dt of ['f32', 'f64', 'i32']) {
  const f = path.join(dir, `${dt}.tet`);
  const s = rawPayloadSpan(f);
  const env = threads ? { ...process.env, PROBE_THREADS: String(threads) } : process.env;
  const j = JSON.parse(execFileSync(probe, ['warm', f, String(s.offset), String(s.length), dt, '15'], { env }));
  probeRate[dt] = s.length / j.best / 1e9;
  console.log(`probe ${dt}${threads ? ` (${threads} thread)` : ''}: best ${probeRate[dt].toFixed(2)} GB/s, median ${(s.length / j.seconds / 1e9).toFixed(2)} GB/s`);
}
const files = new Map();
for (const c of cases(geo)) {
  if (!only.test(c.id)) continue;
  const file = path.join(dir, c.codec === 'zstd' ? `${c.dt}.zstd.tet` : `${c.dt}.tet`);
  if (!files.has(file)) files.set(file, await open(file));
  const f = files.get(file);
  const doc = threads ? { ...c.doc, execution: { threads } } : c.doc;
  await f.query({ dataset: 'data', sum: [], ...(c.doc.selection ? { selection: c.doc.selection } : {}) }, { preview: 0 });
  const ts = [];
  let ex;
  for (let i = 0; i < (c.kind === 'order' || c.codec ? 2 : reps); i++) {
    const t0 = performance.now();
    ex = (await f.query(doc, { preview: 0 })).execution;
    ts.push((performance.now() - t0) / 1000);
  }
  ts.sort((a, b) => a - b);
  const g = geo[c.dt];
  const b = c.sel ? c.sel.reduce((n, [a, z, s]) => n * Math.ceil((z - a) / s), 1) * (g.bytes / g.elements) : g.bytes;
  const rate = b / ts[0] / 1e9;
  console.log(`${c.id.padEnd(18)} best ${(ts[0] * 1e3).toFixed(1).padStart(7)} ms  median ${(ts[ts.length >> 1] * 1e3).toFixed(1).padStart(7)} ms  ${rate.toFixed(2).padStart(6)} GB/s  ${(rate / probeRate[c.dt]).toFixed(2)}× probe  | engine ${(ex.seconds * 1e3).toFixed(1)} ms, ${ex.threads} thr, ${ex.io_mode}, ${ex.memory_strategy}, ${ex.chunks_read} chunks`);
}
if (argv.includes('--kernels')) {
  const bin = path.join(HERE, '.scratch', 'kernels_micro');
  execFileSync('c++', ['-std=c++17', '-O3', `-I${path.join(ROOT, 'native', 'include')}`, `-I${path.join(ROOT, 'native')}`, '-o', bin,
    path.join(HERE, 'kernels_micro.cpp'), path.join(ROOT, 'native', 'fold', 'kernels.cpp'),
    ...['f32_f64_u8', 'u16_i16_i32', 'u32_i64_u64'].map((g) => path.join(ROOT, 'native', 'fold', `row_kernels_${g}.cpp`)),
    path.join(ROOT, 'native', 'fold', 'registry.cpp')], { stdio: 'inherit' });
  const npy = path.join(dir, 'f32.npy');
  process.stdout.write(execFileSync(bin, bytes >= 256 * 2 ** 20 ? [npy] : [], { encoding: 'utf8' }));
}
process.exit(0);
