// Property test for the write/read path: random valid datasets (every dtype, rank 1..8, ragged
// chunk grids, raw/zstd/auto, whole-array or streamed tiles in random order) written by
// TetWriter read back identically, and random strided selections match a plain JS array model
// (indices computed here, f16 decoded here from the bit pattern, sums accumulated here).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type DTypeName, type TetTypedArray } from '../../lib/index';
import { halfToNumber } from '../support/sdk-independent-reader';

const RUNS = Number(process.env.TET_PROPERTY_RUNS ?? 60);
const dir = mkdtempSync(join(tmpdir(), 'tet-prop-rt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DTYPES: DTypeName[] = ['f32', 'f64', 'i32', 'i64', 'u8', 'u16', 'i16', 'u32', 'f16', 'u64'];

// Values as the model holds them: numbers (floats incl. NaN/±inf/-0, small ints) or bigints.
function valueArb(dtype: DTypeName): fc.Arbitrary<number | bigint> {
  switch (dtype) {
    case 'f32': return fc.oneof(fc.float(), fc.constantFrom(Number.NaN, -0, Number.POSITIVE_INFINITY, 1e-45)).map((x) => Math.fround(x));
    case 'f64': return fc.oneof(fc.double(), fc.constantFrom(Number.NaN, -0, Number.MIN_VALUE, Number.MAX_VALUE));
    case 'f16': return fc.integer({ min: 0, max: 0xffff });  // bit patterns, incl. NaNs and subnormals
    case 'i32': return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'u32': return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case 'i16': return fc.integer({ min: -32768, max: 32767 });
    case 'u16': return fc.integer({ min: 0, max: 65535 });
    case 'u8': return fc.integer({ min: 0, max: 255 });
    case 'i64': return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'u64': return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
  }
}

function typedArray(dtype: DTypeName, values: (number | bigint)[]): TetTypedArray {
  switch (dtype) {
    case 'f32': return Float32Array.from(values as number[]);
    case 'f64': return Float64Array.from(values as number[]);
    case 'f16': return Uint16Array.from(values as number[]);
    case 'i32': return Int32Array.from(values as number[]);
    case 'u32': return Uint32Array.from(values as number[]);
    case 'i16': return Int16Array.from(values as number[]);
    case 'u16': return Uint16Array.from(values as number[]);
    case 'u8': return Uint8Array.from(values as number[]);
    case 'i64': return BigInt64Array.from(values as bigint[]);
    case 'u64': return BigUint64Array.from(values as bigint[]);
  }
}

// What a read returns for a model value: f16 widens to the f32 of the decoded half.
function expected(dtype: DTypeName, v: number | bigint): number | bigint {
  return dtype === 'f16' ? Math.fround(halfToNumber(v as number)) : v;
}

function same(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a)) return Number.isNaN(b);
  return Object.is(a, b);
}

interface DatasetCase {
  dtype: DTypeName;
  shape: number[];
  chunk: number[];
  codec: 'raw' | 'zstd' | 'auto';
  streamed: boolean;
  tileOrderSeed: number;
  values: (number | bigint)[];
}

const shapeArb = fc.oneof(
  fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 4 }),
  fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 5, maxLength: 8 }),  // high rank, extents 1..2
);
const datasetCase: fc.Arbitrary<DatasetCase> = fc
  .tuple(fc.constantFrom(...DTYPES), shapeArb, fc.constantFrom<'raw' | 'zstd' | 'auto'>('raw', 'zstd', 'auto'), fc.boolean(), fc.nat())
  .chain(([dtype, shape, codec, streamed, tileOrderSeed]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fc.record({
      chunk: fc.tuple(...shape.map((s) => fc.integer({ min: 1, max: s }))),
      values: fc.oneof(
        fc.array(valueArb(dtype), { minLength: n, maxLength: n }),
        valueArb(dtype).map((v) => Array.from({ length: n }, () => v)),  // compressible
      ),
    }).map(({ chunk, values }) => ({ dtype, shape, chunk, codec, streamed, tileOrderSeed, values }));
  });

function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let a = shape.length - 2; a >= 0; a--) s[a] = s[a + 1]! * shape[a + 1]!;
  return s;
}

// Row-major positions of a box given per axis as explicit index lists.
function gather<T>(values: T[], shape: number[], axes: number[][]): T[] {
  const st = strides(shape);
  const out: T[] = [];
  const idx = new Array<number>(shape.length).fill(0);
  if (axes.some((a) => a.length === 0)) return out;
  for (;;) {
    let off = 0;
    for (let a = 0; a < shape.length; a++) off += axes[a]![idx[a]!]! * st[a]!;
    out.push(values[off]!);
    let a = shape.length - 1;
    while (a >= 0 && ++idx[a]! === axes[a]!.length) idx[a--] = 0;
    if (a < 0) return out;
  }
}

