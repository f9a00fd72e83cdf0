// I/O counters of a query (execution.chunks_read / stored_bytes_read): every op reads each
// touched tile once as far as the counters go, however many passes it makes over them (a scalar
// median selects in place: a sample, then counting passes), so a whole-dataset query without a
// preview counts the catalog's chunk count and stored bytes.
import { ROOT } from '../support/paths';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type TetFile } from '../../lib/index';

let file: TetFile;
beforeAll(async () => { file = await open(join(ROOT, 'samples/weather.tet')); });
afterAll(() => file?.close());

describe('query I/O counters', () => {
  for (const op of [{ median: [] }, { quantile: { q: 0.9 } }, { mean: [] }, { max: 'time' }, { histogram: { bins: 8 } }]) {
    it(`${Object.keys(op)[0]} over the whole dataset counts every tile once`, async () => {
      const r = await file.query({ dataset: 'temperature', ...op }, { preview: 0 });
      const ds = file.datasets.find((d) => d.name === 'temperature')!;
      expect(r.execution!.chunks_read).toBe(ds.chunkCount);
      expect(r.execution!.stored_bytes_read).toBe(ds.storedBytes);
    });
  }
});
