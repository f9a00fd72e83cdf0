// tetration SDK `file.read()` memory trial: reads the whole of dataset "data" (one typed array of
// the dataset's size) once, while a worker thread samples RssAnon from /proc/self/status every
// millisecond — a sampler on the JS thread would miss any copy made on it. Reports the peak
// against the output's bytes (W4 target: peak RssAnon ≤ 1.15 × output). RssAnon, not VmHWM: the
// file is memory-mapped, so file-backed pages would count the input as well (VmHWM is reported
// too, for reference). One read per process (bench/README.md: each trial its own process).
// usage: node tet_read_rss.mjs TET_FILE
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { open } = createRequire(import.meta.url)(path.join(ROOT, 'dist', 'index.cjs'));
const file = process.argv[2];

// shared: [0] stop flag (Int32), then Float64 [1] peak RssAnon, [2] peak VmHWM, [3] samples
const sab = new SharedArrayBuffer(64);
const sampler = new Worker(`
  const { workerData } = require('node:worker_threads');
  const fs = require('node:fs');
  const flag = new Int32Array(workerData, 0, 2), f = new Float64Array(workerData, 8, 3);
  const kb = (s, k) => Number(new RegExp(k + ':\\\\s+(\\\\d+) kB').exec(s)[1]) * 1024;
  while (Atomics.load(flag, 0) === 0) {
    const s = fs.readFileSync('/proc/self/status', 'utf8');
    f[0] = Math.max(f[0], kb(s, 'RssAnon')); f[1] = Math.max(f[1], kb(s, 'VmHWM')); f[2]++;
    Atomics.store(flag, 1, 1);
    Atomics.wait(flag, 0, 0, 1);
  }
`, { eval: true, workerData: sab });
const flag = new Int32Array(sab, 0, 2), f = new Float64Array(sab, 8, 3);
while (Atomics.load(flag, 1) === 0) await new Promise((r) => setTimeout(r, 1));  // sampler running

const fs = await import('node:fs');
const status = () => fs.readFileSync('/proc/self/status', 'utf8');
const kb = (s, k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)[1]) * 1024;
const tf = await open(file);
const before = kb(status(), 'RssAnon');
f[0] = before;
const t0 = performance.now();
const { data } = await tf.read('data');
const seconds = (performance.now() - t0) / 1000;
const after = kb(status(), 'RssAnon');
Atomics.store(flag, 0, 1);
Atomics.notify(flag, 0);
await new Promise((r) => sampler.once('exit', r));
const peak = Math.max(f[0], after);
let sum = 0;
for (let i = 0; i < data.length; i++) sum += Number(data[i]);
const outputBytes = data.byteLength;
tf.close();
console.log(JSON.stringify({
  times: [seconds], result: sum,
  rss: { before, peak, after, vmhwm: f[1], samples: f[2], outputBytes, ratio: peak / outputBytes, growthRatio: (peak - before) / outputBytes },
}));