function tileOf<T>(values: T[], shape: number[], chunk: number[], coords: number[]): T[] {
  return gather(values, shape, shape.map((s, a) => {
    const o = coords[a]! * chunk[a]!;
    return Array.from({ length: Math.min(chunk[a]!, s - o) }, (_, i) => o + i);
  }));
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const out = xs.slice();
  let x = seed | 1;
  for (let i = out.length - 1; i > 0; i--) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    const j = (x >>> 0) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

let fileSerial = 0;
async function writeFile(cases: DatasetCase[]): Promise<string> {
  const path = join(dir, `rt-${fileSerial++}.tet`);
  const w = await TetWriter.create(path);
  cases.forEach((c, i) => w.addDataset({
    name: `ds${i}`, dtype: c.dtype, shape: c.shape, chunkShape: c.chunk, codec: c.codec,
    ...(c.streamed ? {} : { data: typedArray(c.dtype, c.values) }),
  }));
  for (const [i, c] of cases.entries()) {
    if (!c.streamed) continue;
    const grid = c.shape.map((s, a) => Math.ceil(s / c.chunk[a]!));
    const all: number[][] = gather(Array.from({ length: grid.reduce((a, b) => a * b, 1) }, (_, k) => k), grid,
      grid.map((g) => Array.from({ length: g }, (_, k) => k))).map((k) => {
      const coords: number[] = [];
      let r = k;
      for (let a = grid.length - 1; a >= 0; a--) { coords[a] = r % grid[a]!; r = Math.floor(r / grid[a]!); }
      return coords;
    });
    for (const coords of shuffled(all, c.tileOrderSeed)) {
      await w.writeChunk(`ds${i}`, coords, typedArray(c.dtype, tileOf(c.values, c.shape, c.chunk, coords)));
    }
  }
  await w.commit();
  return path;
}

describe('TetWriter -> open/read round trip against a JS array model', () => {
  it('whole datasets read back identically', async () => {
    await fc.assert(fc.asyncProperty(fc.array(datasetCase, { minLength: 1, maxLength: 3 }), async (cases) => {
      const path = await writeFile(cases);
      const f = await open(path);
      try {
        for (const [i, c] of cases.entries()) {
          const info = f.dataset(`ds${i}`);
          expect(info.dtype).toBe(c.dtype);
          expect(info.shape).toEqual(c.shape);
          expect(info.chunkShape).toEqual(c.chunk);
          const r = await f.read(`ds${i}`);
          expect(r.shape).toEqual(c.shape);
          const got = Array.from(r.data as ArrayLike<number | bigint>);
          expect(got.length).toBe(c.values.length);
          for (let k = 0; k < got.length; k++) {
            if (!same(expected(c.dtype, c.values[k]!), got[k]!)) {
              throw new Error(`ds${i} (${c.dtype} ${JSON.stringify(c.shape)}/${JSON.stringify(c.chunk)} ${c.codec}) element ${k}: want ${String(expected(c.dtype, c.values[k]!))}, got ${String(got[k])}`);
            }
          }
        }
      } finally {
        f.close();
        rmSync(path, { force: true });
      }
    }), { numRuns: RUNS });
  }, 300_000);

  it('strided selections and sums match the model', async () => {
    const withSelection = datasetCase.chain((c) => fc.record({
      c: fc.constant(c),
      sel: fc.tuple(...c.shape.map((s) => fc.record({
        start: fc.integer({ min: 0, max: s - 1 }), len: fc.integer({ min: 1, max: s }), step: fc.integer({ min: 1, max: 3 }),
      }))),
    }));
    await fc.assert(fc.asyncProperty(withSelection, async ({ c, sel }) => {
      const path = await writeFile([c]);
      const f = await open(path);
      try {
        const selection = sel.map((s, a) => ({ start: s.start, stop: Math.min(c.shape[a]!, s.start + s.len), step: s.step }));
        const axes = selection.map((s) => {
          const xs: number[] = [];
          for (let i = s.start; i < s.stop; i += s.step) xs.push(i);
          return xs;
        });
        const want = gather(c.values, c.shape, axes).map((v) => expected(c.dtype, v));
        const r = await f.read('ds0', selection);
        expect(r.shape).toEqual(axes.map((x) => x.length));
        const got = Array.from(r.data as ArrayLike<number | bigint>);
        expect(got.length).toBe(want.length);
        want.forEach((v, k) => { if (!same(v, got[k]!)) throw new Error(`element ${k}: want ${String(v)}, got ${String(got[k])}`); });
        // count over the selection is exact; sum is compared for small integer dtypes (exact in f64).
        const resp = await f.query({ dataset: 'ds0', selection, count: [] }, { preview: 0 });
        expect(Number(resp.execution?.operation_element_count)).toBe(want.length);
        if (['u8', 'i16', 'u16'].includes(c.dtype)) {
          const total = (want as number[]).reduce((a, b) => a + b, 0);
          const s = await f.query({ dataset: 'ds0', selection, sum: [] }, { preview: 0 });
          expect(s.execution?.operation_sum).toBe(total);
        }
      } finally {
        f.close();
        rmSync(path, { force: true });
      }
    }), { numRuns: RUNS });
    expect(readdirSync(dir).filter((n) => n.includes('.tmp'))).toEqual([]);
  }, 300_000);
});
