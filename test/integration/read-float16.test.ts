// read(..., { f16: 'float16' }): an f16 dataset's stored binary16 values, bit for bit, in a
// Float16Array where the runtime has one (Node 24+); a typed error where it does not. The
// expected bits and values are IEEE 754 binary16 facts written down here, not our output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type TetFile } from '../../lib/index';

// binary16 bits -> value: 1, -2.5, the largest finite (65504), the smallest subnormal (2^-24),
// -0, +Infinity, a quiet NaN, 0.1 rounded to binary16 (0x2E66 = 0.0999755859375).
const BITS = [0x3c00, 0xc100, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x7e00, 0x2e66];
const VALUES = [1, -2.5, 65504, 2 ** -24, -0, Infinity, NaN, 0.0999755859375];
const N = 8 * 300;  // 300 copies, in two tiles of 1200 (the second clipped by nothing)

const dir = mkdtempSync(join(tmpdir(), 'tet-f16-'));
const path = join(dir, 'f16.tet');
let file: TetFile;
const hasF16 = typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'function';

beforeAll(async () => {
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'h', dtype: 'f16', shape: [N], chunkShape: [1200], codec: 'zstd' });
  w.addDataset({ name: 'f', dtype: 'f32', shape: [4], chunkShape: [4], codec: 'raw' });
  const bits = Uint16Array.from({ length: N }, (_, i) => BITS[i % 8]);
  await w.writeChunk('h', [0], bits.subarray(0, 1200));
  await w.writeChunk('h', [1], bits.subarray(1200));
  await w.writeChunk('f', [0], new Float32Array([1, 2, 3, 4]));
  await w.commit();
  file = await open(path);
});
afterAll(() => {
  file?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("read(..., { f16: 'float16' })", () => {
  it.runIf(hasF16)('returns the stored binary16 bits in a Float16Array (Node 24+)', async () => {
    const { data, shape } = await file.read('h', [{ start: 4, stop: N, step: 3 }], { f16: 'float16' });
    expect(data.constructor.name).toBe('Float16Array');
    expect(shape).toEqual([Math.ceil((N - 4) / 3)]);
    const raw = new Uint16Array(data.buffer, data.byteOffset, data.length);
    for (let k = 0; k < raw.length; k++) {
      const i = 4 + 3 * k;
      expect(raw[k]).toBe(BITS[i % 8]);
      expect(Object.is(Number(data[k]), VALUES[i % 8])).toBe(true);
    }
    expect(data.byteLength).toBe(2 * raw.length);  // half of the f32 read
  });
  it.runIf(!hasF16)(`is a TET_QUERY_UNSUPPORTED TetQueryError on Node ${process.versions.node} (no Float16Array)`, async () => {
    await expect(file.read('h', undefined, { f16: 'float16' })).rejects.toMatchObject({ code: 'TET_QUERY_UNSUPPORTED' });
  });
  it("the default ('float32') widens exactly; other dtypes ignore the option; a bad value is a typed error", async () => {
    const { data } = await file.read('h', [{ stop: 8 }]);
    expect(data).toBeInstanceOf(Float32Array);
    expect(Array.from(data as Float32Array).map((v, i) => Object.is(v, VALUES[i]))).toEqual(Array(8).fill(true));
    const f = await file.read('f', undefined, { f16: 'float16' });
    expect(Array.from(f.data as Float32Array)).toEqual([1, 2, 3, 4]);
    await expect(file.read('h', undefined, { f16: 'half' as 'float16' })).rejects.toMatchObject({ code: 'TET_QUERY_INVALID' });
  });
});
