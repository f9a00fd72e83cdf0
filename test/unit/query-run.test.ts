// runQuery / planQuery paths that never reach the addon (plan-only, unmatched, cancelled).
import { describe, expect, it } from 'vitest';
import { TetCancelledError, TetQueryError } from '../../lib/errors';
import { planQuery, runQuery } from '../../lib/run';
import type { QueryTarget } from '../../lib/types';

const target: QueryTarget = {
  path: '/nowhere/f.tet',
  datasets: [{ name: 'a', id: 0, dtype: 'f64', shape: [2, 3], chunkShape: [2, 2], grid: [1, 2], chunkCount: 2,
    codecs: { raw: 0, zstd: 2 }, logicalBytes: 48, storedBytes: 30 }],
  metadata: {},
  fileExecution: { memory_budget_percent_bps: 0, memory_budget_bytes: 0 },
  native: null,
};

describe('runQuery / planQuery without execution', () => {
  it('planQuery accepts text (JSON or TOML) and objects', () => {
    const a = planQuery(target, '{"dataset":"a","sum":[1]}');
    const b = planQuery(target, 'dataset = "a"\nsum = [1]');
    const c = planQuery(target, { dataset: 'a', sum: [1] });
    expect(a).toEqual(b);
    expect(a).toEqual(c);
    expect(a.status).toBe('planned');
    expect(a.catalog?.dataset_f64_bytes).toBe(48);
    expect(a.read_plan?.chunk_count).toBe(2);
  });
  it('execute:false plans only; unknown datasets are unmatched', async () => {
    expect((await runQuery(target, { dataset: 'a', sum: [] }, { execute: false })).status).toBe('planned');
    const u = await runQuery(target, { dataset: 'b', sum: [] });
    expect(u.status).toBe('unmatched');
    expect(u.execution).toBeUndefined();
  });
  it('an already-aborted signal rejects with TetCancelledError', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runQuery(target, { dataset: 'a', sum: [] }, { signal: ac.signal })).rejects.toBeInstanceOf(TetCancelledError);
  });
  it('invalid input rejects with TetQueryError', async () => {
    await expect(runQuery(target, '{"dataset":"a","sum":[],"mean":[]}')).rejects.toBeInstanceOf(TetQueryError);
    expect(() => planQuery(target, { dataset: 'a', selection: [{}] })).toThrow(TetQueryError);
  });
});
