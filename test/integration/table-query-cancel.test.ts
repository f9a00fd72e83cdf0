// Table queries are cancellable like tensor queries: an AbortSignal trips the native cancel token,
// which the table query checks before each work unit (and the where between blocks; native
// table_query_test covers each path), and a signal that aborts before the promise settles rejects
// it with TET_CANCELLED even when the worker had already finished (a fast query on a loaded machine
// can); a signal aborted before the call rejects at once; the file keeps answering afterwards. Tensor group_by's row-group query goes through the same path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type TetFile } from '../../lib/index';

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
