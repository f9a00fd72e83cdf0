// The addon in several JS environments at once: N worker_threads x M reads on one file, each
// worker with its own addon instance (Napi::Addon instance data), plus a worker terminated
// while its reads are in flight. Workers run plain JS against the binding (no TS loader
// there), encoding the plan wire by hand from native/include/tet/plan.h.
import { SHARED } from '../support/paths';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { open } from '../../lib/index';
import { packageRoot } from '../../lib/binding';
import { runEvalWorker } from '../support/worker-support';

const LARGE = join(SHARED, 'fixtures/reference/tet/large.tet');

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const b = require(workerData.nodeGypBuild)(workerData.root);
function plan(start, count) {               // op none, capped_in_memory, preview = all
  const buf = new Uint8Array(288);
  const v = new DataView(buf.buffer);
  v.setUint32(0, 0x4e4c5054, true); v.setUint32(4, 1, true); v.setUint32(8, 0, true); v.setUint32(12, 2, true);
  v.setFloat64(32, 0.5, true); v.setUint32(68, 4, true);
  v.setBigUint64(80, BigInt(count[0] * count[1]), true);
  for (let a = 0; a < 8; a++) {
    v.setBigUint64(88 + 8 * a, BigInt(a < 2 ? start[a] : 0), true);
    v.setBigUint64(152 + 8 * a, 1n, true);
    v.setBigUint64(216 + 8 * a, BigInt(a < 2 ? count[a] : 1), true);
  }
  return buf;
}
(async () => {
  const f = await b.openFile(workerData.path, true);
  const sums = [];
  const reads = [];
  for (let m = 0; m < workerData.reads; m++) {
    const row = (workerData.id * 7 + m) % 34;
    reads.push(b.execute(f, plan([row, 0], [1, 64]), null).then((r) => {
      let s = 0; for (const x of r.preview) s += x; sums.push([row, s]);
    }));
  }
  if (workerData.terminateEarly) { parentPort.postMessage('started'); await new Promise(() => {}); }
  await Promise.all(reads);
  b.closeFile(f);
  parentPort.postMessage(sums);
})().catch((e) => parentPort.postMessage({ error: e.code + ' ' + e.message }));
`;

function runWorker(id: number, reads: number, terminateEarly = false): Promise<unknown> {
  return runEvalWorker(WORKER, { id, reads, path: LARGE }, terminateEarly);
}

const SDK_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { open } = require(workerData.dist);
(async () => {
  const f = await open(workerData.path);
  const sums = [];
  await Promise.all(Array.from({ length: workerData.reads }, async (_, m) => {
    const row = (workerData.id * 5 + m) % 34;
    const r = await f.read('a', [{ start: row, stop: row + 1 }, {}]);
    let s = 0; for (const x of r.data) s += x; sums.push([row, s]);
  }));
  f.close();
  parentPort.postMessage(sums);
})().catch((e) => parentPort.postMessage({ error: e.code + ' ' + e.message }));
`;

describe('worker_threads', () => {
  const dist = join(packageRoot(), 'dist/index.cjs');
  it.skipIf(!existsSync(dist))('the built SDK (dist/index.cjs) in N workers x M reads', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, (_, id) => new Promise((resolve, reject) => {
      const w = new Worker(SDK_WORKER, { eval: true, workerData: { id, reads: 8, path: LARGE, dist } });
      w.once('message', resolve);
      w.once('error', reject);
    })));
    for (const r of results) {
      expect(r).not.toHaveProperty('error');
      for (const [row, s] of r as [number, number][]) expect(s).toBe(4096 * row + 2016);
    }
  });

  it('N workers x M reads on one file, while the main thread reads it too', async () => {
    const N = 6, M = 12;
    const main = await open(LARGE);
    const [results, mainRead] = await Promise.all([
      Promise.all(Array.from({ length: N }, (_, id) => runWorker(id, M))),
      main.read('a'),
    ]);
    main.close();
    expect((mainRead.data as Float32Array)[2175]).toBe(2175);
    for (const r of results) {
      expect(r).not.toHaveProperty('error');
      const sums = r as [number, number][];
      expect(sums.length).toBe(M);
      // row r holds r*64 .. r*64+63: sum = 64*64*r + 2016
      for (const [row, s] of sums) expect(s).toBe(4096 * row + 2016);
    }
  });

  it('terminating a worker with reads in flight leaves the process healthy', async () => {
    for (let i = 0; i < 3; i++) expect(await runWorker(i, 20, true)).toBe('started');
    const f = await open(LARGE);
    expect(Array.from((await f.read('a', [{ start: 33 }, { start: 63 }])).data as Float32Array)).toEqual([2175]);
    f.close();
  });
});

