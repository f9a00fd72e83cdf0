// `reductions` (extension): several streaming reductions of one selection from one pass. Each
// op's field equals the hand-computed f64 value (numpy semantics: population var/std, NaN
// propagates, arg_* the first extremum's logical index), the pass reads every touched tile once
// (chunks_read / stored_bytes_read of a single reduction), and every misuse is a typed error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetQueryError, TetWriter, type TetFile } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-reductions-'));
const R = 300, C = 700;  // chunks [64, 256]: a 5 x 3 grid with clipped edges
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const f64 = Float64Array.from({ length: R * C }, () => (rand() - 0.3) * 1e3);
const f32 = Float32Array.from(f64);
const i32 = Int32Array.from(f64, (x) => Math.round(x * 1000));
const nan = Float32Array.from(f32);
for (let i = 5; i < nan.length; i += 997) nan[i] = NaN;
let file: TetFile;
// The other dtypes: values from the same stream, in range for each.
const DTYPES = [
  ['u8', () => Uint8Array.from(f64, (x) => Math.abs(Math.round(x)) % 256)],
  ['i16', () => Int16Array.from(f64, (x) => Math.round(x * 30))],
  ['u16', () => Uint16Array.from(f64, (x) => Math.abs(Math.round(x * 60)))],
  ['u32', () => Uint32Array.from(f64, (x) => Math.abs(Math.round(x * 4e6)))],
  ['i64', () => BigInt64Array.from(f64, (x) => BigInt(Math.round(x * 1e9)))],
  ['u64', () => BigUint64Array.from(f64, (x) => BigInt(Math.abs(Math.round(x * 1e9))))],
  ['f16', () => Float32Array.from(f64, (x) => Math.round(x))],
] as const;

