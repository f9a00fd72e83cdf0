// The N-API boundary itself: argument checking (never a crash), handle type tags, closed
// handles, cancellation, plan validation errors and host facts.
import { SHARED } from '../support/paths';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { binding } from '../../lib/binding';
import { encodePlan } from '../../lib/plan/encode';

const BIG = join(SHARED, 'conformance/fixtures/big_f32.tet');
const SAMPLE = join(SHARED, 'fixtures/reference/tet/sample.tet');
type Any = any;

const fullPlan = (shape: number[], previewMax: number) => encodePlan({
  datasetId: 0, start: shape.map(() => 0), step: shape.map(() => 1), count: shape, op: 'sum', reduceAxes: shape.map((_, a) => a),
  strategy: 'streaming_fold', ioMode: 'parallel_chunks', previewMax,
});

describe('native binding', () => {
  it('rejects wrong arguments with TypeError TET_BINDING_BAD_ARGUMENT instead of crashing', async () => {
    const b = binding() as Any;
    const w = b.writerCreate('/tmp/tet-binding-never.tet');
    const token = b.createCancelToken();
    const bad: [string, () => unknown][] = [
      ['catalog({})', () => b.catalog({})],
      ['catalog(writer)', () => b.catalog(w)],
      ['catalog(token)', () => b.catalog(token)],
      ['closeFile(1)', () => b.closeFile(1)],
      ['openFileSync(1)', () => b.openFileSync(1, true)],
      ['openFileSync(no flag)', () => b.openFileSync(SAMPLE)],
      ['cancel(writer)', () => b.cancel(w)],
      ['writerAddDataset(bad dtype)', () => b.writerAddDataset(w, { name: 'a', dtype: 11, shape: [1], chunkShape: [1], codec: 0, level: 3 })],
      ['writerAddDataset(-1 shape)', () => b.writerAddDataset(w, { name: 'a', dtype: 1, shape: [-1], chunkShape: [1], codec: 0, level: 3 })],
      ['writerAddDataset(9 axes)', () => b.writerAddDataset(w, { name: 'a', dtype: 1, shape: Array(9).fill(1), chunkShape: Array(9).fill(1), codec: 0, level: 3 })],
      ['writerSetExecution(2^16)', () => b.writerSetExecution(w, 65536, 0)],
    ];
    for (const [what, call] of bad) {
      let err: Any;
      try {
        call();
      } catch (e) {
        err = e;
      }
      expect([what, err?.code]).toEqual([what, 'TET_BINDING_BAD_ARGUMENT']);
      expect(err).toBeInstanceOf(TypeError);
    }
    const f = b.openFileSync(SAMPLE, true);
    await expect(b.execute(f, new Float32Array(72), null)).rejects.toThrow(TypeError);
    await expect(b.writerWriteChunk(w, 0, [0], new Float32Array(1))).rejects.toMatchObject({ code: 'TET_BINDING_BAD_ARGUMENT' });
    b.closeFile(f);
    b.writerAbort(w);
  });

  it('a malformed plan rejects with TET_PLAN_*', async () => {
    const b = binding();
    const f = b.openFileSync(SAMPLE, true);
    const plan = fullPlan([2, 3], 0);
    await expect(b.execute(f, plan.subarray(0, 100), null)).rejects.toMatchObject({ code: expect.stringMatching(/^TET_PLAN_/) });
    const wrongCount = fullPlan([2, 4], 0);  // axis 1 selects past the end
    await expect(b.execute(f, wrongCount, null)).rejects.toMatchObject({ code: expect.stringMatching(/^TET_PLAN_/) });
    const r = await b.execute(f, plan, null);
    expect(Array.from(r.values as Float64Array)).toEqual([21]);
    b.closeFile(f);
    await expect(b.execute(f, plan, null)).rejects.toMatchObject({ code: 'TET_IO_CLOSED' });
    await expect(b.verify(f, 0, 1, false)).rejects.toMatchObject({ code: 'TET_IO_CLOSED' });
  });

  it('a cancelled token stops execution with TET_CANCELLED', async () => {
    const b = binding();
    const f = await b.openFile(BIG, true);
    const token = b.createCancelToken();
    b.cancel(token);
    await expect(b.execute(f, fullPlan([3000, 1500], 0), token)).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    const live = b.createCancelToken();
    const r = await b.execute(f, fullPlan([3000, 1500], 0), live);
    expect(r.values.length).toBe(1);
    b.closeFile(f);
  });

  it('hostInfo reports cores, RAM and the SIMD ISA', () => {
    const h = binding().hostInfo();
    expect(h.cores).toBeGreaterThanOrEqual(1);
    expect(h.totalRamBytes).toBeGreaterThan(0);
    expect(typeof h.simd).toBe('string');
    expect(typeof h.buildFlags).toBe('string');
  });

  it.skipIf(process.platform !== 'linux')('availableRamBytes is /proc/meminfo MemAvailable (what each query budget uses)', () => {
    const kib = () => Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]);
    const before = kib();
    const got = binding().availableRamBytes();
    const after = kib();
    // the figure moves while other processes run: within the two readings around the call, +-64 MiB
    expect(got).toBeGreaterThanOrEqual(Math.min(before, after) * 1024 - (64 << 20));
    expect(got).toBeLessThanOrEqual(Math.max(before, after) * 1024 + (64 << 20));
    expect(got % 1024).toBe(0);
  });
});
