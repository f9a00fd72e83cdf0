// Per-environment lifecycle: a worker_thread terminated while its query runs leaves no query
// running. The environment's cleanup hook trips the cancel flags of its in-flight queries; the
// process-wide engine counters (binding.engineStats(), shared by every addon instance) show the
// query end by cancellation rather than run to completion.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binding, packageRoot } from '../../lib/binding';
import { TetWriter } from '../../lib';
import { until } from '../support/worker-support';

const dir = mkdtempSync(join(tmpdir(), 'tet-lifecycle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'million.tet');

beforeAll(async () => {
  // 1 M one-byte tiles: a sum over them takes seconds, far longer than a cancel.
  const n = 1 << 20;
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'm', dtype: 'u8', shape: [n], chunkShape: [1], data: Uint8Array.from({ length: n }, (_, i) => i % 251) });
  await w.commit();
}, 120_000);

// The worker queries until it is terminated (each query takes seconds).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { open } = require(workerData.sdk);
(async () => {
  const f = await open(workerData.path);
  parentPort.postMessage('started');
  for (;;) {
    await f.query({ dataset: 'm', var: [] }, {}).then(() => parentPort.postMessage('finished'), (e) => parentPort.postMessage(e.code));
  }
})();
`;

// The same with read(): the worker's caller-owned output is written by native threads while its
// environment goes away (the worker's reference to it is leaked then, never deleted off-thread).
const READ_WORKER = WORKER.replace("f.query({ dataset: 'm', var: [] }, {})", "f.read('m')");

describe('worker_threads teardown', () => {
  // Starts `script` in a worker, waits until its query runs on the pool (counted process-wide),
  // terminates the worker and checks the query stopped by the teardown's cancellation.
  async function terminateMidQuery(script: string): Promise<void> {
    const b = binding();
    const before = b.engineStats();
    const sdk = join(packageRoot(), 'dist', 'index.cjs');
    const w = new Worker(script, { eval: true, workerData: { sdk, path } });
    w.on('message', () => undefined);
    expect(await until(() => b.engineStats().queriesRunning > before.queriesRunning, 30_000)).toBe(true);
    await w.terminate();
    expect(await until(() => b.engineStats().queriesRunning === before.queriesRunning, 30_000)).toBe(true);
    const after = b.engineStats();
    expect(after.teardownCancels - before.teardownCancels).toBe(1);
    expect(after.queriesCancelled - before.queriesCancelled).toBe(1);
  }

  it('terminating a worker mid-query cancels its query (observed through the engine counters)', async () => {
    await terminateMidQuery(WORKER);
  }, 120_000);

  it('terminating a worker mid-read() cancels the read writing into its caller-owned output', async () => {
    await terminateMidQuery(READ_WORKER);
    // and reads of this environment still work
    const { open } = await import('../../lib');
    const f = await open(path);
    const r = await f.read('m', [{ start: 250, stop: 253 }]);
    expect(Array.from(r.data as Uint8Array)).toEqual([250, 0, 1]);
    f.close();
  }, 120_000);

  it('a query of the main environment is not touched by another environment going away', async () => {
    const b = binding();
    const before = b.engineStats();
    const { open } = await import('../../lib');
    const f = await open(path);
    const sdk = join(packageRoot(), 'dist', 'index.cjs');
    const w = new Worker(WORKER, { eval: true, workerData: { sdk, path } });
    const messages: unknown[] = [];
    w.on('message', (m) => messages.push(m));
    expect(await until(() => b.engineStats().queriesRunning >= before.queriesRunning + 1, 30_000)).toBe(true);
    // A query of this environment running at the same time as the worker's: a short query can
    // start and end between two polls, so issue them until one is seen overlapping.
    let mine: Promise<unknown> = Promise.resolve();
    let overlap = false;
    for (let k = 0; k < 30 && !overlap; k++) {
      mine = f.query({ dataset: 'm', sum: [] }, {});
      overlap = await until(() => b.engineStats().queriesRunning >= before.queriesRunning + 2, 2_000);
      if (!overlap) await mine;
    }
    expect(overlap, JSON.stringify({ before, now: b.engineStats(), messages })).toBe(true);
    await w.terminate();
    const r = await mine as { execution: { operation_sum: number } };
    let want = 0;
    for (let i = 0; i < 1 << 20; i++) want += i % 251;
    expect(Number(r.execution.operation_sum)).toBe(want);
    f.close();
    expect(await until(() => b.engineStats().queriesRunning === before.queriesRunning, 30_000)).toBe(true);
  }, 120_000);
});