beforeAll(async () => {
  const path = join(dir, 'r.tet');
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'f32', dtype: 'f32', shape: [R, C], chunkShape: [64, 256], data: f32 });
  w.addDataset({ name: 'f64z', dtype: 'f64', shape: [R, C], chunkShape: [64, 256], codec: 'zstd', data: f64 });
  w.addDataset({ name: 'i32', dtype: 'i32', shape: [R, C], chunkShape: [64, 256], data: i32 });
  w.addDataset({ name: 'nan', dtype: 'f32', shape: [R, C], chunkShape: [64, 256], data: nan });
  for (const [dtype, make] of DTYPES) w.addDataset({ name: dtype, dtype, shape: [R, C], chunkShape: [64, 256], data: make() });
  await w.commit();
  file = await open(path);
});
afterAll(() => {
  file?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Resp = Awaited<ReturnType<TetFile['query']>>;
const ex = (r: Resp) => r.execution as unknown as Record<string, unknown>;

// numpy-style reference over rows [r0, r1) x cols [c0, c1) of a row-major array.
function reference(x: ArrayLike<number>, r0: number, r1: number, c0: number, c1: number) {
  const v: number[] = [];
  for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) v.push(x[r * C + c]);
  const hasNan = v.some((a) => Number.isNaN(a));
  const finite = v.filter((a) => !Number.isNaN(a));
  let sum = 0, l1 = 0, l2 = 0;
  for (const a of v) { sum += a; l1 += Math.abs(a); l2 += a * a; }
  const mean = sum / v.length;
  let m2 = 0;
  for (const a of v) m2 += (a - mean) * (a - mean);
  let fs = 0;
  for (const a of finite) fs += a;
  const fmean = fs / finite.length;
  let fm2 = 0;
  for (const a of finite) fm2 += (a - fmean) * (a - fmean);
  let imin = 0, imax = 0;
  for (let i = 1; i < v.length; i++) {
    if (v[i] < v[imin]) imin = i;
    if (v[i] > v[imax]) imax = i;
  }
  const logical = (i: number) => i;  // the selection's own row-major index
  return {
    sum, mean, var: m2 / v.length, std: Math.sqrt(m2 / v.length), l1, l2: Math.sqrt(l2), count: v.length,
    min: hasNan ? NaN : finite.reduce((m, a) => Math.min(m, a), Infinity),
    max: hasNan ? NaN : finite.reduce((m, a) => Math.max(m, a), -Infinity),
    argmin: logical(imin), argmax: logical(imax), nanCount: v.length - finite.length,
    nanMean: fmean, nanStd: Math.sqrt(fm2 / finite.length), hasNan,
  };
}

const close = (got: unknown, want: number, digits = 9) => {
  expect(typeof got).toBe('number');
  if (Number.isNaN(want)) expect(got).toBeNaN();
  else expect(Math.abs((got as number) - want)).toBeLessThanOrEqual(Math.abs(want) * 10 ** -digits + 1e-9);
};

describe('reductions: several reductions, one pass', () => {
  for (const [name, data] of [['f32', f32], ['f64z', f64], ['i32', i32]] as const) {
    it(`${name}: every field matches the hand-computed value, and the pass reads each tile once`, async () => {
      const ops = ['min', 'max', 'mean', 'std', 'var', 'sum', 'count', 'arg_min', 'arg_max', 'norm_l1', 'norm_l2', 'any_nan'];
      const r = await file.query({ dataset: name, reductions: ops }, { preview: 0 });
      const e = ex(r);
      const want = reference(data, 0, R, 0, C);
      expect(e.operation).toBe('reductions');
      expect(e.operations).toEqual(ops);
      close(e.operation_sum, want.sum, 10);
      close(e.operation_mean, want.mean, 10);
      close(e.operation_var, want.var, 8);
      close(e.operation_std, want.std, 8);
      close(e.operation_norm_l1, want.l1, 10);
      close(e.operation_norm_l2, want.l2, 10);
      expect(Number(e.operation_min)).toBe(want.min);
      expect(Number(e.operation_max)).toBe(want.max);
      expect(Number(e.operation_element_count)).toBe(R * C);
      expect(Number(e.operation_argmin_index)).toBe(want.argmin);
      expect(Number(e.operation_argmax_index)).toBe(want.argmax);
      expect(e.operation_any_nan).toBe(false);
      const ds = file.datasets.find((d) => d.name === name)!;
      expect(e.chunks_read).toBe(ds.chunkCount);
      expect(e.stored_bytes_read).toBe(ds.storedBytes);
    });
  }

  it('a selection, NaNs and the nan_* ops; each value equals its single-reduction query bit for bit', async () => {
    const selection = [{ start: 17, stop: 251 }, { start: 100, stop: 650, step: 3 }];
    const ops = ['nan_mean', 'nan_std', 'nan_count', 'mean', 'max', 'any_nan', 'all_finite', 'arg_max'] as const;
    const r = await file.query({ dataset: 'nan', selection, reductions: [...ops] }, { preview: 0 });
    const e = ex(r);
    // reference over the strided columns
    const v: number[] = [];
    for (let row = 17; row < 251; row++) for (let c = 100; c < 650; c += 3) v.push(nan[row * C + c]);
    const finite = v.filter((a) => !Number.isNaN(a));
    const fmean = finite.reduce((s, a) => s + a, 0) / finite.length;
    const fvar = finite.reduce((s, a) => s + (a - fmean) ** 2, 0) / finite.length;
    close(e.operation_nan_mean, fmean, 10);
    close(e.operation_nan_std, Math.sqrt(fvar), 8);
    expect(Number(e.operation_nan_count)).toBe(v.length - finite.length);
    expect(v.length - finite.length).toBeGreaterThan(0);
    expect(e.operation_mean).toBeNaN();
    expect(e.operation_max).toBeNaN();
    expect(e.operation_any_nan).toBe(true);
    expect(e.operation_all_finite).toBe(false);
    expect(Number(e.operation_argmax_index)).toBe(v.findIndex((a) => Number.isNaN(a)));  // numpy: the first NaN
    for (const op of ops) {
      const one = ex(await file.query({ dataset: 'nan', selection, [op]: [] }, { preview: 0 }));
      const field = Object.keys(one).find((k) => k.startsWith('operation_') && k !== 'operation_element_count') ??
        'operation_element_count';
      expect(Object.is(e[field], one[field]) || e[field] === one[field]).toBe(true);
    }
  });

  it('the object form {ops, axes: []}, TOML, a one-op list, and planning without running', async () => {
    const a = ex(await file.query({ dataset: 'f32', reductions: { ops: ['sum', 'min'], axes: [] } }, { preview: 0 }));
    close(a.operation_sum, reference(f32, 0, R, 0, C).sum, 10);
    const t = ex(await file.query('dataset = "f32"\nreductions = ["count"]\n', { preview: 0 }));
    expect(t.operations).toEqual(['count']);
    expect(Number(t.operation_element_count)).toBe(R * C);
    const all = ex(await file.query({ dataset: 'f32', reductions: { ops: ['max'], axis: [0, 1] } }, { preview: 0 }));
    expect(Number(all.operation_max)).toBe(reference(f32, 0, R, 0, C).max);
    const planned = file.plan({ dataset: 'f32', reductions: ['min', 'max'] });
    expect(planned.status).toBe('planned');
    expect((planned.query as { reductions?: unknown }).reductions).toEqual(['min', 'max']);
  });

  it('a one-element selection: every op on that element', async () => {
    const e = ex(await file.query({ dataset: 'i32', selection: [{ start: 3, stop: 4 }, { start: 9, stop: 10 }],
      reductions: ['sum', 'min', 'count', 'arg_min'] }, { preview: 0 }));
    expect(Number(e.operation_sum)).toBe(i32[3 * C + 9]);
    expect(Number(e.operation_min)).toBe(i32[3 * C + 9]);
    expect(Number(e.operation_element_count)).toBe(1);
    expect(Number(e.operation_argmin_index)).toBe(0);
  });
});

describe('reductions: every dtype', () => {
  const ops = ['min', 'max', 'sum', 'mean', 'var', 'std', 'count', 'arg_min', 'arg_max', 'norm_l1', 'nan_count', 'all_finite'] as const;
  for (const [dtype, make] of DTYPES) {
    it(`${dtype}: min / max / sum as computed here, every op the bits of its own query`, async () => {
      const data = Array.from(make() as ArrayLike<number | bigint>, Number);
      const e = ex(await file.query({ dataset: dtype, reductions: [...ops] }, { preview: 0 }));
      expect(Number(e.operation_min)).toBe(data.reduce((m, a) => Math.min(m, a), Infinity));
      expect(Number(e.operation_max)).toBe(data.reduce((m, a) => Math.max(m, a), -Infinity));
      const sum = data.reduce((t, a) => t + a, 0);
      expect(Math.abs(Number(e.operation_sum) - sum)).toBeLessThanOrEqual(Math.abs(sum) * 1e-12);
      for (const op of ops) {
        const one = ex(await file.query({ dataset: dtype, [op]: [] }, { preview: 0 }));
        const field = Object.keys(one).find((k) => k.startsWith('operation_') && k !== 'operation_element_count') ??
          'operation_element_count';
        expect(Object.is(e[field], one[field]), `${dtype} ${op} ${field}`).toBe(true);
      }
    });
  }
});

describe('reductions: misuse', () => {
  const cases: [string, object, string][] = [
    ['with a reduction key', { dataset: 'f32', reductions: ['min'], mean: [] }, 'TET_QUERY_MULTIPLE_REDUCTIONS'],
    ['a tier C op', { dataset: 'f32', reductions: ['min', 'median'] }, 'TET_QUERY_UNSUPPORTED'],
    ['a parameterised op', { dataset: 'f32', reductions: ['quantile'] }, 'TET_QUERY_UNSUPPORTED'],
    ['an unknown name', { dataset: 'f32', reductions: ['minimum'] }, 'TET_QUERY_UNSUPPORTED'],
    ['a repeated name', { dataset: 'f32', reductions: ['min', 'min'] }, 'TET_QUERY_INVALID'],
    ['an empty list', { dataset: 'f32', reductions: [] }, 'TET_QUERY_INVALID'],
    ['a non-list', { dataset: 'f32', reductions: 'min' }, 'TET_QUERY_INVALID'],
    ['an unknown key in the object form', { dataset: 'f32', reductions: { ops: ['min'], bins: 3 } }, 'TET_QUERY_INVALID'],
    ['with group_by', { dataset: 'f32', reductions: ['min'], group_by: 'x' }, 'TET_QUERY_UNSUPPORTED'],
    ['with spill', { dataset: 'f32', reductions: ['min'], spill: 'x.bin' }, 'TET_QUERY_UNSUPPORTED'],
    ['on a table', { table: 't', reductions: ['min'] }, 'TET_QUERY_UNSUPPORTED'],
    ['over a subset of axes', { dataset: 'f32', reductions: { ops: ['min', 'max'], axis: 0 } }, 'TET_QUERY_UNSUPPORTED'],
    ['an axis out of range', { dataset: 'f32', reductions: { ops: ['min'], axis: 5 } }, 'TET_QUERY_AXIS_OUT_OF_RANGE'],
  ];
  for (const [what, doc, code] of cases) {
    it(`${what}: ${code}`, async () => {
      const err = await file.query(doc).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TetQueryError);
      expect((err as TetQueryError).code).toBe(code);
    });
  }

  it('sharded: TET_QUERY_UNSUPPORTED', async () => {
    const err = await file.queryPartial({ dataset: 'f32', reductions: ['min'] }, { shard: [0, 2] }).then(() => null, (e: unknown) => e);
    expect((err as TetQueryError).code).toBe('TET_QUERY_UNSUPPORTED');
  });
});
