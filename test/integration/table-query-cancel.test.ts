// Table queries are cancellable like tensor queries: an AbortSignal trips the native cancel token,
// which the table query checks before each work unit (and the where between blocks; native
// table_query_test covers each path), and a signal that aborts before the promise settles rejects
// it with TET_CANCELLED even when the worker had already finished (a fast query on a loaded machine
// can); a signal aborted before the call rejects at once; the file keeps answering afterwards. Tensor group_by's row-group query goes through the same path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type TetFile } from '../../lib/index';
import { binding, packageRoot } from '../../lib/binding';
import { until } from '../support/worker-support';

const work = mkdtempSync(join(tmpdir(), 'tet-tq-cancel-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const N = 1_000_000;
let file: TetFile;
beforeAll(async () => {
  const path = join(work, 'big.tet');
  const w = await TetWriter.create(path);
  const k = Int32Array.from({ length: N }, (_, i) => (i * 7919) % 5003);
  const v = Float64Array.from({ length: N }, (_, i) => (i % 1000) / 8);
  w.addTable({ name: 'big', columns: { k: { kind: 'int', values: k }, v: { kind: 'float', values: v } } });
  await w.commit();
  file = await open(path);
}, 120_000);
afterAll(() => file?.close());

describe('table query cancellation', () => {
  it('an abort while it runs rejects with TET_CANCELLED; the file answers afterwards', async () => {
    for (const doc of [
      { table: 'big', mean: { column: 'v' }, group_by: 'k' },
      { table: 'big', sum: { column: 'v' }, where: [{ column: 'k', lt: 4000 }] },
      { table: 'big', columns: ['k', 'v'], order_by: [{ column: 'v', desc: true }], limit: 100 },
    ]) {
      const ac = new AbortController();
      const p = file.query(doc, { signal: ac.signal });
      ac.abort();
      await expect(p, JSON.stringify(doc)).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    }
    const before = new AbortController();
    before.abort();
    await expect(file.query({ table: 'big', count: [] }, { signal: before.signal })).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    const r = await file.query({ table: 'big', count: [], where: [{ column: 'k', eq: 0 }] });
    expect(r.execution!.operation_element_count).toBe(Array.from({ length: N }, (_, i) => (i * 7919) % 5003).filter((x) => x === 0).length);
  }, 60_000);
});

// A worker_thread terminated while its table query runs: the environment's cleanup hook cancels
// the query (table queries run as tensor queries do, their cancel flag registered with the
// environment), observed through the process-wide engine counters; the main environment's file
// keeps answering.
describe('table query in a terminated worker_thread', () => {
  const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { open } = require(workerData.sdk);
(async () => {
  const f = await open(workerData.path);
  for (;;) await f.query({ table: 'big', columns: ['k', 'v'], order_by: [{ column: 'v', desc: true }], limit: 100000 }).catch(() => undefined);
})();
`;

  it('is cancelled by the teardown, not left running', async () => {
    const b = binding();
    const sdk = join(packageRoot(), 'dist', 'index.cjs');
    // A query ending between the poll that saw it and the termination leaves nothing to cancel:
    // try a few times; one termination must land on a running query and cancel it.
    let cancelled = false;
    for (let attempt = 0; attempt < 5 && !cancelled; attempt++) {
      const before = b.engineStats();
      const w = new Worker(WORKER, { eval: true, workerData: { sdk, path: file.path } });
      expect(await until(() => b.engineStats().queriesRunning > before.queriesRunning, 30_000)).toBe(true);
      await w.terminate();
      expect(await until(() => b.engineStats().queriesRunning === before.queriesRunning, 30_000)).toBe(true);
      const after = b.engineStats();
      cancelled = after.teardownCancels > before.teardownCancels && after.queriesCancelled > before.queriesCancelled;
    }
    expect(cancelled).toBe(true);
    const r = await file.query({ table: 'big', count: [], where: [{ column: 'k', eq: 1 }] });
    expect(r.execution!.operation_element_count).toBe(Array.from({ length: N }, (_, i) => (i * 7919) % 5003).filter((x) => x === 1).length);
  }, 120_000);
});
